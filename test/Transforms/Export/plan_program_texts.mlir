// The plan prints each distinct program module once: programs equal op by
// op (here the same stage on two meshes of one shape) share the text, and a
// program of the same signature but another body keeps its own.
// RUN: mpmd-opt %s -mpmd-outline-fragments -mpmd-print-execution-plan -o /dev/null | FileCheck %s

// CHECK: "p0_a_fwd": {
// CHECK: "mesh": "m1",
// CHECK-NEXT: "module": [[ADD:.*stablehlo.add.*]]
// CHECK: "p1_b_fwd": {
// CHECK: "mesh": "m2",
// CHECK-NEXT: "module": [[ADD]]{{$}}
// CHECK: "p2_c_fwd": {
// CHECK: "mesh": "m2",
// CHECK-NEXT: "module": {{.*}}stablehlo.multiply

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
func.func @main(%arg0: !m1, %arg1: !m2) -> (!m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) (%x: !t) {
    %1 = stablehlo.add %x, %x : !t
    mpmd.return %1 : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg1) (%x: !t) {
    %3 = stablehlo.add %x, %x : !t
    mpmd.return %3 : !t
  } : (!m2) -> !m2
  %4 = mpmd.fragment<mesh="m2", origin=["c"]> (%arg1) (%x: !t) {
    %5 = stablehlo.multiply %x, %x : !t
    mpmd.return %5 : !t
  } : (!m2) -> !m2
  func.return %0, %2, %4 : !m1, !m2, !m2
}
