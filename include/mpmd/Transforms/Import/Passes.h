//===- Passes.h - Import passes and the mpmd-import pipeline ----*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_IMPORT_PASSES_H
#define MPMD_TRANSFORMS_IMPORT_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Transforms/Import/ImportUtils.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Import/Passes.h.inc"

/// Every option of import, typed: what C++ and Python callers fill.
struct ImportOptions {
  std::vector<NamedAssignment> assignment;
  std::vector<IndexedAssignment> inputAssignment;
  std::vector<IndexedAssignment> outputAssignment;
  bool inferTransfers = false;
  bool inferCrossMeshReductions = false;
};

/// Adds the import passes to `pm` (a module pass manager).
void addImportPipeline(OpPassManager &pm, const ImportOptions &options);

/// The textual form of ImportOptions: the options of the `mpmd-import`
/// pipeline in mpmd-opt.
struct ImportPipelineOptions
    : public PassPipelineOptions<ImportPipelineOptions> {
  ListOption<NamedAssignment> assignment{
      *this, "assignment",
      llvm::cl::desc("NAME=MESH or NAME=MESH:STAGE for named computations "
                     "and named tensors")};
  ListOption<IndexedAssignment> inputAssignment{
      *this, "input-assignment",
      llvm::cl::desc("INDEX=MESH[:MEMORY_KIND] for function arguments")};
  ListOption<IndexedAssignment> outputAssignment{
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

  ImportOptions typed() const;
};

/// Registers the import passes and the `mpmd-import` pipeline.
void registerImportPasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_IMPORT_PASSES_H
