//===- Passes.h - Sharding passes and the mpmd-sharding pipeline -*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_SHARDING_PASSES_H
#define MPMD_TRANSFORMS_SHARDING_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Sharding/Passes.h.inc"

/// Adds the sharding phase to `pm` (a module pass manager).
void addShardingPipeline(OpPassManager &pm);

/// Registers the sharding passes and the `mpmd-sharding` pipeline.
void registerShardingPasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_SHARDING_PASSES_H
