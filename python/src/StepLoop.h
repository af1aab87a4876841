//===- StepLoop.h - The runtime's per-step loop in C++ ----------*- C++ -*-===//
//
// The executor's hot loop (python/mpmd/runtime/executor.py, `_run_fast`):
// walk the execution plan, call each program's dispatch callable with its
// arguments, keep the results, drop values at their last use. Written here
// so that a step costs a vectorcall instead of a few microseconds of
// interpreted Python.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_PYTHON_STEPLOOP_H
#define MPMD_PYTHON_STEPLOOP_H

#include <nanobind/nanobind.h>

namespace mpmd::python {

/// Adds the `StepLoop` class to `module`.
void registerStepLoop(nanobind::module_ &module);

} // namespace mpmd::python

#endif // MPMD_PYTHON_STEPLOOP_H
