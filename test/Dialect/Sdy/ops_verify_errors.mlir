// Diagnostics of the sdy ops.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

sdy.mesh @grid = <["p"=4]>

func.func @constraint_rank(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'sdy.sharding_constraint' op sharding has rank 1 but 'tensor<8x8xf32>' has rank 2}}
  %0 = sdy.sharding_constraint %x <@grid, [{"p"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @grid = <["p"=4]>

func.func @in_shardings_count(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'sdy.manual_computation' op has 0 in_shardings for 1 operands}}
  %0 = sdy.manual_computation(%x) in_shardings=[] out_shardings=[<@grid, [{"p"}, {}]>] manual_axes={"p"} (%l: tensor<2x8xf32>) {
    sdy.return %l : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @grid = <["p"=4]>

func.func @out_sharding_rank(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'sdy.manual_computation' op out_shardings 0 has rank 1 but 'tensor<8x8xf32>' has rank 2}}
  %0 = sdy.manual_computation(%x) in_shardings=[<@grid, [{"p"}, {}]>] out_shardings=[<@grid, [{"p"}]>] manual_axes={"p"} (%l: tensor<2x8xf32>) {
    sdy.return %l : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @grid = <["p"=4]>

func.func @body_returns(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'sdy.manual_computation' op body returns 2 values for 1 results}}
  %0 = sdy.manual_computation(%x) in_shardings=[<@grid, [{"p"}, {}]>] out_shardings=[<@grid, [{"p"}, {}]>] manual_axes={"p"} (%l: tensor<2x8xf32>) {
    sdy.return %l, %l : tensor<2x8xf32>, tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @grid = <["p"=4]>

func.func @manual_axes_syntax(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{expected '{'}}
  %0 = sdy.manual_computation(%x) in_shardings=[<@grid, [{"p"}, {}]>] out_shardings=[<@grid, [{"p"}, {}]>] manual_axes=["p"] (%l: tensor<2x8xf32>) {
    sdy.return %l : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @group_id(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{expected attribute value}}
  sdy.sharding_group %x group_id= : tensor<8x8xf32>
  return
}

// -----

// An empty name would print as `@<<INVALID EMPTY SYMBOL>>`, which does not
// parse back.
// expected-error @+1 {{'sdy.mesh' op has an empty name; give the mesh a name, e.g. sdy.mesh @mesh = <["x"=2]>}}
sdy.mesh @"" = <["x"=2]>
