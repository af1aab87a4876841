//===- ShardingPipeline.cpp - The mpmd-sharding pipeline ------------------===//

#include "mpmd/Transforms/Sharding/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::mpmd;

void mlir::mpmd::addShardingPipeline(OpPassManager &pm) {
  pm.addPass(createPropagateShardingsPass());
}

namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Sharding/Passes.h.inc"
} // namespace

void mlir::mpmd::registerShardingPasses() {
  registerMpmdShardingPasses();
  PassPipelineRegistration<>(
      "mpmd-sharding",
      "Sharding: layouts of every value at a program boundary, propagated "
      "from the user's shardings and written into mesh tensor types",
      addShardingPipeline);
}
