//===- ShardingRules.cpp - How ops map dimensions of their values ---------===//
//
// A compact set of rules, enough for the data flow that crosses program
// boundaries in training steps (activations, residuals, gradients,
// parameters): elementwise ops from the op catalog, the shape ops, dots and
// reductions. Everything else has no rule on purpose: XLA decides the inside
// of each program; these rules only choose the layouts at its boundary.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Sharding/ShardingRules.h"

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"


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
  StringRef name = op->getName().getStringRef();
  if (name == "stablehlo.optimization_barrier" ||
      name == "sdy.sharding_constraint")
    return pairwiseIdentityFactors(op);
  if (stablehlo::isElementwise(op))
    return elementwiseFactors(op);
  return {};
}
