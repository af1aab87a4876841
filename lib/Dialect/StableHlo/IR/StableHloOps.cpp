//===- StableHloOps.cpp - StableHLO compat ops ----------------------------===//
//
// Verifiers and folders of the modelled ops; their syntax is in
// StableHloOps.td and AssemblyFormat.cpp. Verifiers check the invariants the
// passes rely on (shapes, element types, dimension numbers in range) and
// stay lenient where types are dynamic or not builtin (quantized element
// types are opaque here).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Dialect/StableHlo/IR/Token.h"

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

/// Whether `lhs` and `rhs` are static dimension sizes that differ.
static bool sizesDiffer(int64_t lhs, int64_t rhs) {
  return !ShapedType::isDynamic(lhs) && !ShapedType::isDynamic(rhs) &&
         lhs != rhs;
}

/// For the ops that rearrange the elements of their one operand.
static LogicalResult verifyOperandElementType(Operation *op) {
  Type operand = op->getOperand(0).getType();
  Type result = op->getResult(0).getType();
  if (elementTypesMatch(operand, result))
    return success();
  return op->emitOpError() << "requires the operand and result element types "
                              "to match, but got "
                           << operand << " and " << result;
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
    auto complex = dyn_cast<ComplexType>(getElementTypeOrSelf(type));
    bool complexAbs = isa<AbsOp>(op) && complex &&
                      complex.getElementType() ==
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
// CompareOp, SelectOp
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
// Shape ops: broadcast_in_dim, reshape, transpose, iota, concatenate, slice
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  if (failed(verifyOperandElementType(*this)))
    return failure();
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
    if (from != 1 && sizesDiffer(from, to))
      return emitOpError() << "cannot broadcast operand dimension "
                           << operandDim << " of size " << from
                           << " to result dimension " << resultDim
                           << " of size " << to;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (failed(verifyOperandElementType(*this)))
    return failure();
  TensorType operandType = getOperand().getType(), resultType = getType();
  if (operandType.hasStaticShape() && resultType.hasStaticShape() &&
      operandType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "cannot reshape " << operandType.getNumElements()
                         << " elements (" << operandType << ") into "
                         << resultType.getNumElements() << " (" << resultType
                         << ")";
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(verifyOperandElementType(*this)))
    return failure();
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
  SmallVector<int64_t> expected = llvm::map_to_vector(
      permutation, [&](int64_t dim) { return operandType.getDimSize(dim); });
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
  struct DimPairs {
    StringRef kind;
    ArrayRef<int64_t> lhs, rhs;
  } pairs[] = {{"batching", lhsBatching, rhsBatching},
               {"contracting", lhsContracting, rhsContracting}};
  for (const DimPairs &pair : pairs)
    if (pair.lhs.size() != pair.rhs.size())
      return emitOpError() << "requires as many lhs as rhs " << pair.kind
                           << " dimensions, but got " << pair.lhs.size()
                           << " and " << pair.rhs.size();
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
  for (const DimPairs &pair : pairs) {
    for (auto [lhsDim, rhsDim] : llvm::zip_equal(pair.lhs, pair.rhs)) {
      int64_t lhsSize = lhsType.getDimSize(lhsDim);
      int64_t rhsSize = rhsType.getDimSize(rhsDim);
      if (sizesDiffer(lhsSize, rhsSize))
        return emitOpError() << pair.kind << " dimension sizes differ: lhs "
                             << "dimension " << lhsDim << " has size "
                             << lhsSize << ", rhs dimension " << rhsDim
                             << " has size " << rhsSize;
    }
  }
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
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim &&
          sizesDiffer(inputType.getDimSize(d), resultType.getDimSize(d)))
        return emitOpError() << "input #" << index << " (" << inputType
                             << ") differs from the result (" << resultType
                             << ") in dimension " << d;
    int64_t size = inputType.getDimSize(dim);
    total = ShapedType::isDynamic(total) || ShapedType::isDynamic(size)
                ? ShapedType::kDynamic
                : total + size;
  }
  int64_t resultSize = resultType.getDimSize(dim);
  if (sizesDiffer(total, resultSize))
    return emitOpError() << "result dimension " << dim << " has size "
                         << resultSize << " but the inputs add up to "
                         << total;
  return success();
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> starts = getStartIndices();
  ArrayRef<int64_t> limits = getLimitIndices();
  ArrayRef<int64_t> strides = getStrides();
  if (starts.size() != limits.size() || starts.size() != strides.size())
    return emitOpError() << "requires start_indices, limit_indices and strides "
                            "of equal size, but got "
                         << starts.size() << ", " << limits.size() << " and "
                         << strides.size();
  if (failed(verifyOperandElementType(*this)))
    return failure();
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
    if (sizesDiffer(actual, expected))
      return emitOpError() << "result dimension " << d << " has size "
                           << actual << " but the slice selects " << expected
                           << " elements";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DynamicSliceOp, DynamicUpdateSliceOp
//===----------------------------------------------------------------------===//

/// The start indices of the dynamic slice ops: one per dimension of a
/// `rank`-dimensional operand, each a scalar integer tensor, all of one type.
static LogicalResult verifyStartIndices(Operation *op, ValueRange starts,
                                        int64_t rank) {
  if (static_cast<int64_t>(starts.size()) != rank)
    return op->emitOpError() << "has " << starts.size()
                             << " start indices but the operand has rank "
                             << rank << "; give one start index per dimension";
  for (auto [index, start] : llvm::enumerate(starts)) {
    auto type = dyn_cast<RankedTensorType>(start.getType());
    if (!type || type.getRank() != 0 ||
        !isa<IntegerType>(type.getElementType()))
      return op->emitOpError() << "start index #" << index
                               << " must be a scalar integer tensor such as "
                                  "tensor<i64>, but has type "
                               << start.getType();
    if (start.getType() != starts.front().getType())
      return op->emitOpError() << "start indices must all have one type, but "
                                  "#0 is "
                               << starts.front().getType() << " and #"
                               << index << " is " << start.getType();
  }
  return success();
}

LogicalResult DynamicSliceOp::verify() {
  if (failed(verifyOperandElementType(*this)))
    return failure();
  auto operandType = dyn_cast<RankedTensorType>(getOperand().getType());
  if (!operandType)
    return success();
  int64_t rank = operandType.getRank();
  if (failed(verifyStartIndices(*this, getStartIndices(), rank)))
    return failure();
  ArrayRef<int64_t> sizes = getSliceSizes();
  if (static_cast<int64_t>(sizes.size()) != rank)
    return emitOpError() << "has " << sizes.size()
                         << " slice sizes but the operand has rank " << rank;
  for (auto [dim, size] : llvm::enumerate(sizes)) {
    int64_t extent = operandType.getDimSize(dim);
    if (size < 0 || (!ShapedType::isDynamic(extent) && size > extent))
      return emitOpError() << "slice size " << size << " of dimension " << dim
                           << " is not within [0, " << extent << "]";
  }
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (resultType && failed(verifyCompatibleShape(resultType.getShape(), sizes)))
    return emitOpError() << "result type " << resultType
                         << " does not have the slice sizes [" << sizes
                         << "] as its shape";
  return success();
}

LogicalResult DynamicUpdateSliceOp::verify() {
  Type operandType = getOperand().getType();
  Type resultType = getType();
  if (failed(verifyCompatibleShape(operandType, resultType)) ||
      !elementTypesMatch(operandType, resultType))
    return emitOpError() << "result type " << resultType
                         << " must be the operand type " << operandType;
  if (!elementTypesMatch(getUpdate().getType(), operandType))
    return emitOpError() << "update " << getUpdate().getType()
                         << " must have the element type of the operand "
                         << operandType;
  auto ranked = dyn_cast<RankedTensorType>(operandType);
  if (!ranked)
    return success();
  int64_t rank = ranked.getRank();
  if (failed(verifyStartIndices(*this, getStartIndices(), rank)))
    return failure();
  auto update = dyn_cast<RankedTensorType>(getUpdate().getType());
  if (!update)
    return success();
  if (update.getRank() != rank)
    return emitOpError() << "update " << update << " must have the rank of "
                         << "the operand " << ranked;
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t size = update.getDimSize(dim), extent = ranked.getDimSize(dim);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(extent) &&
        size > extent)
      return emitOpError() << "update dimension " << dim << " has size "
                           << size << ", larger than the operand's " << extent;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CustomCallOp
//===----------------------------------------------------------------------===//

void CustomCallOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Every effect unless the op says it has none (upstream's definition).
  std::optional<bool> hasSideEffect = getHasSideEffect();
  if (hasSideEffect && !*hasSideEffect)
    return;
  effects.emplace_back(MemoryEffects::Allocate::get());
  effects.emplace_back(MemoryEffects::Free::get());
  effects.emplace_back(MemoryEffects::Write::get());
  effects.emplace_back(MemoryEffects::Read::get());
}

LogicalResult CustomCallOp::verify() {
  if (getCallTargetName().empty())
    return emitOpError("requires a non-empty call_target_name");
  // API_VERSION_UNSPECIFIED (0) to API_VERSION_TYPED_FFI (4); without the
  // attribute, the original API (1). Read through the attribute: GCC 12
  // misreads std::optional's payload here (-Wmaybe-uninitialized).
  IntegerAttr versionAttr = getApiVersionAttr();
  int64_t version = versionAttr ? versionAttr.getInt() : 1;
  if (versionAttr && (version < 0 || version > 4))
    return emitOpError() << "api_version " << version
                         << " is not a known custom call API version (0-4)";
  if (Attribute config = getBackendConfigAttr();
      config && isa<DictionaryAttr>(config) && version != 4)
    return emitOpError() << "takes a dictionary backend_config only with "
                            "api_version = 4 (typed FFI)";
  if (ArrayAttr callees = getCalledComputationsAttr())
    for (Attribute callee : callees)
      if (!isa<FlatSymbolRefAttr>(callee))
        return emitOpError() << "called_computations must hold symbol "
                                "references, got "
                             << callee;
  auto checkLayouts = [&](ArrayAttr layouts, size_t count,
                          StringRef what) -> LogicalResult {
    if (layouts && layouts.size() != count)
      return emitOpError() << "has " << layouts.size() << " " << what
                           << "_layouts for " << count << " " << what << "s";
    return success();
  };
  if (failed(checkLayouts(getOperandLayoutsAttr(), getNumOperands(),
                          "operand")) ||
      failed(checkLayouts(getResultLayoutsAttr(), getNumResults(), "result")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// WhileOp
//===----------------------------------------------------------------------===//

void WhileOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument argument : region.getArguments())
    setNameFn(argument, "iterArg");
}

LogicalResult WhileOp::verify() {
  TypeRange operandTypes = getOperandTypes();
  if (getResultTypes() != operandTypes)
    return emitOpError() << "requires the results to have the operand types";
  for (Region *region : {&getCond(), &getBody()}) {
    StringRef name = region == &getCond() ? "cond" : "body";
    Block &block = region->front();
    if (block.getArgumentTypes() != operandTypes)
      return emitOpError() << "requires the " << name
                           << " region to take the operand types as "
                              "arguments, but it takes "
                           << block.getNumArguments() << " arguments";
    Operation *terminator = block.empty() ? nullptr : &block.back();
    if (!terminator || !isa<ReturnOp>(terminator))
      return emitOpError() << "requires the " << name
                           << " region to end in stablehlo.return";
    TypeRange returned = terminator->getOperandTypes();
    if (region == &getCond()) {
      auto type = returned.size() == 1
                      ? dyn_cast<RankedTensorType>(returned.front())
                      : RankedTensorType();
      if (!type || type.getRank() != 0 ||
          !type.getElementType().isInteger(1))
        return emitOpError() << "requires the cond region to return a single "
                                "tensor<i1>";
    } else if (returned != operandTypes) {
      return emitOpError() << "requires the body region to return the "
                              "operand types";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// OptimizationBarrierOp, CreateTokenOp
//===----------------------------------------------------------------------===//

LogicalResult OptimizationBarrierOp::verify() {
  if (getOperandTypes() != getResultTypes())
    return emitOpError() << "requires the results to have the operand types";
  return success();
}

LogicalResult CreateTokenOp::verify() {
  if (!isTokenType(getType()))
    return emitOpError() << "requires a !stablehlo.token result, but got "
                         << getType();
  return success();
}
