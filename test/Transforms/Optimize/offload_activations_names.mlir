// RUN: mpmd-opt %s -mpmd-offload-activations="names=g" -split-input-file -verify-diagnostics | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Two stages on m1, f and g, each with residuals kept across two other
// microbatches; only g's (named) are offloaded: both its results, which
// only its backward reads.
// CHECK-LABEL: func.func @only_named
// CHECK: mpmd.fragment<mesh="m1", origin=["f"]
// CHECK-NOT: pinned_host
// CHECK: %[[G0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["g"]
// CHECK-NEXT: tanh
// CHECK-NEXT: mpmd.return
// CHECK-NEXT: }
// CHECK-NEXT: %[[H0:.*]] = mpmd.transfer %[[G0]]#0 {{.*}}memory_kind="pinned_host">
// CHECK-NEXT: %[[H1:.*]] = mpmd.transfer %[[G0]]#1 {{.*}}memory_kind="pinned_host">
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2)
// CHECK: %[[D0:.*]] = mpmd.transfer %[[H0]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[D1:.*]] = mpmd.transfer %[[H1]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["g"(1)], stage=1> (%[[D0]], %[[D1]])
// CHECK-NOT: pinned_host
// CHECK: return
func.func @only_named(%arg0: !m1, %arg1: !m1, %arg2: !m1) -> (!m1, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %g0:2 = mpmd.fragment<mesh="m1", origin=["g"], stage=1> (%f0#0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f2:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2) {call_counter = 2 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %bg0 = mpmd.fragment<mesh="m1", origin=["g"(1)], stage=1> (%g0#0, %g0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  %bf0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%bg0, %f0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %bf0, %f1#0, %f2#0 : !m1, !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{offload-activations names 'g', which no fragment comes from; named computations here: f, h}}
func.func @unknown_name(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %h = mpmd.fragment<mesh="m1", origin=["h"], stage=0> (%f) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  func.return %h : !m1
}
