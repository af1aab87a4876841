// A program's boundary shardings may only name the axes of the mesh it
// runs on: the plan hands them to JAX as shardings over that mesh. One that
// names another axis is refused on the call (a mpmd fuzzing finding, through
// IFRT IR whose atom declared a mesh of other axes).
// RUN: mpmd-opt %s -split-input-file -mpmd-print-execution-plan -verify-diagnostics -o /dev/null

sdy.mesh @mesh = <["x"=2]>
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
func.func @main(%arg0: !m) -> !m attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{calls @p0, whose argument 0 is sharded over axis "zz", which its mesh "m1" #sdy.mesh<["x"=2]> does not have}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"zz"}]>}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @main(%arg0: !m) -> !m attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{calls @p0, whose result 0 is sharded over axis "y", which its mesh "m1" #sdy.mesh<["x"=2]> does not have}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p0(%arg0: tensor<4xf32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  return %arg0 : tensor<4xf32>
}
