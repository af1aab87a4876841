// The canonicalizations later passes rely on.
// RUN: mpmd-opt %s -canonicalize -split-input-file | FileCheck %s

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m1s = !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// CHECK-LABEL: func.func @unassign_of_assign
func.func @unassign_of_assign(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: mpmd.assign
  // CHECK-NOT: mpmd.unassign
  // CHECK: return %arg0
  %0 = mpmd.assign %arg0 : (tensor<4xf32>) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// CHECK-LABEL: func.func @assign_of_unassign_same_type
func.func @assign_of_unassign_same_type(%arg0: !m1) -> (!m1, !m2) {
  // The round trip back onto the same mesh folds; moving to another mesh
  // through unassign/assign does not (that is a transfer mesh inference
  // must decide on).
  // CHECK: %[[U:.*]] = mpmd.unassign %arg0
  // CHECK: %[[A:.*]] = mpmd.assign %[[U]] : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2"
  // CHECK: return %arg0, %[[A]]
  %0 = mpmd.unassign %arg0 : (!m1) -> tensor<4xf32>
  %1 = mpmd.assign %0 : (tensor<4xf32>) -> !m1
  %2 = mpmd.assign %0 : (tensor<4xf32>) -> !m2
  func.return %1, %2 : !m1, !m2
}

// CHECK-LABEL: func.func @transfer_folds
func.func @transfer_folds(%arg0: !m1) -> (!m1, !m1, !m1s) {
  // CHECK: %[[RESHARD:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding
  // CHECK-NEXT: return %arg0, %arg0, %[[RESHARD]]
  %0 = mpmd.transfer %arg0 : (!m1) -> !m1
  %1 = mpmd.transfer %arg0 : (!m1) -> !m2
  %2 = mpmd.transfer %1 : (!m2) -> !m1
  %3 = mpmd.transfer %arg0 : (!m1) -> !m1s
  func.return %0, %2, %3 : !m1, !m1, !m1s
}

// A trip to host memory and back on one mesh is an offload (made to free
// device memory in between): it stays. One through another mesh's host
// memory is an ordinary round trip and folds.
// CHECK-LABEL: func.func @host_round_trip_stays
func.func @host_round_trip_stays(%arg0: !m1) -> (!m1, !m1) {
  // CHECK: %[[HOST:.*]] = mpmd.transfer %arg0 : {{.*}} -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
  // CHECK-NEXT: %[[BACK:.*]] = mpmd.transfer %[[HOST]]
  // CHECK-NEXT: return %[[BACK]], %arg0
  %0 = mpmd.transfer %arg0 : (!m1) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
  %1 = mpmd.transfer %0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !m1
  %2 = mpmd.transfer %arg0 : (!m1) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="pinned_host">
  %3 = mpmd.transfer %2 : (!mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="pinned_host">) -> !m1
  func.return %1, %3 : !m1, !m1
}

// CHECK-LABEL: func.func @broadcast_of_broadcast
func.func @broadcast_of_broadcast(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[B:.*]] = mpmd.broadcast %arg0
  // CHECK-NEXT: return %[[B]]
  %0 = mpmd.broadcast %arg0 : tensor<4xf32>
  %1 = mpmd.broadcast %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// CHECK-LABEL: func.func @unused_fragment_results_and_args
func.func @unused_fragment_results_and_args(%arg0: !m1, %arg1: !m1) -> !m1 {
  // CHECK: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"], out_shardings=[<@mesh, [{"y"}]>]> (%arg1) {call_counter = 1 : ui32} (%[[B:.*]]: tensor<4xf32>) {
  // CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[B]], %[[B]]
  // CHECK-NEXT: mpmd.return %[[M]] : tensor<4xf32>
  // CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  // CHECK-NEXT: return %[[F]]
  %0:2 = mpmd.fragment<mesh="m1", origin=["f"], out_shardings=[<@mesh, [{"x"}]>, <@mesh, [{"y"}]>]> (%arg0, %arg1) {call_counter = 1 : ui32} (%a: tensor<4xf32>, %b: tensor<4xf32>) {
    %s = stablehlo.add %a, %a : tensor<4xf32>
    %m = stablehlo.multiply %b, %b : tensor<4xf32>
    mpmd.return %s, %m : tensor<4xf32>, tensor<4xf32>
  } : (!m1, !m1) -> (!m1, !m1)
  func.return %0#1 : !m1
}

// CHECK-LABEL: func.func @fragment_with_no_used_results
func.func @fragment_with_no_used_results(%arg0: !m1) {
  // A pure fragment whose results are all unused disappears.
  // CHECK-NOT: mpmd.fragment
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%a: tensor<4xf32>) {
    mpmd.return %a : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}
