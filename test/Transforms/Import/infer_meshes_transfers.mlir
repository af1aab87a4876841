// With infer-transfers, values are moved to the meshes that lack them.
// RUN: mpmd-opt %s -mpmd-infer-meshes=infer-transfers=true -split-input-file | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// CHECK-LABEL: func.func @needs_transfer
func.func @needs_transfer(%arg0: !m1, %arg1: !m2) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: %[[T:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  // CHECK: %[[A:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[T]], %arg1)
  // CHECK-NEXT: stablehlo.add
  // CHECK: return %[[A]]
  %0 = mpmd.unassign %arg0 : (!m1) -> !t
  %1 = mpmd.unassign %arg1 : (!m2) -> !t
  %2 = stablehlo.add %0, %1 : !t
  %3 = mpmd.assign %2 : (!t) -> !m2
  func.return %3 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A parameter used by the forward on m1 and the backward on m2 lives on m1
// and is copied to m2.
// CHECK-LABEL: func.func @shared_parameter
// CHECK-SAME: (%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK: %[[T:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: return %arg0, %[[T]]
func.func @shared_parameter(%arg0: !t) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.assign %arg0 : (!t) -> !m1
  %1 = mpmd.assign %arg0 : (!t) -> !m2
  func.return %0, %1 : !m1, !m2
}

// -----

!big = tensor<256xf32>
!s = tensor<f32>

// A free result computed from a large value on m2 and a scalar on m1 (a
// parameter update reading an optimizer's step count) is computed on m2:
// the scalar moves, not the large value, though m1 comes first.
// CHECK-LABEL: func.func @result_goes_where_the_bytes_are
// CHECK-SAME: -> !mpmd.mesh_tensor<"m2", tensor<256xf32>>
// CHECK: %[[T:.*]] = mpmd.transfer %arg1 : (!mpmd.mesh_tensor<"m1", tensor<f32>>) -> !mpmd.mesh_tensor<"m2", tensor<f32>>
// CHECK: %[[B:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[T]])
// CHECK-NEXT: stablehlo.broadcast_in_dim
// CHECK-NOT: mpmd.transfer
// CHECK: %[[F:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%arg0, %[[B]])
// CHECK-NEXT: stablehlo.subtract
// CHECK: return %[[F]]
func.func @result_goes_where_the_bytes_are(
    %arg0: !mpmd.mesh_tensor<"m2", tensor<256xf32>>,
    %arg1: !mpmd.mesh_tensor<"m1", tensor<f32>>) -> !big
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m2", tensor<256xf32>>) -> !big
  %1 = mpmd.unassign %arg1 : (!mpmd.mesh_tensor<"m1", tensor<f32>>) -> !s
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (!s) -> !big
  %3 = stablehlo.subtract %0, %2 : !big
  func.return %3 : !big
}

// -----

!big = tensor<256xf32>
!one = tensor<1xf32>

// A value of m1 that both meshes need, smaller than what it is computed
// from, is computed on m1 and sent: the slice crosses, not its operand.
// CHECK-LABEL: func.func @small_result_moves
// CHECK: %[[S:.*]] = mpmd.fragment<mesh="m1", origin=[]> (%arg0)
// CHECK-NEXT: stablehlo.slice
// CHECK: %[[T:.*]] = mpmd.transfer %[[S]] : (!mpmd.mesh_tensor<"m1", tensor<1xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<1xf32>>
// CHECK-NOT: stablehlo.slice
// CHECK: return
func.func @small_result_moves(%arg0: !mpmd.mesh_tensor<"m1", tensor<256xf32>>)
    -> (!mpmd.mesh_tensor<"m1", tensor<1xf32>>, !mpmd.mesh_tensor<"m2", tensor<1xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m1", tensor<256xf32>>) -> !big
  %1 = stablehlo.slice %0 [0:1] : (!big) -> !one
  %2 = mpmd.assign %1 : (!one) -> !mpmd.mesh_tensor<"m1", tensor<1xf32>>
  %3 = mpmd.assign %1 : (!one) -> !mpmd.mesh_tensor<"m2", tensor<1xf32>>
  func.return %2, %3 : !mpmd.mesh_tensor<"m1", tensor<1xf32>>, !mpmd.mesh_tensor<"m2", tensor<1xf32>>
}

// -----

!big = tensor<256xf32>

// A value as large as its operand is cloned onto the mesh that lacks it,
// its operand moved there (moving either costs the same).
// CHECK-LABEL: func.func @equal_size_clones
// CHECK: %[[T:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<256xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<256xf32>>
// CHECK: mpmd.fragment<mesh="m1", origin=[]> (%arg0)
// CHECK-NEXT: stablehlo.negate
// CHECK: mpmd.fragment<mesh="m2", origin=[]> (%[[T]])
// CHECK-NEXT: stablehlo.negate
func.func @equal_size_clones(%arg0: !mpmd.mesh_tensor<"m1", tensor<256xf32>>)
    -> (!mpmd.mesh_tensor<"m1", tensor<256xf32>>, !mpmd.mesh_tensor<"m2", tensor<256xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m1", tensor<256xf32>>) -> !big
  %1 = stablehlo.negate %0 : !big
  %2 = mpmd.assign %1 : (!big) -> !mpmd.mesh_tensor<"m1", tensor<256xf32>>
  %3 = mpmd.assign %1 : (!big) -> !mpmd.mesh_tensor<"m2", tensor<256xf32>>
  func.return %2, %3 : !mpmd.mesh_tensor<"m1", tensor<256xf32>>, !mpmd.mesh_tensor<"m2", tensor<256xf32>>
}
