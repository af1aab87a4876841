// RUN: mpmd-opt %s -mpmd-propagate-shardings -split-input-file | FileCheck %s

// Tensor parallelism on m1: the batch is data-parallel, w1 column- and w2
// row-parallel. The dots carry "data" to the activations and "model" to the
// hidden dimension; the contracted "model" of the second dot leaves the
// result replicated along it (XLA adds the partial sums). A transfer keeps
// the axes the target mesh has with the same size: all of them on the 2x2
// m3, none on m2, whose only axis is "model".
!x = tensor<8x16xf32>
!w1 = tensor<16x32xf32>
!w2 = tensor<32x16xf32>
!h = tensor<8x32xf32>
// CHECK-LABEL: func.func @tensor_parallel
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<8x16xf32>, sharding=<@mesh, [{"data"}, {}]>>
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"m1", tensor<16x32xf32>, sharding=<@mesh, [{}, {"model"}]>>
// CHECK-SAME: %arg2: !mpmd.mesh_tensor<"m1", tensor<32x16xf32>, sharding=<@mesh, [{"model"}, {}]>>
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m2", tensor<8x16xf32>>, !mpmd.mesh_tensor<"m3", tensor<8x16xf32>, sharding=<@mesh, [{"data"}, {}]>>, !mpmd.mesh_tensor<"m1", tensor<8x32xf32>, sharding=<@mesh, [{"data"}, {"model"}]>>)
// CHECK-NOT: sdy.sharding =
// CHECK: mpmd.fragment<mesh="m1", origin=["layer1"]>
// CHECK: } : ({{.*}}) -> (!mpmd.mesh_tensor<"m1", tensor<8x16xf32>, sharding=<@mesh, [{"data"}, {}]>>, !mpmd.mesh_tensor<"m1", tensor<8x32xf32>, sharding=<@mesh, [{"data"}, {"model"}]>>)
// CHECK-NEXT: mpmd.transfer %{{.*}} -> !mpmd.mesh_tensor<"m2", tensor<8x16xf32>>
// CHECK-NEXT: mpmd.transfer %{{.*}} -> !mpmd.mesh_tensor<"m3", tensor<8x16xf32>, sharding=<@mesh, [{"data"}, {}]>>
func.func @tensor_parallel(
    %x: !mpmd.mesh_tensor<"m1", !x> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
    %w1: !mpmd.mesh_tensor<"m1", !w1> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
    %w2: !mpmd.mesh_tensor<"m1", !w2> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
    -> (!mpmd.mesh_tensor<"m2", !x>, !mpmd.mesh_tensor<"m3", !x>, !mpmd.mesh_tensor<"m1", !h>)
    attributes {topology = #mpmd.topology<<"m1" : <["data"=2, "model"=2]>>, <"m2" : <["model"=2]>>, <"m3" : <["data"=2, "model"=2]>>>} {
  %0:2 = mpmd.fragment<mesh="m1", origin=["layer1"]> (%x, %w1, %w2) (%a: !x, %b: !w1, %c: !w2) {
    %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (!x, !w1) -> !h
    %2 = stablehlo.tanh %1 : !h
    %3 = stablehlo.dot_general %2, %c, contracting_dims = [1] x [0] : (!h, !w2) -> !x
    mpmd.return %3, %2 : !x, !h
  } : (!mpmd.mesh_tensor<"m1", !x>, !mpmd.mesh_tensor<"m1", !w1>, !mpmd.mesh_tensor<"m1", !w2>) -> (!mpmd.mesh_tensor<"m1", !x>, !mpmd.mesh_tensor<"m1", !h>)
  %4 = mpmd.transfer %0#0 : (!mpmd.mesh_tensor<"m1", !x>) -> !mpmd.mesh_tensor<"m2", !x>
  %5 = mpmd.transfer %0#0 : (!mpmd.mesh_tensor<"m1", !x>) -> !mpmd.mesh_tensor<"m3", !x>
  func.return %4, %5, %0#1 : !mpmd.mesh_tensor<"m2", !x>, !mpmd.mesh_tensor<"m3", !x>, !mpmd.mesh_tensor<"m1", !h>
}

// -----

// Backward through a fragment: a sharding constraint inside fixes the
// layout of the value it constrains, and it reaches the argument the user
// left open through an elementwise op and a broadcast. The user's result
// sharding asks the producer for its layout; a result that must differ
// from its value (here a fixed argument) is resharded by a transfer within
// the mesh.
!v = tensor<8xf32>
!m = tensor<4x8xf32>
// CHECK-LABEL: func.func @backward
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>, sharding=<@mesh, [{"y"}]>>
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"y"}]>>, !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"x"}]>>)
// CHECK: %[[F:.*]] = mpmd.fragment
// CHECK: sdy.sharding_constraint
// CHECK: } : ({{.*}}) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"y"}]>>
// CHECK-NEXT: %[[T:.*]] = mpmd.transfer %arg1 : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"x"}]>>
// CHECK-NEXT: return %[[F]], %[[T]]
func.func @backward(%bias: !mpmd.mesh_tensor<"m1", !v>,
                    %z: !mpmd.mesh_tensor<"m1", !m> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (!mpmd.mesh_tensor<"m1", !m>, !mpmd.mesh_tensor<"m1", !m> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2, "y"=4]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%bias) (%b: !v) {
    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (!v) -> !m
    %2 = stablehlo.exponential %1 : !m
    %3 = "sdy.sharding_constraint"(%2) <{sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}> : (!m) -> !m
    mpmd.return %3 : !m
  } : (!mpmd.mesh_tensor<"m1", !v>) -> !mpmd.mesh_tensor<"m1", !m>
  func.return %0, %z : !mpmd.mesh_tensor<"m1", !m>, !mpmd.mesh_tensor<"m1", !m>
}

// -----

// An axis is taken only where it divides the dimension and is not used by
// another dimension of the same value; transpose, reshape and reduce map
// dimensions; the contracting dimension of a dot reaches the other side.
!a = tensor<6x8xf32>
// CHECK-LABEL: func.func @shape_ops
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<8x6xf32>, sharding=<@mesh, [{"x"}, {}]>>,
// CHECK-SAME: !mpmd.mesh_tensor<"m1", tensor<2x3x8xf32>, sharding=<@mesh, [{}, {}, {"x"}]>>,
// CHECK-SAME: !mpmd.mesh_tensor<"m1", tensor<8xf32>, sharding=<@mesh, [{"x"}]>>,
// CHECK-SAME: !mpmd.mesh_tensor<"m1", tensor<8x5xf32>, sharding=<@mesh, [{"x"}, {}]>>)
func.func @shape_ops(%arg: !mpmd.mesh_tensor<"m1", !a> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                     %w: !mpmd.mesh_tensor<"m1", tensor<6x5xf32>>)
    -> (!mpmd.mesh_tensor<"m1", tensor<8x6xf32>>, !mpmd.mesh_tensor<"m1", tensor<2x3x8xf32>>,
        !mpmd.mesh_tensor<"m1", tensor<8xf32>>, !mpmd.mesh_tensor<"m1", tensor<8x5xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=4, "y"=3]>>>} {
  %0:4 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg, %w) (%a: !a, %b: tensor<6x5xf32>) {
    %1 = stablehlo.transpose %a, dims = [1, 0] : (!a) -> tensor<8x6xf32>
    %2 = stablehlo.reshape %a : (!a) -> tensor<2x3x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %3 = stablehlo.reduce(%a init: %cst) applies stablehlo.add across dimensions = [0] : (!a, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (!a, tensor<6x5xf32>) -> tensor<8x5xf32>
    mpmd.return %1, %2, %3, %4 : tensor<8x6xf32>, tensor<2x3x8xf32>, tensor<8xf32>, tensor<8x5xf32>
  } : (!mpmd.mesh_tensor<"m1", !a>, !mpmd.mesh_tensor<"m1", tensor<6x5xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<8x6xf32>>, !mpmd.mesh_tensor<"m1", tensor<2x3x8xf32>>, !mpmd.mesh_tensor<"m1", tensor<8xf32>>, !mpmd.mesh_tensor<"m1", tensor<8x5xf32>>)
  func.return %0#0, %0#1, %0#2, %0#3 : !mpmd.mesh_tensor<"m1", tensor<8x6xf32>>, !mpmd.mesh_tensor<"m1", tensor<2x3x8xf32>>, !mpmd.mesh_tensor<"m1", tensor<8xf32>>, !mpmd.mesh_tensor<"m1", tensor<8x5xf32>>
}

// -----

// Nothing is sharded: the program is left as it is (all replicated).
// CHECK-LABEL: func.func @replicated
// CHECK-SAME: (%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NOT: sharding
func.func @replicated(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%a: tensor<4xf32>) {
    %1 = stablehlo.negate %a : tensor<4xf32>
    mpmd.return %1 : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// -----

// An axis shards one dimension of a value at most: the first fixed operand
// decides, the other's axis is not taken again.
// CHECK-LABEL: func.func @axis_once
// CHECK-SAME: -> !mpmd.mesh_tensor<"m1", tensor<4x4xf32>, sharding=<@mesh, [{"x"}, {}]>>
func.func @axis_once(%a: !mpmd.mesh_tensor<"m1", tensor<4x4xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                     %b: !mpmd.mesh_tensor<"m1", tensor<4x4xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<4x4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%a, %b) (%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) {
    %1 = stablehlo.add %x, %y : tensor<4x4xf32>
    mpmd.return %1 : tensor<4x4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4x4xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4x4xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m1", tensor<4x4xf32>>
}

// -----

// Gathers: an embedding lookup keeps the batch sharding of its indices and
// the sharding of the table's embedding dimension; take_along_axis keeps
// its batching dimensions.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<4x16x32xf32>, sharding=<@mesh, [{"x"}, {}, {"y"}]>>, !mpmd.mesh_tensor<"m1", tensor<4x16x1xf32>, sharding=<@mesh, [{"x"}, {}, {}]>>)
func.func @gather(%table: !mpmd.mesh_tensor<"m1", tensor<64x32xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                  %ids: !mpmd.mesh_tensor<"m1", tensor<4x16x1xi32>> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>},
                  %logits: !mpmd.mesh_tensor<"m1", tensor<4x16x64xf32>>)
    -> (!mpmd.mesh_tensor<"m1", tensor<4x16x32xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x16x1xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2, "y"=2]>>>} {
  %0:2 = mpmd.fragment<mesh="m1", origin=["embed"]> (%table, %ids, %logits) (%t: tensor<64x32xf32>, %i: tensor<4x16x1xi32>, %l: tensor<4x16x64xf32>) {
    %1 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<4x16x1xi32>) -> tensor<4x16x32xf32>
    %2 = stablehlo.reshape %i : (tensor<4x16x1xi32>) -> tensor<4x16x1x1xi32>
    %3 = "stablehlo.gather"(%l, %2) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x16x64xf32>, tensor<4x16x1x1xi32>) -> tensor<4x16x1xf32>
    mpmd.return %1, %3 : tensor<4x16x32xf32>, tensor<4x16x1xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<64x32xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x16x1xi32>>, !mpmd.mesh_tensor<"m1", tensor<4x16x64xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<4x16x32xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x16x1xf32>>)
  func.return %0#0, %0#1 : !mpmd.mesh_tensor<"m1", tensor<4x16x32xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x16x1xf32>>
}

// -----

// A manual computation (shard_map): its results have its out_shardings,
// its operands are asked for its in_shardings; its body is per device and
// not looked into.
// CHECK-LABEL: func.func @manual
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<8x4xf32>, sharding=<@mesh, [{"x"}, {}]>>
// CHECK-SAME: -> !mpmd.mesh_tensor<"m1", tensor<8x4xf32>, sharding=<@mesh, [{}, {"x"}]>>
sdy.mesh @traced = <["x"=2]>
func.func @manual(%arg0: !mpmd.mesh_tensor<"m1", tensor<8x4xf32>>)
    -> !mpmd.mesh_tensor<"m1", tensor<8x4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%a: tensor<8x4xf32>) {
    %1 = "sdy.manual_computation"(%a) <{in_shardings = #sdy.sharding_per_value<[<@traced, [{"x"}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@traced, [{}, {"x"}]>]>}> ({
    ^bb0(%b: tensor<4x4xf32>):
      %2 = stablehlo.transpose %b, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
      "sdy.return"(%2) : (tensor<4x4xf32>) -> ()
    }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    mpmd.return %1 : tensor<8x4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<8x4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<8x4xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m1", tensor<8x4xf32>>
}
