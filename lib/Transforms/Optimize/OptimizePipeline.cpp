//===- OptimizePipeline.cpp - The mpmd-optimize pipeline ------------------===//

#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::mpmd;

void mlir::mpmd::addOptimizePipeline(OpPassManager &pm,
                                     const OptimizeOptions &options) {
  // Before all: schedules, keys and merges tell the forwards jax.checkpoint
  // recomputes from the forwards.
  pm.addPass(createMarkRecomputedForwardsPass());
  // Split first: zero-bubble schedules order the parts, and client
  // schedules see them.
  // Else only the loops whose own schedule is zero-bubble-h1.
  {
    SplitBackwardPassOptions split;
    split.zeroBubbleLoopsOnly =
        !options.splitBackward &&
        options.schedule != ScheduleKind::kZeroBubbleH1;
    pm.addPass(createSplitBackwardPass(split));
  }
  // Always: loops may carry schedules of their own (mpmd.loop_schedule).
  {
    SchedulePassOptions schedule;
    schedule.schedule = options.schedule;
    schedule.order.assign(options.order.begin(), options.order.end());
    pm.addPass(createSchedulePass(std::move(schedule), options.orderProvider));
  }
  if (!options.mergeRules.empty() || options.mergeRuleProvider ||
      options.mergeLastStage) {
    MergeFragmentsPassOptions merge;
    merge.rules.assign(options.mergeRules.begin(), options.mergeRules.end());
    merge.mergeLastStage = options.mergeLastStage;
    pm.addPass(
        createMergeFragmentsPass(std::move(merge), options.mergeRuleProvider));
  }
  // Last: the copies go where the backwards run, after every reordering.
  if (options.remat) {
    RematFragmentsPassOptions remat;
    remat.merge = options.mergeRemat;
    pm.addPass(createRematFragmentsPass(remat));
  }
  // After remat: a recomputed forward leaves no residuals to move.
  if (options.offloadActivations) {
    OffloadActivationsPassOptions offload;
    offload.names.assign(options.offloadNames.begin(),
                         options.offloadNames.end());
    pm.addPass(createOffloadActivationsPass(std::move(offload)));
  }
}

OptimizeOptions OptimizePipelineOptions::typed() const {
  OptimizeOptions options;
  options.schedule = schedule;
  options.order.assign(order.begin(), order.end());
  options.splitBackward = splitBackward;
  options.mergeRules.assign(mergeRules.begin(), mergeRules.end());
  options.mergeLastStage = mergeLastStage;
  options.remat = remat;
  options.mergeRemat = mergeRemat;
  options.offloadActivations = offloadActivations;
  options.offloadNames.assign(offloadNames.begin(), offloadNames.end());
  return options;
}

namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace

void mlir::mpmd::registerOptimizePasses() {
  registerMpmdOptimizePasses();
  PassPipelineRegistration<OptimizePipelineOptions>(
      "mpmd-optimize",
      "Optimize: split backward fragments, order each mesh by a pipeline "
      "schedule, merge fragments",
      [](OpPassManager &pm, const OptimizePipelineOptions &options) {
        addOptimizePipeline(pm, options.typed());
      });
}
