// RUN: mpmd-opt %s -mpmd-verify-import -split-input-file -verify-diagnostics

func.func @leftover(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.unassign' op is outside any fragment after import}}
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> tensor<4xf32>
  %1 = mpmd.assign %0 : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  func.return %1 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// -----

// expected-error @+1 {{import left argument 0 of @local off the meshes ('tensor<4xf32>')}}
func.func @local(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : tensor<4xf32>
}
