// mpmd-sink-create-token-into-fragments (Shardy:MPMD's pass of that name):
// a token operand of a fragment becomes a stablehlo.create_token inside it,
// and token results, read by no fragment any more, are dropped (with their
// shardings and attributes). mpmd-export runs it first, so programs called
// by mpmd.fragment_call exchange tensors only.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-sink-create-token-into-fragments | FileCheck %s
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-export | FileCheck %s --check-prefix=EXPORT

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// CHECK-LABEL: func.func @token_argument(
// CHECK-SAME: %arg0: !stablehlo.token, %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-NEXT: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, [{"x"}]>]> (%arg1) {arg_attrs = [{mpmd.kept}]} (%arg2: tensor<4xf32>) {
// CHECK-NEXT: %[[T:.*]] = stablehlo.create_token : !stablehlo.token
// CHECK-NEXT: %[[E:.*]] = stablehlo.custom_call @effect(%[[T]], %arg2) {has_side_effect = true}
// CHECK-NEXT: mpmd.return %arg2 : tensor<4xf32>
// CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: return %[[F]]
// EXPORT-LABEL: func.func @token_argument(
// EXPORT: mpmd.fragment_call<mesh="m1", origin=["f"]> @[[P:[^(]*]](%arg1)
// EXPORT: func.func private @[[P]](%arg0: tensor<4xf32>) -> tensor<4xf32>
// EXPORT-NEXT: stablehlo.create_token
func.func @token_argument(%arg0: !stablehlo.token, %arg1: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0:2 = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, []>, <@mesh, [{"x"}]>]> (%arg0, %arg1)
      {arg_attrs = [{mpmd.dropped}, {mpmd.kept}]} (%t: !stablehlo.token, %x: tensor<4xf32>) {
    %t2 = stablehlo.custom_call @effect(%t, %x) {has_side_effect = true} : (!stablehlo.token, tensor<4xf32>) -> !stablehlo.token
    mpmd.return %x, %t2 : tensor<4xf32>, !stablehlo.token
  } : (!stablehlo.token, !m) -> (!m, !stablehlo.token)
  func.return %0#0 : !m
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!n = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A token from a fragment on one mesh to fragments on another: each gets
// its own, and the producer's token result goes.
// CHECK-LABEL: func.func @between_fragments(
// CHECK-NEXT: %[[A:.*]] = mpmd.fragment<mesh="m1", origin=["a"], out_shardings=[<@mesh, [{"x"}]>]> (%arg0) {res_attrs = [{mpmd.kept}]} (%arg1: tensor<4xf32>) {
// CHECK-NEXT: %[[T:.*]] = stablehlo.create_token
// CHECK-NEXT: stablehlo.custom_call @first(%[[T]])
// CHECK-NEXT: mpmd.return %arg1 : tensor<4xf32>
// CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[M:.*]] = mpmd.transfer %[[A]]
// CHECK-NEXT: %[[B:.*]] = mpmd.fragment<mesh="m2", origin=["b"]> (%[[M]]) (%arg1: tensor<4xf32>) {
// CHECK-NEXT: %[[T2:.*]] = stablehlo.create_token
// CHECK-NEXT: stablehlo.custom_call @second(%[[T2]], %arg1)
// CHECK: return %[[B]]
// EXPORT-LABEL: func.func @between_fragments(
// EXPORT: mpmd.fragment_call<mesh="m1", origin=["a"]> @[[PA:[^(]*]](%arg0) {res_attrs = [{mpmd.kept}]} : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// EXPORT: mpmd.fragment_call<mesh="m2", origin=["b"]> @[[PB:[^(]*]](%{{.*}}) : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// EXPORT: func.func private @[[PA]](%arg0: tensor<4xf32>) -> tensor<4xf32>
// EXPORT-NEXT: stablehlo.create_token
// EXPORT: func.func private @[[PB]](
// EXPORT-NEXT: stablehlo.create_token
func.func @between_fragments(%arg0: !m) -> !n
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0:2 = mpmd.fragment<mesh="m1", origin=["a"], out_shardings=[<@mesh, [{"x"}]>, <@mesh, []>]> (%arg0)
      {res_attrs = [{mpmd.kept}, {mpmd.dropped}]} (%x: tensor<4xf32>) {
    %t = stablehlo.create_token : !stablehlo.token
    %t2 = stablehlo.custom_call @first(%t) {has_side_effect = true} : (!stablehlo.token) -> !stablehlo.token
    mpmd.return %x, %t2 : tensor<4xf32>, !stablehlo.token
  } : (!m) -> (!m, !stablehlo.token)
  %1 = mpmd.transfer %0#0 : (!m) -> !n
  %2 = mpmd.fragment<mesh="m2", origin=["b"]> (%0#1, %1) (%t: !stablehlo.token, %x: tensor<4xf32>) {
    %t2 = stablehlo.custom_call @second(%t, %x) {has_side_effect = true} : (!stablehlo.token, tensor<4xf32>) -> !stablehlo.token
    mpmd.return %x : tensor<4xf32>
  } : (!stablehlo.token, !n) -> !n
  func.return %2 : !n
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A token the function returns cannot stay inside a fragment.
func.func @returned_token(%arg0: !m) -> (!m, !stablehlo.token)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op not supported yet: token result 1 is read by func.return outside any fragment; an exported program exchanges tensors only, so tokens can only pass between fragments (each then creates its own)}}
  %0:2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    %t = stablehlo.create_token : !stablehlo.token
    mpmd.return %x, %t : tensor<4xf32>, !stablehlo.token
  } : (!m) -> (!m, !stablehlo.token)
  func.return %0#0, %0#1 : !m, !stablehlo.token
}
