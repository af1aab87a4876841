// Programs that unrolling or inlining would blow up are errors, not an
// exhausted machine (found by mpmd-fuzz).
// RUN: mpmd-opt %s -mpmd-unroll-loops -split-input-file -verify-diagnostics

!t = tensor<4xf32>
func.func @huge(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{not supported yet: unrolling 4294967295 iterations (at most 4096)}}
  %0 = mpmd.for (%arg0) {iterations = 4294967295 : ui32, unroll_factor = 1 : ui32} (%x: !t, %index: tensor<ui32>) {
    %1 = stablehlo.add %x, %x : !t
    mpmd.return %1 : !t
  } : !t
  func.return %0 : !t
}

// -----

// A loop body calling itself through mpmd.call.
!t = tensor<4xf32>
func.func @main(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.call @body(%arg0) : (!t) -> !t
  func.return %0 : !t
}
func.func private @body(%arg0: !t) -> !t {
  // expected-error @+1 {{calls @body recursively (@body is reached from it)}}
  %0 = mpmd.call @body(%arg0) : (!t) -> !t
  func.return %0 : !t
}
