// RUN: mpmd-opt %s -mpmd-introduce-transfers -split-input-file | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK-LABEL: func.func @main
func.func @main(%arg0: !m1, %arg1: !t) -> (!m2, !m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> !t
  // Fragment to fragment across meshes: a transfer.
  // CHECK: %[[T:.*]] = mpmd.transfer %[[F:.*]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  %2 = mpmd.assign %1 : (!t) -> !m2
  // Same mesh: the value itself.
  %3 = mpmd.assign %1 : (!t) -> !m1
  // Inputs and nameless values are left to mesh inference.
  // CHECK: %[[IN:.*]] = mpmd.unassign %arg0
  // CHECK: mpmd.assign %[[IN]] : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2"
  // CHECK: mpmd.assign %arg1 : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2"
  %4 = mpmd.unassign %arg0 : (!m1) -> !t
  %5 = mpmd.assign %4 : (!t) -> !m2
  %6 = mpmd.assign %arg1 : (!t) -> !m2
  // CHECK: return %[[T]], %[[F]]
  func.return %2, %3, %5, %6 : !m2, !m1, !m2, !m2
}

// A value read twice on another mesh (the forward and the backward of the
// next stage) moves once.
// CHECK-LABEL: func.func @read_twice
func.func @read_twice(%arg0: !m1) -> (!m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> !t
  // CHECK: %[[T:.*]] = mpmd.transfer
  // CHECK-NOT: mpmd.transfer
  // CHECK: return %[[T]], %[[T]]
  %2 = mpmd.assign %1 : (!t) -> !m2
  %3 = mpmd.assign %1 : (!t) -> !m2
  func.return %2, %3 : !m2, !m2
}

// A named tensor (an assign the user asked for) read by fragments: its
// value on the same mesh, a transfer to another.
// CHECK-LABEL: func.func @named_tensor
func.func @named_tensor(%arg0: !t) -> (!m2, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: %[[C:.*]] = stablehlo.iota
  // CHECK: %[[N:.*]] = mpmd.assign {origin = "c"} %[[C]]
  // CHECK-NOT: mpmd.unassign
  // CHECK: %[[T:.*]] = mpmd.transfer %[[N]] : (!mpmd.mesh_tensor<"m2"
  // CHECK: return %[[N]], %[[T]]
  %0 = stablehlo.iota dim = 0 : !t
  %1 = mpmd.assign {origin = "c"} %0 : (!t) -> !m2
  %2 = mpmd.unassign {origin = "c"} %1 : (!m2) -> !t
  %3 = mpmd.assign %2 : (!t) -> !m2
  %4 = mpmd.assign %2 : (!t) -> !m1
  func.return %3, %4 : !m2, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
!m3 = !mpmd.mesh_tensor<"m3", tensor<4xf32>>

// A value fanned out to two stages: JAX adds their gradients outside any
// named computation. The sum is made on the mesh of the named op that reads
// it, each term moved there (Shardy's import does the same).
// CHECK-LABEL: func.func @fan_out_gradients
// CHECK: %[[A:.*]] = mpmd.fragment<mesh="m2", origin=["b"(1)]>
// CHECK: %[[B:.*]] = mpmd.fragment<mesh="m3", origin=["c"(1)]>
// CHECK: %[[TA:.*]] = mpmd.transfer %[[A]] : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK: %[[TB:.*]] = mpmd.transfer %[[B]] : (!mpmd.mesh_tensor<"m3", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK: %[[S:.*]] = mpmd.fragment<mesh="m1", origin=[]> (%[[TA]], %[[TB]]) (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[X]], %[[Y]]
// CHECK-NEXT: mpmd.return %[[SUM]]
// CHECK: mpmd.fragment<mesh="m1", origin=["a"(1)]> (%[[S]])
// CHECK-NOT: stablehlo.add
func.func @fan_out_gradients(%arg0: !m2, %arg1: !m3) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m2", origin=["b"(1)]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %1 = mpmd.fragment<mesh="m3", origin=["c"(1)]> (%arg1) (%x: !t) {
    mpmd.return %x : !t
  } : (!m3) -> !m3
  %2 = mpmd.unassign %0 : (!m2) -> !t
  %3 = mpmd.unassign %1 : (!m3) -> !t
  %4 = stablehlo.add %2, %3 : !t
  %5 = mpmd.assign %4 : (!t) -> !m1
  %6 = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%5) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %6 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A sum that is also read elsewhere is left to mesh inference.
// CHECK-LABEL: func.func @sum_read_twice
// CHECK: stablehlo.add
func.func @sum_read_twice(%arg0: !m2) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %1 = mpmd.unassign %0 : (!m2) -> !t
  %2 = stablehlo.add %1, %1 : !t
  %3 = mpmd.assign %2 : (!t) -> !m1
  %4 = mpmd.assign %2 : (!t) -> !m2
  func.return %3, %4 : !m1, !m2
}
