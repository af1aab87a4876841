// A training step exactly as JAX lowers it (tools/gen_labelled_mlp.py: three
// tanh layers as named computations layer1..layer3, nameless MSE loss and SGD
// update, jax.value_and_grad) goes through the whole import pipeline with
// each layer and its backward on its own mesh. Parameters stay with their
// layers, so the only transfers are the activations and their gradients
// between consecutive layers; inference needs none, so the result is the
// same with infer-transfers=true and with the meshes of all inputs and
// outputs given explicitly.

// RUN: mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2" > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: grep -E '^    [^ ]' %t.mlir | FileCheck %s --check-prefix=TOP --implicit-check-not=stablehlo. --implicit-check-not=mpmd.transfer --implicit-check-not=mpmd.named_ --implicit-check-not=mpmd.assign --implicit-check-not=mpmd.unassign

// RUN: mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2 infer-transfers=true" > %t.infer.mlir
// RUN: diff %t.mlir %t.infer.mlir

// RUN: mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2 input-assignment=0=m1,1=m1,2=m2,3=m2,4=m3,5=m3,6=m1,7=m3 output-assignment=0=m3,1=m1,2=m1,3=m2,4=m2,5=m3,6=m3" > %t.explicit.mlir
// RUN: diff %t.mlir %t.explicit.mlir

// Arguments: w1 b1 w2 b2 w3 b3 x y. Results: loss, new w1 b1 w2 b2 w3 b3.
// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<16x32xf32>>, %arg1: !mpmd.mesh_tensor<"m1", tensor<32xf32>>,
// CHECK-SAME: %arg2: !mpmd.mesh_tensor<"m2", tensor<32x32xf32>>, %arg3: !mpmd.mesh_tensor<"m2", tensor<32xf32>>,
// CHECK-SAME: %arg4: !mpmd.mesh_tensor<"m3", tensor<32x4xf32>>, %arg5: !mpmd.mesh_tensor<"m3", tensor<4xf32>>,
// CHECK-SAME: %arg6: !mpmd.mesh_tensor<"m1", tensor<8x16xf32>>, %arg7: !mpmd.mesh_tensor<"m3", tensor<8x4xf32>>)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m3", tensor<f32>> {jax.result_info = "result[0]"},
// CHECK-SAME: !mpmd.mesh_tensor<"m1", tensor<16x32xf32>> {jax.result_info = "result[1][0][0]"}, !mpmd.mesh_tensor<"m1", tensor<32xf32>> {jax.result_info = "result[1][0][1]"},
// CHECK-SAME: !mpmd.mesh_tensor<"m2", tensor<32x32xf32>> {jax.result_info = "result[1][1][0]"}, !mpmd.mesh_tensor<"m2", tensor<32xf32>> {jax.result_info = "result[1][1][1]"},
// CHECK-SAME: !mpmd.mesh_tensor<"m3", tensor<32x4xf32>> {jax.result_info = "result[1][2][0]"}, !mpmd.mesh_tensor<"m3", tensor<4xf32>> {jax.result_info = "result[1][2][1]"})
// CHECK-SAME: attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>}

// Forward: each layer on its mesh, the activation moved to the next one.
// CHECK: %[[L1:.*]]:2 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=0> (%arg0, %arg1, %arg6)
// CHECK: stablehlo.tanh
// CHECK: %[[T1:.*]] = mpmd.transfer %[[L1]]#0 : (!mpmd.mesh_tensor<"m1", tensor<8x32xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<8x32xf32>>
// CHECK: %[[L2:.*]]:2 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=1> (%arg2, %arg3, %[[T1]])
// CHECK: %[[T2:.*]] = mpmd.transfer %[[L2]]#0 : (!mpmd.mesh_tensor<"m2", tensor<8x32xf32>>) -> !mpmd.mesh_tensor<"m3", tensor<8x32xf32>>
// CHECK: %[[L3:.*]]:{{[0-9]+}} = mpmd.fragment<mesh="m3", origin=["layer3"], stage=2> (%arg4, %arg5, %[[T2]]

// Backward (transpose count 1): same meshes and stages, the activation
// gradient moved back; layer2's backward reuses the activation transferred
// in the forward pass instead of transferring it again.
// CHECK: %[[B3:.*]]:{{[0-9]+}} = mpmd.fragment<mesh="m3", origin=["layer3"(1)], stage=2>
// CHECK: %[[G3:.*]] = mpmd.transfer %[[B3]]#{{[0-9]+}} : (!mpmd.mesh_tensor<"m3", tensor<8x32xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<8x32xf32>>
// CHECK: %[[B2:.*]]:{{[0-9]+}} = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1>
// CHECK-SAME: %[[T1]],
// CHECK-SAME: %[[G3]]{{[,)]}}
// CHECK: %[[G2:.*]] = mpmd.transfer %[[B2]]#{{[0-9]+}} : (!mpmd.mesh_tensor<"m2", tensor<8x32xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<8x32xf32>>
// CHECK: mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0>
// CHECK-SAME: %[[G2]]{{[,)]}}
// CHECK: {{^ +}}return %
// CHECK-SAME: : !mpmd.mesh_tensor<"m3", tensor<f32>>, !mpmd.mesh_tensor<"m1", tensor<16x32xf32>>

// Only the lines directly in @main: fragments, the four transfers and the
// return; no StableHLO op and no named op or assign/unassign is left outside
// a fragment (the implicit-check-nots above).
// TOP: mpmd.fragment<mesh="m1", origin=["layer1"], stage=0>
// TOP: mpmd.transfer {{.*}} -> !mpmd.mesh_tensor<"m2", tensor<8x32xf32>>
// TOP: mpmd.fragment<mesh="m2", origin=["layer2"], stage=1>
// TOP: mpmd.transfer {{.*}} -> !mpmd.mesh_tensor<"m3", tensor<8x32xf32>>
// TOP: mpmd.fragment<mesh="m3", origin=["layer3"], stage=2>
// TOP: mpmd.fragment<mesh="m3", origin=["layer3"(1)], stage=2>
// TOP: mpmd.transfer {{.*}} -> !mpmd.mesh_tensor<"m2", tensor<8x32xf32>>
// TOP: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1>
// TOP: mpmd.transfer {{.*}} -> !mpmd.mesh_tensor<"m1", tensor<8x32xf32>>
// TOP: mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0>
// TOP: return
