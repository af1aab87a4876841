// RUN: mpmd-opt %s -mpmd-remat-fragments -mpmd-cleanup -split-input-file | FileCheck %s
// RUN: mpmd-opt %s -mpmd-remat-fragments="merge=true" -mpmd-cleanup -split-input-file | FileCheck %s --check-prefix=MERGE
// RUN: mpmd-opt %s -mpmd-optimize="remat=true merge-remat=true" -mpmd-cleanup -split-input-file | FileCheck %s --check-prefix=MERGE

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Microbatch 0's forward f runs, then microbatch 1's, then microbatch 0's
// backward f(1), which reads f's residual (the pre-activation). The copy of
// f#0 runs right before f(1)#0, which reads the copy; f#0 keeps only the
// activation the next stage reads.
// CHECK-LABEL: func.func @remat
// CHECK: %[[F0:.*]] = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32}
// CHECK: mpmd.return %{{.*}} : tensor<4xf32>
// CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK: mpmd.transfer %[[F0]]
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2, %arg1) {call_counter = 1 : ui32}
// CHECK: %[[D0:.*]] = mpmd.transfer %{{.*}} : (!mpmd.mesh_tensor<"m2"
// CHECK: %[[COPY:.*]] = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32, mpmd.remat}
// CHECK: stablehlo.multiply
// CHECK-NOT: stablehlo.tanh
// CHECK: mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%[[D0]], %[[COPY]])
// MERGE-LABEL: func.func @remat
// MERGE: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32}
// MERGE: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2, %arg1) {call_counter = 1 : ui32}
// MERGE: mpmd.fragment<mesh="m1", origin=["f", "f"(1)], stage=0> ({{.*}}) {call_counter = 0 : ui32, mpmd.remat}
// MERGE-NEXT: stablehlo.multiply
// MERGE: stablehlo.cosine
func.func @remat(%arg0: !m1, %arg1: !m1, %arg2: !m1) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32} (%x: !t, %w: !t) {
    %m = stablehlo.multiply %x, %w : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a, %m : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %a0 = mpmd.transfer %f0#0 : (!m1) -> !m2
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2, %arg1) {call_counter = 1 : ui32} (%x: !t, %w: !t) {
    %m = stablehlo.multiply %x, %w : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a, %m : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %a1 = mpmd.transfer %f1#0 : (!m1) -> !m2
  %g0 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%a0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m2) -> !m2
  %d0 = mpmd.transfer %g0 : (!m2) -> !m1
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d0, %f0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %c = stablehlo.cosine %r : !t
    %p = stablehlo.multiply %d, %c : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b0, %a1 : !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Nothing else runs on m1 between the forward and its backward: the
// residual is not kept across other work, so nothing is recomputed.
// CHECK-LABEL: func.func @adjacent
// CHECK-NOT: mpmd.remat
// MERGE-LABEL: func.func @adjacent
// MERGE-NOT: mpmd.remat
func.func @adjacent(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %b = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%f#0, %f#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Only the microbatch's own later stage runs on m1 in between (e.g. a head
// after the last block on the last mesh): no other microbatch waits, so
// nothing is recomputed.
// CHECK-LABEL: func.func @same_microbatch_between
// CHECK-NOT: mpmd.remat
// MERGE-LABEL: func.func @same_microbatch_between
// MERGE-NOT: mpmd.remat
func.func @same_microbatch_between(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %h = mpmd.fragment<mesh="m1", origin=["head"], stage=0> (%f#0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %b = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%h, %f#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b : !m1
}
