//===- InitAll.h - Register every mpmd dialect and pass ---------*- C++ -*-===//

#ifndef MPMD_INITALL_H
#define MPMD_INITALL_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
namespace mpmd {

/// Adds the dialects a module may use: mpmd, the sdy and stablehlo compat
/// dialects, the IFRT IR subset, and upstream func.
void registerAllDialects(DialectRegistry &registry);

/// Registers every mpmd pass and named pipeline with the global registry
/// (idempotent).
void registerAllPasses();

/// Registers Shardy:MPMD's pipeline names (mpmd-import-pipeline, ...) for
/// our pipelines; registerAllPasses does it too.
void registerShardyPipelineAliases();

} // namespace mpmd
} // namespace mlir

#endif // MPMD_INITALL_H
