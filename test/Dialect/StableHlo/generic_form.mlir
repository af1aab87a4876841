// The generic form of the modelled ops: property names and attribute text
// are upstream StableHLO's (what JAX prints), whether the op was written in
// pretty or generic form; the compact reduce expands into its region.

// RUN: mpmd-opt --mlir-print-op-generic %s | FileCheck %s --strict-whitespace
// RUN: mpmd-opt --mlir-print-op-generic %s | mpmd-opt --mlir-print-op-generic | FileCheck %s --strict-whitespace

func.func @attrs(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<2x3x4xf32>, %c: tensor<2x4x5xf32>, %m: tensor<2x3xf32>, %z: tensor<f32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.dot_general %b, %c, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %2 = stablehlo.dot_general %z, %z, contracting_dims = [] x [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.compare GE, %m, %m, TOTALORDER : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = stablehlo.reduce(%m init: %z) applies stablehlo.minimum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %5 = stablehlo.slice %m [0:2:1, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %6 = stablehlo.iota dim = 0 : tensor<4xi64>
  %7 = stablehlo.concatenate %m, %m, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %8 = stablehlo.transpose %m, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %9 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %10 = stablehlo.constant dense<[[1, 2, 3]]> : tensor<1x3xi32>
  %11 = stablehlo.constant() {value = dense<1.5> : tensor<f32>, mpmd.note = 1 : i64} : () -> tensor<f32>
  %12 = stablehlo.tanh %m {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<2x3xf32>
  return
}

// CHECK-LABEL: "func.func"() <{function_type = (tensor<8x16xf32>, tensor<16x32xf32>, tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<2x3xf32>, tensor<f32>) -> (), sym_name = "attrs"}> ({
// CHECK: %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>{{$}}
// CHECK-NEXT: %1 = "stablehlo.dot_general"(%arg2, %arg3) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>{{$}}
// CHECK-NEXT: %2 = "stablehlo.dot_general"(%arg5, %arg5) <{dot_dimension_numbers = #stablehlo.dot<>}> : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %3 = "stablehlo.compare"(%arg4, %arg4) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>{{$}}
// CHECK-NEXT: %4 = "stablehlo.reduce"(%arg4, %arg5) <{dimensions = array<i64: 1>}> ({{[{]$}}
// CHECK-NEXT: ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):{{$}}
// CHECK-NEXT: %13 = "stablehlo.minimum"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: "stablehlo.return"(%13) : (tensor<f32>) -> (){{$}}
// CHECK-NEXT: }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>{{$}}
// CHECK-NEXT: %5 = "stablehlo.slice"(%arg4) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>{{$}}
// CHECK-NEXT: %6 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xi64>{{$}}
// CHECK-NEXT: %7 = "stablehlo.concatenate"(%arg4, %arg4) <{dimension = 1 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>{{$}}
// CHECK-NEXT: %8 = "stablehlo.transpose"(%arg4) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>{{$}}
// CHECK-NEXT: %9 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>{{$}}
// CHECK-NEXT: %10 = "stablehlo.constant"() <{value = dense<{{\[\[}}1, 2, 3]]> : tensor<1x3xi32>}> : () -> tensor<1x3xi32>{{$}}
// CHECK-NEXT: %11 = "stablehlo.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> {mpmd.note = 1 : i64} : () -> tensor<f32>{{$}}
// CHECK-NEXT: %12 = "stablehlo.tanh"(%arg4) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>{{$}}
// CHECK-NEXT: "func.return"() : () -> (){{$}}
