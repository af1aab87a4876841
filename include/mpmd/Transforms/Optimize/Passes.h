//===- Passes.h - Optimize passes -------------------------------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_OPTIMIZE_PASSES_H
#define MPMD_TRANSFORMS_OPTIMIZE_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Transforms/Optimize/Options.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Optimize/Passes.h.inc"

/// mpmd-schedule with an order computed by `provider` when the schedule
/// is explicit.
std::unique_ptr<Pass> createSchedulePass(SchedulePassOptions options,
                                         OrderProvider provider);

/// mpmd-merge-fragments with more rules computed by `provider`.
std::unique_ptr<Pass> createMergeFragmentsPass(MergeFragmentsPassOptions options,
                                               MergeRuleProvider provider);

/// Adds the optimize passes to `pm` (a module pass manager): the split of
/// backward fragments, the schedule, the merges.
void addOptimizePipeline(OpPassManager &pm, const OptimizeOptions &options);

/// The textual form of OptimizeOptions (without providers): the options of
/// the `mpmd-optimize` pipeline in mpmd-opt.
struct OptimizePipelineOptions
    : public PassPipelineOptions<OptimizePipelineOptions> {
  Option<ScheduleKind> schedule{
      *this, "schedule",
      llvm::cl::desc("none, gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1 or "
                     "explicit"),
      llvm::cl::init(ScheduleKind::kNone)};
  ListOption<MeshOrder> order{
      *this, "order",
      llvm::cl::desc("For explicit: MESH=KEY|KEY|... per mesh")};
  Option<bool> splitBackward{
      *this, "split-backward",
      llvm::cl::desc("Split backward fragments (zero-bubble-h1 implies it)"),
      llvm::cl::init(false)};
  ListOption<MergeRule> mergeRules{
      *this, "merge-rules", llvm::cl::desc("A:B pairs of fragment labels")};
  Option<bool> mergeLastStage{
      *this, "merge-last-stage",
      llvm::cl::desc("Fuse each microbatch's fragments on the last mesh"),
      llvm::cl::init(false)};
  Option<bool> remat{
      *this, "remat",
      llvm::cl::desc("Recompute forward fragments before their backward"),
      llvm::cl::init(false)};
  Option<bool> mergeRemat{
      *this, "merge-remat",
      llvm::cl::desc("Fuse each recomputed forward into its backward"),
      llvm::cl::init(false)};
  Option<bool> offloadActivations{
      *this, "offload-activations",
      llvm::cl::desc("Keep forward residuals in pinned host memory until "
                     "their backward"),
      llvm::cl::init(false)};
  ListOption<std::string> offloadNames{
      *this, "offload-names",
      llvm::cl::desc("Named computations whose residuals are offloaded "
                     "(all when empty)")};

  OptimizeOptions typed() const;
};

/// Registers the optimize passes and the `mpmd-optimize` pipeline.
void registerOptimizePasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_OPTIMIZE_PASSES_H
