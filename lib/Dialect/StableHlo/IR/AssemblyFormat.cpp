//===- AssemblyFormat.cpp - Syntax of the StableHLO ops -------------------===//
//
// The custom directives of the declarative formats, then the two ops written
// by hand (constant, reduce). Everything prints the bytes upstream
// StableHLO's printer writes and parses them back. Type lists are checked
// against the operand count here because the generated parser resolves the
// operands with whatever types a directive returns.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/AssemblyFormat.h"

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::stablehlo;

/// Parses `(T0, ...) -> R` whose inputs fill `operands` and whose single
/// result is `result`.
static ParseResult parseFunctionalTypeInto(OpAsmParser &parser,
                                           FunctionType function,
                                           SMLoc loc,
                                           ArrayRef<Type *> operands,
                                           Type &result) {
  if (function.getNumResults() != 1)
    return parser.emitError(loc, "expected a single result type");
  if (function.getNumInputs() != operands.size())
    return parser.emitError(loc)
           << "number of operands and types do not match: got "
           << operands.size() << " operands and " << function.getNumInputs()
           << " types";
  for (auto [operand, type] : llvm::zip_equal(operands, function.getInputs()))
    *operand = type;
  result = function.getResult(0);
  return success();
}

//===----------------------------------------------------------------------===//
// SameOperandsAndResultType
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::detail::parseSameOperandsAndResultType(
    OpAsmParser &parser, ArrayRef<Type *> types) {
  SMLoc loc = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type))
    return failure();
  if (auto function = dyn_cast<FunctionType>(type))
    return parseFunctionalTypeInto(parser, function, loc, types.drop_back(),
                                   *types.back());
  // A bare type is the type of every operand and of the result.
  for (Type *slot : types)
    *slot = type;
  return success();
}

void mlir::stablehlo::detail::printSameOperandsAndResultType(
    OpAsmPrinter &printer, ArrayRef<Type> types) {
  Type result = types.back();
  ArrayRef<Type> operands = types.drop_back();
  if (llvm::all_equal(types))
    printer << result;
  else
    printer.printFunctionalType(operands, ArrayRef<Type>(result));
}

//===----------------------------------------------------------------------===//
// SelectOpType
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseSelectOpType(OpAsmParser &parser,
                                               Type &pred, Type &onTrue,
                                               Type &onFalse, Type &result) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<Type, 2> types;
  if (parser.parseTypeList(types))
    return failure();
  if (types.size() == 2) {
    pred = types[0];
    onTrue = onFalse = result = types[1];
    return success();
  }
  auto function =
      types.size() == 1 ? dyn_cast<FunctionType>(types[0]) : FunctionType();
  if (!function)
    return parser.emitError(loc, "expected `predicate type, value type` or a "
                                 "functional type");
  return parseFunctionalTypeInto(parser, function, loc,
                                 {&pred, &onTrue, &onFalse}, result);
}

void mlir::stablehlo::printSelectOpType(OpAsmPrinter &printer, Operation *op,
                                        Type pred, Type onTrue, Type onFalse,
                                        Type result) {
  if (onTrue == result && onFalse == result)
    printer << pred << ", " << result;
  else
    printer.printFunctionalType(op);
}

//===----------------------------------------------------------------------===//
// VariadicOperandWithAttribute
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseVariadicOperandWithAttribute(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands) {
  // Upstream prints a lone comma when there are no operands (a
  // dynamic_slice of a scalar: `%x, , sizes = []`); accept it.
  if (succeeded(parser.parseOptionalComma()))
    return success();
  // Operands each followed by a comma, up to the attribute's keyword.
  while (true) {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult parsed = parser.parseOptionalOperand(operand);
    if (!parsed.has_value())
      return success();
    if (failed(*parsed))
      return failure();
    if (failed(parser.parseOptionalComma()))
      return parser.emitError(parser.getCurrentLocation(),
                              "expected ',' after each operand, before the "
                              "attribute that follows them");
    operands.push_back(operand);
  }
}

void mlir::stablehlo::printVariadicOperandWithAttribute(OpAsmPrinter &printer,
                                                        Operation *,
                                                        OperandRange operands) {
  // The space after each comma is printed here, not by the format (which
  // follows the directive with ``), so that no operands print nothing.
  for (Value operand : operands)
    printer << operand << ", ";
}

//===----------------------------------------------------------------------===//
// CustomCallTarget, PairwiseOpType
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseCustomCallTarget(OpAsmParser &parser,
                                                   StringAttr &target) {
  return parser.parseSymbolName(target);
}

void mlir::stablehlo::printCustomCallTarget(OpAsmPrinter &printer,
                                            Operation *, StringAttr target) {
  printer.printSymbolName(target.getValue());
}

ParseResult
mlir::stablehlo::parsePairwiseOpType(OpAsmParser &parser,
                                     SmallVectorImpl<Type> &operands,
                                     SmallVectorImpl<Type> &results) {
  if (parser.parseTypeList(operands))
    return failure();
  results.assign(operands.begin(), operands.end());
  return success();
}

void mlir::stablehlo::printPairwiseOpType(OpAsmPrinter &printer, Operation *,
                                          TypeRange operands, TypeRange) {
  llvm::interleaveComma(operands, printer);
}

//===----------------------------------------------------------------------===//
// SliceRanges
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseSliceRanges(OpAsmParser &parser,
                                              DenseI64ArrayAttr &starts,
                                              DenseI64ArrayAttr &limits,
                                              DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> startValues, limitValues, strideValues;
  auto parseRange = [&]() -> ParseResult {
    if (parser.parseInteger(startValues.emplace_back()) ||
        parser.parseColon() || parser.parseInteger(limitValues.emplace_back()))
      return failure();
    // The stride is optional and 1 when left out.
    strideValues.push_back(1);
    if (succeeded(parser.parseOptionalColon()))
      return parser.parseInteger(strideValues.back());
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRange))
    return failure();
  Builder &builder = parser.getBuilder();
  starts = builder.getDenseI64ArrayAttr(startValues);
  limits = builder.getDenseI64ArrayAttr(limitValues);
  strides = builder.getDenseI64ArrayAttr(strideValues);
  return success();
}

void mlir::stablehlo::printSliceRanges(OpAsmPrinter &printer, Operation *,
                                       DenseI64ArrayAttr starts,
                                       DenseI64ArrayAttr limits,
                                       DenseI64ArrayAttr strides) {
  printer << '[';
  if (starts.size() == limits.size() && starts.size() == strides.size()) {
    llvm::interleaveComma(llvm::seq<int64_t>(0, starts.size()), printer,
                          [&](int64_t d) {
                            printer << starts[d] << ':' << limits[d];
                            if (strides[d] != 1)
                              printer << ':' << strides[d];
                          });
  } else {
    // Not parseable, but printing invalid IR must not crash.
    printer << "start_indices: " << starts.asArrayRef()
            << ", limit_indices: " << limits.asArrayRef()
            << ", strides: " << strides.asArrayRef();
  }
  printer << ']';
}

//===----------------------------------------------------------------------===//
// DotDimensionNumbers
//===----------------------------------------------------------------------===//

static ParseResult parseDimList(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &dims) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        return parser.parseInteger(dims.emplace_back());
      });
}

/// `= [l0, ...] x [r0, ...]`
static ParseResult parseDimPair(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &lhs,
                                SmallVectorImpl<int64_t> &rhs) {
  return failure(parser.parseEqual() || parseDimList(parser, lhs) ||
                 parser.parseKeyword("x") || parseDimList(parser, rhs));
}

/// `, name = [l0, ...] x [r0, ...]`
static void printDimPair(OpAsmPrinter &printer, StringRef name,
                         ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  printer << ", " << name << " = [" << lhs << "] x [" << rhs << ']';
}

ParseResult
mlir::stablehlo::parseDotDimensionNumbers(OpAsmParser &parser,
                                          DotDimensionNumbersAttr &dims) {
  SmallVector<int64_t> lhsBatching, rhsBatching, lhsContracting,
      rhsContracting;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalComma()))
    return parser.emitError(loc, "expected `contracting_dims = [...] x [...]`");
  if (succeeded(parser.parseOptionalKeyword("batching_dims")) &&
      (parseDimPair(parser, lhsBatching, rhsBatching) || parser.parseComma()))
    return failure();
  if (parser.parseKeyword("contracting_dims") ||
      parseDimPair(parser, lhsContracting, rhsContracting))
    return failure();
  dims = DotDimensionNumbersAttr::get(parser.getContext(), lhsBatching,
                                      rhsBatching, lhsContracting,
                                      rhsContracting);
  return success();
}

void mlir::stablehlo::printDotDimensionNumbers(OpAsmPrinter &printer,
                                               Operation *,
                                               DotDimensionNumbersAttr dims) {
  ArrayRef<int64_t> lhsBatching = dims.getLhsBatchingDimensions();
  ArrayRef<int64_t> rhsBatching = dims.getRhsBatchingDimensions();
  if (!lhsBatching.empty() || !rhsBatching.empty())
    printDimPair(printer, "batching_dims", lhsBatching, rhsBatching);
  printDimPair(printer, "contracting_dims", dims.getLhsContractingDimensions(),
               dims.getRhsContractingDimensions());
}

//===----------------------------------------------------------------------===//
// PrecisionConfigAndAlgorithm
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parsePrecisionConfigAndAlgorithm(
    OpAsmParser &parser, ArrayAttr &precisions, DotAlgorithmAttr &algorithm) {
  if (failed(parser.parseOptionalComma()))
    return success();
  if (succeeded(parser.parseOptionalKeyword("precision"))) {
    SmallVector<Attribute, 2> values;
    auto parsePrecision = [&]() -> ParseResult {
      values.push_back(PrecisionAttr::parse(parser, Type()));
      return success(values.back() != nullptr);
    };
    if (parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       parsePrecision))
      return failure();
    precisions = parser.getBuilder().getArrayAttr(values);
    if (failed(parser.parseOptionalComma()))
      return success();
  }
  if (parser.parseKeyword("algorithm") || parser.parseEqual())
    return failure();
  algorithm = dyn_cast_if_present<DotAlgorithmAttr>(
      DotAlgorithmAttr::parse(parser, Type()));
  return success(algorithm != nullptr);
}

void mlir::stablehlo::printPrecisionConfigAndAlgorithm(
    OpAsmPrinter &printer, Operation *, ArrayAttr precisions,
    DotAlgorithmAttr algorithm) {
  if (precisions) {
    printer << ", precision = [";
    llvm::interleaveComma(precisions, printer, [&](Attribute precision) {
      printer << stringifyPrecision(cast<PrecisionAttr>(precision).getValue());
    });
    printer << ']';
  }
  if (algorithm) {
    printer << ", algorithm = ";
    algorithm.print(printer);
  }
}

//===----------------------------------------------------------------------===//
// Hand-written forms
//===----------------------------------------------------------------------===//
//
// Which form constant and reduce print depends on the op's contents (the
// value's type, the reducer region), which a declarative format cannot
// express; upstream writes these by hand too.

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
    SMLoc loc = parser.getCurrentLocation();
    FunctionType type;
    if (parser.parseOptionalAttrDict(result.attributes) ||
        parser.parseColonType(type) ||
        parser.resolveOperands(ArrayRef<OpAsmParser::UnresolvedOperand>(),
                               type.getInputs(), loc, result.operands))
      return failure();
    result.addTypes(type.getResults());
    return success();
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


//===----------------------------------------------------------------------===//
// WhileOp
//===----------------------------------------------------------------------===//

// `stablehlo.while(%iterArg = %init, ...) : T, ... attributes {...}`, a
// newline, then `cond { ... } do { ... }`. The names before `=` are the
// block arguments of both regions.
ParseResult WhileOp::parse(OpAsmParser &parser, OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<OpAsmParser::Argument> arguments;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Paren, [&]() -> ParseResult {
            OpAsmParser::Argument argument;
            OpAsmParser::UnresolvedOperand operand;
            if (parser.parseArgument(argument) || parser.parseEqual() ||
                parser.parseOperand(operand))
              return failure();
            arguments.push_back(argument);
            operands.push_back(operand);
            return success();
          }))
    return failure();
  SmallVector<Type> types;
  if (!operands.empty() && (parser.parseColon() || parser.parseTypeList(types)))
    return failure();
  if (types.size() != operands.size())
    return parser.emitError(loc)
           << "expected " << operands.size() << " types, got "
           << types.size();
  for (auto [argument, type] : llvm::zip_equal(arguments, types))
    argument.type = type;
  result.addTypes(types);
  if (parser.resolveOperands(operands, types, loc, result.operands) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.parseKeyword("cond") ||
      parser.parseRegion(*result.addRegion(), arguments) ||
      parser.parseKeyword("do") ||
      parser.parseRegion(*result.addRegion(), arguments))
    return failure();
  return success();
}

void WhileOp::print(OpAsmPrinter &printer) {
  printer << '(';
  llvm::interleaveComma(
      llvm::zip(getBody().front().getArguments(), getOperands()), printer,
      [&](auto pair) {
        printer.printOperand(std::get<0>(pair));
        printer << " = ";
        printer.printOperand(std::get<1>(pair));
      });
  printer << ')';
  if (getNumOperands() != 0) {
    printer << " : ";
    llvm::interleaveComma(getOperandTypes(), printer);
  }
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  printer.printNewline();
  printer << "cond ";
  printer.printRegion(getCond(), /*printEntryBlockArgs=*/false);
  printer << " do ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}
