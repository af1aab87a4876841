//===- ExportPipeline.cpp - The mpmd-export pipeline ----------------------===//

#include "mpmd/Transforms/Common/Passes.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::mpmd;

void mlir::mpmd::addExportPipeline(OpPassManager &pm) {
  // Programs exchange tensors only: tokens stay inside fragments.
  pm.addPass(createSinkTokensIntoFragmentsPass());
  // Drop unused fragment results and arguments first, so that programs only
  // move the data they need.
  pm.addPass(createCleanupPass());
  // The order is final now: inferred fragments join their neighbours.
  MergeInferredFragmentsPassOptions merge;
  merge.scheduled = true;
  pm.addPass(createMergeInferredFragmentsPass(merge));
  pm.addPass(createCleanupPass());
  // Values come back from host memory just before they are needed...
  pm.addPass(createPlaceHostReloadsPass());
  // ...and other transfers leave as soon as their value is made (before
  // donations are decided: they read the final order).
  pm.addPass(createIssueTransfersEarlyPass());
  pm.addPass(createOutlineFragmentsPass());
  pm.addPass(createMarkDonationsPass());
  // Donations decide when arguments die, which the live bytes follow.
  pm.addPass(createMarkReservedMemoryPass());
  // Last: calls pass every argument of their callee, as Shardy's dialect
  // requires (shared programs keep their constants as arguments).
  pm.addPass(createSpecializeConstantArgsPass());
  // Every sharding names a declared sdy.mesh, as Shardy's dialect resolves
  // them.
  pm.addPass(createDeclareSdyMeshesPass());
}

namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace

void mlir::mpmd::registerExportPasses() {
  registerMpmdExportPasses();
  PassPipelineRegistration<>(
      "mpmd-export",
      "Export: one function per distinct program called by "
      "mpmd.fragment_call, with donations marked",
      addExportPipeline);
}
