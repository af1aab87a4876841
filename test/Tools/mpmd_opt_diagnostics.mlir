// mpmd-opt reports bad input with a location and exit status 1, never a crash.
// RUN: not mpmd-opt %s 2>&1 | FileCheck %s
// RUN: not mpmd-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not mpmd-opt --allow-unregistered-dialect=false %S/Inputs/unregistered.mlir 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: mpmd-opt %S/Inputs/unregistered.mlir | FileCheck %s --check-prefix=LENIENT
// RUN: mpmd-opt --help | FileCheck %s --check-prefix=HELP

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @main(%arg0: !m1) -> !m1 attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // CHECK: mpmd_opt_diagnostics.mlir:[[@LINE+1]]:8: error: 'mpmd.transfer' op destination refers to mesh "m2", which is not in the topology; known meshes: "m1"
  %0 = mpmd.transfer %arg0 : (!m1) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  func.return %arg0 : !m1
}

// SYNTAX: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// STRICT: unregistered.mlir:{{[0-9]+}}:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
// LENIENT: "chlo.erf"(%arg0)
// HELP: mpmd optimizer driver
// HELP: --canonicalize
