// RUN: mpmd-opt %s -mpmd-issue-transfers-early -split-input-file | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// The schedule put m1's backward b before the transfer of f's activation:
// the transfer moves up to right after f, then the argument's transfer to
// the start; transfers of one op's results keep their order; the
// fragments keep theirs.
// CHECK-LABEL: func.func @early
// CHECK-NEXT: %[[A:.*]] = mpmd.transfer %arg1
// CHECK-NEXT: %[[F:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"]>
// CHECK: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-NEXT: mpmd.transfer %[[F]]#1
// CHECK-NEXT: mpmd.transfer %[[F]]#0
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["b"(1)]>
// CHECK: mpmd.fragment<mesh="m2", origin=["g"]>
func.func @early(%arg0: !m1, %arg1: !m1) -> (!m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %f:2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %b = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0) (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %t1 = mpmd.transfer %f#1 : (!m1) -> !m2
  %t0 = mpmd.transfer %f#0 : (!m1) -> !m2
  %ta = mpmd.transfer %arg1 : (!m1) -> !m2
  %g = mpmd.fragment<mesh="m2", origin=["g"]> (%t0, %t1, %ta) (%x: !t, %y: !t, %z: !t) {
    %s = stablehlo.add %x, %y : !t
    %u = stablehlo.add %s, %z : !t
    mpmd.return %u : !t
  } : (!m2, !m2, !m2) -> !m2
  func.return %b, %g, %t1 : !m1, !m2, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!h1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">

// The move into host memory leaves right after f; the move back (a
// reload, placed by mpmd-place-host-reloads) stays before g, where it was.
// CHECK-LABEL: func.func @host_reload_stays
// CHECK: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"]>
// CHECK: %[[H:.*]] = mpmd.transfer %[[F]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["k"]>
// CHECK: %[[R:.*]] = mpmd.transfer %[[H]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["g"]> (%[[R]])
func.func @host_reload_stays(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %k = mpmd.fragment<mesh="m1", origin=["k"]> (%arg0) (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %h = mpmd.transfer %f : (!m1) -> !h1
  %r = mpmd.transfer %h : (!h1) -> !m1
  %g = mpmd.fragment<mesh="m1", origin=["g"]> (%r) (%x: !t) {
    %a = stablehlo.negate %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  func.return %g, %k : !m1, !m1
}
