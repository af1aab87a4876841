//===- OpCatalog.h - What the passes need to know about HLO ops -*- C++ -*-===//
//
// The one place that records op semantics the mpmd passes rely on (purity,
// elementwise-ness, cheap cloning, ...) for StableHLO and CHLO ops. It is
// keyed by the full op name, so it answers for ops this project models
// (registered `stablehlo` ops) and for ops it only carries along (unknown
// `stablehlo` ops, unregistered `chlo` ops) alike; the entries of modelled
// ops come from their ODS traits. Names it does not know are treated
// conservatively: impure, not elementwise, not cheap to clone.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_OPCATALOG_H
#define MPMD_DIALECT_STABLEHLO_IR_OPCATALOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class Operation;
namespace stablehlo {

struct OpInfo {
  /// Full op name, e.g. "stablehlo.add" or "chlo.erf".
  llvm::StringRef name;
  /// Has no side effects of its own: may be erased when unused, CSE'd and
  /// duplicated. For ops with regions this holds only if the ops in the
  /// regions are pure too, which isPure(Operation *) checks.
  bool isPure;
  /// Each result element depends only on the operand elements at the same
  /// index; operands have the result's shape, except scalar operands that
  /// some ops broadcast (the bounds of clamp, the predicate of select).
  /// CHLO's broadcasting ops are not elementwise in this sense.
  bool isElementwise;
  /// Has no operands and a value known at compile time.
  bool isConstantLike;
  /// Cheap enough to clone into every mesh that uses it instead of
  /// transferring its result (constants, iota, broadcasts).
  bool isCheapToClone;
  /// A binary op whose operands may be swapped.
  bool isCommutative;
  /// Communicates across replicas or partitions (all_reduce, all_gather, ...).
  bool isCollective;
  /// Carries regions (reduce, while, case, sort, ...).
  bool hasRegions;
};

/// The entry for `fullOpName`, or null if the catalog does not know it.
const OpInfo *lookupOpInfo(llvm::StringRef fullOpName);

/// Every entry, sorted by name.
llvm::ArrayRef<OpInfo> getAllOpInfos();

/// Whether `op` has no side effects: its catalog entry says so and, for ops
/// with regions, every op nested in them is pure. `stablehlo.custom_call` is
/// pure only when it carries `has_side_effect = false`, as upstream defines.
/// Unknown ops are impure.
bool isPure(Operation *op);

/// Whether `op` is elementwise (see OpInfo::isElementwise).
bool isElementwise(Operation *op);

/// Whether `op` may be cloned into several meshes instead of transferring its
/// result: cheap per the catalog and pure.
bool isCheapToClone(Operation *op);

} // namespace stablehlo
} // namespace mlir

#endif // MPMD_DIALECT_STABLEHLO_IR_OPCATALOG_H
