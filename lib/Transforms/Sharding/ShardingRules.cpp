//===- ShardingRules.cpp - How ops map dimensions of their values ---------===//
//
// A compact set of rules, enough for the data flow that crosses program
// boundaries in training steps (activations, residuals, gradients,
// parameters): elementwise ops from the op catalog, the shape ops, dots,
// reductions, gathers (embedding lookups) and the dynamic slices of
// microbatch loops. Everything else has no rule on purpose: XLA decides the inside
// of each program; these rules only choose the layouts at its boundary.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Sharding/ShardingRules.h"

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mpmd;

namespace {

RankedTensorType rankedType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

/// One factor per dimension over every value of `values` that has the shape
/// of the first (scalars broadcast by select/clamp are left out).
SmallVector<ShardingFactor> sameShapeFactors(ArrayRef<Value> values) {
  SmallVector<ShardingFactor> factors;
  if (values.empty())
    return factors;
  RankedTensorType reference = rankedType(values.front());
  if (!reference)
    return factors;
  SmallVector<Value> members;
  for (Value value : values)
    if (RankedTensorType type = rankedType(value);
        type && type.getShape() == reference.getShape())
      members.push_back(value);
  for (int64_t dim = 0; dim < reference.getRank(); ++dim) {
    ShardingFactor &factor = factors.emplace_back();
    for (Value value : members)
      factor.push_back({value, dim});
  }
  return factors;
}

SmallVector<ShardingFactor> elementwiseFactors(Operation *op) {
  if (op->getNumResults() == 0)
    return {};
  SmallVector<Value> values(op->getResults());
  llvm::append_range(values, op->getOperands());
  return sameShapeFactors(values);
}

/// Operand i and result i are the same tensor (optimization_barrier,
/// sharding_constraint).
SmallVector<ShardingFactor> pairwiseIdentityFactors(Operation *op) {
  SmallVector<ShardingFactor> factors;
  for (auto [operand, result] :
       llvm::zip(op->getOperands(), op->getResults())) {
    RankedTensorType type = rankedType(result);
    if (!type || operand.getType() != result.getType())
      continue;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      factors.push_back({{operand, dim}, {result, dim}});
  }
  return factors;
}

SmallVector<ShardingFactor> broadcastFactors(stablehlo::BroadcastInDimOp op) {
  RankedTensorType in = rankedType(op.getOperand());
  RankedTensorType out = rankedType(op.getResult());
  if (!in || !out)
    return {};
  SmallVector<ShardingFactor> factors;
  for (auto [dim, target] : llvm::enumerate(op.getBroadcastDimensions()))
    if (target < out.getRank() && in.getDimSize(dim) == out.getDimSize(target))
      factors.push_back({{op.getOperand(), static_cast<int64_t>(dim)},
                         {op.getResult(), target}});
  return factors;
}

SmallVector<ShardingFactor> transposeFactors(stablehlo::TransposeOp op) {
  SmallVector<ShardingFactor> factors;
  for (auto [dim, source] : llvm::enumerate(op.getPermutation()))
    factors.push_back({{op.getOperand(), source},
                       {op.getResult(), static_cast<int64_t>(dim)}});
  return factors;
}

/// Dimensions a reshape keeps whole: walking both shapes, a group of operand
/// dimensions and a group of result dimensions with the same product close
/// together; a group of one dimension (size > 1) on each side is the same
/// dimension. Splits and merges have no factor.
SmallVector<ShardingFactor> reshapeFactors(stablehlo::ReshapeOp op) {
  RankedTensorType in = rankedType(op.getOperand());
  RankedTensorType out = rankedType(op.getResult());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape())
    return {};
  SmallVector<ShardingFactor> factors;
  int64_t i = 0, j = 0;
  while (i < in.getRank() && j < out.getRank()) {
    // Size-1 dimensions carry no data; skip them on both sides.
    if (in.getDimSize(i) == 1) {
      ++i;
      continue;
    }
    if (out.getDimSize(j) == 1) {
      ++j;
      continue;
    }
    int64_t iStart = i, jStart = j;
    int64_t inProduct = in.getDimSize(i++), outProduct = out.getDimSize(j++);
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        if (i == in.getRank())
          return factors;
        inProduct *= in.getDimSize(i++);
      } else {
        if (j == out.getRank())
          return factors;
        outProduct *= out.getDimSize(j++);
      }
    }
    if (i - iStart == 1 && j - jStart == 1)
      factors.push_back({{op.getOperand(), iStart}, {op.getResult(), jStart}});
  }
  return factors;
}

SmallVector<ShardingFactor> dotFactors(stablehlo::DotGeneralOp op) {
  RankedTensorType lhs = rankedType(op.getLhs());
  RankedTensorType rhs = rankedType(op.getRhs());
  RankedTensorType out = rankedType(op.getResult());
  if (!lhs || !rhs || !out)
    return {};
  stablehlo::DotDimensionNumbersAttr numbers = op.getDotDimensionNumbers();
  ArrayRef<int64_t> lhsBatch = numbers.getLhsBatchingDimensions();
  ArrayRef<int64_t> rhsBatch = numbers.getRhsBatchingDimensions();
  ArrayRef<int64_t> lhsContract = numbers.getLhsContractingDimensions();
  ArrayRef<int64_t> rhsContract = numbers.getRhsContractingDimensions();
  if (lhsBatch.size() != rhsBatch.size() ||
      lhsContract.size() != rhsContract.size())
    return {};
  SmallVector<ShardingFactor> factors;
  int64_t resultDim = 0;
  for (auto [l, r] : llvm::zip(lhsBatch, rhsBatch))
    factors.push_back({{op.getLhs(), l},
                       {op.getRhs(), r},
                       {op.getResult(), resultDim++}});
  auto freeDims = [&](Value side, int64_t rank, ArrayRef<int64_t> batch,
                      ArrayRef<int64_t> contract) {
    for (int64_t dim = 0; dim < rank; ++dim)
      if (!llvm::is_contained(batch, dim) && !llvm::is_contained(contract, dim))
        factors.push_back({{side, dim}, {op.getResult(), resultDim++}});
  };
  freeDims(op.getLhs(), lhs.getRank(), lhsBatch, lhsContract);
  freeDims(op.getRhs(), rhs.getRank(), rhsBatch, rhsContract);
  if (resultDim != out.getRank())
    return {};
  // Contracted on both sides alike: each device sums its part, XLA adds the
  // partial sums.
  for (auto [l, r] : llvm::zip(lhsContract, rhsContract))
    factors.push_back({{op.getLhs(), l}, {op.getRhs(), r}});
  return factors;
}

SmallVector<ShardingFactor> reduceFactors(stablehlo::ReduceOp op) {
  if (op.getInputs().empty())
    return {};
  RankedTensorType in = rankedType(op.getInputs().front());
  if (!in)
    return {};
  ArrayRef<int64_t> reduced = op.getDimensions();
  SmallVector<ShardingFactor> factors;
  int64_t resultDim = 0;
  for (int64_t dim = 0; dim < in.getRank(); ++dim) {
    if (llvm::is_contained(reduced, dim))
      continue;
    ShardingFactor &factor = factors.emplace_back();
    for (Value input : op.getInputs())
      factor.push_back({input, dim});
    for (Value result : op->getResults())
      factor.push_back({result, resultDim});
    ++resultDim;
  }
  return factors;
}

SmallVector<ShardingFactor> concatenateFactors(stablehlo::ConcatenateOp op) {
  RankedTensorType out = rankedType(op.getResult());
  if (!out)
    return {};
  SmallVector<ShardingFactor> factors;
  for (int64_t dim = 0; dim < out.getRank(); ++dim) {
    if (dim == static_cast<int64_t>(op.getDimension()))
      continue;
    ShardingFactor &factor = factors.emplace_back();
    for (Value input : op.getInputs())
      factor.push_back({input, dim});
    factor.push_back({op.getResult(), dim});
  }
  return factors;
}

SmallVector<ShardingFactor> sliceFactors(stablehlo::SliceOp op) {
  RankedTensorType in = rankedType(op.getOperand());
  RankedTensorType out = rankedType(op.getResult());
  if (!in || !out)
    return {};
  SmallVector<ShardingFactor> factors;
  for (int64_t dim = 0; dim < out.getRank(); ++dim)
    if (in.getDimSize(dim) == out.getDimSize(dim))
      factors.push_back({{op.getOperand(), dim}, {op.getResult(), dim}});
  return factors;
}

/// `[2, 3]` after `field = ` in the text of an opaque StableHLO attribute
/// such as `gather<offset_dims = [2], index_vector_dim = 2>`; a single
/// number reads as a list of one. Empty when the field is absent.
SmallVector<int64_t> readIntField(StringRef spec, StringRef field) {
  SmallVector<int64_t> values;
  size_t at = 0;
  while ((at = spec.find(field, at)) != StringRef::npos) {
    bool wordStart = at == 0 || !(llvm::isAlnum(spec[at - 1]) ||
                                  spec[at - 1] == '_');
    StringRef rest = spec.drop_front(at + field.size()).ltrim();
    at += field.size();
    if (!wordStart || !rest.consume_front("="))
      continue;
    rest = rest.ltrim();
    if (rest.consume_front("[")) {
      StringRef list = rest.take_until([](char c) { return c == ']'; });
      SmallVector<StringRef> items;
      list.split(items, ',', -1, /*KeepEmpty=*/false);
      for (StringRef item : items) {
        int64_t value;
        if (!item.trim().getAsInteger(10, value))
          values.push_back(value);
      }
    } else {
      int64_t value;
      StringRef digits = rest.take_while([](char c) { return llvm::isDigit(c); });
      if (!digits.getAsInteger(10, value))
        values.push_back(value);
    }
    break;
  }
  return values;
}

/// Gather (an embedding lookup, take_along_axis): the index dimensions
/// become the result's batch dimensions; operand dimensions taken whole
/// become its offset dimensions.
SmallVector<ShardingFactor> gatherFactors(Operation *op) {
  if (op->getNumOperands() < 2 || op->getNumResults() != 1)
    return {};
  Value operand = op->getOperand(0), indices = op->getOperand(1);
  Value result = op->getResult(0);
  RankedTensorType operandType = rankedType(operand);
  RankedTensorType indicesType = rankedType(indices);
  RankedTensorType resultType = rankedType(result);
  auto numbers = op->getAttr("dimension_numbers");
  auto sliceSizes = op->getAttrOfType<DenseI64ArrayAttr>("slice_sizes");
  if (!operandType || !indicesType || !resultType || !numbers || !sliceSizes)
    return {};
  std::string spec;
  llvm::raw_string_ostream os(spec);
  numbers.print(os);
  if (!StringRef(spec).contains("gather<"))
    return {};
  SmallVector<int64_t> offsetDims = readIntField(spec, "offset_dims");
  SmallVector<int64_t> collapsed = readIntField(spec, "collapsed_slice_dims");
  SmallVector<int64_t> operandBatching =
      readIntField(spec, "operand_batching_dims");
  SmallVector<int64_t> indicesBatching =
      readIntField(spec, "start_indices_batching_dims");
  SmallVector<int64_t> indexVectorDim =
      readIntField(spec, "index_vector_dim");
  int64_t vectorDim = indexVectorDim.empty() ? indicesType.getRank()
                                             : indexVectorDim.front();
  SmallVector<int64_t> resultBatch, indexBatch, operandOffset;
  for (int64_t dim = 0; dim < resultType.getRank(); ++dim)
    if (!llvm::is_contained(offsetDims, dim))
      resultBatch.push_back(dim);
  for (int64_t dim = 0; dim < indicesType.getRank(); ++dim)
    if (dim != vectorDim)
      indexBatch.push_back(dim);
  for (int64_t dim = 0; dim < operandType.getRank(); ++dim)
    if (!llvm::is_contained(collapsed, dim) &&
        !llvm::is_contained(operandBatching, dim))
      operandOffset.push_back(dim);
  if (resultBatch.size() != indexBatch.size() ||
      operandOffset.size() != offsetDims.size() ||
      static_cast<int64_t>(sliceSizes.size()) != operandType.getRank())
    return {};
  SmallVector<ShardingFactor> factors;
  for (auto [indexDim, resultDim] : llvm::zip(indexBatch, resultBatch)) {
    ShardingFactor factor{{indices, indexDim}, {result, resultDim}};
    const auto *batching = llvm::find(indicesBatching, indexDim);
    if (batching != indicesBatching.end()) {
      size_t position = batching - indicesBatching.begin();
      if (position < operandBatching.size())
        factor.push_back({operand, operandBatching[position]});
    }
    factors.push_back(std::move(factor));
  }
  for (auto [operandDim, resultDim] : llvm::zip(operandOffset, offsetDims))
    if (sliceSizes[operandDim] == operandType.getDimSize(operandDim))
      factors.push_back({{operand, operandDim}, {result, resultDim}});
  return factors;
}

/// dynamic_slice (a microbatch of the stacked batch, `xs[i]`): the
/// dimensions taken whole keep their place.
SmallVector<ShardingFactor>
dynamicSliceFactors(stablehlo::DynamicSliceOp op) {
  ArrayRef<int64_t> sizes = op.getSliceSizes();
  RankedTensorType in = rankedType(op.getOperand());
  RankedTensorType out = rankedType(op.getResult());
  if (!in || !out || static_cast<int64_t>(sizes.size()) != in.getRank() ||
      in.getRank() != out.getRank())
    return {};
  SmallVector<ShardingFactor> factors;
  for (int64_t dim = 0; dim < in.getRank(); ++dim)
    if (sizes[dim] == in.getDimSize(dim))
      factors.push_back({{op.getOperand(), dim}, {op.getResult(), dim}});
  return factors;
}

/// dynamic_update_slice (a microbatch's row of a stacked result): the
/// result is laid out as the operand; the update's whole dimensions too.
SmallVector<ShardingFactor>
dynamicUpdateSliceFactors(stablehlo::DynamicUpdateSliceOp op) {
  Value operand = op.getOperand(), update = op.getUpdate();
  RankedTensorType in = rankedType(operand);
  RankedTensorType piece = rankedType(update);
  if (!in || !piece || in.getRank() != piece.getRank() ||
      rankedType(op.getResult()) != in)
    return {};
  SmallVector<ShardingFactor> factors;
  for (int64_t dim = 0; dim < in.getRank(); ++dim) {
    ShardingFactor &factor = factors.emplace_back();
    factor.push_back({operand, dim});
    factor.push_back({op.getResult(), dim});
    if (piece.getDimSize(dim) == in.getDimSize(dim))
      factor.push_back({update, dim});
  }
  return factors;
}

} // namespace

SmallVector<ShardingFactor> mlir::mpmd::getShardingFactors(Operation *op) {
  if (auto broadcast = dyn_cast<stablehlo::BroadcastInDimOp>(op))
    return broadcastFactors(broadcast);
  if (auto transpose = dyn_cast<stablehlo::TransposeOp>(op))
    return transposeFactors(transpose);
  if (auto reshape = dyn_cast<stablehlo::ReshapeOp>(op))
    return reshapeFactors(reshape);
  if (auto dot = dyn_cast<stablehlo::DotGeneralOp>(op))
    return dotFactors(dot);
  if (auto reduce = dyn_cast<stablehlo::ReduceOp>(op))
    return reduceFactors(reduce);
  if (auto concatenate = dyn_cast<stablehlo::ConcatenateOp>(op))
    return concatenateFactors(concatenate);
  if (auto slice = dyn_cast<stablehlo::SliceOp>(op))
    return sliceFactors(slice);
  if (auto slice = dyn_cast<stablehlo::DynamicSliceOp>(op))
    return dynamicSliceFactors(slice);
  if (auto update = dyn_cast<stablehlo::DynamicUpdateSliceOp>(op))
    return dynamicUpdateSliceFactors(update);
  StringRef name = op->getName().getStringRef();
  if (name == "stablehlo.gather")
    return gatherFactors(op);
  if (name == "stablehlo.optimization_barrier" ||
      name == "sdy.sharding_constraint")
    return pairwiseIdentityFactors(op);
  if (stablehlo::isElementwise(op))
    return elementwiseFactors(op);
  return {};
}
