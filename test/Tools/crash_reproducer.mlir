// A pass that crashes: mpmd-opt reports the pass and writes a reproducer (as
// mlir-opt does), and replaying the reproducer crashes the same way.
// RUN: not mpmd-opt %s '--pass-pipeline=builtin.module(mpmd-test-crash{mode=signal})' --mlir-pass-pipeline-crash-reproducer=%t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPRO --input-file=%t
// RUN: not --crash mpmd-opt --run-reproducer %t 2>&1 | FileCheck %s --check-prefix=REPLAY

// CHECK: error: Failures have been detected while processing an MLIR pass pipeline
// CHECK: note: Pipeline failed while executing [`{{.*}}TestCrashPass` on 'builtin.module' operation]: reproducer generated at

// REPRO: module
// REPRO: pipeline: "builtin.module(mpmd-test-crash{mode=signal})"

// REPLAY: Stack dump:
module {
}
