//===- AutoAssign.h - Named computations to stages by cost ------*- C++ -*-===//
//
// What mpmd-auto-assign and the Python front end's `make_config(...,
// "auto")` share: the costs of a program's named computations, read from
// their bodies, and the contiguous split of them into stages that balances
// the busiest stage.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_IMPORT_AUTOASSIGN_H
#define MPMD_TRANSFORMS_IMPORT_AUTOASSIGN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::mpmd {

/// Module attribute: {name = "mesh:stage"} chosen by mpmd-auto-assign.
inline constexpr llvm::StringLiteral kAutoAssignmentAttrName =
    "mpmd.assignment";

/// One top-level named computation, per microbatch (one instance).
struct NamedComputationCost {
  std::string name;
  /// Floating-point operations of its forward body and of its backward
  /// (the transposed computation of the same name; 0 without one):
  /// 2*M*N*K for dot_general and convolution, one per result element for
  /// other ops.
  double forwardFlops = 0;
  double backwardFlops = 0;
  /// Bytes of the function arguments its forward reads (parameters).
  int64_t parameterBytes = 0;
  /// Bytes of its forward results a backward reads (what a microbatch in
  /// flight keeps on the stage).
  int64_t activationBytes = 0;
  /// Bytes of its forward results read by anything but a backward (what
  /// crosses to the next stage when the split falls after it).
  int64_t outputBytes = 0;

  double flops() const { return forwardFlops + backwardFlops; }
};

/// The program's top-level named computations in program order (first
/// forward occurrence) and how many microbatches run each (the largest
/// number of instances, loops counted).
struct CostTable {
  SmallVector<NamedComputationCost> names;
  int64_t microbatches = 1;
};

CostTable measureNamedComputations(ModuleOp module);

/// A split of `names` into `stages` contiguous runs, stage s on mesh s.
struct StageSplit {
  SmallVector<unsigned> stageOf; // per name, in program order
  SmallVector<double> flops;     // per stage
  SmallVector<int64_t> memory;   // per stage
};

/// Microbatches each stage holds in flight: all of them (GPipe) or, for
/// 1F1B-like schedules, `stages - s` (at most `microbatches`).
SmallVector<int64_t> inflightMicrobatches(unsigned stages,
                                          int64_t microbatches, bool gpipe);

/// Bytes stage `s` holds for the names [begin, end): their parameters and
/// `inflight` microbatches of their activations.
int64_t stageMemory(ArrayRef<NamedComputationCost> names, unsigned begin,
                    unsigned end, int64_t inflight);

/// The contiguous split with the least busiest-stage compute (ties: the
/// fewest bytes crossing between stages) where every stage is non-empty,
/// holds the names `fixed` puts there (per name, a stage or none), and
/// fits `memoryLimit` (bytes per stage; none when absent). Fails with
/// `error` set: more stages than names, fixed stages out of order, or no
/// split under the limit (naming the smallest limit that fits); `culprit`
/// is then the index of the name at fault, if one is.
FailureOr<StageSplit>
splitIntoStages(ArrayRef<NamedComputationCost> names, unsigned stages,
                ArrayRef<std::optional<unsigned>> fixed,
                ArrayRef<int64_t> inflight, std::optional<int64_t> memoryLimit,
                std::string &error, std::optional<unsigned> &culprit);

/// The split by count: names in `stages` runs of (nearly) equal length,
/// the first ones one longer.
StageSplit splitByCount(ArrayRef<NamedComputationCost> names, unsigned stages,
                        ArrayRef<int64_t> inflight);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_IMPORT_AUTOASSIGN_H
