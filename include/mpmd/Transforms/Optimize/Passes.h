//===- Passes.h - Optimize passes -------------------------------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_OPTIMIZE_PASSES_H
#define MPMD_TRANSFORMS_OPTIMIZE_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Optimize/Passes.h.inc"

/// Registers the optimize passes.
void registerOptimizePasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_OPTIMIZE_PASSES_H
