// RUN: mpmd-opt %s -mpmd-mark-fragment-reserved-memory -split-input-file -verify-diagnostics | FileCheck %s
// RUN: mpmd-opt %s -mpmd-export -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=EXPORT

// Bytes per device on m1 while each fragment runs, its own operands left
// out (XLA counts those):
//   f0: %arg0 (128) + %arg1 (32) - %arg1                    = 128
//       then %arg1 dies (donated) and f0's 64 bytes are made: 192
//   f1: 192 - %arg0 (kept: not donated)                      = 64
//       then f1's 16 bytes: 208; the transfer takes f0's last use: 144
//   f3: 144 - f1's 16                                        = 128
// On m2 the transfer's value is split over "x": 32 of its 64 bytes per
// device; f2 reads it, so nothing else is live there. The pinned-host
// argument never counts.
// CHECK-LABEL: func.func @known_live_set
// CHECK: mpmd.fragment<mesh="m1", origin=["f0"]> (%arg1) {reserved_hbm_bytes = 128 : i64}
// CHECK: mpmd.fragment<mesh="m1", origin=["f1"]> (%arg0) {reserved_hbm_bytes = 64 : i64}
// CHECK: mpmd.fragment<mesh="m2", origin=["f2"]> (%{{.*}}) {reserved_hbm_bytes = 0 : i64}
// CHECK: mpmd.fragment<mesh="m1", origin=["f3"]> (%{{.*}}, %arg2) {reserved_hbm_bytes = 128 : i64}
// After export each program carries the figure of its calls (the largest).
// Export sends f0's value to m2 right after f0, so it is gone by f1.
// EXPORT-LABEL: func.func @known_live_set
// EXPORT: func.func private @p0_f0_fwd({{.*}}reserved_hbm_bytes = 128 : i64
// EXPORT: func.func private @p1_f1_fwd({{.*}}reserved_hbm_bytes = 0 : i64
// EXPORT: func.func private @p2_f2_fwd({{.*}}reserved_hbm_bytes = 0 : i64
// EXPORT: func.func private @p3_f3_fwd({{.*}}reserved_hbm_bytes = 128 : i64
func.func @known_live_set(
    %arg0: !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>,
    %arg1: !mpmd.mesh_tensor<"m1", tensor<8xf32>> {jax.buffer_donor = true},
    %arg2: !mpmd.mesh_tensor<"m1", tensor<64xf32>, memory_kind="pinned_host">)
    -> (!mpmd.mesh_tensor<"m2", tensor<16xf32>, sharding=<@mesh, [{"x"}]>>,
        !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f0"]> (%arg1) (%x: tensor<8xf32>) {
    %c = stablehlo.concatenate %x, %x, dim = 0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    mpmd.return %c : tensor<16xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<16xf32>>
  %1 = mpmd.fragment<mesh="m1", origin=["f1"]> (%arg0) (%x: tensor<4x8xf32>) {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    mpmd.return %r : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  %2 = mpmd.transfer %0 : (!mpmd.mesh_tensor<"m1", tensor<16xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<16xf32>, sharding=<@mesh, [{"x"}]>>
  %3 = mpmd.fragment<mesh="m2", origin=["f2"]> (%2) (%x: tensor<16xf32>) {
    %n = stablehlo.negate %x : tensor<16xf32>
    mpmd.return %n : tensor<16xf32>
  } : (!mpmd.mesh_tensor<"m2", tensor<16xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<16xf32>, sharding=<@mesh, [{"x"}]>>
  %4 = mpmd.fragment<mesh="m1", origin=["f3"]> (%1, %arg2) (%x: tensor<4xf32>, %h: tensor<64xf32>) {
    %a = stablehlo.abs %x : tensor<4xf32>
    mpmd.return %a : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>, !mpmd.mesh_tensor<"m1", tensor<64xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  func.return %3, %4 : !mpmd.mesh_tensor<"m2", tensor<16xf32>, sharding=<@mesh, [{"x"}]>>, !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// -----

// A dimension split unevenly counts its largest shard, as XLA pads it:
// tensor<3xf32> over 2 devices is 2 elements (8 bytes) per device.
// CHECK-LABEL: func.func @uneven
// CHECK: mpmd.fragment<mesh="m1", origin=["g"]> (%arg1) {reserved_hbm_bytes = 8 : i64}
func.func @uneven(%arg0: !mpmd.mesh_tensor<"m1", tensor<3xf32>, sharding=<@mesh, [{"x"}]>>,
                  %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
    -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["g"]> (%arg1) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// -----

// An axis the mesh lacks leaves the bytes per device unknown: an error on
// what makes the value (here the function, for its argument).
// expected-error @+1 {{has a value sharded over axis "y", which mesh "m1" does not have}}
func.func @unknown_axis(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>)
    -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>
}

// -----

// Complex elements take both parts: tensor<4xcomplex<f32>> is 32 bytes.
// CHECK-LABEL: func.func @complex_elements
// CHECK: mpmd.fragment<mesh="m1", origin=["g"]> (%arg1) {reserved_hbm_bytes = 32 : i64}
func.func @complex_elements(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xcomplex<f32>>>,
                            %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
    -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["g"]> (%arg1) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}
