// Fragments take and return `!stablehlo.token`s, as Shardy:MPMD's do
// (its FragmentOp's operands and results are MeshTensorOrToken): a token
// operand's block argument and a token result's returned value are tokens
// too. A listed sharding of a token has no dimensions.
// RUN: mpmd-opt %s | FileCheck %s
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s
// RUN: mpmd-opt %s --mlir-print-op-generic | mpmd-opt | FileCheck %s

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// CHECK-LABEL: func.func @tokens(
// CHECK-SAME: %arg0: !stablehlo.token, %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !stablehlo.token)
func.func @tokens(%arg0: !stablehlo.token, %arg1: !m) -> (!m, !stablehlo.token)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // CHECK-NEXT: %0:2 = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, []>, <@mesh, [{"x"}]>]> (%arg0, %arg1) (%arg2: !stablehlo.token, %arg3: tensor<4xf32>) {
  // CHECK-NEXT: %2 = stablehlo.custom_call @effect(%arg2, %arg3) {has_side_effect = true} : (!stablehlo.token, tensor<4xf32>) -> !stablehlo.token
  // CHECK-NEXT: mpmd.return %arg3, %2 : tensor<4xf32>, !stablehlo.token
  // CHECK-NEXT: } : (!stablehlo.token, !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !stablehlo.token)
  %0:2 = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, []>, <@mesh, [{"x"}]>]> (%arg0, %arg1) (%t: !stablehlo.token, %x: tensor<4xf32>) {
    %t2 = stablehlo.custom_call @effect(%t, %x) {has_side_effect = true} : (!stablehlo.token, tensor<4xf32>) -> !stablehlo.token
    mpmd.return %x, %t2 : tensor<4xf32>, !stablehlo.token
  } : (!stablehlo.token, !m) -> (!m, !stablehlo.token)
  // A token passed from one fragment to the next; a fragment of tokens only.
  // CHECK-NEXT: %1 = mpmd.fragment<mesh="m1", origin=["g"]> (%0#1) (%arg2: !stablehlo.token) {
  // CHECK-NEXT: mpmd.return %arg2 : !stablehlo.token
  // CHECK-NEXT: } : (!stablehlo.token) -> !stablehlo.token
  %1 = mpmd.fragment<mesh="m1", origin=["g"]> (%0#1) (%t: !stablehlo.token) {
    mpmd.return %t : !stablehlo.token
  } : (!stablehlo.token) -> !stablehlo.token
  // CHECK-NEXT: return %0#0, %1
  func.return %0#0, %1 : !m, !stablehlo.token
}
