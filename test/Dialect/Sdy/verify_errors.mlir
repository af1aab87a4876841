// Malformed meshes and shardings are diagnosed where they are written.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{mesh has duplicate axis name "x"}}
sdy.mesh @mesh = <["x"=2, "x"=4]>

// -----

// expected-error @+1 {{mesh axis "x" must have a positive size, got 0}}
sdy.mesh @mesh = <["x"=0]>

// -----

// expected-error @+1 {{mesh has 3 device ids but its axes hold 4 devices}}
sdy.mesh @mesh = <["x"=4], device_ids=[0, 1, 2]>

// -----

// expected-error @+1 {{mesh has duplicate device id 1}}
sdy.mesh @mesh = <["x"=2], device_ids=[1, 1]>

// -----

// expected-error @+1 {{sharding refers to unknown axis "y"}}
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2]>, [{"y"}]>}) {
  func.return
}

// -----

// expected-error @+1 {{sharding uses axis "x" more than once}}
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"x"}]>}) {
  func.return
}

// -----

// expected-error @+1 {{expected a priority such as 'p0' after '}'}}
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}q1]>}) {
  func.return
}

// -----

// expected-error @+1 {{expected 'replicated' or 'unreduced'}}
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], partial={"x"}>}) {
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  sdy.mesh @nested = <["x"=2]>
  func.return
}
