// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-mark-recomputed-forwards -mpmd-schedule=schedule=explicit
// RUN: mpmd-opt %s -split-input-file -mpmd-mark-recomputed-forwards | FileCheck %s --check-prefix=MARK

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A table that lists a recomputed forward is told why it may not.
// expected-error @+1 {{the schedule of mesh "m1" names 'f[r]#0', a forward recomputed for its backward (jax.checkpoint): it runs right before that backward, so schedules do not list it}}
func.func @listed(%x0: !m1, %x1: !m1, %w: !m1, %v: !m2) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["f#0", "f#1", "f[r]#0", "f(1)#0", "f(1)#1"], m2 = ["g#0", "g(1)#0", "g#1", "g(1)#1"]}} {
  // Microbatch 0: f, g, g's backward, then (jax.checkpoint) f again for
  // f's backward, which reads the recomputed residual.
  %f0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x0, %w) {call_counter = 0 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  %t0 = mpmd.transfer %f0 : (!m1) -> !m2
  %g0 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%t0, %v) {call_counter = 0 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %gb0 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%g0, %v) {call_counter = 0 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %d0 = mpmd.transfer %gb0 : (!m2) -> !m1
  %r0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x0, %w) {call_counter = 0 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %fb0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d0, %r0) {call_counter = 0 : ui32} (%d: !t, %m: !t) {
    %c = stablehlo.cosine %m : !t
    %p = stablehlo.multiply %d, %c : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  // Microbatch 1: f, g, g's backward, then (jax.checkpoint) f again for
  // f's backward, which reads the recomputed residual.
  %f1 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x1, %w) {call_counter = 1 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  %t1 = mpmd.transfer %f1 : (!m1) -> !m2
  %g1 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%t1, %v) {call_counter = 1 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %gb1 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%g1, %v) {call_counter = 1 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %d1 = mpmd.transfer %gb1 : (!m2) -> !m1
  %r1 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x1, %w) {call_counter = 1 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %fb1 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d1, %r1) {call_counter = 1 : ui32} (%d: !t, %m: !t) {
    %c = stablehlo.cosine %m : !t
    %p = stablehlo.multiply %d, %c : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %fb0, %fb1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A layer applied twice in the forward (same label and microbatch): the
// second application feeds forward code (g), so it is not a recompute,
// though a backward reads it too; a table cannot tell the two apart.
// MARK-LABEL: func.func @shared_layer
// MARK-NOT: mpmd.remat
func.func @shared_layer(%x: !m1, %w: !m1) -> (!m2, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["f#0", "f(1)#0"], m2 = ["g#0"]}} {
  %a = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x, %w) {call_counter = 0 : ui32} (%x1: !t, %w1: !t) {
    %m = stablehlo.multiply %x1, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  // expected-error @+1 {{shares the key 'f#0' with another fragment on mesh "m1"}}
  %b = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%a, %w) {call_counter = 0 : ui32} (%x1: !t, %w1: !t) {
    %m = stablehlo.multiply %x1, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %t = mpmd.transfer %b : (!m1) -> !m2
  %g = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%t) {call_counter = 0 : ui32} (%x1: !t) {
    %n = stablehlo.negate %x1 : !t
    mpmd.return %n : !t
  } : (!m2) -> !m2
  %fb = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%b, %a) {call_counter = 0 : ui32} (%x1: !t, %y1: !t) {
    %m = stablehlo.multiply %x1, %y1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  func.return %g, %fb : !m2, !m1
}
