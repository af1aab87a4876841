// With infer-cross-mesh-reductions, a sum of values from several meshes
// becomes mpmd.reduce: each operand stays home and is moved to the meshes
// that need the sum; no general transfer inference is needed.
// RUN: mpmd-opt %s -mpmd-infer-meshes=infer-cross-mesh-reductions=true | FileCheck %s
// RUN: not mpmd-opt %s -mpmd-infer-meshes 2>&1 | FileCheck %s --check-prefix=OFF

!t = tensor<f32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<f32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<f32>>
!m3 = !mpmd.mesh_tensor<"m3", tensor<f32>>

// OFF: Mesh assignment is not possible for op as it is used in {"m3"} but it can only be placed on {"m1"}: 'stablehlo.multiply' needs a transfer
// CHECK-LABEL: func.func @global_norm
func.func @global_norm(%arg0: !m1, %arg1: !m2, %arg2: !m3) -> !m3
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>} {
  // Gradients computed on each mesh (arguments would move freely).
  // CHECK: %[[G1:.*]] = mpmd.fragment<mesh="m1", origin=["g1"]>
  // CHECK: %[[G2:.*]] = mpmd.fragment<mesh="m2", origin=["g2"]>
  // CHECK: %[[G3:.*]] = mpmd.fragment<mesh="m3", origin=["g3"]>
  %g1 = mpmd.fragment<mesh="m1", origin=["g1"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %g2 = mpmd.fragment<mesh="m2", origin=["g2"]> (%arg1) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %g3 = mpmd.fragment<mesh="m3", origin=["g3"]> (%arg2) (%x: !t) {
    mpmd.return %x : !t
  } : (!m3) -> !m3
  %0 = mpmd.unassign %g1 : (!m1) -> !t
  %1 = mpmd.unassign %g2 : (!m2) -> !t
  %2 = mpmd.unassign %g3 : (!m3) -> !t
  // The squares are computed where each value lives.
  // CHECK: %[[S1:.*]] = mpmd.fragment<mesh="m1", origin=[]> (%[[G1]])
  // CHECK: %[[S2:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[G2]])
  // CHECK: %[[S3:.*]] = mpmd.fragment<mesh="m3", origin=[]> (%[[G3]])
  %3 = stablehlo.multiply %0, %0 : !t
  %4 = stablehlo.multiply %1, %1 : !t
  %5 = stablehlo.multiply %2, %2 : !t
  // CHECK-DAG: %[[T1:.*]] = mpmd.transfer %[[S1]] : (!mpmd.mesh_tensor<"m1", tensor<f32>>) -> !mpmd.mesh_tensor<"m3", tensor<f32>>
  // CHECK-DAG: %[[T2:.*]] = mpmd.transfer %[[S2]] : (!mpmd.mesh_tensor<"m2", tensor<f32>>) -> !mpmd.mesh_tensor<"m3", tensor<f32>>
  // CHECK: %[[SUM:.*]] = mpmd.fragment<mesh="m3", origin=[]> (%[[T1]], %[[T2]], %[[S3]])
  // CHECK-NEXT: %[[P:.*]] = stablehlo.add
  // CHECK-NEXT: stablehlo.add %[[P]]
  %6 = stablehlo.add %3, %4 : !t
  %7 = stablehlo.add %6, %5 : !t
  %8 = stablehlo.sqrt %7 : !t
  %9 = mpmd.assign %8 : (!t) -> !m3
  func.return %9 : !m3
}

// Two microbatches' contributions of m1 and of m2 to a sum m1 reads (a
// gradient used on two meshes, accumulated over the loop): m2's two are
// added on m2 first, so one value crosses instead of one per microbatch.
// CHECK-LABEL: func.func @accumulated
func.func @accumulated(%arg0: !m1, %arg1: !m2) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: %[[A0:.*]] = mpmd.fragment<mesh="m1", origin=["a"]>
  // CHECK: %[[A1:.*]] = mpmd.fragment<mesh="m1", origin=["a"]>
  // CHECK: %[[B0:.*]] = mpmd.fragment<mesh="m2", origin=["b"]>
  // CHECK: %[[B1:.*]] = mpmd.fragment<mesh="m2", origin=["b"]>
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %a1 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %b0 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg1) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %b1 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg1) {call_counter = 1 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m2) -> !m2
  %0 = mpmd.unassign %a0 : (!m1) -> !t
  %1 = mpmd.unassign %a1 : (!m1) -> !t
  %2 = mpmd.unassign %b0 : (!m2) -> !t
  %3 = mpmd.unassign %b1 : (!m2) -> !t
  // CHECK: %[[P:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[B0]], %[[B1]])
  // CHECK-NEXT: stablehlo.add
  // CHECK: %[[T:.*]] = mpmd.transfer %[[P]] : (!mpmd.mesh_tensor<"m2", tensor<f32>>) -> !mpmd.mesh_tensor<"m1", tensor<f32>>
  // CHECK-NOT: mpmd.transfer
  // CHECK: mpmd.fragment<mesh="m1", origin=[]> (%[[A0]], %[[T]], %[[A1]])
  %4 = stablehlo.add %0, %2 : !t
  %5 = stablehlo.add %4, %1 : !t
  %6 = stablehlo.add %5, %3 : !t
  %7 = mpmd.assign %6 : (!t) -> !m1
  func.return %7 : !m1
}
