//===- ShardyAliases.cpp - Shardy:MPMD's pipeline names -------------------===//
//
// Shardy:MPMD's users run `mpmd-opt -mpmd-import-pipeline=...` and friends.
// These registrations give those names to our pipelines that do the same
// job, with Shardy's option spellings where ours differ
// (`name-to-mesh-assignment=NAME@MESH[/STAGE],...`). docs/shardy.md lists
// them.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/Passes.h"
#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Import/Passes.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::mpmd {

/// Shardy's spelling of an assignment entry: `NAME@MESH` or
/// `NAME@MESH/STAGE` (the mesh after the last `@`).
struct ShardyNamedAssignment : NamedAssignment {
  static std::optional<ShardyNamedAssignment> parse(StringRef text,
                                                    std::string &error) {
    size_t at = text.rfind('@');
    if (at == StringRef::npos || at == 0 || at + 1 == text.size()) {
      error = ("invalid entry '" + text +
               "': expected NAME@MESH or NAME@MESH/STAGE")
                  .str();
      return std::nullopt;
    }
    auto [mesh, stageText] = text.drop_front(at + 1).split('/');
    ShardyNamedAssignment entry;
    entry.name = text.take_front(at).str();
    entry.mesh = mesh.str();
    if (text.drop_front(at + 1).contains('/')) {
      int64_t stage;
      if (stageText.getAsInteger(10, stage) || stage < 0) {
        error = ("invalid stage in entry '" + text +
                 "': expected a non-negative integer")
                    .str();
        return std::nullopt;
      }
      entry.stage = stage;
    }
    return entry;
  }
};

inline raw_ostream &operator<<(raw_ostream &os,
                               const ShardyNamedAssignment &entry) {
  os << entry.name << "@" << entry.mesh;
  if (entry.stage)
    os << "/" << *entry.stage;
  return os;
}

} // namespace mlir::mpmd

MPMD_OPTION_PARSER(::mlir::mpmd::ShardyNamedAssignment)

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct ShardyImportPipelineOptions
    : public PassPipelineOptions<ShardyImportPipelineOptions> {
  ListOption<ShardyNamedAssignment> nameToMeshAssignment{
      *this, "name-to-mesh-assignment",
      llvm::cl::desc("NAME@MESH or NAME@MESH/STAGE entries")};
  // Our export always merges inferred fragments after scheduling, and
  // import merges them only where that adds no dependency: accepted, no
  // effect.
  Option<bool> mergeAfterScheduling{
      *this, "merge-after-scheduling",
      llvm::cl::desc("Accepted for Shardy's pipeline; inferred fragments "
                     "are always merged again after scheduling"),
      llvm::cl::init(false)};
  Option<bool> inferTransfers{
      *this, "infer-transfers",
      llvm::cl::desc("Let mesh inference create transfers"),
      llvm::cl::init(false)};
};

struct InferMeshPipelineOptions
    : public PassPipelineOptions<InferMeshPipelineOptions> {
  Option<bool> inferTransfers{
      *this, "infer-transfers",
      llvm::cl::desc("Let mesh inference create transfers"),
      llvm::cl::init(false)};
  Option<bool> inferCrossMeshReductions{
      *this, "infer-cross-mesh-reductions",
      llvm::cl::desc("Turn reductions over several meshes into mpmd.reduce"),
      llvm::cl::init(false)};
};

} // namespace

namespace mlir::mpmd {

void registerShardyPipelineAliases() {
  PassPipelineRegistration<ShardyImportPipelineOptions>(
      "mpmd-import-pipeline",
      "Shardy:MPMD's name for mpmd-import (assignment as "
      "name-to-mesh-assignment=NAME@MESH[/STAGE],...)",
      [](OpPassManager &pm, const ShardyImportPipelineOptions &options) {
        ImportOptions typed;
        typed.assignment.assign(options.nameToMeshAssignment.begin(),
                                options.nameToMeshAssignment.end());
        typed.inferTransfers = options.inferTransfers;
        addImportPipeline(pm, typed);
      });
  PassPipelineRegistration<OptimizePipelineOptions>(
      "mpmd-optimize-pipeline", "Shardy:MPMD's name for mpmd-optimize",
      [](OpPassManager &pm, const OptimizePipelineOptions &options) {
        addOptimizePipeline(pm, options.typed());
      });
  PassPipelineRegistration<>("mpmd-export-pipeline",
                             "Shardy:MPMD's name for mpmd-export",
                             addExportPipeline);
  PassPipelineRegistration<InferMeshPipelineOptions>(
      "mpmd-infer-mesh-pipeline",
      "Shardy:MPMD's mesh inference pipeline: mpmd-infer-meshes, then "
      "mpmd-merge-inferred-fragments",
      [](OpPassManager &pm, const InferMeshPipelineOptions &options) {
        InferMeshesPassOptions infer;
        infer.inferTransfers = options.inferTransfers;
        infer.inferCrossMeshReductions = options.inferCrossMeshReductions;
        pm.addPass(createInferMeshesPass(infer));
        pm.addPass(createMergeInferredFragmentsPass());
      });
}

} // namespace mlir::mpmd
