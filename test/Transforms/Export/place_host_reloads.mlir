// RUN: mpmd-opt %s -mpmd-place-host-reloads -split-input-file | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!h1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">

// An argument kept in pinned host memory, read by g#0 early and by g#1
// late, is brought back written once at the top. Each user gets its own
// reload, issued before the user fragment of m1 that precedes it: before
// f#0 for g#0, before f#2 for g#1; the value is not on the device while
// f#1 runs.
// CHECK-LABEL: func.func @two_users
// CHECK-NEXT: %[[R0:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[F0:.*]] = mpmd.fragment<mesh="m1", origin=["f"]> (%arg1)
// CHECK: mpmd.fragment<mesh="m1", origin=["g"]> (%[[R0]], %[[F0]])
// CHECK: %[[F1:.*]] = mpmd.fragment<mesh="m1", origin=["f"]> (%[[F0]])
// CHECK: %[[R1:.*]] = mpmd.transfer %arg0
// CHECK-NEXT: %[[F2:.*]] = mpmd.fragment<mesh="m1", origin=["f"]> (%[[F1]])
// CHECK: mpmd.fragment<mesh="m1", origin=["g"]> (%[[R1]], %[[F2]])
// CHECK-NOT: mpmd.transfer
func.func @two_users(%arg0: !h1, %arg1: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %r = mpmd.transfer %arg0 : (!h1) -> !m1
  %f0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg1) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %g0 = mpmd.fragment<mesh="m1", origin=["g"]> (%r, %f0) {call_counter = 0 : ui32} (%x: !t, %y: !t) {
    %a = stablehlo.add %x, %y : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  %f1 = mpmd.fragment<mesh="m1", origin=["f"]> (%f0) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %f2 = mpmd.fragment<mesh="m1", origin=["f"]> (%f1) {call_counter = 2 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %g1 = mpmd.fragment<mesh="m1", origin=["g"]> (%r, %f2) {call_counter = 1 : ui32} (%x: !t, %y: !t) {
    %a = stablehlo.add %x, %y : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  func.return %g0, %g1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!h1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">

// The value reaches host memory only after f, the fragment before its
// user: it comes back right before the user. Two users at the same place
// share one reload; a transfer into host memory is not a reload.
// CHECK-LABEL: func.func @late_source
// CHECK: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"]>
// CHECK: %[[H:.*]] = mpmd.transfer %[[F]] {{.*}}memory_kind="pinned_host">
// CHECK-NEXT: %[[R:.*]] = mpmd.transfer %[[H]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["g"]> (%[[R]], %[[R]])
// CHECK-NOT: mpmd.transfer
func.func @late_source(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %h = mpmd.transfer %f : (!m1) -> !h1
  %r = mpmd.transfer %h : (!h1) -> !m1
  %g = mpmd.fragment<mesh="m1", origin=["g"]> (%r, %r) (%x: !t, %y: !t) {
    %a = stablehlo.add %x, %y : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  func.return %g : !m1
}
