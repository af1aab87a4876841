// RUN: mpmd-opt %s -mpmd-outline-fragments | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// The two microbatches of stage 1's forward share one program; the same body
// on another mesh is another program; the backward is named bwd.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[A:.*]] = mpmd.fragment_call<mesh="m1", origin=["layer1"]> @p0_stage1_fwd_calls0to1(%arg0) {call_counter = 0 : ui32, mpmd.stage = 1 : i64}
// CHECK-NEXT: %[[B:.*]] = mpmd.fragment_call<mesh="m1", origin=["layer1"]> @p0_stage1_fwd_calls0to1(%arg0) {call_counter = 1 : ui32, mpmd.stage = 1 : i64}
// CHECK-NEXT: %[[T:.*]] = mpmd.transfer %[[B]]
// CHECK-NEXT: %[[C:.*]] = mpmd.fragment_call<mesh="m2", origin=[]> @p1_inferred(%[[T]])
// CHECK-NEXT: %[[D:.*]] = mpmd.fragment_call<mesh="m1", origin=["layer1"(1)]> @p2_stage1_bwd_calls0to0(%[[A]])
// CHECK-NEXT: %[[E:.*]] = mpmd.fragment_call<mesh="m1", origin=["head", "head"(1)]> @p3_head_fwd_bwd(%[[D]])
// CHECK-NEXT: return
// CHECK: func.func private @p0_stage1_fwd_calls0to1(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.mesh = "m1"} {
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %arg0, %arg0
// CHECK-NEXT: return %[[S]]
// CHECK: func.func private @p1_inferred(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {mesh_shape = #sdy.mesh<["y"=4]>, mpmd.mesh = "m2"}
// CHECK: func.func private @p2_stage1_bwd_calls0to0
// CHECK: func.func private @p3_head_fwd_bwd
// CHECK-NOT: func.func
func.func @main(%arg0: !m1) -> (!m2, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["y"=4]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %1 = stablehlo.add %x, %x : !t
    mpmd.return %1 : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 1 : ui32} (%y: !t) {
    %3 = stablehlo.add %y, %y : !t
    mpmd.return %3 : !t
  } : (!m1) -> !m1
  %4 = mpmd.transfer %2 : (!m1) -> !m2
  %5 = mpmd.fragment<mesh="m2", origin=[]> (%4) (%x: !t) {
    %6 = stablehlo.add %x, %x : !t
    mpmd.return %6 : !t
  } : (!m2) -> !m2
  %7 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%0) {call_counter = 0 : ui32} (%x: !t) {
    %8 = stablehlo.negate %x : !t
    mpmd.return %8 : !t
  } : (!m1) -> !m1
  %9 = mpmd.fragment<mesh="m1", origin=["head", "head"(1)]> (%7) (%x: !t) {
    %10 = stablehlo.abs %x : !t
    mpmd.return %10 : !t
  } : (!m1) -> !m1
  func.return %5, %7, %9 : !m2, !m1, !m1
}
