//===- ShardingRules.h - How ops map dimensions of their values -*- C++ -*-===//
//
// The dimension rules the sharding phase propagates through fragment bodies.
// A factor groups dimensions of an op's operands and results along which the
// op moves data index by index (an elementwise op's dimension 0 of every
// operand and its result, a dot_general's batch dimensions, ...): sharding
// them alike needs no communication. Ops without a rule have no factors;
// XLA shards their inside at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_SHARDING_SHARDINGRULES_H
#define MPMD_TRANSFORMS_SHARDING_SHARDINGRULES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::mpmd {

/// One dimension of one ranked tensor value.
struct DimRef {
  Value value;
  int64_t dim;
  bool operator==(const DimRef &other) const {
    return value == other.value && dim == other.dim;
  }
};

/// Dimensions that may be sharded alike. A factor with a single member (the
/// contracting dimensions of one side only, say) carries nothing.
using ShardingFactor = SmallVector<DimRef, 4>;

/// The factors of `op`; empty when there is no rule for it. Every member is
/// a dimension of a ranked tensor operand or result of `op`.
SmallVector<ShardingFactor> getShardingFactors(Operation *op);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_SHARDING_SHARDINGRULES_H
