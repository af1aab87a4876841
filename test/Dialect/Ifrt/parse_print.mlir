// The IFRT IR subset in jaxlib's syntax: it prints back as jaxlib prints it
// (sharding params as #sp aliases, `%outputs`/`%control_output` names),
// and through the generic form nothing is lost.
// RUN: mpmd-opt %s | FileCheck %s
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s
// RUN: mpmd-opt %s -mlir-print-op-generic | mpmd-opt | FileCheck %s

// CHECK-DAG: #[[SHARDED:.*]] = #ifrt.sharding_param<2x1 to [0] on 2>
// CHECK-DAG: #[[SCALAR:.*]] = #ifrt.sharding_param< to [0] on 2>
// CHECK-DAG: #[[TWO_AXES:.*]] = #ifrt.sharding_param<1x2 to [1, 0] on 2x2 unreduced [0]>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: !ifrt.array<tensor<4x4xf32>, #[[SHARDED]], [0, 1]> {ifrt.donated}
// CHECK-SAME: %arg1: !ifrt.array<tensor<f32>, #[[SCALAR]], [0, 1]>
// CHECK-SAME: %arg2: !ifrt.array<tensor<4x4xf32>, #[[TWO_AXES]], [4, 5, 6, 7]>
// CHECK-SAME: attributes {ifrt.function}
func.func @main(
    %arg0: !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]> {ifrt.donated},
    %arg1: !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 2>, [0, 1]>,
    %arg2: !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<1x2 to [1, 0] on 2x2 unreduced [0]>, [4, 5, 6, 7]>)
    -> !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [2, 3], memory_kind = "pinned_host">
    attributes {ifrt.function} {
  // CHECK-NEXT: %outputs:2, %control_output = ifrt.Call @atom::@main(%arg0, %arg1) on devices [0, 1]
  // CHECK-SAME: {donated_input_indices = array<i32: 1>, ifrt.mesh_name = "m", io_aliases = [array<i32: 0, 0>]}
  // CHECK-SAME: : (!ifrt.array<tensor<4x4xf32>, #[[SHARDED]], [0, 1]>, !ifrt.array<tensor<f32>, #[[SCALAR]], [0, 1]>)
  // CHECK-SAME: -> (!ifrt.array<tensor<4x4xf32>, #[[SHARDED]], [0, 1]>, !ifrt.array<tensor<f32>, #[[SCALAR]], [0, 1]>)
  %0:2, %c = ifrt.Call @atom::@main(%arg0, %arg1) on devices [0, 1]
      {ifrt.mesh_name = "m", io_aliases = [array<i32: 0, 0>], donated_input_indices = array<i32: 1>}
      : (!ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]>,
         !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 2>, [0, 1]>)
      -> (!ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]>,
          !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 2>, [0, 1]>)
  // CHECK-NEXT: %outputs_0, %control_output_1 = ifrt.Call @add::@main(%outputs#0, %outputs#1) after %control_output on devices [0, 1] :
  %1, %c1 = ifrt.Call @add::@main(%0#0, %0#1) after %c on devices [0, 1]
      : (!ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]>,
         !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 2>, [0, 1]>)
      -> !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]>
  // CHECK-NEXT: %outputs_2, %control_output_3 = ifrt.CopyArrays(%outputs_0) after %control_output_1, %control_output {donated = true}
  // CHECK-SAME: -> !ifrt.array<tensor<4x4xf32>, #[[SHARDED]], [2, 3], memory_kind = "pinned_host">
  %2, %c2 = ifrt.CopyArrays(%1) after %c1, %c {donated = true}
      : (!ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [0, 1]>)
      -> !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [2, 3], memory_kind = "pinned_host">
  // CHECK-NEXT: %outputs_4, %control_output_5 = ifrt.Reshard(%arg2)
  // CHECK-SAME: -> !ifrt.array<tensor<4x4xf32>, #[[SHARDED]], [2, 3]>
  %3, %c3 = ifrt.Reshard(%arg2)
      : (!ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<1x2 to [1, 0] on 2x2 unreduced [0]>, [4, 5, 6, 7]>)
      -> !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [2, 3]>
  return %2 : !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>, [2, 3], memory_kind = "pinned_host">
}

// CHECK: module @atom attributes {sym_visibility = "private"}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%a: tensor<4x4xf32>, %b: tensor<f32>) -> (tensor<4x4xf32>, tensor<f32>) {
    return %a, %b : tensor<4x4xf32>, tensor<f32>
  }
}

// CHECK: module @add attributes {sym_visibility = "private"}
module @add attributes {sym_visibility = "private"} {
  func.func @main(%a: tensor<4x4xf32>, %b: tensor<f32>) -> tensor<4x4xf32> {
    return %a : tensor<4x4xf32>
  }
}
