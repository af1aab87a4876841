//===- FragmentUtils.h - Helpers shared by passes on fragments --*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H
#define MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace mlir::mpmd {

/// A named computation a fragment comes from: its name and how many times
/// it was transposed (0 forward, 1 its backward, ...).
struct Origin {
  std::string name;
  int64_t transposeCount = 0;

  /// `layer1` or `layer1(1)`: how labels and keys spell an origin.
  std::string str() const;
};

/// What a schedule knows about a fragment (docs/architecture.md#optimize).
struct FragmentInfo {
  SmallVector<Origin> origins;
  std::optional<int64_t> stage;
  std::optional<uint64_t> callCounter;
  std::string mesh;
  FragmentKind kind = FragmentKind::kForward;
  /// The loop with a schedule of its own that the fragment belongs to
  /// (`mpmd.loop`), and that schedule (`mpmd.loop_schedule`); empty when
  /// the function's schedule orders it.
  std::string loop;
  std::string loopSchedule;
  /// A forward recomputed for its backward (`mpmd.remat`: jax.checkpoint,
  /// or mpmd-remat-fragments); schedules run it with that backward.
  bool recompute = false;

  /// `layer1+layer1(1)`: the origins, without the call counter; weight-
  /// gradient parts end in `[w]`, recomputed forwards in `[r]`.
  std::string label() const;
  /// `layer1(1)#3`: the label and the call counter, unique on a mesh.
  std::string key() const;
};

FragmentInfo getFragmentInfo(FragmentOp fragment);

/// The user fragments of `entries`, in program order: what schedules and
/// merge rules written by clients are evaluated over. Recomputed forwards
/// are left out: they run with their backward.
SmallVector<FragmentInfo> listUserFragments(ArrayRef<func::FuncOp> entries);

/// Discardable attribute marking the weight-gradient part of a backward
/// fragment split for zero-bubble schedules.
inline constexpr llvm::StringLiteral kWeightGradientAttrName =
    "mpmd.weight_gradient";

/// Discardable attribute marking a forward fragment recomputed for its
/// backward (what jax.checkpoint recomputes, mpmd-mark-recomputed-forwards;
/// or a copy mpmd-remat-fragments makes), or a fragment it was merged into.
inline constexpr llvm::StringLiteral kRematAttrName = "mpmd.remat";

/// Discardable attribute stamping the nameless ops of an unrolled loop
/// iteration (or inlined counted call) with its counter, and the inferred
/// fragments mesh inference makes of them. Merging of inferred fragments
/// keeps iterations apart with it, so that every microbatch of a stage ends
/// up with the same program. Ops inside fragments never keep it, and export
/// drops it from the fragments.
inline constexpr llvm::StringLiteral kLoopIterationAttrName =
    "mpmd.loop_iteration";

/// A loop's own pipeline schedule (string: a built-in schedule name, or
/// `explicit:<id>` for one the client evaluates): on
/// `mpmd.for` and `mpmd.call` as the front end gives it, and on the named
/// computations and fragments of its iterations after unrolling, with
/// `mpmd.loop` naming the loop (string) so that each loop is ordered by its
/// own schedule (mpmd-schedule).
inline constexpr llvm::StringLiteral kLoopScheduleAttrName =
    "mpmd.loop_schedule";
inline constexpr llvm::StringLiteral kLoopAttrName = "mpmd.loop";

/// True for a loop schedule the client evaluates (a table, comparator or
/// registry schedule): `explicit`, or `explicit:<id>` where the id tells
/// the client which of its schedules.
bool isExplicitLoopSchedule(StringRef schedule);

/// Unit attribute on a function whose nameless ops mpmd-unroll-loops
/// labelled with `mpmd.loop_iteration`: there, one without it is outside
/// every loop.
inline constexpr llvm::StringLiteral kLoopIterationsKnownAttrName =
    "mpmd.loop_iterations_known";

/// The loop iteration a fragment belongs to: its call counter (user
/// fragments) or its `mpmd.loop_iteration` (inferred ones); none outside
/// loops.
std::optional<uint64_t> loopIterationOf(Operation *op);

/// Fuses `first` and `second` (same mesh, `first` earlier in the block) into
/// one fragment created right before `anchor` (one of the two), which must
/// be a valid position: the caller checks that `second`'s operands exist
/// there (anchor == first) or that nothing between them reads `first`'s
/// results (anchor == second). The merged fragment has `first`'s results
/// then `second`'s, the union of the origins, the first stage found, and
/// both fragments' discardable attributes. Both are erased.
FragmentOp mergeFragments(FragmentOp first, FragmentOp second,
                          FragmentOp anchor);

/// The backward fragments (every origin a transpose, weight-gradient parts
/// included) on `forward`'s mesh, with its call counter, that read its
/// results; in block order. `info` is `forward`'s.
SmallVector<FragmentOp> backwardReaders(FragmentOp forward,
                                        const FragmentInfo &info);

/// True if a user fragment of another call counter (microbatch) than
/// `info`'s runs on `info`'s mesh strictly between `from` and `to`: only
/// then are values made by `from` for `to` kept alive while the mesh works
/// on something else (what rematerialization and offloading save).
bool otherWorkBetween(Operation *from, Operation *to, const FragmentInfo &info);

/// The last user fragment (one with origins) on `mesh` before `op` in its
/// block, or null. Where a value `op` reads is brought back from host
/// memory, so that the copy overlaps that fragment; inferred fragments do
/// not count (they are small, and export merges them into a neighbour).
FragmentOp previousUserFragmentOnMesh(Operation *op, StringRef mesh);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H
