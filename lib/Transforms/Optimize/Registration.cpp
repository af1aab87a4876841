//===- Registration.cpp - Register the optimize passes --------------------===//

#include "mpmd/Transforms/Optimize/Passes.h"

namespace mlir::mpmd {
namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace

void registerOptimizePasses() { registerMpmdOptimizePasses(); }
} // namespace mlir::mpmd
