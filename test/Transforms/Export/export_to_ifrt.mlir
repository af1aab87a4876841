// What mpmd-export leaves lowers to IFRT IR: fragments that differ only in
// a microbatch's index share a program, and each call's specialization is
// a module of its own holding the shared program; the transfer between
// the meshes is a copy issued right after its producer.
// RUN: mpmd-opt %s -mpmd-export -mpmd-lower-to-ifrt | FileCheck %s

!t = tensor<4x8xf32>
!a = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!b = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>
!r = !mpmd.mesh_tensor<"m2", tensor<8xf32>>

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: !ifrt.array<tensor<4x8xf32>, #ifrt.sharding_param<1x1 to [0] on 2>, [0, 1]>)
// CHECK-SAME: -> (!ifrt.array<tensor<8xf32>, #ifrt.sharding_param<1 to [0] on 2>, [2, 3]>, !ifrt.array<tensor<8xf32>, #ifrt.sharding_param<1 to [0] on 2>, [2, 3]>)
// CHECK-SAME: attributes {ifrt.function}
// CHECK-NEXT: %[[H:.*]]:2 = "ifrt.Call"(%arg0) {callee = @[[F:p0_[^:]*]]::@main, devices = #ifrt<devices[0, 1]>
// CHECK-NEXT: %[[M:.*]]:2 = "ifrt.CopyArrays"(%[[H]]#0)
// CHECK-NEXT: %[[X:.*]]:2 = "ifrt.Call"(%[[M]]#0) {callee = @[[G:p1_[^:]*]].c0::@main, devices = #ifrt<devices[2, 3]>
// CHECK-NEXT: %[[Y:.*]]:2 = "ifrt.Call"(%[[M]]#0, %[[X]]#1) {callee = @[[G]].c1::@main, devices = #ifrt<devices[2, 3]>
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1>
// CHECK-NEXT: return %[[X]]#0, %[[Y]]#0
// CHECK: module @[[F]] attributes {sym_visibility = "private"}
// CHECK: module @[[G]].c0 attributes {sym_visibility = "private"}
// CHECK-NEXT: func.func @main(%arg0: tensor<4x8xf32>) -> tensor<8xf32> attributes {mpmd.constant_args = [dense<0> : tensor<i32>], mpmd.mesh = "m2", mpmd.specializes = @[[G]]}
// CHECK: call @[[G]](%arg0, %{{.*}})
// CHECK: func.func private @[[G]](%arg0: tensor<4x8xf32>, %arg1: tensor<i32>) -> tensor<8xf32>
// CHECK: module @[[G]].c1 attributes {sym_visibility = "private"}
// CHECK-NEXT: func.func @main(%arg0: tensor<4x8xf32>) -> tensor<8xf32> attributes {mpmd.constant_args = [dense<1> : tensor<i32>]
// CHECK: func.func private @[[G]](
// CHECK-NOT: func.func
func.func @main(%arg0: !a) -> (!r, !r)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    %y = stablehlo.add %x, %x : !t
    mpmd.return %y : !t
  } : (!a) -> !a
  %1 = mpmd.transfer %0 : (!a) -> !b
  %2 = mpmd.fragment<mesh="m2", origin=["g"]> (%1) {call_counter = 0 : ui32} (%x: !t) {
    %i = stablehlo.constant dense<0> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = "stablehlo.dynamic_slice"(%x, %i, %z) <{slice_sizes = array<i64: 1, 8>}> : (!t, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
    %r = stablehlo.reshape %s : (tensor<1x8xf32>) -> tensor<8xf32>
    mpmd.return %r : tensor<8xf32>
  } : (!b) -> !r
  %3 = mpmd.fragment<mesh="m2", origin=["g"]> (%1) {call_counter = 1 : ui32} (%x: !t) {
    %i = stablehlo.constant dense<1> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = "stablehlo.dynamic_slice"(%x, %i, %z) <{slice_sizes = array<i64: 1, 8>}> : (!t, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
    %r = stablehlo.reshape %s : (tensor<1x8xf32>) -> tensor<8xf32>
    mpmd.return %r : tensor<8xf32>
  } : (!b) -> !r
  func.return %2, %3 : !r, !r
}
