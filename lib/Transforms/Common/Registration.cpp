//===- Registration.cpp - Register the shared passes ----------------------===//

#include "mpmd/Transforms/Common/Passes.h"

namespace mlir::mpmd {
namespace {
#define GEN_PASS_REGISTRATION
#include "mpmd/Transforms/Common/Passes.h.inc"
} // namespace

void registerCommonPasses() { registerMpmdCommonPasses(); }
} // namespace mlir::mpmd
