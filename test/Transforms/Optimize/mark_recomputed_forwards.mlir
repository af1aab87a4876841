// RUN: mpmd-opt %s -split-input-file -mpmd-mark-recomputed-forwards | FileCheck %s --check-prefix=MARK
// RUN: mpmd-opt %s -split-input-file -mpmd-optimize=schedule=1f1b | FileCheck %s --check-prefix=SCHED
// RUN: mpmd-opt %s -split-input-file -mpmd-optimize="schedule=explicit order=m1=f#1|f#0|f(1)#0|f(1)#1,m2=g#0|g(1)#0|g#1|g(1)#1" | FileCheck %s --check-prefix=TABLE
// RUN: mpmd-opt %s -split-input-file -mpmd-optimize="schedule=1f1b remat=true merge-remat=true" | FileCheck %s --check-prefix=MERGE

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Two microbatches of f (m1, stage 0) and g (m2, stage 1) under
// jax.checkpoint: each microbatch's f runs again before its backward.
// The second f of each microbatch is marked; the forwards are not.
// MARK-LABEL: func.func @checkpointed
// MARK: %[[F0:.*]] = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32} (
// MARK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32, mpmd.remat} (
// MARK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32} (
// MARK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32, mpmd.remat} (
// 1F1B on m1 (stage 0 of 2): F0 F1 B0 B1, each recompute right before its
// backward, so f#0's recompute moves after f#1 (in program order it came
// before it).
// SCHED-LABEL: func.func @checkpointed
// SCHED: origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32}
// SCHED: origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32}
// SCHED: origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32, mpmd.remat}
// SCHED-NOT: mesh="m1", origin=["f"],
// SCHED: origin=["f"(1)], stage=0> ({{.*}}) {call_counter = 0 : ui32}
// SCHED: origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32, mpmd.remat}
// SCHED-NOT: mesh="m1", origin=["f"],
// SCHED: origin=["f"(1)], stage=0> ({{.*}}) {call_counter = 1 : ui32}
// With merge-remat, each recompute is fused into its backward.
// MERGE-LABEL: func.func @checkpointed
// MERGE-NOT: {call_counter = 0 : ui32, mpmd.remat} (
// MERGE: mpmd.fragment<mesh="m1", origin=["f", "f"(1)], stage=0> (%arg0, %arg2, %{{.*}}) {call_counter = 0 : ui32, mpmd.remat}
// MERGE: mpmd.fragment<mesh="m1", origin=["f", "f"(1)], stage=0> (%arg1, %arg2, %{{.*}}) {call_counter = 1 : ui32, mpmd.remat}
// A table names the forwards and backwards only; each recompute goes
// right before its backward.
// TABLE-LABEL: func.func @checkpointed
// TABLE: origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32}
// TABLE: origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32}
// TABLE: origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32, mpmd.remat}
// TABLE-NOT: mesh="m1", origin=["f"],
// TABLE: origin=["f"(1)], stage=0> ({{.*}}) {call_counter = 0 : ui32}
// TABLE: origin=["f"], stage=0> (%arg1, %arg2) {call_counter = 1 : ui32, mpmd.remat}
func.func @checkpointed(%x0: !m1, %x1: !m1, %w: !m1, %v: !m2) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
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

// jax.checkpoint around f and g together: f is recomputed on m1 for g's
// recompute on m2 and for f's backward. Both are marked; f's recompute
// runs right before the transfer to g's, which runs right before g's
// backward (so before f's backward, which needs g's).
// MARK-LABEL: func.func @chain
// MARK-COUNT-4: mpmd.remat
// SCHED-LABEL: func.func @chain
// SCHED: %[[RF:.*]] = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32, mpmd.remat}
// SCHED: } : (
// SCHED-NEXT: %[[RT:.*]] = mpmd.transfer %[[RF]]
// SCHED-NEXT: %[[RG:.*]] = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%[[RT]], %arg3) {call_counter = 0 : ui32, mpmd.remat}
// SCHED: } : (
// SCHED-NEXT: mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> ({{.*}}, %[[RG]]) {call_counter = 0 : ui32}
// TABLE-LABEL: func.func @chain
// f's recompute feeds g's too: it stays apart; g's is fused.
// MERGE-LABEL: func.func @chain
// MERGE: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg2) {call_counter = 0 : ui32, mpmd.remat}
// MERGE: mpmd.fragment<mesh="m2", origin=["g", "g"(1)], stage=1> ({{.*}}) {call_counter = 0 : ui32, mpmd.remat}
// MERGE: mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0>
func.func @chain(%x0: !m1, %x1: !m1, %w: !m1, %v: !m2) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %f0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x0, %w) {call_counter = 0 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %t0 = mpmd.transfer %f0 : (!m1) -> !m2
  %g0 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%t0, %v) {call_counter = 0 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %rf0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x0, %w) {call_counter = 0 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %rt0 = mpmd.transfer %rf0 : (!m1) -> !m2
  %rg0 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%rt0, %v) {call_counter = 0 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %gb0 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%g0, %rg0) {call_counter = 0 : ui32} (%x: !t, %r: !t) {
    %m = stablehlo.multiply %x, %r : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %d0 = mpmd.transfer %gb0 : (!m2) -> !m1
  %fb0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d0, %rf0) {call_counter = 0 : ui32} (%d: !t, %m: !t) {
    %p = stablehlo.multiply %d, %m : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  %f1 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x1, %w) {call_counter = 1 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %t1 = mpmd.transfer %f1 : (!m1) -> !m2
  %g1 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%t1, %v) {call_counter = 1 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %rf1 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%x1, %w) {call_counter = 1 : ui32} (%x: !t, %w1: !t) {
    %m = stablehlo.multiply %x, %w1 : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %rt1 = mpmd.transfer %rf1 : (!m1) -> !m2
  %rg1 = mpmd.fragment<mesh="m2", origin=["g"], stage=1> (%rt1, %v) {call_counter = 1 : ui32} (%x: !t, %v1: !t) {
    %m = stablehlo.multiply %x, %v1 : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %gb1 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%g1, %rg1) {call_counter = 1 : ui32} (%x: !t, %r: !t) {
    %m = stablehlo.multiply %x, %r : !t
    mpmd.return %m : !t
  } : (!m2, !m2) -> !m2
  %d1 = mpmd.transfer %gb1 : (!m2) -> !m1
  %fb1 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d1, %rf1) {call_counter = 1 : ui32} (%d: !t, %m: !t) {
    %p = stablehlo.multiply %d, %m : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %fb0, %fb1 : !m1, !m1
}
