// Memory kinds in mesh tensor types go through import, optimize, sharding
// and export without a crash and stay in the types. Pinned host memory given
// as an `mhlo.memory_kind` attribute on what a transfer moves is refused (as
// Shardy:MPMD refuses it) before any pass runs.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics --mpmd-import="assignment=f=m1 input-assignment=0=m1:pinned_host output-assignment=0=m2:device" --mpmd-optimize --mpmd-sharding --mpmd-export | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
// CHECK-SAME: -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="device">
// CHECK: mpmd.fragment_call<mesh="m1", origin=["f"]>
// CHECK: -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="device">
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: tensor<4xf32>) {
    %y = stablehlo.add %x, %x : tensor<4xf32>
    mpmd.return %y : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

func.func @main(%arg0: !m1 {mhlo.memory_kind = "pinned_host"}) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on argument 0 of @main) puts in pinned host memory}}
  %0 = mpmd.transfer %arg0 : (!m1) -> !m2
  func.return %0 : !m2
}
