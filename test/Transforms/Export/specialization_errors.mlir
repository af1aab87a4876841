// The plan runs a specialization's shared program with its constants; one
// that names no program, or has no constants, is refused on the call.
// RUN: mpmd-opt %s -split-input-file -mpmd-print-execution-plan -verify-diagnostics -o /dev/null

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @main(%arg0: !m) -> !m attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{calls @p0.c0, a specialization without its program or constants}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0.c0(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p0.c0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {mpmd.mesh = "m1", mpmd.specializes = @missing, mpmd.constant_args = [dense<0> : tensor<i32>]} {
  return %arg0 : tensor<4xf32>
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @main(%arg0: !m) -> !m attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{calls @p0.c0, a specialization without its program or constants}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0.c0(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p0(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32> attributes {mpmd.mesh = "m1"} {
  return %arg0 : tensor<4xf32>
}
func.func private @p0.c0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {mpmd.mesh = "m1", mpmd.specializes = @p0} {
  return %arg0 : tensor<4xf32>
}
