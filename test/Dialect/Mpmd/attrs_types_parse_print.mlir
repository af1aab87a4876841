// mpmd attributes and types print in Shardy:MPMD's syntax and read back.
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s

// CHECK-LABEL: func.func @mesh_tensor_types
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m", tensor<12x16xf32>>
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, sharding=<@mesh, [{?}, {"y"}]>>
// CHECK-SAME: %arg2: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, memory_kind="pinned_host">
// CHECK-SAME: %arg3: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, sharding=<@mesh, [{"x", ?}, {}], replicated={"y"}>, memory_kind="device">
// CHECK-SAME: %arg4: !mpmd.mesh_tensor<"m", tensor<f32>, sharding=<@mesh, []>>
func.func @mesh_tensor_types(
    %arg0: !mpmd.mesh_tensor<"m", tensor<12x16xf32>>,
    %arg1: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, sharding=<@mesh, [{?}, {"y"}]>>,
    %arg2: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, memory_kind="pinned_host">,
    %arg3: !mpmd.mesh_tensor<"m", tensor<12x16xf32>, sharding=<@mesh, [{"x", ?}, {}], replicated={"y"}>, memory_kind="device">,
    %arg4: !mpmd.mesh_tensor<"m", tensor<f32>, sharding=<@mesh, []>>)
    attributes {topology = #mpmd.topology<<"m" : <["x"=2, "y"=4]>>>} {
  func.return
}

// CHECK-LABEL: func.func @attributes
// CHECK-SAME: mpmd.a = #mpmd.user_origin<"layer1"(2)>
// CHECK-SAME: mpmd.b = #mpmd.user_origin<"layer1">
// CHECK-SAME: mpmd.c = #mpmd.origin<"transfer">
// CHECK-SAME: mpmd.d = #mpmd.meshes_with_origins<"m3"["origin1", "origin2"], "m1">
// CHECK-SAME: mpmd.e = #mpmd.meshes_with_origins<>
// CHECK-SAME: mpmd.f = #mpmd.reduction<max>
// CHECK-SAME: mpmd.g = #mpmd.mesh_with_origins<"m2"["a"]>
// CHECK-SAME: mpmd.h = #mpmd.named_mesh<"m" : <["x"=2], device_ids=[1, 0]>>
func.func @attributes() attributes {
    mpmd.a = #mpmd.user_origin<"layer1"(2)>,
    mpmd.b = #mpmd.user_origin<"layer1"(0)>,
    mpmd.c = #mpmd.origin<"transfer">,
    mpmd.d = #mpmd.meshes_with_origins<"m3"["origin1","origin2"], "m1">,
    mpmd.e = #mpmd.meshes_with_origins<>,
    mpmd.f = #mpmd.reduction<max>,
    mpmd.g = #mpmd.mesh_with_origins<"m2"["a"]>,
    mpmd.h = #mpmd.named_mesh<"m": <["x"=2], device_ids=[1, 0]>>} {
  func.return
}

// Shardy's use-set annotations on arbitrary ops.
// CHECK-LABEL: func.func @use_sets
func.func @use_sets(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: stablehlo.add %arg0, %arg0 {mpmd.use_set = #mpmd.meshes_with_origins<"m3">} : tensor<4x8xf32>
  %0 = stablehlo.add %arg0, %arg0  {mpmd.use_set = #mpmd.meshes_with_origins<"m3">}: tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
