// RUN: mpmd-opt %s -mpmd-split-backward="zero-bubble-loops-only=true" | FileCheck %s
// RUN: mpmd-opt %s -mpmd-split-backward | FileCheck %s --check-prefix=ALL

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Two backwards on m2 whose input gradient leaves for m1: only the one of
// the zero-bubble-h1 loop is split (a B part, then a W part).
// CHECK-LABEL: func.func @split_one_loop
// CHECK: origin=["zb"(1)]> {{.*}}mpmd.loop_schedule = "zero-bubble-h1"}
// CHECK: origin=["zb"(1)]> {{.*}}mpmd.loop_schedule = "zero-bubble-h1", mpmd.weight_gradient}
// CHECK: origin=["plain"(1)]> {{.*}}mpmd.loop_schedule = "1f1b"}
// CHECK-NOT: mpmd.weight_gradient
func.func @split_one_loop(%g: !m2, %w: !m2, %act: !m2) -> (!m1, !m2, !m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %zb:2 = mpmd.fragment<mesh="m2", origin=["zb"(1)]> (%g, %w, %act) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "zero-bubble-h1"} (%x: !t, %y: !t, %z: !t) {
    %dx = stablehlo.multiply %x, %y : !t
    %dw = stablehlo.multiply %x, %z : !t
    mpmd.return %dx, %dw : !t, !t
  } : (!m2, !m2, !m2) -> (!m2, !m2)
  %t0 = mpmd.transfer %zb#0 : (!m2) -> !m1
  %plain:2 = mpmd.fragment<mesh="m2", origin=["plain"(1)]> (%g, %w, %act) {call_counter = 0 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "1f1b"} (%x: !t, %y: !t, %z: !t) {
    %dx = stablehlo.multiply %x, %y : !t
    %dw = stablehlo.multiply %x, %z : !t
    mpmd.return %dx, %dw : !t, !t
  } : (!m2, !m2, !m2) -> (!m2, !m2)
  %t1 = mpmd.transfer %plain#0 : (!m2) -> !m1
  func.return %t0, %zb#1, %t1, %plain#1 : !m1, !m2, !m1, !m2
}

// Without the option, both are split.
// ALL: origin=["zb"(1)]> {{.*}}mpmd.weight_gradient}
// ALL: origin=["plain"(1)]> {{.*}}mpmd.weight_gradient}
