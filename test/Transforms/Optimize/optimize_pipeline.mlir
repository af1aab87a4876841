// The mpmd-optimize pipeline: zero-bubble-h1 splits backward fragments
// before it orders them; explicit orders and merge rules are typed entries;
// a malformed value is an error naming the option.
// RUN: mpmd-opt %s -mpmd-optimize="schedule=zero-bubble-h1" | FileCheck %s --check-prefix=ZB
// RUN: mpmd-opt %s -mpmd-optimize="schedule=explicit order=m1=layer1#0|layer1(1)#0,m2=layer2#0|layer2(1)#0 merge-rules=layer2:layer2(1)" | FileCheck %s --check-prefix=EXPLICIT
// RUN: not mpmd-opt %s -mpmd-optimize="schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=BADKIND
// RUN: not mpmd-opt %s -mpmd-optimize="merge-rules=f" 2>&1 | FileCheck %s --check-prefix=BADRULE

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// ZB: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1>
// ZB-NOT: mpmd.weight_gradient
// ZB: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> {{.*}}mpmd.weight_gradient
// EXPLICIT: mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=1>
// EXPLICIT-NOT: mpmd.weight_gradient
// BADKIND: for the --schedule option: unknown value 'zigzag'; expected none, gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1 or explicit
// BADRULE: for the --merge-rules option: invalid merge rule 'f': expected LABEL:LABEL
func.func @main(%x: !m1, %w1: !m1, %w2: !m2) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %a1 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=0> (%x, %w1) {call_counter = 0 : ui32} (%arg0: !t, %arg1: !t) {
    %0 = stablehlo.multiply %arg0, %arg1 : !t
    mpmd.return %0 : !t
  } : (!m1, !m1) -> !m1
  %t1 = mpmd.transfer %a1 : (!m1) -> !m2
  %a2 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=1> (%t1, %w2) {call_counter = 0 : ui32} (%arg0: !t, %arg1: !t) {
    %0 = stablehlo.multiply %arg0, %arg1 : !t
    mpmd.return %0 : !t
  } : (!m2, !m2) -> !m2
  %g:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%a2, %t1, %w2) {call_counter = 0 : ui32} (%g: !t, %act: !t, %w: !t) {
    %dx = stablehlo.multiply %g, %w : !t
    %dw = stablehlo.multiply %g, %act : !t
    mpmd.return %dx, %dw : !t, !t
  } : (!m2, !m2, !m2) -> (!m2, !m2)
  %dx1 = mpmd.transfer %g#0 : (!m2) -> !m1
  %h = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0> (%dx1, %x) {call_counter = 0 : ui32} (%arg0: !t, %arg1: !t) {
    %0 = stablehlo.multiply %arg0, %arg1 : !t
    mpmd.return %0 : !t
  } : (!m1, !m1) -> !m1
  func.return %h, %g#1 : !m1, !m2
}
