//===- PartitionPipeline.h - The mpmd-partition pipeline --------*- C++ -*-===//
//
// The four phases in order (import, optimize, sharding, export) as one
// pipeline: what `mpmd.jit` runs through the Python binding, and what
// `mpmd-opt --mpmd-partition="..."` runs from text. It depends on every
// phase, so it lives beside them rather than in Transforms/Common, which
// the phases themselves depend on.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_PARTITION_PARTITIONPIPELINE_H
#define MPMD_TRANSFORMS_PARTITION_PARTITIONPIPELINE_H

#include "mpmd/Transforms/Import/Passes.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir::mpmd {

/// Every option of the partition pipeline, typed: one struct per phase that
/// takes options (sharding and export take none).
struct PartitionOptions {
  ImportOptions importOptions;
  OptimizeOptions optimizeOptions;
};

/// Adds import, optimize, sharding and export to `pm` (a module pass
/// manager), as the phases' own add*Pipeline functions add them.
void addPartitionPipeline(OpPassManager &pm, const PartitionOptions &options);

/// The textual form of PartitionOptions: the options of the `mpmd-partition`
/// pipeline, which are those of `mpmd-import` and `mpmd-optimize` under the
/// same names. The phases' option structs are its bases and share one
/// option table (PassOptions is a virtual base of every PassPipelineOptions),
/// so an option added to a phase is an option of mpmd-partition too.
struct PartitionPipelineOptions
    : public PassPipelineOptions<PartitionPipelineOptions>,
      public ImportPipelineOptions,
      public OptimizePipelineOptions {
  // Each base has its own createFromString; this one makes this struct.
  using PassPipelineOptions<PartitionPipelineOptions>::createFromString;

  PartitionOptions typed() const;
};

/// Registers the `mpmd-partition` pipeline.
void registerPartitionPipeline();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_PARTITION_PARTITIONPIPELINE_H
