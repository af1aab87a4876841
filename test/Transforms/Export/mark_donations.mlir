// RUN: mpmd-opt %s -split-input-file -mpmd-mark-donations | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// @first: its argument is a function argument at one call: never donated.
// @second: its first argument dies at both calls and a result of the same
// type can reuse it; its second argument dies too but no result is left: a
// plain donor. @third: its argument is read again later: kept.
// CHECK: func.func private @first(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func private @second(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32> {jax.buffer_donor = true}) -> tensor<4xf32>
// CHECK: func.func private @third(%arg0: tensor<4xf32>) -> tensor<4xf32>
func.func @main(%arg0: !m1) -> (!m1, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @first(%arg0) : (!m1) -> !m1
  %1 = mpmd.fragment_call<mesh="m1", origin=[]> @first(%0) : (!m1) -> !m1
  %2 = mpmd.fragment_call<mesh="m1", origin=[]> @first(%1) : (!m1) -> !m1
  %3 = mpmd.fragment_call<mesh="m1", origin=[]> @second(%2, %1) : (!m1, !m1) -> !m1
  %4 = mpmd.fragment_call<mesh="m1", origin=[]> @first(%arg0) : (!m1) -> !m1
  %5 = mpmd.fragment_call<mesh="m1", origin=[]> @first(%arg0) : (!m1) -> !m1
  %6 = mpmd.fragment_call<mesh="m1", origin=[]> @second(%4, %5) : (!m1, !m1) -> !m1
  %7 = mpmd.fragment_call<mesh="m1", origin=[]> @third(%6) : (!m1) -> !m1
  func.return %3, %7, %6 : !m1, !m1, !m1
}
func.func private @first(%arg0: !t) -> !t {
  func.return %arg0 : !t
}
func.func private @second(%arg0: !t, %arg1: !t) -> !t {
  func.return %arg0 : !t
}
func.func private @third(%arg0: !t) -> !t {
  func.return %arg0 : !t
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A function argument the caller donated (`donate_argnums` in jax.jit marks
// it `tf.aliasing_output`) is donated by its last reader, and takes the
// in-place result before a dying intermediate of the same type; one read
// again later, or not donated, is kept.
// CHECK-LABEL: func.func @donated_params
// CHECK: func.func private @read(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func private @update(%arg0: tensor<4xf32> {jax.buffer_donor = true}, %arg1: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4xf32>) -> tensor<4xf32>
func.func @donated_params(%arg0: !m1 {tf.aliasing_output = 0 : i32}, %arg1: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @read(%arg0) : (!m1) -> !m1
  %1 = mpmd.fragment_call<mesh="m1", origin=[]> @update(%0, %arg0, %arg1) : (!m1, !m1, !m1) -> !m1
  func.return %1, %arg1 : !m1, !m1
}
func.func private @read(%arg0: !t) -> !t {
  func.return %arg0 : !t
}
func.func private @update(%arg0: !t, %arg1: !t, %arg2: !t) -> !t {
  func.return %arg0 : !t
}
