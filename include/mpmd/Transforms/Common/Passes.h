//===- Passes.h - Passes shared by the pipelines ----------------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_COMMON_PASSES_H
#define MPMD_TRANSFORMS_COMMON_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Common/Passes.h.inc"

/// Registers mpmd-cleanup and mpmd-merge-inferred-fragments.
void registerCommonPasses();

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_COMMON_PASSES_H
