//===- ImportPipeline.cpp - The mpmd-import pipeline ----------------------===//

#include "mpmd/Transforms/Common/Passes.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::mpmd;

void mlir::mpmd::addImportPipeline(OpPassManager &pm,
                                   const ImportOptions &options) {
  // Inlined before unrolling: loop bodies are flattened once, not once per
  // microbatch.
  pm.addPass(createInlineCallsPass());
  pm.addPass(createUnrollLoopsPass());
  pm.addPass(createFoldConstantIndicesPass());
  MapNamedOpsToMeshesPassOptions named;
  named.assignment.assign(options.assignment.begin(), options.assignment.end());
  pm.addPass(createMapNamedOpsToMeshesPass(std::move(named)));
  MapInputsOutputsToMeshesPassOptions io;
  io.inputAssignment.assign(options.inputAssignment.begin(),
                            options.inputAssignment.end());
  io.outputAssignment.assign(options.outputAssignment.begin(),
                             options.outputAssignment.end());
  pm.addPass(createMapInputsOutputsToMeshesPass(std::move(io)));
  pm.addPass(createIntroduceTransfersPass());
  pm.addPass(createSplitOptimizationBarriersPass());
  InferMeshesPassOptions inferOptions;
  inferOptions.inferTransfers = options.inferTransfers;
  inferOptions.inferCrossMeshReductions = options.inferCrossMeshReductions;
  pm.addPass(createInferMeshesPass(inferOptions));
  // Every argument and result is a mesh tensor now: memory kinds given as
  // attributes move into the types, where the later phases read them.
  pm.addPass(createFoldMemoryKindAttributesPass());
  pm.addPass(createMergeInferredFragmentsPass());
  // No CSE: the program-level duplicates it found (transfers of one value
  // to one mesh) are not made any more, and fragment bodies are XLA's to
  // optimize; on unrolled programs it cost as much as mesh inference.
  pm.addPass(createCleanupPass());
  pm.addPass(createVerifyImportPass());
}

ImportOptions ImportPipelineOptions::typed() const {
  ImportOptions options;
  options.assignment.assign(assignment.begin(), assignment.end());
  options.inputAssignment.assign(inputAssignment.begin(),
                                 inputAssignment.end());
  options.outputAssignment.assign(outputAssignment.begin(),
                                  outputAssignment.end());
  options.inferTransfers = inferTransfers;
  options.inferCrossMeshReductions = inferCrossMeshReductions;
  return options;
}

namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace

void mlir::mpmd::registerImportPasses() {
  registerMpmdImportPasses();
  PassPipelineRegistration<ImportPipelineOptions>(
      "mpmd-import",
      "Import: named ops onto meshes, transfers, mesh inference, merging of "
      "inferred fragments",
      [](OpPassManager &pm, const ImportPipelineOptions &options) {
        addImportPipeline(pm, options.typed());
      });
}
