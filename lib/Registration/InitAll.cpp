//===- InitAll.cpp - Register every mpmd dialect and pass -----------------===//

#include "mpmd/InitAll.h"

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h"
#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Transforms/Common/Passes.h"
#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Import/Passes.h"
#include "mpmd/Transforms/Optimize/Passes.h"
#include "mpmd/Transforms/Partition/PartitionPipeline.h"
#include "mpmd/Testing/TestPasses.h"
#include "mpmd/Transforms/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::mpmd::registerAllDialects(DialectRegistry &registry) {
  registry.insert<mpmd::MpmdDialect, sdy::SdyDialect,
                  stablehlo::StableHloDialect, func::FuncDialect,
                  ifrt::IfrtDialect>();
}

void mlir::mpmd::registerAllPasses() {
  // Upstream passes our pipelines build on (canonicalize, cse, ...).
  registerTransformsPasses();
  registerCommonPasses();
  registerImportPasses();
  registerOptimizePasses();
  registerShardingPasses();
  registerTestPasses();
  registerExportPasses();
  registerPartitionPipeline();
  registerShardyPipelineAliases();
}
