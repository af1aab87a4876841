//===- RuntimeModule.cpp - The mpmd._mpmd_runtime extension ---------------===//
//
// The runtime's C++ part, apart from the compiler's extension: the
// executor's step loop (StepLoop.h).
//
//===----------------------------------------------------------------------===//

#include "StepLoop.h"

NB_MODULE(_mpmd_runtime, m) {
  m.doc() = "The mpmd runtime's C++ part: the executor's step loop.";
  mpmd::python::registerStepLoop(m);
}
