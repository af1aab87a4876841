// A token passed between named computations goes through import, optimize
// (merging, scheduling), sharding and export without a crash: fragments
// carry it until export gives each program its own token, and the runtime
// gets a plan. (A token argument or result of the entry function is not
// supported by the plan: test/Transforms/Export/plan_tokens.mlir.)
// RUN: mpmd-opt %s --mpmd-import="assignment=f=m1,g=m1,h=m2" --mpmd-optimize="merge-rules=f:g" --mpmd-sharding --mpmd-export | FileCheck %s
// RUN: mpmd-opt %s --mpmd-import="assignment=f=m1,g=m1,h=m2" --mpmd-optimize="merge-rules=f:g" --mpmd-sharding --mpmd-export --mpmd-print-execution-plan -o /dev/null | FileCheck %s --check-prefix=PLAN

!t = tensor<4xf32>

// f and g merge into one program, in which g's log still takes the token
// f's log returned; h, on the other mesh, creates its own.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: mpmd.fragment_call<mesh="m1", origin=["f", "g"]> @[[P1:[^(]*]](%arg0) : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK: mpmd.transfer
// CHECK: mpmd.fragment_call<mesh="m2", origin=["h"]> @[[P2:[^(]*]](%{{.*}}) : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: func.func private @[[P1]](%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[T:.*]] = stablehlo.create_token
// CHECK-NEXT: %[[T2:.*]] = stablehlo.custom_call @log(%[[T]], %arg0)
// CHECK-NEXT: %[[A:.*]] = stablehlo.add
// CHECK-NEXT: stablehlo.custom_call @log(%[[T2]], %[[A]])
// CHECK: func.func private @[[P2]](%arg0: tensor<4xf32>{{.*}}) -> tensor<4xf32>
// CHECK-NEXT: %[[T3:.*]] = stablehlo.create_token
// CHECK-NEXT: stablehlo.custom_call @log(%[[T3]], %arg0)
// PLAN: "function": "main"
func.func @main(%x: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0:2 = mpmd.named_computation<"f"> (%x) (%a: !t) {
    %t = stablehlo.create_token : !stablehlo.token
    %t2 = stablehlo.custom_call @log(%t, %a) {has_side_effect = true} : (!stablehlo.token, !t) -> !stablehlo.token
    %b = stablehlo.add %a, %a : !t
    mpmd.return %b, %t2 : !t, !stablehlo.token
  } : (!t) -> (!t, !stablehlo.token)
  %1:2 = mpmd.named_computation<"g"> (%0#1, %0#0) (%t: !stablehlo.token, %a: !t) {
    %t2 = stablehlo.custom_call @log(%t, %a) {has_side_effect = true} : (!stablehlo.token, !t) -> !stablehlo.token
    %b = stablehlo.multiply %a, %a : !t
    mpmd.return %b, %t2 : !t, !stablehlo.token
  } : (!stablehlo.token, !t) -> (!t, !stablehlo.token)
  %2 = mpmd.named_computation<"h"> (%1#1, %1#0) (%t: !stablehlo.token, %a: !t) {
    %t2 = stablehlo.custom_call @log(%t, %a) {has_side_effect = true} : (!stablehlo.token, !t) -> !stablehlo.token
    %b = stablehlo.subtract %a, %a : !t
    mpmd.return %b : !t
  } : (!stablehlo.token, !t) -> !t
  func.return %2 : !t
}
