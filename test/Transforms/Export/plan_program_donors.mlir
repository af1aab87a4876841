// Which arguments die in a program without a result reusing them depends on
// the other programs of its mesh: the plan lists them (`buffer_donors`) and
// leaves them out of the program's text, so the same stage on two meshes
// stays one program text although only one of its calls frees the input.
// RUN: mpmd-opt %s -mpmd-outline-fragments -mpmd-mark-donations -mpmd-print-execution-plan -o /dev/null | FileCheck %s

// CHECK-NOT: buffer_donor = true
// CHECK: "p1_q_fwd": {
// CHECK-NEXT: "buffer_donors": [
// CHECK-NEXT: 0
// CHECK-NEXT: ],
// CHECK: "mesh": "m1",
// CHECK-NEXT: "module": [[SLICE:.*stablehlo.slice.*]]
// CHECK: "p3_q_fwd": {
// CHECK-NEXT: "buffer_donors": [],
// CHECK: "mesh": "m2",
// CHECK-NEXT: "module": [[SLICE]]{{$}}
// CHECK-NOT: buffer_donor = true

!t = tensor<4xf32>
!h = tensor<2xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
!m1h = !mpmd.mesh_tensor<"m1", tensor<2xf32>>
!m2h = !mpmd.mesh_tensor<"m2", tensor<2xf32>>
func.func @main(%arg0: !m1, %arg1: !m2) -> (!m1h, !m2h, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["p"]> (%arg0) (%x: !t) {
    %1 = stablehlo.negate %x : !t
    mpmd.return %1 : !t
  } : (!m1) -> !m1
  // The last reader of %0.
  %2 = mpmd.fragment<mesh="m1", origin=["q"]> (%0) (%x: !t) {
    %3 = stablehlo.slice %x [0:2] : (!t) -> !h
    mpmd.return %3 : !h
  } : (!m1) -> !m1h
  %4 = mpmd.fragment<mesh="m2", origin=["p"]> (%arg1) (%x: !t) {
    %5 = stablehlo.negate %x : !t
    mpmd.return %5 : !t
  } : (!m2) -> !m2
  // Not the last reader of %4: the function returns it.
  %6 = mpmd.fragment<mesh="m2", origin=["q"]> (%4) (%x: !t) {
    %7 = stablehlo.slice %x [0:2] : (!t) -> !h
    mpmd.return %7 : !h
  } : (!m2) -> !m2h
  func.return %2, %6, %4 : !m1h, !m2h, !m2
}
