// With infer-cross-mesh-reductions, a sum of values from several meshes
// becomes mpmd.reduce: each operand stays home and is moved to the meshes
// that need the sum; no general transfer inference is needed.
// RUN: mpmd-opt %s -mpmd-infer-meshes=infer-cross-mesh-reductions=true | FileCheck %s
// RUN: not mpmd-opt %s -mpmd-infer-meshes 2>&1 | FileCheck %s --check-prefix=OFF

!t = tensor<f32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<f32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<f32>>
!m3 = !mpmd.mesh_tensor<"m3", tensor<f32>>

// OFF: 'stablehlo.multiply' op needs a transfer that mesh inference may not add: it is used on {"m3"} (its use set) but its operands are all available only on {"m1"} (its src set)
// CHECK-LABEL: func.func @global_norm
func.func @global_norm(%arg0: !m1, %arg1: !m2, %arg2: !m3) -> !m3
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>} {
  %0 = mpmd.unassign %arg0 : (!m1) -> !t
  %1 = mpmd.unassign %arg1 : (!m2) -> !t
  %2 = mpmd.unassign %arg2 : (!m3) -> !t
  // The squares are computed where each value lives.
  // CHECK: %[[S1:.*]] = mpmd.fragment<mesh="m1", origin=[]> (%arg0)
  // CHECK: %[[S2:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%arg1)
  // CHECK: %[[S3:.*]] = mpmd.fragment<mesh="m3", origin=[]> (%arg2)
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
