// RUN: mpmd-opt %s -mpmd-split-backward -split-input-file -verify-diagnostics | FileCheck %s
// Running the pass again changes nothing: B's extra results feed W only.
// RUN: mpmd-opt %s -mpmd-split-backward -mpmd-split-backward -split-input-file -verify-diagnostics | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// The backward of layer2 returns the input gradient (moved to m1) and the
// accumulated weight gradient (kept on m2). B keeps the input gradient and
// what it needs (%s, the constant); W computes the weight gradient from %s,
// passed as an extra result of B, and a copy of the constant. Attributes are
// kept on both parts; W is marked and placed right after B.
// CHECK-LABEL: func.func @split
// CHECK: %[[A1:.*]] = mpmd.fragment<mesh="m1", origin=["layer1"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32}
// CHECK: %[[T1:.*]] = mpmd.transfer %[[A1]]
// CHECK: %[[A2:.*]] = mpmd.fragment<mesh="m2", origin=["layer2"], stage=1> (%[[T1]], %arg2) {call_counter = 0 : ui32}
// CHECK: %[[B:.*]]:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%[[A2]], %arg2) {call_counter = 0 : ui32, foo = "bar"} (%[[G:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>) {
// CHECK-NEXT:   %[[C:.*]] = stablehlo.constant dense<2.000000e+00>
// CHECK-NEXT:   %[[S:.*]] = stablehlo.multiply %[[G]], %[[C]]
// CHECK-NEXT:   %[[DX:.*]] = stablehlo.multiply %[[S]], %[[W]]
// CHECK-NEXT:   mpmd.return %[[DX]], %[[S]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: } : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>)
// CHECK-NEXT: %[[WG:.*]] = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%[[B]]#1, %[[T1]], %arg3) {call_counter = 0 : ui32, foo = "bar", mpmd.weight_gradient} (%[[S2:.*]]: tensor<4xf32>, %[[ACT:.*]]: tensor<4xf32>, %[[ACC:.*]]: tensor<4xf32>) {
// CHECK-NEXT:   %[[C2:.*]] = stablehlo.constant dense<2.000000e+00>
// CHECK-NEXT:   %[[DW:.*]] = stablehlo.multiply %[[S2]], %[[ACT]]
// CHECK-NEXT:   %[[DW2:.*]] = stablehlo.multiply %[[DW]], %[[C2]]
// CHECK-NEXT:   %[[SUM:.*]] = stablehlo.add %[[DW2]], %[[ACC]]
// CHECK-NEXT:   mpmd.return %[[SUM]] : tensor<4xf32>
// CHECK-NEXT: } : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK-NEXT: %[[DX1:.*]] = mpmd.transfer %[[B]]#0 : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// The backward of the first stage sends nothing anywhere: left whole.
// CHECK-NEXT: %[[H:.*]] = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0> (%[[DX1]], %arg0) {call_counter = 0 : ui32} (
// CHECK-NOT: mpmd.weight_gradient
// CHECK: return %[[H]], %[[WG]], %[[A2]], %[[WG]]
func.func @split(%x: !m1, %w1: !m1, %w2: !m2, %acc: !m2) -> (!m1, !m2, !m2, !m2)
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
  %g:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%a2, %t1, %w2, %acc) {call_counter = 0 : ui32, foo = "bar"} (%g: !t, %act: !t, %w: !t, %acc0: !t) {
    %c = stablehlo.constant dense<2.0> : !t
    %s = stablehlo.multiply %g, %c : !t
    %dx = stablehlo.multiply %s, %w : !t
    %dw = stablehlo.multiply %s, %act : !t
    %dw2 = stablehlo.multiply %dw, %c : !t
    %sum = stablehlo.add %dw2, %acc0 : !t
    mpmd.return %dx, %sum : !t, !t
  } : (!m2, !m2, !m2, !m2) -> (!m2, !m2)
  %dx1 = mpmd.transfer %g#0 : (!m2) -> !m1
  %h = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0> (%dx1, %x) {call_counter = 0 : ui32} (%arg0: !t, %arg1: !t) {
    %0 = stablehlo.multiply %arg0, %arg1 : !t
    mpmd.return %0 : !t
  } : (!m1, !m1) -> !m1
  func.return %h, %g#1, %a2, %g#1 : !m1, !m2, !m2, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Not split: a backward fragment whose only result leaves the mesh, a
// forward fragment with a result that leaves and one that stays, and a
// merged forward+backward fragment.
// CHECK-LABEL: func.func @whole
// CHECK: mpmd.fragment<mesh="m2", origin=["f"(1)]> (%arg1) (
// CHECK: mpmd.fragment<mesh="m2", origin=["g"]> (%arg1) (
// CHECK: mpmd.fragment<mesh="m2", origin=["h", "h"(1)]> (%arg1) (
// CHECK-NOT: mpmd.weight_gradient
// CHECK: return
func.func @whole(%x: !m1, %y: !m2) -> (!m1, !m1, !m2, !m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m2", origin=["f"(1)]> (%y) (%arg0: !t) {
    %1 = stablehlo.negate %arg0 : !t
    mpmd.return %1 : !t
  } : (!m2) -> !m2
  %2 = mpmd.transfer %0 : (!m2) -> !m1
  %3:2 = mpmd.fragment<mesh="m2", origin=["g"]> (%y) (%arg0: !t) {
    %4 = stablehlo.negate %arg0 : !t
    %5 = stablehlo.abs %arg0 : !t
    mpmd.return %4, %5 : !t, !t
  } : (!m2) -> (!m2, !m2)
  %6 = mpmd.transfer %3#0 : (!m2) -> !m1
  %7:2 = mpmd.fragment<mesh="m2", origin=["h", "h"(1)]> (%y) (%arg0: !t) {
    %8 = stablehlo.negate %arg0 : !t
    %9 = stablehlo.abs %arg0 : !t
    mpmd.return %8, %9 : !t, !t
  } : (!m2) -> (!m2, !m2)
  %10 = mpmd.transfer %7#0 : (!m2) -> !m1
  func.return %2, %6, %3#1, %10, %7#1 : !m1, !m1, !m2, !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A region of the weight-gradient part reads a value of the input-gradient
// part from above: that value is passed too (here B's own result, so no
// extra result is needed). A block argument returned as is goes to the part
// that returns it.
// CHECK-LABEL: func.func @nested
// CHECK: %[[B:.*]] = mpmd.fragment<mesh="m2", origin=["f"(1)]> (%arg1) (%[[G:.*]]: tensor<4xf32>) {
// CHECK-NEXT:   %[[N:.*]] = stablehlo.negate %[[G]]
// CHECK-NEXT:   mpmd.return %[[N]] : tensor<4xf32>
// CHECK: %[[W:.*]]:2 = mpmd.fragment<mesh="m2", origin=["f"(1)]> (%[[B]], %arg1) {mpmd.weight_gradient} (%[[N2:.*]]: tensor<4xf32>, %[[G2:.*]]: tensor<4xf32>) {
// CHECK-NEXT:   %[[R:.*]] = "test.region"() ({
// CHECK-NEXT:     %[[A:.*]] = stablehlo.abs %[[N2]]
// CHECK-NEXT:     "test.yield"(%[[A]])
// CHECK:        mpmd.return %[[R]], %[[G2]]
// CHECK: %[[T:.*]] = mpmd.transfer %[[B]] :
// CHECK: return %[[T]], %[[W]]#0, %[[W]]#1
func.func @nested(%x: !m1, %y: !m2, %z: !m2) -> (!m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0:3 = mpmd.fragment<mesh="m2", origin=["f"(1)]> (%y, %z) (%arg0: !t, %arg1: !t) {
    %1 = stablehlo.negate %arg0 : !t
    %2 = "test.region"() ({
      %3 = stablehlo.abs %1 : !t
      "test.yield"(%3) : (!t) -> ()
    }) : () -> !t
    mpmd.return %1, %2, %arg0 : !t, !t, !t
  } : (!m2, !m2) -> (!m2, !m2, !m2)
  %4 = mpmd.transfer %0#0 : (!m2) -> !m1
  func.return %4, %0#1, %0#2 : !m1, !m2, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// With shardings the values passed between the parts would need shardings
// of their own: left whole, with a warning.
// CHECK-LABEL: func.func @sharded
// CHECK: %[[F:.*]]:2 = mpmd.fragment<mesh="m2", origin=["f"(1)], in_shardings
// CHECK-NOT: mpmd.weight_gradient
func.func @sharded(%y: !m2) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  // expected-warning @+1 {{backward fragment 'f(1)' is not split for zero-bubble schedules: it has in/out shardings}}
  %0:2 = mpmd.fragment<mesh="m2", origin=["f"(1)], in_shardings=[<@mesh, [{}]>]> (%y) (%arg0: !t) {
    %1 = stablehlo.negate %arg0 : !t
    %2 = stablehlo.abs %1 : !t
    mpmd.return %1, %2 : !t, !t
  } : (!m2) -> (!m2, !m2)
  %3 = mpmd.transfer %0#0 : (!m2) -> !m1
  func.return %3, %0#1 : !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// The turn of a V: stages 1 and 0 share m1, and the backward of stage 1
// feeds the backward of stage 0 on the same mesh. Stage 0 waits for that
// input gradient, so stage 1's backward is split although nothing leaves
// the mesh.
// CHECK-LABEL: func.func @v_turn
// CHECK: %[[B1:.*]] = mpmd.fragment<mesh="m1", origin=["s1"(1)], stage=1> (%arg0, %arg1)
// CHECK: mpmd.fragment<mesh="m1", origin=["s1"(1)], stage=1> ({{.*}}) {call_counter = 0 : ui32, mpmd.weight_gradient}
// CHECK: mpmd.fragment<mesh="m1", origin=["s0"(1)], stage=0> (%[[B1]], %arg2)
func.func @v_turn(%g: !m1, %w1: !m1, %w0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %b1:2 = mpmd.fragment<mesh="m1", origin=["s1"(1)], stage=1> (%g, %w1) {call_counter = 0 : ui32} (%d: !t, %w: !t) {
    %dx = stablehlo.multiply %d, %w : !t
    %dw = stablehlo.multiply %d, %d : !t
    mpmd.return %dx, %dw : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %b0 = mpmd.fragment<mesh="m1", origin=["s0"(1)], stage=0> (%b1#0, %w0) {call_counter = 0 : ui32} (%d: !t, %w: !t) {
    %dw = stablehlo.multiply %d, %w : !t
    mpmd.return %dw : !t
  } : (!m1, !m1) -> !m1
  func.return %b0, %b1#1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Tokens (fragments take and return them): W reads the token B's custom
// call returns, as a result of B, and the fragment's token operand, which
// both parts take.
// CHECK-LABEL: func.func @tokens
// CHECK: %[[B:.*]]:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%arg2, %arg0) {call_counter = 0 : ui32} (%[[T:.*]]: !stablehlo.token, %[[G:.*]]: tensor<4xf32>) {
// CHECK-NEXT:   %[[DX:.*]]:2 = stablehlo.custom_call @dx(%[[T]], %[[G]])
// CHECK-NEXT:   mpmd.return %[[DX]]#0, %[[DX]]#1 : tensor<4xf32>, !stablehlo.token
// CHECK-NEXT: } : (!stablehlo.token, !mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !stablehlo.token)
// CHECK-NEXT: %[[W:.*]] = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%arg0, %arg1, %[[B]]#1, %arg2) {call_counter = 0 : ui32, mpmd.weight_gradient} (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %[[T1:.*]]: !stablehlo.token, %[[T2:.*]]: !stablehlo.token) {
// CHECK-NEXT:   %[[SUM:.*]] = stablehlo.add
// CHECK-NEXT:   stablehlo.custom_call @log(%[[T1]], %[[T2]], %[[SUM]])
// CHECK-NEXT:   mpmd.return %[[SUM]] : tensor<4xf32>
// CHECK: return %{{.*}}, %[[W]]
func.func @tokens(%g0: !m2, %acc: !m2, %tok: !stablehlo.token) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %g:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%g0, %acc, %tok) {call_counter = 0 : ui32} (%g: !t, %acc0: !t, %t: !stablehlo.token) {
    %dx, %t1 = stablehlo.custom_call @dx(%t, %g) {has_side_effect = true} : (!stablehlo.token, !t) -> (!t, !stablehlo.token)
    %sum = stablehlo.add %g, %acc0 : !t
    %t2 = stablehlo.custom_call @log(%t1, %t, %sum) {has_side_effect = true} : (!stablehlo.token, !stablehlo.token, !t) -> !stablehlo.token
    mpmd.return %dx, %sum : !t, !t
  } : (!m2, !m2, !stablehlo.token) -> (!m2, !m2)
  %dx1 = mpmd.transfer %g#0 : (!m2) -> !m1
  func.return %dx1, %g#1 : !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Neither a ranked tensor nor a token can pass between the parts: left
// whole, with a warning.
// CHECK-LABEL: func.func @tuple_between_parts
// CHECK-NOT: mpmd.weight_gradient
// CHECK: return
func.func @tuple_between_parts(%g0: !m2, %acc: !m2) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  // expected-warning @+1 {{backward fragment 'layer2(1)#0' is not split for zero-bubble schedules: its weight-gradient part reads a value of type 'tuple<tensor<4xf32>>' from the input-gradient part, and only ranked tensors and tokens can be passed between fragments}}
  %g:2 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1> (%g0, %acc) {call_counter = 0 : ui32} (%g: !t, %acc0: !t) {
    %dx, %p = stablehlo.custom_call @dx(%g) : (!t) -> (!t, tuple<!t>)
    %sum = stablehlo.custom_call @acc(%p, %acc0) : (tuple<!t>, !t) -> !t
    mpmd.return %dx, %sum : !t, !t
  } : (!m2, !m2) -> (!m2, !m2)
  %dx1 = mpmd.transfer %g#0 : (!m2) -> !m1
  func.return %dx1, %g#1 : !m1, !m2
}
