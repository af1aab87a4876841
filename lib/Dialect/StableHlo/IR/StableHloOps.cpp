//===- StableHloOps.cpp - StableHLO compat ops ----------------------------===//
//
// Verifiers of the modelled ops, and the assembly of the two ops whose form
// depends on their contents (constant, reduce); the others are declarative
// (StableHloOps.td, AssemblyFormat.h). The pretty forms print the same bytes
// as upstream StableHLO's printer (which JAX uses). Verifiers check the
// invariants the passes rely on (shapes, element types, dimension numbers in
// range) and stay lenient where types are dynamic or not builtin (quantized
// element types are opaque here).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::stablehlo;

#define GET_OP_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Element types this dialect understands. Others (e.g. `!quant.uniform`,
/// opaque here) may legitimately differ between operands, so checks skip
/// them.
static bool isBuiltinElementType(Type type) {
  return isa<IntegerType, FloatType, ComplexType, IndexType>(type);
}

static bool elementTypesMatch(Type lhs, Type rhs) {
  Type lhsElement = getElementTypeOrSelf(lhs);
  Type rhsElement = getElementTypeOrSelf(rhs);
  if (lhsElement == rhsElement)
    return true;
  return !isBuiltinElementType(lhsElement) ||
         !isBuiltinElementType(rhsElement);
}

/// Parses `: (T0, ...) -> R` with `numResults` results and resolves the
/// operands against the inputs.
static ParseResult
parseFunctionalType(OpAsmParser &parser, OperationState &result,
                    ArrayRef<OpAsmParser::UnresolvedOperand> operands) {
  SMLoc loc = parser.getCurrentLocation();
  FunctionType type;
  if (parser.parseColon() || parser.parseType(type))
    return failure();
  if (parser.resolveOperands(operands, type.getInputs(), loc, result.operands))
    return failure();
  result.addTypes(type.getResults());
  return success();
}

/// Checks that `dims` are distinct and in [0, rank); `what` names the list.
static LogicalResult verifyDimsInRange(Operation *op, ArrayRef<int64_t> dims,
                                       int64_t rank, StringRef what) {
  llvm::SmallBitVector seen(std::max<int64_t>(rank, 0));
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= rank)
      return op->emitOpError() << what << "[" << index << "] = " << dim
                               << " is out of range [0, " << rank << ")";
    if (seen.test(dim))
      return op->emitOpError() << what << " repeats dimension " << dim;
    seen.set(dim);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult mlir::stablehlo::detail::verifyElementwise(Operation *op,
                                                        bool sameElementType) {
  Type resultType = op->getResult(0).getType();
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes())) {
    if (failed(verifyCompatibleShape(type, resultType)))
      return op->emitOpError()
             << "requires operand #" << index << " (" << type
             << ") and the result (" << resultType
             << ") to have compatible shapes";
    // abs of a complex tensor is its real magnitude (StableHLO spec).
    bool complexAbs =
        isa<AbsOp>(op) &&
        isa<ComplexType>(getElementTypeOrSelf(type)) &&
        cast<ComplexType>(getElementTypeOrSelf(type)).getElementType() ==
            getElementTypeOrSelf(resultType);
    if (sameElementType && !complexAbs && !elementTypesMatch(type, resultType))
      return op->emitOpError()
             << "requires operand #" << index << " (" << type
             << ") and the result (" << resultType
             << ") to have the same element type";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

void ConstantOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  // Upstream's names: `%c` for integer (and boolean) constants, `%cst` for
  // the rest.
  bool isInteger = isa<IntegerType>(getElementTypeOrSelf(getType()));
  setNameFn(getResult(), isInteger ? "c" : "cst");
}

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  // Long form for a value whose type differs from the result type:
  // `() <{value = ...}> {...} : () -> T` (properties optional).
  if (succeeded(parser.parseOptionalLParen())) {
    if (parser.parseRParen())
      return failure();
    if (succeeded(parser.parseOptionalLess())) {
      DictionaryAttr properties;
      if (parser.parseAttribute(properties) || parser.parseGreater())
        return failure();
      result.attributes.append(properties.getValue());
    }
    if (parser.parseOptionalAttrDict(result.attributes))
      return failure();
    return parseFunctionalType(parser, result, {});
  }
  Attribute value;
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseAttribute(value))
    return failure();
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return parser.emitError(loc, "expected a tensor value such as dense<...>");
  result.addAttribute(getValueAttrName(result.name), elements);
  result.addTypes(elements.getType());
  return success();
}

void ConstantOp::print(OpAsmPrinter &printer) {
  if (getValue().getType() != getType()) {
    printer << "()";
    printer.printOptionalAttrDict((*this)->getAttrs());
    printer << " : ";
    printer.printFunctionalType(getOperation());
    return;
  }
  printer.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  printer << ' ';
  printer.printAttribute(getValue());
}

LogicalResult ConstantOp::verify() {
  Type valueType = getValue().getType();
  if (valueType == getType())
    return success();
  // Quantized results store their integer values: shapes must still agree.
  if (failed(verifyCompatibleShape(valueType, getType())) ||
      isBuiltinElementType(getElementTypeOrSelf(getType())))
    return emitOpError() << "value type " << valueType
                         << " does not match the result type " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// CompareOp
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::verify() {
  Type lhsType = getLhs().getType();
  Type rhsType = getRhs().getType();
  Type resultType = getResult().getType();
  if (failed(verifyCompatibleShape(lhsType, rhsType)) ||
      failed(verifyCompatibleShape(lhsType, resultType)))
    return emitOpError() << "requires operands and result of compatible "
                            "shapes, but got "
                         << lhsType << ", " << rhsType << " and "
                         << resultType;
  if (!elementTypesMatch(lhsType, rhsType))
    return emitOpError() << "requires operands of the same element type, but "
                            "got "
                         << lhsType << " and " << rhsType;
  if (!getElementTypeOrSelf(resultType).isInteger(1))
    return emitOpError() << "requires a result of i1 elements, but got "
                         << resultType;
  return success();
}

//===----------------------------------------------------------------------===//
// SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  Type predType = getPred().getType();
  Type resultType = getType();
  if (!getElementTypeOrSelf(predType).isInteger(1))
    return emitOpError() << "requires a predicate of i1 elements, but got "
                         << predType;
  auto rankedPred = dyn_cast<RankedTensorType>(predType);
  bool scalarPred = rankedPred && rankedPred.getRank() == 0;
  if (!scalarPred && failed(verifyCompatibleShape(predType, resultType)))
    return emitOpError() << "requires a scalar predicate or one shaped like "
                            "the result, but got "
                         << predType << " for " << resultType;
  for (Value branch : {getOnTrue(), getOnFalse()}) {
    if (failed(verifyCompatibleShape(branch.getType(), resultType)) ||
        !elementTypesMatch(branch.getType(), resultType))
      return emitOpError() << "requires both branches to match the result "
                              "type "
                           << resultType << ", but got " << branch.getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastInDimOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  if (!elementTypesMatch(getOperand().getType(), getType()))
    return emitOpError() << "requires the operand and result element types to "
                            "match, but got "
                         << getOperand().getType() << " and " << getType();
  auto operandType = dyn_cast<RankedTensorType>(getOperand().getType());
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!operandType || !resultType)
    return success();
  ArrayRef<int64_t> dims = getBroadcastDimensions();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError() << "broadcast_dimensions has " << dims.size()
                         << " entries but the operand has rank "
                         << operandType.getRank();
  if (failed(verifyDimsInRange(*this, dims, resultType.getRank(),
                               "broadcast_dimensions")))
    return failure();
  for (auto [operandDim, resultDim] : llvm::enumerate(dims)) {
    int64_t from = operandType.getDimSize(operandDim);
    int64_t to = resultType.getDimSize(resultDim);
    if (ShapedType::isDynamic(from) || ShapedType::isDynamic(to))
      continue;
    if (from != 1 && from != to)
      return emitOpError() << "cannot broadcast operand dimension "
                           << operandDim << " of size " << from
                           << " to result dimension " << resultDim
                           << " of size " << to;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto operandType = cast<TensorType>(getOperand().getType());
  auto resultType = cast<TensorType>(getType());
  if (!elementTypesMatch(operandType, resultType))
    return emitOpError() << "requires the operand and result element types to "
                            "match, but got "
                         << operandType << " and " << resultType;
  if (operandType.hasStaticShape() && resultType.hasStaticShape() &&
      operandType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "cannot reshape " << operandType.getNumElements()
                         << " elements (" << operandType << ") into "
                         << resultType.getNumElements() << " (" << resultType
                         << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  if (!elementTypesMatch(getOperand().getType(), getType()))
    return emitOpError() << "requires the operand and result element types to "
                            "match, but got "
                         << getOperand().getType() << " and " << getType();
  auto operandType = dyn_cast<RankedTensorType>(getOperand().getType());
  if (!operandType)
    return success();
  ArrayRef<int64_t> permutation = getPermutation();
  if (static_cast<int64_t>(permutation.size()) != operandType.getRank())
    return emitOpError() << "permutation has " << permutation.size()
                         << " entries but the operand has rank "
                         << operandType.getRank();
  if (failed(verifyDimsInRange(*this, permutation, operandType.getRank(),
                               "permutation")))
    return failure();
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!resultType)
    return success();
  SmallVector<int64_t> expected;
  for (int64_t dim : permutation)
    expected.push_back(operandType.getDimSize(dim));
  if (failed(verifyCompatibleShape(expected, resultType.getShape())))
    return emitOpError() << "result type " << resultType
                         << " does not match the permuted operand type "
                         << operandType;
  return success();
}

//===----------------------------------------------------------------------===//
// DotGeneralOp
//===----------------------------------------------------------------------===//

LogicalResult DotGeneralOp::verify() {
  DotDimensionNumbersAttr dims = getDotDimensionNumbers();
  ArrayRef<int64_t> lhsBatching = dims.getLhsBatchingDimensions();
  ArrayRef<int64_t> rhsBatching = dims.getRhsBatchingDimensions();
  ArrayRef<int64_t> lhsContracting = dims.getLhsContractingDimensions();
  ArrayRef<int64_t> rhsContracting = dims.getRhsContractingDimensions();
  if (lhsBatching.size() != rhsBatching.size())
    return emitOpError() << "requires as many lhs as rhs batching dimensions, "
                            "but got "
                         << lhsBatching.size() << " and " << rhsBatching.size();
  if (lhsContracting.size() != rhsContracting.size())
    return emitOpError() << "requires as many lhs as rhs contracting "
                            "dimensions, but got "
                         << lhsContracting.size() << " and "
                         << rhsContracting.size();
  if (ArrayAttr precisions = getPrecisionConfigAttr();
      precisions && precisions.size() > 2)
    return emitOpError() << "expects at most 2 precision config values, but "
                            "got "
                         << precisions.size();
  auto lhsType = dyn_cast<RankedTensorType>(getLhs().getType());
  auto rhsType = dyn_cast<RankedTensorType>(getRhs().getType());
  if (!lhsType || !rhsType)
    return success();
  // Batching and contracting dimensions together must be distinct.
  SmallVector<int64_t> lhsUsed(lhsBatching), rhsUsed(rhsBatching);
  llvm::append_range(lhsUsed, lhsContracting);
  llvm::append_range(rhsUsed, rhsContracting);
  if (failed(verifyDimsInRange(*this, lhsUsed, lhsType.getRank(),
                               "lhs batching+contracting dimensions")) ||
      failed(verifyDimsInRange(*this, rhsUsed, rhsType.getRank(),
                               "rhs batching+contracting dimensions")))
    return failure();
  auto sizesAgree = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  for (auto [lhsDim, rhsDim] : llvm::zip_equal(lhsBatching, rhsBatching))
    if (!sizesAgree(lhsType.getDimSize(lhsDim), rhsType.getDimSize(rhsDim)))
      return emitOpError() << "batching dimension sizes differ: lhs dimension "
                           << lhsDim << " has size "
                           << lhsType.getDimSize(lhsDim) << ", rhs dimension "
                           << rhsDim << " has size "
                           << rhsType.getDimSize(rhsDim);
  for (auto [lhsDim, rhsDim] : llvm::zip_equal(lhsContracting, rhsContracting))
    if (!sizesAgree(lhsType.getDimSize(lhsDim), rhsType.getDimSize(rhsDim)))
      return emitOpError()
             << "contracting dimension sizes differ: lhs dimension " << lhsDim
             << " has size " << lhsType.getDimSize(lhsDim)
             << ", rhs dimension " << rhsDim << " has size "
             << rhsType.getDimSize(rhsDim);
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!resultType)
    return success();
  // Result: batch dimensions, then lhs free, then rhs free dimensions.
  SmallVector<int64_t> expected;
  for (int64_t dim : lhsBatching)
    expected.push_back(lhsType.getDimSize(dim));
  for (int64_t dim = 0; dim < lhsType.getRank(); ++dim)
    if (!llvm::is_contained(lhsUsed, dim))
      expected.push_back(lhsType.getDimSize(dim));
  for (int64_t dim = 0; dim < rhsType.getRank(); ++dim)
    if (!llvm::is_contained(rhsUsed, dim))
      expected.push_back(rhsType.getDimSize(dim));
  if (failed(verifyCompatibleShape(expected, resultType.getShape())))
    return emitOpError() << "result type " << resultType
                         << " does not match the shape ["
                         << ArrayRef<int64_t>(expected)
                         << "] implied by the operands and dimension numbers";
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

/// The single op of `body` if the reduce can print in the compact `applies`
/// form: one commutative binary op of this dialect on scalars of the first
/// input's element type, applied to the block arguments in order, whose
/// result is returned. Ops carrying attributes are excluded because the
/// compact form could not print them.
static Operation *getCompactReducer(ReduceOp op) {
  Region &body = op.getBody();
  if (op.getInputs().empty() || !body.hasOneBlock())
    return nullptr;
  Block &block = body.front();
  if (block.getOperations().size() != 2)
    return nullptr;
  Operation &inner = block.front();
  auto terminator = dyn_cast<ReturnOp>(block.back());
  if (!terminator || !inner.isRegistered() ||
      inner.getDialect() != op->getDialect() ||
      !inner.hasTrait<OpTrait::IsCommutative>() ||
      inner.getNumOperands() != 2 || inner.getNumResults() != 1 ||
      inner.getNumRegions() != 0 || !inner.getAttrs().empty() ||
      !terminator->getAttrs().empty())
    return nullptr;
  Type scalar = RankedTensorType::get(
      {}, getElementTypeOrSelf(op.getInputs().front().getType()));
  if (!llvm::all_of(inner.getOperandTypes(),
                    [&](Type type) { return type == scalar; }) ||
      inner.getResult(0).getType() != scalar)
    return nullptr;
  if (!llvm::equal(block.getArguments(), inner.getOperands()) ||
      !llvm::equal(inner.getResults(), terminator.getOperands()))
    return nullptr;
  return &inner;
}

void ReduceOp::print(OpAsmPrinter &printer) {
  size_t numInputs = getInputs().size();
  llvm::interleaveComma(llvm::seq<size_t>(0, numInputs), printer,
                        [&](size_t index) {
                          printer << '(' << getInputs()[index]
                                  << " init: " << getInitValues()[index]
                                  << ')';
                        });
  Operation *compact = getCompactReducer(*this);
  if (compact) {
    printer << " applies ";
    printer.printKeywordOrString(compact->getName().getStringRef());
  }
  printer << " across dimensions = ";
  printer.printStrippedAttrOrType(getDimensionsAttr());
  printer.printOptionalAttrDict((*this)->getAttrs(), {getDimensionsAttrName()});
  printer << " : ";
  printer.printFunctionalType(getOperation());
  if (compact || getBody().empty())
    return;
  // Region form: block arguments paired as (element, accumulator) per input.
  Block &block = getBody().front();
  printer.printNewline();
  printer << " reducer";
  if (block.getNumArguments() == 2 * numInputs) {
    for (size_t index = 0; index < numInputs; ++index) {
      printer << '(';
      printer.printRegionArgument(block.getArgument(index));
      printer << ", ";
      printer.printRegionArgument(block.getArgument(index + numInputs));
      printer << ") ";
    }
  }
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> inputs, inits;
  auto parsePair = [&]() -> ParseResult {
    return failure(parser.parseLParen() ||
                   parser.parseOperand(inputs.emplace_back()) ||
                   parser.parseKeyword("init") || parser.parseColon() ||
                   parser.parseOperand(inits.emplace_back()) ||
                   parser.parseRParen());
  };
  if (parser.parseCommaSeparatedList(parsePair))
    return failure();
  llvm::append_range(inputs, inits);

  std::optional<OperationName> reducerName;
  if (succeeded(parser.parseOptionalKeyword("applies"))) {
    SMLoc nameLoc = parser.getCurrentLocation();
    FailureOr<OperationName> name = parser.parseCustomOperationName();
    if (failed(name))
      return failure();
    if (!name->isRegistered() ||
        name->getDialectNamespace() != result.name.getDialectNamespace() ||
        !name->hasTrait<OpTrait::IsCommutative>() ||
        !name->hasTrait<OpTrait::NOperands<2>::Impl>() ||
        !name->hasTrait<OpTrait::OneResult>() ||
        !name->hasTrait<OpTrait::ZeroRegions>())
      return parser.emitError(nameLoc)
             << "expected a commutative binary op of the stablehlo dialect "
                "after `applies`, got '"
             << name->getStringRef() << "'";
    reducerName = *name;
  }
  DenseI64ArrayAttr dims;
  SMLoc typeLoc;
  FunctionType type;
  if (parser.parseKeyword("across") || parser.parseKeyword("dimensions") ||
      parser.parseEqual() || parser.parseCustomAttributeWithFallback(dims) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      (typeLoc = parser.getCurrentLocation(), parser.parseType(type)) ||
      parser.resolveOperands(inputs, type.getInputs(), loc, result.operands))
    return failure();
  result.addAttribute(getDimensionsAttrName(result.name), dims);
  result.addTypes(type.getResults());
  Region *body = result.addRegion();

  if (!reducerName) {
    // Region form: `reducer(%e0: T, %a0: T) (%e1: U, %a1: U) { ... }`.
    SmallVector<OpAsmParser::Argument> elements, accumulators;
    if (parser.parseKeyword("reducer"))
      return failure();
    while (succeeded(parser.parseOptionalLParen())) {
      if (parser.parseArgument(elements.emplace_back(), /*allowType=*/true) ||
          parser.parseComma() ||
          parser.parseArgument(accumulators.emplace_back(),
                               /*allowType=*/true) ||
          parser.parseRParen())
        return failure();
    }
    llvm::append_range(elements, accumulators);
    return parser.parseRegion(*body, elements);
  }

  // Compact form: rebuild `^bb0(%a, %b): %r = op %a, %b; return %r`.
  if (type.getNumInputs() == 0)
    return parser.emitError(typeLoc, "expected at least one input type");
  Location opLoc = parser.getEncodedSourceLoc(loc);
  Type scalar =
      RankedTensorType::get({}, getElementTypeOrSelf(type.getInput(0)));
  Block &block = body->emplaceBlock();
  // The region is not attached to an op yet, so the builder cannot take its
  // context from the block.
  OpBuilder builder(parser.getContext());
  builder.setInsertionPointToEnd(&block);
  OperationState innerState(opLoc, *reducerName);
  innerState.addOperands({block.addArgument(scalar, opLoc),
                          block.addArgument(scalar, opLoc)});
  innerState.addTypes(scalar);
  Operation *inner = builder.create(innerState);
  ReturnOp::create(builder, opLoc, inner->getResults());
  return success();
}

LogicalResult ReduceOp::verify() {
  if (getNumOperands() % 2 != 0)
    return emitOpError() << "requires as many inputs as init values, but got "
                         << getNumOperands() << " operands";
  size_t numInputs = getInputs().size();
  if (numInputs == 0)
    return emitOpError("requires at least one input");
  if (getNumResults() != numInputs)
    return emitOpError() << "requires one result per input, but got "
                         << getNumResults() << " results for " << numInputs
                         << " inputs";
  ArrayRef<int64_t> dims = getDimensions();
  auto firstType = dyn_cast<RankedTensorType>(getInputs().front().getType());
  for (auto [index, input, init, result] :
       llvm::enumerate(getInputs(), getInitValues(), getResults())) {
    Type expectedType = firstType ? Type(firstType) : input.getType();
    if (failed(verifyCompatibleShape(input.getType(), expectedType)))
      return emitOpError() << "requires all inputs to have the same shape, "
                              "but input #"
                           << index << " is " << input.getType();
    auto initType = dyn_cast<RankedTensorType>(init.getType());
    if (!initType || initType.getRank() != 0)
      return emitOpError() << "requires scalar init values, but init value #"
                           << index << " is " << init.getType();
    if (!elementTypesMatch(input.getType(), initType))
      return emitOpError() << "requires input #" << index << " ("
                           << input.getType() << ") and its init value ("
                           << initType << ") to have the same element type";
  }
  if (firstType) {
    if (failed(verifyDimsInRange(*this, dims, firstType.getRank(),
                                 "dimensions")))
      return failure();
    SmallVector<int64_t> expected;
    for (int64_t dim = 0; dim < firstType.getRank(); ++dim)
      if (!llvm::is_contained(dims, dim))
        expected.push_back(firstType.getDimSize(dim));
    for (auto [index, result] : llvm::enumerate(getResults())) {
      auto resultType = dyn_cast<RankedTensorType>(result.getType());
      if (resultType &&
          failed(verifyCompatibleShape(expected, resultType.getShape())))
        return emitOpError() << "result #" << index << " (" << resultType
                             << ") does not have the input shape without the "
                                "reduced dimensions ["
                             << ArrayRef<int64_t>(expected) << "]";
    }
  }
  Block &block = getBody().front();
  if (block.getNumArguments() != 2 * numInputs)
    return emitOpError() << "requires the reducer to take " << 2 * numInputs
                         << " arguments, but it takes "
                         << block.getNumArguments();
  for (BlockArgument argument : block.getArguments()) {
    auto argumentType = dyn_cast<RankedTensorType>(argument.getType());
    if (!argumentType || argumentType.getRank() != 0)
      return emitOpError() << "requires scalar reducer arguments, but argument "
                              "#"
                           << argument.getArgNumber() << " is "
                           << argument.getType();
  }
  Operation *terminator = block.empty() ? nullptr : &block.back();
  if (terminator && isa<ReturnOp>(terminator) &&
      terminator->getNumOperands() != numInputs)
    return emitOpError() << "requires the reducer to return " << numInputs
                         << " values, but it returns "
                         << terminator->getNumOperands();
  return success();
}

//===----------------------------------------------------------------------===//
// IotaOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type)
    return emitOpError() << "requires a ranked result, but got " << getType();
  int64_t dim = getIotaDimension();
  if (dim < 0 || dim >= type.getRank())
    return emitOpError() << "iota_dimension " << dim
                         << " is out of range [0, " << type.getRank() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatenateOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatenateOp::verify() {
  if (getInputs().empty())
    return emitOpError("requires at least one input");
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!resultType)
    return success();
  int64_t rank = resultType.getRank();
  int64_t dim = getDimension();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dimension " << dim << " is out of range [0, "
                         << rank << ")";
  int64_t total = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType) {
      total = ShapedType::kDynamic;
      continue;
    }
    if (!elementTypesMatch(inputType, resultType))
      return emitOpError() << "requires input #" << index << " ("
                           << inputType << ") to have the result's element "
                           << "type";
    if (inputType.getRank() != rank)
      return emitOpError() << "requires input #" << index << " ("
                           << inputType << ") to have rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim)
        continue;
      int64_t in = inputType.getDimSize(d), out = resultType.getDimSize(d);
      if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) &&
          in != out)
        return emitOpError() << "input #" << index << " (" << inputType
                             << ") differs from the result (" << resultType
                             << ") in dimension " << d;
    }
    int64_t size = inputType.getDimSize(dim);
    total = ShapedType::isDynamic(total) || ShapedType::isDynamic(size)
                ? ShapedType::kDynamic
                : total + size;
  }
  int64_t resultSize = resultType.getDimSize(dim);
  if (!ShapedType::isDynamic(total) && !ShapedType::isDynamic(resultSize) &&
      total != resultSize)
    return emitOpError() << "result dimension " << dim << " has size "
                         << resultSize << " but the inputs add up to "
                         << total;
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> starts = getStartIndices();
  ArrayRef<int64_t> limits = getLimitIndices();
  ArrayRef<int64_t> strides = getStrides();
  if (starts.size() != limits.size() || starts.size() != strides.size())
    return emitOpError() << "requires start_indices, limit_indices and strides "
                            "of equal size, but got "
                         << starts.size() << ", " << limits.size() << " and "
                         << strides.size();
  if (!elementTypesMatch(getOperand().getType(), getType()))
    return emitOpError() << "requires the operand and result element types to "
                            "match, but got "
                         << getOperand().getType() << " and " << getType();
  auto operandType = dyn_cast<RankedTensorType>(getOperand().getType());
  if (!operandType)
    return success();
  if (static_cast<int64_t>(starts.size()) != operandType.getRank())
    return emitOpError() << "has " << starts.size()
                         << " ranges but the operand has rank "
                         << operandType.getRank();
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (resultType && resultType.getRank() != operandType.getRank())
    return emitOpError() << "requires a result of rank "
                         << operandType.getRank() << ", but got "
                         << resultType;
  for (size_t d = 0; d < starts.size(); ++d) {
    int64_t size = operandType.getDimSize(d);
    if (strides[d] < 1)
      return emitOpError() << "stride " << strides[d] << " of dimension " << d
                           << " must be positive";
    if (starts[d] < 0 || starts[d] > limits[d] ||
        (!ShapedType::isDynamic(size) && limits[d] > size))
      return emitOpError() << "range " << starts[d] << ":" << limits[d]
                           << " of dimension " << d
                           << " is not within [0, " << size << "]";
    if (!resultType)
      continue;
    int64_t expected = (limits[d] - starts[d] + strides[d] - 1) / strides[d];
    int64_t actual = resultType.getDimSize(d);
    if (!ShapedType::isDynamic(actual) && actual != expected)
      return emitOpError() << "result dimension " << d << " has size "
                           << actual << " but the slice selects " << expected
                           << " elements";
  }
  return success();
}
