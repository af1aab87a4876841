// Tokens through import: a named computation that takes or returns a
// `!stablehlo.token` becomes a fragment that takes or returns it as it is
// (no assign or unassign: a token lives on no mesh). A token argument of
// the entry function stays a token. A token read outside named
// computations would need mesh inference to place its op: not supported
// yet, said on that op.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics --mpmd-import="assignment=f=m1,g=m2" | FileCheck %s

!t = tensor<4xf32>

// CHECK-LABEL: func.func @through_named_computations(
// CHECK-SAME: %arg0: !stablehlo.token, %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !stablehlo.token)
// CHECK-NEXT: %[[F:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0, %arg1) (%arg2: !stablehlo.token, %arg3: tensor<4xf32>) {
// CHECK: } : (!stablehlo.token, !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !stablehlo.token)
// CHECK-NEXT: %[[X:.*]] = mpmd.transfer %[[F]]#0
// CHECK-NEXT: %[[G:.*]]:2 = mpmd.fragment<mesh="m2", origin=["g"]> (%[[F]]#1, %[[X]]) (%arg2: !stablehlo.token, %arg3: tensor<4xf32>) {
// CHECK: } : (!stablehlo.token, !mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !stablehlo.token)
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1
func.func @through_named_computations(%tok: !stablehlo.token, %x: !t) -> (!t, !stablehlo.token)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0:2 = mpmd.named_computation<"f"> (%tok, %x) (%t: !stablehlo.token, %a: !t) {
    %t2 = stablehlo.custom_call @log(%t, %a) {has_side_effect = true} : (!stablehlo.token, !t) -> !stablehlo.token
    %b = stablehlo.add %a, %a : !t
    mpmd.return %b, %t2 : !t, !stablehlo.token
  } : (!stablehlo.token, !t) -> (!t, !stablehlo.token)
  %1:2 = mpmd.named_computation<"g"> (%0#1, %0#0) (%t: !stablehlo.token, %a: !t) {
    %t2 = stablehlo.custom_call @log(%t, %a) {has_side_effect = true} : (!stablehlo.token, !t) -> !stablehlo.token
    %b = stablehlo.multiply %a, %a : !t
    mpmd.return %b, %t2 : !t, !stablehlo.token
  } : (!stablehlo.token, !t) -> (!t, !stablehlo.token)
  func.return %1#0, %1#1 : !t, !stablehlo.token
}

// -----

!t = tensor<4xf32>

func.func @token_outside_named_computations(%x: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0:2 = mpmd.named_computation<"f"> (%x) (%a: !t) {
    %t = stablehlo.create_token : !stablehlo.token
    mpmd.return %a, %t : !t, !stablehlo.token
  } : (!t) -> (!t, !stablehlo.token)
  // expected-error @+1 {{not supported yet: placing an op that takes or returns '!stablehlo.token' on a mesh; only ranked tensors can move between meshes}}
  %1 = stablehlo.custom_call @sink(%0#1) {has_side_effect = true} : (!stablehlo.token) -> !stablehlo.token
  %2 = mpmd.named_computation<"g"> (%0#0) (%a: !t) {
    mpmd.return %a : !t
  } : (!t) -> !t
  func.return %2 : !t
}
