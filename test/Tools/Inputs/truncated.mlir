func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
