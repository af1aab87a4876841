// Corner cases of the custom directives and default elision in the
// declarative formats (AssemblyFormat.h): each line prints what upstream
// StableHLO prints, whichever form it was written in, and parses back.

// RUN: mpmd-opt %s | FileCheck %s --strict-whitespace
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s --strict-whitespace
// RUN: mpmd-opt %s --mlir-print-op-generic | mpmd-opt | FileCheck %s --strict-whitespace

func.func @directives(%a: tensor<4xf32>, %b: tensor<4xf32>, %d: tensor<?xf32>, %p: tensor<4xi1>, %s: tensor<i1>, %x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %bx: tensor<2x3x4xf32>, %bw: tensor<2x4x5xf32>, %m: tensor<2x3xf32>, %z: tensor<f32>) {
  %0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<4xf32>
  %1 = "stablehlo.log"(%a) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>}> : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "stablehlo.tanh"(%a) <{result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.subtract %a, %d : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  %5 = stablehlo.negate %a : (tensor<4xf32>) -> tensor<?xf32>
  %6 = stablehlo.atan2 %a, %b {mpmd.note = [1, 2]} : tensor<4xf32>
  %7 = stablehlo.select %p, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = stablehlo.select %s, %d, %d : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
  %9 = stablehlo.compare NE, %d, %b, FLOAT {mpmd.note = 1 : i64} : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xi1>
  %10 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %11 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %12 = stablehlo.dot_general %bx, %bw, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, DEFAULT] {mpmd.note = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %13 = "stablehlo.dot_general"(%bx, %bx) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1, 2], rhs_batching_dimensions = [0, 1, 2]>}> : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %14 = stablehlo.concatenate %a, %b, %d, dim = 0 {mpmd.note = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<?xf32>) -> tensor<?xf32>
  %15 = stablehlo.slice %m [0:2:2, 0:3:3] : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %16 = stablehlo.slice %z [] : (tensor<f32>) -> tensor<f32>
  %17 = stablehlo.iota dim = 0 {mpmd.note = 1 : i64} : tensor<4xi32>
  %18 = stablehlo.broadcast_in_dim %a, dims = [1] {mpmd.note = 1 : i64} : (tensor<4xf32>) -> tensor<2x4xf32>
  %19 = stablehlo.reshape %m {mpmd.note = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %20 = stablehlo.transpose %m, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<?x2xf32>
  %21 = stablehlo.reduce(%z init: %z) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %22 = stablehlo.constant() <{value = dense<7> : tensor<2xi32>}> {mpmd.note = 1 : i64} : () -> tensor<2xi32>
  return
}

// CHECK-LABEL: func.func @directives(
// CHECK-NEXT: %0 = stablehlo.exponential %arg0 : tensor<4xf32>{{$}}
// CHECK-NEXT: %1 = stablehlo.log %arg0 : tensor<4xf32>{{$}}
// CHECK-NEXT: %2 = stablehlo.tanh %arg0 {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>{{$}}
// CHECK-NEXT: %3 = stablehlo.add %arg0, %arg1 : tensor<4xf32>{{$}}
// CHECK-NEXT: %4 = stablehlo.subtract %arg0, %arg2 : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>{{$}}
// CHECK-NEXT: %5 = stablehlo.negate %arg0 : (tensor<4xf32>) -> tensor<?xf32>{{$}}
// CHECK-NEXT: %6 = stablehlo.atan2 %arg0, %arg1 {mpmd.note = [1, 2]} : tensor<4xf32>{{$}}
// CHECK-NEXT: %7 = stablehlo.select %arg3, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>{{$}}
// CHECK-NEXT: %8 = stablehlo.select %arg4, %arg2, %arg2 : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>{{$}}
// CHECK-NEXT: %9 = stablehlo.compare NE, %arg2, %arg1, FLOAT {mpmd.note = 1 : i64} : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xi1>{{$}}
// CHECK-NEXT: %10 = stablehlo.compare LT, %arg0, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>{{$}}
// CHECK-NEXT: %11 = stablehlo.dot_general %arg5, %arg6, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>{{$}}
// CHECK-NEXT: %12 = stablehlo.dot_general %arg7, %arg8, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, DEFAULT] {mpmd.note = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>{{$}}
// CHECK-NEXT: %13 = stablehlo.dot_general %arg7, %arg7, batching_dims = [0, 1, 2] x [0, 1, 2], contracting_dims = [] x [] : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>{{$}}
// CHECK-NEXT: %14 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 0 {mpmd.note = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<?xf32>) -> tensor<?xf32>{{$}}
// CHECK-NEXT: %15 = stablehlo.slice %arg9 [0:2:2, 0:3:3] : (tensor<2x3xf32>) -> tensor<1x1xf32>{{$}}
// CHECK-NEXT: %16 = stablehlo.slice %arg10 [] : (tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %17 = stablehlo.iota dim = 0 {mpmd.note = 1 : i64} : tensor<4xi32>{{$}}
// CHECK-NEXT: %18 = stablehlo.broadcast_in_dim %arg0, dims = [1] {mpmd.note = 1 : i64} : (tensor<4xf32>) -> tensor<2x4xf32>{{$}}
// CHECK-NEXT: %19 = stablehlo.reshape %arg9 {mpmd.note = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>{{$}}
// CHECK-NEXT: %20 = stablehlo.transpose %arg9, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<?x2xf32>{{$}}
// CHECK-NEXT: %21 = stablehlo.reduce(%arg10 init: %arg10) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %c = stablehlo.constant {mpmd.note = 1 : i64} dense<7> : tensor<2xi32>{{$}}
// CHECK-NEXT: return{{$}}
