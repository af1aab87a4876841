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
