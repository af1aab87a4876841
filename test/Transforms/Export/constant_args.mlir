// Fragments that differ only in small constants (a microbatch's index)
// share one program; the constants become its trailing arguments and each
// call passes its own. A large constant that differs keeps programs apart.
// RUN: mpmd-opt %s -split-input-file -mpmd-outline-fragments | FileCheck %s
// RUN: mpmd-opt %s -split-input-file -mpmd-outline-fragments -mpmd-print-execution-plan -o /dev/null | FileCheck %s --check-prefix=PLAN
// mpmd-specialize-constant-args gives each call's constants a function, so
// that every fragment_call passes all its callee's arguments (Shardy's rule);
// the plan still runs the shared program with the constants.
// RUN: mpmd-opt %s -split-input-file -mpmd-outline-fragments -mpmd-specialize-constant-args | FileCheck %s --check-prefix=SPEC
// RUN: mpmd-opt %s -split-input-file -mpmd-outline-fragments -mpmd-specialize-constant-args -mpmd-print-execution-plan -o /dev/null | FileCheck %s --check-prefixes=PLAN,SPECPLAN

!t = tensor<4x8xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!r = !mpmd.mesh_tensor<"m1", tensor<8xf32>>

// CHECK-LABEL: func.func @main
// CHECK: mpmd.fragment_call<mesh="m1", origin=["f"]> @p0_f_fwd_calls0to1(%arg0) {call_counter = 0 : ui32, mpmd.constant_args = [dense<0> : tensor<i32>]}
// CHECK: mpmd.fragment_call<mesh="m1", origin=["f"]> @p0_f_fwd_calls0to1(%arg0) {call_counter = 1 : ui32, mpmd.constant_args = [dense<1> : tensor<i32>]}
// CHECK: mpmd.fragment_call<mesh="m1", origin=["g"]> @p1_g_fwd(%arg0)
// CHECK: mpmd.fragment_call<mesh="m1", origin=["g"]> @p2_g_fwd(%arg0)
// CHECK: func.func private @p0_f_fwd_calls0to1(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>) -> tensor<8xf32>
// The index became %arg1; the zero that is the same in both stays.
// CHECK-NEXT: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK-NEXT: stablehlo.dynamic_slice %arg0, %arg1, %[[ZERO]], sizes = [1, 8] : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>

// SPEC-LABEL: func.func @main
// SPEC: mpmd.fragment_call<mesh="m1", origin=["f"]> @p0_f_fwd_calls0to1.c0(%arg0) {call_counter = 0 : ui32}
// SPEC: mpmd.fragment_call<mesh="m1", origin=["f"]> @p0_f_fwd_calls0to1.c1(%arg0) {call_counter = 1 : ui32}
// SPEC: mpmd.fragment_call<mesh="m1", origin=["g"]> @p1_g_fwd(%arg0)
// SPEC: func.func private @p0_f_fwd_calls0to1(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>) -> tensor<8xf32>
// SPEC: func.func private @p0_f_fwd_calls0to1.c0(%arg0: tensor<4x8xf32>) -> tensor<8xf32> attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.constant_args = [dense<0> : tensor<i32>], mpmd.mesh = "m1", mpmd.specializes = @p0_f_fwd_calls0to1}
// SPEC-NEXT: %[[C:.*]] = stablehlo.constant dense<0> : tensor<i32>
// SPEC-NEXT: %[[R:.*]] = call @p0_f_fwd_calls0to1(%arg0, %[[C]]) : (tensor<4x8xf32>, tensor<i32>) -> tensor<8xf32>
// SPEC-NEXT: return %[[R]]
// SPEC: func.func private @p0_f_fwd_calls0to1.c1(%arg0: tensor<4x8xf32>) -> tensor<8xf32> attributes {{.*}}mpmd.constant_args = [dense<1> : tensor<i32>]
// SPEC-NOT: mpmd.constant_args = [dense<1> : tensor<i32>]}

// SPECPLAN-NOT: p0_f_fwd_calls0to1.c
// SPECPLAN: "program": "p0_f_fwd_calls0to1"
// SPECPLAN: "program": "p0_f_fwd_calls0to1"
// SPECPLAN-NOT: p0_f_fwd_calls0to1.c
// PLAN: "constants": [
// PLAN-NEXT: {
// PLAN-NEXT: "data": [
// PLAN-NEXT: 0
// PLAN-NEXT: ],
// PLAN-NEXT: "dtype": "i32",
// PLAN-NEXT: "shape": []
// PLAN: "constants": [
// PLAN-NEXT: {
// PLAN-NEXT: "data": [
// PLAN-NEXT: 1
func.func @main(%arg0: !m1) -> (!r, !r, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %i = stablehlo.constant dense<0> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = "stablehlo.dynamic_slice"(%x, %i, %z) <{slice_sizes = array<i64: 1, 8>}> : (!t, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
    %r = stablehlo.reshape %s : (tensor<1x8xf32>) -> tensor<8xf32>
    mpmd.return %r : tensor<8xf32>
  } : (!m1) -> !r
  %1 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    %i = stablehlo.constant dense<1> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = "stablehlo.dynamic_slice"(%x, %i, %z) <{slice_sizes = array<i64: 1, 8>}> : (!t, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
    %r = stablehlo.reshape %s : (tensor<1x8xf32>) -> tensor<8xf32>
    mpmd.return %r : tensor<8xf32>
  } : (!m1) -> !r
  %2 = mpmd.fragment<mesh="m1", origin=["g"]> (%arg0) (%x: !t) {
    %c = stablehlo.constant dense<1.0> : !t
    %a = stablehlo.add %x, %c : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %3 = mpmd.fragment<mesh="m1", origin=["g"]> (%arg0) (%x: !t) {
    %c = stablehlo.constant dense<2.0> : !t
    %a = stablehlo.add %x, %c : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  func.return %0, %1, %2, %3 : !r, !r, !m1, !m1
}

// -----

// Static slices that differ only where they start (xs[i] with a Python int)
// also share a program: the slice becomes a dynamic_slice whose start
// indices are arguments (one i32 per dimension).
// RUN: mpmd-opt %s -split-input-file -mpmd-outline-fragments | FileCheck %s --check-prefix=SLICE
// SLICE-LABEL: func.func @slices
// SLICE: @p0_f_fwd_calls0to1(%arg0) {call_counter = 0 : ui32, mpmd.constant_args = [dense<0> : tensor<i32>, dense<0> : tensor<i32>]}
// SLICE: @p0_f_fwd_calls0to1(%arg0) {call_counter = 1 : ui32, mpmd.constant_args = [dense<1> : tensor<i32>, dense<0> : tensor<i32>]}
// SLICE: func.func private @p0_f_fwd_calls0to1(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<1x8xf32>
// SLICE-NEXT: stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [1, 8] : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
!t2 = tensor<4x8xf32>
!n1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!s1 = !mpmd.mesh_tensor<"m1", tensor<1x8xf32>>
func.func @slices(%arg0: !n1) -> (!s1, !s1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32} (%x: !t2) {
    %s = stablehlo.slice %x [0:1, 0:8] : (!t2) -> tensor<1x8xf32>
    mpmd.return %s : tensor<1x8xf32>
  } : (!n1) -> !s1
  %1 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 1 : ui32} (%x: !t2) {
    %s = stablehlo.slice %x [1:2, 0:8] : (!t2) -> tensor<1x8xf32>
    mpmd.return %s : tensor<1x8xf32>
  } : (!n1) -> !s1
  func.return %0, %1 : !s1, !s1
}
