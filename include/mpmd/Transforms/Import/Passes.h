//===- Passes.h - Import passes and the mpmd-import pipeline ----*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_IMPORT_PASSES_H
#define MPMD_TRANSFORMS_IMPORT_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Import/Passes.h.inc"

/// Every option of import in one place: what the user sets for the
/// `mpmd-import` pipeline.
struct ImportPipelineOptions
    : public PassPipelineOptions<ImportPipelineOptions> {
  ListOption<std::string> assignment{
      *this, "assignment",
      llvm::cl::desc("NAME=MESH or NAME=MESH:STAGE for named computations "
                     "and named tensors")};
  ListOption<std::string> inputAssignment{
      *this, "input-assignment",
      llvm::cl::desc("INDEX=MESH[:MEMORY_KIND] for function arguments")};
  ListOption<std::string> outputAssignment{
      *this, "output-assignment",
      llvm::cl::desc("INDEX=MESH[:MEMORY_KIND] for function results")};
  Option<bool> inferTransfers{
      *this, "infer-transfers",
      llvm::cl::desc("Let mesh inference create transfers"),
      llvm::cl::init(false)};
  Option<bool> inferCrossMeshReductions{
      *this, "infer-cross-mesh-reductions",
      llvm::cl::desc("Let mesh inference turn reductions over several meshes "
                     "into mpmd.reduce"),
      llvm::cl::init(false)};
};

/// Adds the import passes to `pm` (a module pass manager).
void addImportPipeline(OpPassManager &pm, const ImportPipelineOptions &options);

/// Registers the import passes and the `mpmd-import` pipeline.
void registerImportPasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_IMPORT_PASSES_H
