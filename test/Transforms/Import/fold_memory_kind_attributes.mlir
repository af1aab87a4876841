// mpmd-fold-memory-kind-attributes: an `mhlo.memory_kind` attribute of an
// entry function argument or result (as JAX and Shardy:MPMD write them)
// becomes the memory kind of its mesh tensor type, where the passes after
// import and the execution plan read it. An attribute that agrees with the
// type goes; one that contradicts it is an error. The import pipeline runs
// the pass after mesh inference.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-fold-memory-kind-attributes | FileCheck %s
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics --mpmd-import | FileCheck %s --check-prefix=IMPORT

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!n = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// An argument in pinned host memory read by a fragment on its mesh (host
// offloading, which Shardy:MPMD writes with attributes); an argument in
// unpinned host memory that is transferred (Shardy:MPMD accepts that
// attribute on a transferred value); a result asked for in pinned host
// memory, moved there from device memory by a transfer.
// CHECK-LABEL: func.func @fold(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">,
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="unpinned_host">)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"m2", tensor<4xf32>>)
// CHECK-NOT: mhlo.memory_kind
// CHECK: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0)
// CHECK: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[T:.*]] = mpmd.transfer %arg1 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="unpinned_host">) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK-NEXT: %[[H:.*]] = mpmd.transfer %[[F]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
// CHECK-NEXT: return %[[H]], %[[T]]
func.func @fold(%arg0: !m {mhlo.memory_kind = "pinned_host"}, %arg1: !m {mhlo.memory_kind = "unpinned_host"})
    -> (!m {mhlo.memory_kind = "pinned_host"}, !n)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    %y = stablehlo.add %x, %x : tensor<4xf32>
    mpmd.return %y : tensor<4xf32>
  } : (!m) -> !m
  %1 = mpmd.transfer %arg1 : (!m) -> !n
  func.return %0, %1 : !m, !n
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!h = !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">

// An attribute that repeats the type's memory kind just goes; "device" is
// what a type without a memory kind says already. An argument returned as
// it is keeps the declared result type: moved back to device memory.
// CHECK-LABEL: func.func @consistent(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">,
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>,
// CHECK-SAME: %arg2: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"m1", tensor<4xf32>>, !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
// CHECK-NEXT: %[[D:.*]] = mpmd.transfer %arg2 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: return %arg0, %arg1, %[[D]]
func.func @consistent(%arg0: !h {mhlo.memory_kind = "pinned_host"}, %arg1: !m {mhlo.memory_kind = "device"}, %arg2: !m {mhlo.memory_kind = "pinned_host"})
    -> (!h, !m, !m)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0, %arg1, %arg2 : !h, !m, !m
}

// -----

!d = !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="device">

// expected-error @+1 {{argument 0 of @contradicts has memory kind "device" in its type but 'mhlo.memory_kind = "pinned_host"'; give one memory kind (the type is enough)}}
func.func @contradicts(%arg0: !d {mhlo.memory_kind = "pinned_host"}) -> !d
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !d
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{result 0 of @unknown_kind: unknown memory kind "qwerty"; expected one of "device", "pinned_host", "unpinned_host"}}
func.func @unknown_kind(%arg0: !m) -> (!m {mhlo.memory_kind = "qwerty"})
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !m
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{argument 0 of @not_a_string has 'mhlo.memory_kind = 1 : i64'; a memory kind is a string, e.g. "pinned_host"}}
func.func @not_a_string(%arg0: !m {mhlo.memory_kind = 1}) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !m
}

// -----

// What JAX writes for an argument it puts in host memory: the attribute on a
// local tensor. Import places it (by mesh inference) and folds the
// attribute into the type, which the execution plan then reports.
// CHECK-LABEL: func.func @from_jax(
// IMPORT-LABEL: func.func @from_jax(
// IMPORT-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">)
// IMPORT-SAME: -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// IMPORT-NOT: mhlo.memory_kind
// IMPORT: mpmd.fragment<mesh="m1", origin=[]> (%arg0)
func.func @from_jax(%arg0: tensor<4xf32> {mhlo.memory_kind = "pinned_host"}) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
