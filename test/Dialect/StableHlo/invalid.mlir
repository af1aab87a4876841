// Verifier and parser diagnostics of the modelled ops.

// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

func.func @add_shape_mismatch(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.add' op requires operand #1 ('tensor<5xf32>') and the result ('tensor<4xf32>') to have compatible shapes}}
  %0 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_element_mismatch(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.add' op requires operand #1 ('tensor<4xi32>') and the result ('tensor<4xf32>') to have the same element type}}
  %0 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unary_rank_mismatch(%a: tensor<4xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'stablehlo.tanh' op requires operand #0 ('tensor<4xf32>') and the result ('tensor<4x1xf32>') to have compatible shapes}}
  %0 = stablehlo.tanh %a : (tensor<4xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @convert_shape_mismatch(%a: tensor<4xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{'stablehlo.convert' op requires operand #0 ('tensor<4xf32>') and the result ('tensor<3xi32>') to have compatible shapes}}
  %0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @compare_result_not_i1(%a: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @+1 {{'stablehlo.compare' op requires a result of i1 elements, but got 'tensor<4xi8>'}}
  %0 = stablehlo.compare GT, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// abs of complex<f32> is f32, not f64.
func.func @complex_abs_wrong_result(%a: tensor<4xcomplex<f32>>) -> tensor<4xf64> {
  // expected-error @+1 {{'stablehlo.abs' op requires operand #0 ('tensor<4xcomplex<f32>>') and the result ('tensor<4xf64>') to have the same element type}}
  %0 = stablehlo.abs %a : (tensor<4xcomplex<f32>>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @compare_operand_mismatch(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'stablehlo.compare' op requires operands of the same element type, but got 'tensor<4xf32>' and 'tensor<4xi32>'}}
  %0 = stablehlo.compare GT, %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @compare_unknown_direction(%a: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{unknown comparison direction 'GREATER'}}
  %0 = stablehlo.compare GREATER, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @compare_opaque_direction(%a: tensor<4xf32>) -> tensor<4xi1> {
  // A direction the dialect does not know stays opaque text, which the
  // registered op rejects.
  // expected-error @+1 {{Invalid attribute `comparison_direction` in property conversion}}
  %0 = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction GREATER>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @select_pred_not_i1(%p: tensor<4xi32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.select' op requires a predicate of i1 elements, but got 'tensor<4xi32>'}}
  %0 = stablehlo.select %p, %a, %a : tensor<4xi32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_pred_shape(%p: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.select' op requires a scalar predicate or one shaped like the result, but got 'tensor<2xi1>' for 'tensor<4xf32>'}}
  %0 = stablehlo.select %p, %a, %a : tensor<2xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_branch_mismatch(%p: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.select' op requires both branches to match the result type 'tensor<4xf32>', but got 'tensor<4xi32>'}}
  %0 = stablehlo.select %p, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_bad_type_list(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected `predicate type, value type` or a functional type}}
  %0 = stablehlo.select %p, %a, %a : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @broadcast_dims_size(%a: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'stablehlo.broadcast_in_dim' op broadcast_dimensions has 2 entries but the operand has rank 1}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_dim_out_of_range(%a: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'stablehlo.broadcast_in_dim' op broadcast_dimensions[0] = 2 is out of range [0, 2)}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [2] : (tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_dim_repeated(%a: tensor<1x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.broadcast_in_dim' op broadcast_dimensions repeats dimension 1}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [1, 1] : (tensor<1x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @broadcast_size_mismatch(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'stablehlo.broadcast_in_dim' op cannot broadcast operand dimension 0 of size 3 to result dimension 1 of size 4}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @reshape_element_count(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'stablehlo.reshape' op cannot reshape 6 elements ('tensor<2x3xf32>') into 7 ('tensor<7xf32>')}}
  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @transpose_not_permutation(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'stablehlo.transpose' op permutation repeats dimension 0}}
  %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_result_shape(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'stablehlo.transpose' op result type 'tensor<2x3xf32>' does not match the permuted operand type 'tensor<2x3xf32>'}}
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @dot_batching_count(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op requires as many lhs as rhs batching dimensions, but got 1 and 0}}
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @dot_contracting_out_of_range(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op lhs batching+contracting dimensions[0] = 2 is out of range [0, 2)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @dot_contracting_size(%a: tensor<8x16xf32>, %b: tensor<15x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op contracting dimension sizes differ: lhs dimension 1 has size 16, rhs dimension 0 has size 15}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<15x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @dot_result_shape(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<32x8xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op result type 'tensor<32x8xf32>' does not match the shape [8, 32] implied by the operands and dimension numbers}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

func.func @dot_precision_count(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op expects at most 2 precision config values, but got 3}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, HIGH, HIGHEST] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @dot_missing_contracting(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{expected `contracting_dims = [...] x [...]`}}
  %0 = stablehlo.dot_general %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<8x4xf32>, %z: tensor<f32>) -> tensor<8xf32> {
  // expected-error @+1 {{'stablehlo.reduce' op dimensions[0] = 2 is out of range [0, 2)}}
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [2] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @reduce_init_not_scalar(%x: tensor<8x4xf32>, %z: tensor<1xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'stablehlo.reduce' op requires scalar init values, but init value #0 is 'tensor<1xf32>'}}
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x4xf32>, tensor<1xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @reduce_result_shape(%x: tensor<8x4xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.reduce' op result #0 ('tensor<4xf32>') does not have the input shape without the reduced dimensions [8]}}
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_reducer_arity(%x: tensor<8x4xf32>, %z: tensor<f32>) -> tensor<8xf32> {
  // expected-error @+1 {{'stablehlo.reduce' op requires the reducer to take 2 arguments, but it takes 1}}
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @reduce_applies_not_commutative(%x: tensor<8x4xf32>, %z: tensor<f32>) -> tensor<8xf32> {
  // expected-error @+1 {{expected a commutative binary op of the stablehlo dialect after `applies`, got 'stablehlo.subtract'}}
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.subtract across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @iota_dim_out_of_range() -> tensor<2x3xi32> {
  // expected-error @+1 {{'stablehlo.iota' op iota_dimension 2 is out of range [0, 2)}}
  %0 = stablehlo.iota dim = 2 : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @concatenate_dim_out_of_range(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'stablehlo.concatenate' op dimension 2 is out of range [0, 2)}}
  %0 = stablehlo.concatenate %a, %a, dim = 2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_sizes(%a: tensor<2x3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'stablehlo.concatenate' op result dimension 0 has size 5 but the inputs add up to 4}}
  %0 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @concatenate_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'stablehlo.concatenate' op input #1 ('tensor<2x4xf32>') differs from the result ('tensor<4x3xf32>') in dimension 1}}
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @slice_out_of_range(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.slice' op range 2:4 of dimension 1 is not within [0, 3]}}
  %0 = stablehlo.slice %a [0:2, 2:4] : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_zero_stride(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.slice' op stride 0 of dimension 1 must be positive}}
  %0 = stablehlo.slice %a [0:2, 0:2:0] : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_result_size(%a: tensor<2x6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'stablehlo.slice' op result dimension 1 has size 3 but the slice selects 2 elements}}
  %0 = stablehlo.slice %a [0:2, 0:4:2] : (tensor<2x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_rank(%a: tensor<2x6xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.slice' op has 1 ranges but the operand has rank 2}}
  %0 = stablehlo.slice %a [0:2] : (tensor<2x6xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @constant_type_mismatch() -> tensor<i32> {
  // expected-error @+1 {{'stablehlo.constant' op value type 'tensor<f32>' does not match the result type 'tensor<i32>'}}
  %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @constant_not_elements() -> tensor<i32> {
  // expected-error @+1 {{expected a tensor value such as dense<...>}}
  %0 = stablehlo.constant 1 : i32
  return %0 : tensor<i32>
}
