//===- PartitionPipeline.cpp - The mpmd-partition pipeline ----------------===//

#include "mpmd/Transforms/Partition/PartitionPipeline.h"

#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Sharding/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::mpmd;

void mlir::mpmd::addPartitionPipeline(OpPassManager &pm,
                                      const PartitionOptions &options) {
  addImportPipeline(pm, options.importOptions);
  addOptimizePipeline(pm, options.optimizeOptions);
  addShardingPipeline(pm);
  addExportPipeline(pm);
}

PartitionOptions PartitionPipelineOptions::typed() const {
  return {ImportPipelineOptions::typed(), OptimizePipelineOptions::typed()};
}

void mlir::mpmd::registerPartitionPipeline() {
  PassPipelineRegistration<PartitionPipelineOptions>(
      "mpmd-partition",
      "Partition: mpmd-import, mpmd-optimize, mpmd-sharding and mpmd-export "
      "in order, with the options of mpmd-import and mpmd-optimize",
      [](OpPassManager &pm, const PartitionPipelineOptions &options) {
        addPartitionPipeline(pm, options.typed());
      });
}
