// The struct-like attributes (StableHloAttrs.td) in generic text: fields in
// any order print in upstream's order, empty dimension lists are left out,
// and text that is not a complete attribute (a missing or repeated field) is
// kept verbatim as an opaque attribute.

// RUN: mpmd-opt --allow-unregistered-dialect --mlir-print-op-generic %s | FileCheck %s --strict-whitespace
// RUN: mpmd-opt --allow-unregistered-dialect --mlir-print-op-generic %s | mpmd-opt --allow-unregistered-dialect --mlir-print-op-generic | FileCheck %s --strict-whitespace

func.func @attrs(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %z: tensor<f32>) {
  %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<rhs_contracting_dimensions = [0], lhs_batching_dimensions = [], lhs_contracting_dimensions = [1]>}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = "stablehlo.dot_general"(%z, %z) <{dot_dimension_numbers = #stablehlo.dot<>}> : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "stablehlo.dot_general"(%x, %w) <{algorithm = #stablehlo.dot_algorithm<allow_imprecise_accumulation = true, lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 6>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  "test.keep"() {dims = #stablehlo.dot<lhs_contracting_dimensions = [1], lhs_contracting_dimensions = [1]>, algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32>} : () -> ()
  return
}

// CHECK-LABEL: sym_name = "attrs"
// CHECK: %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>{{$}}
// CHECK-NEXT: %1 = "stablehlo.dot_general"(%arg2, %arg2) <{dot_dimension_numbers = #stablehlo.dot<>}> : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %2 = "stablehlo.dot_general"(%arg0, %arg1) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 6, allow_imprecise_accumulation = true>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>{{$}}
// CHECK-NEXT: "test.keep"() {algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32>, dims = #stablehlo.dot<lhs_contracting_dimensions = [1], lhs_contracting_dimensions = [1]>} : () -> (){{$}}
