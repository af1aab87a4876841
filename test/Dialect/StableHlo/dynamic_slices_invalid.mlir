// Verifier errors of stablehlo.dynamic_slice and
// stablehlo.dynamic_update_slice, and what the pretty parser rejects.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

func.func @slice_too_few_starts(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op has 1 start indices but the operand has rank 2; give one start index per dimension}}
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_sizes_count(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op has 3 slice sizes but the operand has rank 2}}
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2, 1] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_size_too_large(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<5x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op slice size 5 of dimension 0 is not within [0, 4]}}
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [5, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @slice_negative_size(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op slice size -1 of dimension 1 is not within [0, 4]}}
  %0 = "stablehlo.dynamic_slice"(%x, %i, %i) <{slice_sizes = array<i64: 2, -1>}> : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_result_shape(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op result type 'tensor<2x3xf32>' does not have the slice sizes [2, 2] as its shape}}
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_element_type(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xi32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op requires the operand and result element types to match, but got 'tensor<4x4xf32>' and 'tensor<2x2xi32>'}}
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

func.func @slice_start_not_scalar(%x: tensor<4x4xf32>, %i: tensor<i64>, %v: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op start index #1 must be a scalar integer tensor such as tensor<i64>, but has type 'tensor<2xi64>'}}
  %0 = stablehlo.dynamic_slice %x, %i, %v, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_start_float(%x: tensor<4x4xf32>, %f: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op start index #0 must be a scalar integer tensor such as tensor<i64>, but has type 'tensor<f32>'}}
  %0 = stablehlo.dynamic_slice %x, %f, %f, sizes = [2, 2] : (tensor<4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_start_types_differ(%x: tensor<4x4xf32>, %i: tensor<i64>, %j: tensor<i32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_slice' op start indices must all have one type, but #0 is 'tensor<i64>' and #1 is 'tensor<i32>'}}
  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_missing_sizes(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{expected ',' after each operand, before the attribute that follows them}}
  %0 = stablehlo.dynamic_slice %x, %i, %i : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_operand_type_count(%x: tensor<4x4xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{number of operands and types do not match: got 3 operands and 2 types}}
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @update_too_many_starts(%x: tensor<4x4xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op has 3 start indices but the operand has rank 2; give one start index per dimension}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i, %i : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @update_result_type(%x: tensor<4x4xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op result type 'tensor<4x5xf32>' must be the operand type 'tensor<4x4xf32>'}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @update_element_type(%x: tensor<4x4xf32>, %u: tensor<2x2xi32>, %i: tensor<i64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op update 'tensor<2x2xi32>' must have the element type of the operand 'tensor<4x4xf32>'}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x4xf32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @update_rank(%x: tensor<4x4xf32>, %u: tensor<2xf32>, %i: tensor<i64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op update 'tensor<2xf32>' must have the rank of the operand 'tensor<4x4xf32>'}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x4xf32>, tensor<2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @update_too_large(%x: tensor<4x4xf32>, %u: tensor<2x5xf32>, %i: tensor<i64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op update dimension 1 has size 5, larger than the operand's 4}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x4xf32>, tensor<2x5xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @update_start_not_integer(%x: tensor<4x4xf32>, %u: tensor<2x2xf32>, %f: tensor<f32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op start index #0 must be a scalar integer tensor such as tensor<i64>, but has type 'tensor<f32>'}}
  %0 = stablehlo.dynamic_update_slice %x, %u, %f, %f : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @update_missing_update(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'stablehlo.dynamic_update_slice' op expected 2 or more operands, but found 1}}
  %0 = "stablehlo.dynamic_update_slice"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
