// Mesh tensor types with memory kinds, written as Shardy:MPMD writes them
// (spaces around `=` optional), print in the canonical form; transfers may
// change the memory kind on one mesh or across meshes.
// RUN: mpmd-opt %s -split-input-file | FileCheck %s
// RUN: mpmd-opt %s -split-input-file | mpmd-opt -split-input-file | FileCheck %s

!dev = !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>, memory_kind = "device">
!plain = !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>>
!pinned = !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>, memory_kind = "pinned_host">
!unpinned_b = !mpmd.mesh_tensor<"b", tensor<8x6xf32>, memory_kind="unpinned_host">

// CHECK-LABEL: func.func @between_memory_kinds(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>, memory_kind="device">
// CHECK-SAME: -> !mpmd.mesh_tensor<"b", tensor<8x6xf32>, memory_kind="unpinned_host">
func.func @between_memory_kinds(%arg0: !dev) -> !unpinned_b
    attributes {topology = #mpmd.topology<<"a" : <["u"=2, "v"=2]>>, <"b" : <["u"=2]>>>} {
  // CHECK-NEXT: %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>, memory_kind="device">) -> !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>>
  %0 = mpmd.transfer %arg0 : (!dev) -> !plain
  // CHECK-NEXT: %1 = mpmd.transfer %0 : ({{.*}}) -> !mpmd.mesh_tensor<"a", tensor<8x6xf32>, sharding=<@mesh, [{"u"}, {?}]>, memory_kind="pinned_host">
  %1 = mpmd.transfer %0 : (!plain) -> !pinned
  // CHECK-NEXT: %2 = mpmd.transfer %1 : ({{.*}}) -> !mpmd.mesh_tensor<"b", tensor<8x6xf32>, memory_kind="unpinned_host">
  %2 = mpmd.transfer %1 : (!pinned) -> !unpinned_b
  func.return %2 : !unpinned_b
}

// -----

!m1 = !mpmd.mesh_tensor<"a", tensor<8x6xf32>>
!m2 = !mpmd.mesh_tensor<"b", tensor<8x6xf32>>

// A memory kind attribute that names device memory is allowed anywhere.
// CHECK-LABEL: func.func @device_attribute(
// CHECK-SAME: {mhlo.memory_kind = "device"}
func.func @device_attribute(%arg0: !m1 {mhlo.memory_kind = "device"}) -> !m2
    attributes {topology = #mpmd.topology<<"a" : <["u"=2]>>, <"b" : <["u"=2]>>>} {
  // CHECK: mpmd.transfer {mhlo.memory_kind = "device"} %arg0
  %0 = mpmd.transfer {mhlo.memory_kind = "device"} %arg0 : (!m1) -> !m2
  func.return %0 : !m2
}

// -----

// Fragment results with memory kinds in their types.
// CHECK-LABEL: func.func @fragment_results(
// CHECK: mpmd.fragment<mesh="a", origin=["offload"]> (%arg0) (%arg1: tensor<8xf32>) {
// CHECK: } : (!mpmd.mesh_tensor<"a", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"a", tensor<8xf32>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"a", tensor<8xf32>>)
func.func @fragment_results(%arg0: !mpmd.mesh_tensor<"a", tensor<8xf32>>)
    -> !mpmd.mesh_tensor<"a", tensor<8xf32>, memory_kind="pinned_host">
    attributes {topology = #mpmd.topology<<"a" : <["u"=2]>>>} {
  %0:2 = mpmd.fragment<mesh="a", origin=["offload"]> (%arg0) (%x: tensor<8xf32>) {
    mpmd.return %x, %x : tensor<8xf32>, tensor<8xf32>
  } : (!mpmd.mesh_tensor<"a", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"a", tensor<8xf32>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"a", tensor<8xf32>>)
  func.return %0#0 : !mpmd.mesh_tensor<"a", tensor<8xf32>, memory_kind="pinned_host">
}
