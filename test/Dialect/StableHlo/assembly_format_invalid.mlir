// Parser diagnostics of the custom directives (AssemblyFormat.h).
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

func.func @elementwise_type_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{number of operands and types do not match: got 2 operands and 1 types}}
  %0 = stablehlo.add %a, %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @elementwise_two_results(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected a single result type}}
  %0 = stablehlo.negate %a : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0 : tensor<4xf32>
}

// -----

func.func @select_type_count(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{number of operands and types do not match: got 3 operands and 2 types}}
  %0 = stablehlo.select %p, %a, %a : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_unknown_type(%a: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{unknown comparison type 'BOGUS'}}
  %0 = stablehlo.compare GT, %a, %a, BOGUS : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @dot_unknown_precision(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{unknown precision 'LOW'}}
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [LOW] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @slice_missing_limit(%m: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected ':'}}
  %0 = stablehlo.slice %m [0:2, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
