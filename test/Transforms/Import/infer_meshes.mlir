// RUN: mpmd-opt %s -mpmd-infer-meshes -split-input-file -verify-diagnostics | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Nameless ops go where they are used: the multiply feeds only mesh m1's
// output, the constant both meshes: the multiply takes a copy of it in its
// own fragment, and m2's output gets a fragment of its own.
// CHECK-LABEL: func.func @clone_into_use_set
// CHECK-SAME: (%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>)
func.func @clone_into_use_set(%arg0: !m1) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> !t
  // CHECK-NOT: mpmd.fragment<mesh="m1", origin=[]> () ()
  // CHECK: %[[C2:.*]] = mpmd.fragment<mesh="m2", origin=[]> () () {
  // CHECK-NEXT: stablehlo.constant dense<2.000000e+00>
  %c = stablehlo.constant dense<2.0> : !t
  // CHECK: %[[M:.*]] = mpmd.fragment<mesh="m1", origin=[]> (%[[F:.*]]) (%{{.*}}: tensor<4xf32>)
  // CHECK-NEXT: %[[K:.*]] = stablehlo.constant dense<2.000000e+00>
  // CHECK-NEXT: stablehlo.multiply %{{.*}}, %[[K]]
  %2 = stablehlo.multiply %1, %c : !t
  %3 = mpmd.assign %2 : (!t) -> !m1
  %4 = mpmd.assign %c : (!t) -> !m2
  // CHECK: return %[[M]], %[[C2]]
  func.return %3, %4 : !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A value that was already transferred exists on both meshes: computing on
// it there needs no new transfer.
// CHECK-LABEL: func.func @existing_transfer
func.func @existing_transfer(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> !t
  %2 = stablehlo.tanh %1 : !t
  %3 = mpmd.assign %2 : (!t) -> !m2
  // The transfer moves up to the fragment so that the new fragment can read it.
  // CHECK: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"]>
  // CHECK: } : (
  // CHECK-NEXT: %[[T:.*]] = mpmd.transfer %[[F]]
  // CHECK-NEXT: %[[TANH:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[T]])
  // CHECK-NEXT: stablehlo.tanh
  // CHECK-NOT: mpmd.transfer
  // CHECK: return %[[TANH]]
  %4 = mpmd.transfer %0 : (!m1) -> !m2
  func.return %3 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Values computed on m1 and m2 (arguments would move freely).
func.func @needs_transfer(%arg0: !m1, %arg1: !m2) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %a = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %b = mpmd.fragment<mesh="m2", origin=["g"]> (%arg1) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %0 = mpmd.unassign %a : (!m1) -> !t
  %1 = mpmd.unassign %b : (!m2) -> !t
  // expected-error @+1 {{Mesh assignment is not possible for op as its operands are on conflicting meshes: 'stablehlo.add' is used on {"m2"}, and bringing its operands together needs a transfer that mesh inference may not add; input 0 is available on {"m1"}, input 1 is available on {"m2"}. Set infer-transfers=true}}
  %2 = stablehlo.add %0, %1 : !t
  %3 = mpmd.assign %2 : (!t) -> !m2
  func.return %3 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// A value read straight from one mesh into another, with nothing computed
// in between, is reported on the read.
func.func @leaf_needs_transfer(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %a = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  // expected-error @+1 {{'mpmd.unassign' op reads a value that exists on {"m1"} but is used on {"m2"} with no computation in between}}
  %0 = mpmd.unassign %a : (!m1) -> !t
  %1 = mpmd.assign %0 : (!t) -> !m2
  func.return %1 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// An argument used on two meshes lives on the first and is copied to the
// other: arguments move to the meshes that use them (Shardy's rule too).
// CHECK-LABEL: func.func @shared_parameter
// CHECK-SAME: (%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK: %[[T:.*]] = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: return %arg0, %[[T]]
func.func @shared_parameter(%arg0: !t) -> (!m1, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.assign %arg0 : (!t) -> !m1
  %1 = mpmd.assign %arg0 : (!t) -> !m2
  func.return %0, %1 : !m1, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Unassigned arguments go to the mesh that uses them; unassigned results to
// where they are computed; dead ops disappear.
// CHECK-LABEL: func.func @free_inputs_and_outputs
// CHECK-SAME: (%arg0: !mpmd.mesh_tensor<"m2", tensor<4xf32>>, %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m2", tensor<4xf32>>, !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
func.func @free_inputs_and_outputs(%arg0: !t, %arg1: !t) -> (!t, !t)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.assign %arg0 : (!t) -> !m2
  %1 = mpmd.fragment<mesh="m2", origin=["g"]> (%0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %2 = mpmd.unassign %1 : (!m2) -> !t
  // CHECK-NOT: stablehlo.sine
  %dead = stablehlo.sine %2 : !t
  // CHECK: mpmd.fragment<mesh="m2", origin=[]> ({{.*}}) ({{.*}}) {
  // CHECK-NEXT: stablehlo.negate
  %3 = stablehlo.negate %2 : !t
  // %arg1 has no mesh use; it defaults to the first mesh.
  func.return %3, %arg1 : !t, !t
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="pinned_host">

// An output assigned another memory kind of the same mesh: an intra-mesh
// transfer.
// CHECK-LABEL: func.func @memory_kind_output
// CHECK: %[[T:.*]] = mpmd.transfer %{{.*}} : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
// CHECK: return %[[T]]
func.func @memory_kind_output(%arg0: !m1) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.unassign %arg0 : (!m1) -> !t
  %1 = stablehlo.abs %0 : !t
  %2 = mpmd.assign %1 : (!t) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
  func.return %2 : !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// broadcast and reduce move their operands themselves.
// CHECK-LABEL: func.func @broadcast_and_reduce
func.func @broadcast_and_reduce(%arg0: !m1, %arg1: !m2) -> (!m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: %[[A:.*]] = mpmd.fragment<mesh="m1", origin=["f"]>
  %a = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %0 = mpmd.unassign %a : (!m1) -> !t
  %1 = mpmd.unassign %arg1 : (!m2) -> !t
  // CHECK: %[[B:.*]] = mpmd.transfer %[[A]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  %2 = mpmd.broadcast %0 : !t
  // CHECK: %[[R:.*]] = mpmd.transfer %[[A]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  // CHECK-NEXT: %[[SUM:.*]] = mpmd.fragment<mesh="m2", origin=[]> (%[[R]], %arg1) (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) {
  // CHECK-NEXT: stablehlo.add %[[X]], %[[Y]]
  %3 = mpmd.reduce<add> %0, %1 : (!t, !t) -> !t
  %4 = mpmd.assign %2 : (!t) -> !m2
  %5 = mpmd.assign %3 : (!t) -> !m2
  // CHECK: return %[[B]], %[[SUM]]
  func.return %4, %5 : !m2, !m2
}

// -----

func.func @token(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{not supported yet: placing an op that takes or returns '!stablehlo.token' on a mesh}}
  %0 = "stablehlo.create_token"() : () -> !stablehlo.token
  func.return %arg0 : tensor<4xf32>
}

// -----

func.func @loop(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{not supported yet: mesh inference of mpmd.for}}
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32} (%x: tensor<4xf32>, %index: tensor<ui32>) {
    mpmd.return %x : tensor<4xf32>
  } : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Ops nobody uses: one the op catalog knows to be pure (a reduce_window JAX
// left behind, chlo.square) goes away with its inputs; an op of a dialect
// nobody knows stays, where its inputs are, with what it reads (a copy of
// the constant).
// CHECK-LABEL: func.func @unused_ops
// CHECK-NOT: stablehlo.reduce_window
// CHECK-NOT: chlo.square
// CHECK: mpmd.fragment<mesh="m1", origin=[]> (%{{.*}}) (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<1.000000e+00>
// CHECK-NEXT: "mystery.effect"(%[[X]], %[[C]])
// CHECK-NOT: stablehlo.reduce_window
!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @unused_ops(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.unassign %0 : (!m1) -> !t
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = "stablehlo.reduce_window"(%1, %init) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (!t, tensor<f32>) -> tensor<2xf32>
  %3 = "chlo.square"(%1) : (!t) -> !t
  %c = stablehlo.constant dense<1.0> : !t
  %4 = "mystery.effect"(%1, %c) : (!t, !t) -> !t
  func.return %0 : !m1
}
