// Every mpmd op parses, prints, and parses back; generic form too.
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s
// RUN: mpmd-opt %s -mlir-print-op-generic | mpmd-opt | FileCheck %s

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>
!m1s = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {?}]>>

module {
sdy.mesh @mesh = <["x"=2, "y"=4]>

// CHECK-LABEL: func.func @fragments
// CHECK-SAME: attributes {topology = #mpmd.topology<<"m1" : <["x"=2, "y"=4]>>, <"m2" : <["z"=3]>>>}
func.func @fragments(%arg0: !m1, %arg1: !m1s) -> (!m1, !m2, !m1s)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2, "y"=4]>>, <"m2" : <["z"=3]>>>} {
  // CHECK: %[[F:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f", "g"(1)], stage=3> (%arg0, %arg1) {call_counter = 2 : ui32} (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>) {
  // CHECK-NEXT: %[[ADD:.*]] = stablehlo.add %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: mpmd.return %[[ADD]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {?}]>>) -> (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {?}]>>)
  %0:2 = mpmd.fragment<mesh="m1", origin=["f", "g"(1)], stage=3> (%arg0, %arg1) {call_counter = 2 : ui32} (%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
    %s = stablehlo.add %a, %b : tensor<4x8xf32>
    mpmd.return %s, %b : tensor<4x8xf32>, tensor<4x8xf32>
  } : (!m1, !m1s) -> (!m1, !m1s)
  // CHECK: mpmd.fragment<mesh="m1", origin=[], in_shardings=[<@mesh, [{"x"}, {}]>], out_shardings=[<@mesh, [{?}, {"y"}]>]> (%[[F]]#0) (%{{.*}}: tensor<4x8xf32>)
  %1 = mpmd.fragment<mesh="m1", origin=[], in_shardings=[<@mesh, [{"x"}, {}]>], out_shardings=[<@mesh, [{?}, {"y"}]>]> (%0#0) (%a: tensor<4x8xf32>) {
    mpmd.return %a : tensor<4x8xf32>
  } : (!m1) -> !m1
  // CHECK: mpmd.fragment<mesh="m2", origin=["c"]> () () {
  // CHECK: } : () -> !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>
  %2 = mpmd.fragment<mesh="m2", origin=["c"]> () () {
    %c = stablehlo.constant dense<1.0> : tensor<4x8xf32>
    mpmd.return %c : tensor<4x8xf32>
  } : () -> !m2
  // CHECK: mpmd.transfer %{{.*}} : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>
  %3 = mpmd.transfer %1 : (!m1) -> !m2
  func.return %1, %3, %0#1 : !m1, !m2, !m1s
}

// CHECK-LABEL: func.func @local_ops
func.func @local_ops(%arg0: tensor<4x8xf32>) -> (!m1, tensor<4x8xf32>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // CHECK: %[[NT:.*]] = mpmd.named_tensor %arg0 name="w" : tensor<4x8xf32>
  %0 = mpmd.named_tensor %arg0 name="w" : tensor<4x8xf32>
  // CHECK: mpmd.named_computation<"layer"(1)> (%[[NT]], %arg0) (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32>) {
  // CHECK: } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = mpmd.named_computation<"layer"(1)> (%0, %arg0) (%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) {
    %m = stablehlo.multiply %x, %y : tensor<4x8xf32>
    mpmd.return %m : tensor<4x8xf32>
  } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: mpmd.named_computation<"fwd"> (
  %2 = mpmd.named_computation<"fwd"(0)> (%1) (%x: tensor<4x8xf32>) {
    mpmd.return %x : tensor<4x8xf32>
  } : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[A:.*]] = mpmd.assign {origin = "layer"} %{{.*}} : (tensor<4x8xf32>) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
  %3 = mpmd.assign {origin = "layer"} %2 : (tensor<4x8xf32>) -> !m1
  // CHECK: mpmd.unassign %[[A]] : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>) -> tensor<4x8xf32>
  %4 = mpmd.unassign %3 : (!m1) -> tensor<4x8xf32>
  // CHECK: mpmd.broadcast %{{.*}} : tensor<4x8xf32>
  %5 = mpmd.broadcast %4 : tensor<4x8xf32>
  // CHECK: mpmd.reduce<add> %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = mpmd.reduce<add> %5, %4 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: mpmd.reduce<none> %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = mpmd.reduce<none> %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: mpmd.reduce<max>
  %8 = mpmd.reduce<max> %7, %7, %7 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3, %8 : !m1, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @loops_and_calls
func.func @loops_and_calls(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>) -> tensor<4x8xf32> {
  // CHECK: %[[FOR:.*]]:2 = mpmd.for (%arg0, %arg1) {iterations = 6 : ui32, unroll_factor = 3 : ui32} (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<i32>, %index: tensor<ui32>) {
  // CHECK-NEXT: %[[C:.*]] = mpmd.call @body(%[[X]], %index) : (tensor<4x8xf32>, tensor<ui32>) -> tensor<4x8xf32>
  // CHECK-NEXT: mpmd.return %[[C]], %[[Y]] : tensor<4x8xf32>, tensor<i32>
  // CHECK-NEXT: } : tensor<4x8xf32>, tensor<i32>
  %0:2 = mpmd.for (%arg0, %arg1) {iterations = 6 : ui32, unroll_factor = 3 : ui32} (%x: tensor<4x8xf32>, %y: tensor<i32>, %index: tensor<ui32>) {
    %c = mpmd.call @body(%x, %index) : (tensor<4x8xf32>, tensor<ui32>) -> tensor<4x8xf32>
    mpmd.return %c, %y : tensor<4x8xf32>, tensor<i32>
  } : tensor<4x8xf32>, tensor<i32>
  // CHECK: mpmd.for (%[[FOR]]#0) {iterations = 2 : ui32} (
  %1 = mpmd.for (%0#0) {iterations = 2 : ui32} (%x: tensor<4x8xf32>, %index: tensor<ui32>) {
    mpmd.return %x : tensor<4x8xf32>
  } : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

func.func private @body(%arg0: tensor<4x8xf32>, %arg1: tensor<ui32>) -> tensor<4x8xf32> {
  func.return %arg0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @exported
func.func @exported(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: %[[C0:.*]] = mpmd.fragment_call<mesh="m1", origin=["f"(1), "g"]> @prog(%arg0) : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"(1), "g"]> @prog(%arg0) : (!m1) -> !m1
  // CHECK: mpmd.fragment_call<mesh="m1", origin=[]> @prog(%[[C0]]) {mpmd.note = 1 : i64}
  %1 = mpmd.fragment_call<mesh="m1", origin=[]> @prog(%0) {mpmd.note = 1} : (!m1) -> !m1
  %2 = mpmd.transfer %1 : (!m1) -> !m2
  func.return %2 : !m2
}

func.func private @prog(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {mesh_shape = #sdy.mesh<["x"=2]>} {
  func.return %arg0 : tensor<4x8xf32>
}
}
