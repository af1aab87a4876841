//===- TestPasses.h - Passes that exist to test the tools -------*- C++ -*-===//
//
// Like upstream's `test-*` passes in mlir-opt: registered in every driver so
// that tests can exercise the drivers themselves (crash recovery, crash
// reproducers), never used by a pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TESTING_TESTPASSES_H
#define MPMD_TESTING_TESTPASSES_H

namespace mlir::mpmd {

/// Registers `mpmd-test-crash`.
void registerTestPasses();

} // namespace mlir::mpmd

#endif // MPMD_TESTING_TESTPASSES_H
