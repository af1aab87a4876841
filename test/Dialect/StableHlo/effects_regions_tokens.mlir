// custom_call, while, optimization_barrier and create_token parse from and
// print in upstream StableHLO's pretty syntax, and the pretty form is stable
// and lossless: printing it generic and parsing that back gives the same
// text. custom_call prints every property it carries, defaults included,
// because its purity depends on `has_side_effect = false`.

// RUN: mpmd-opt %s | FileCheck %s
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s
// RUN: mpmd-opt %s -o %t.pretty.mlir
// RUN: mpmd-opt %t.pretty.mlir -o %t.pretty2.mlir
// RUN: diff %t.pretty.mlir %t.pretty2.mlir
// RUN: mpmd-opt --mlir-print-op-generic %s | mpmd-opt -o %t.via_generic.mlir
// RUN: diff %t.pretty.mlir %t.via_generic.mlir
// RUN: mpmd-opt --mlir-print-op-generic %s | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @custom_calls(
func.func @custom_calls(%a: tensor<2x3xf32>, %b: tensor<3xi32>) -> tensor<2x3xf32> {
  // CHECK: %0 = stablehlo.custom_call @my_kernel(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  %0 = stablehlo.custom_call @my_kernel(%a, %b) : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = stablehlo.custom_call @my_kernel(%0) {api_version = 2 : i32, backend_config = "opaque bytes", has_side_effect = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.custom_call @my_kernel(%0) {has_side_effect = true, backend_config = "opaque bytes", api_version = 2 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // Defaults stay: has_side_effect = false makes the call pure.
  // CHECK-NEXT: %2 = stablehlo.custom_call @ffi_kernel(%1) {api_version = 4 : i32, backend_config = {scale = 2.000000e+00 : f32}, called_computations = [], has_side_effect = false, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = stablehlo.custom_call @ffi_kernel(%1) {api_version = 4 : i32, backend_config = {scale = 2.0 : f32}, called_computations = [], has_side_effect = false, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // A target that is not an identifier, no operands, no results; discardable
  // attributes print in the same dictionary.
  // CHECK-NEXT: stablehlo.custom_call @"my target.v2"() {api_version = 1 : i32, backend_config = "", mhlo.frontend_attributes = {tag = "x"}} : () -> ()
  stablehlo.custom_call @"my target.v2"() {api_version = 1 : i32, backend_config = "", mhlo.frontend_attributes = {tag = "x"}} : () -> ()
  // CHECK-NEXT: %3:2 = stablehlo.custom_call @split(%2) {called_computations = [@custom_calls]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %3:2 = stablehlo.custom_call @split(%2) {called_computations = [@custom_calls]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  func.return %3#1 : tensor<2x3xf32>
}

// GENERIC-LABEL: sym_name = "custom_calls"
// GENERIC: "stablehlo.custom_call"(%{{.*}}, %{{.*}}) <{call_target_name = "my_kernel"}>
// GENERIC: <{api_version = 2 : i32, backend_config = "opaque bytes", call_target_name = "my_kernel", has_side_effect = true}>
// GENERIC: called_computations = [], has_side_effect = false,

// CHECK-LABEL: func.func @loops(
func.func @loops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %limit = stablehlo.constant dense<8> : tensor<i64>
  // CHECK: %0:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0) : tensor<i64>, tensor<4xf32>
  // CHECK-NEXT: cond {
  // CHECK-NEXT:   %2 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  // CHECK-NEXT:   stablehlo.return %2 : tensor<i1>
  // CHECK-NEXT: } do {
  // CHECK-NEXT:   %2 = stablehlo.add %iterArg, %c_0 : tensor<i64>
  // CHECK-NEXT:   %3 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<4xf32>
  // CHECK-NEXT:   stablehlo.return %2, %3 : tensor<i64>, tensor<4xf32>
  // CHECK-NEXT: }
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i64>, tensor<4xf32>
    cond {
    %p = stablehlo.compare  LT, %i, %limit,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    %sq = stablehlo.multiply %v, %v : tensor<4xf32>
    stablehlo.return %n, %sq : tensor<i64>, tensor<4xf32>
  }
  // Attributes follow the keyword `attributes`; a loop may carry nothing.
  // CHECK: %1 = stablehlo.while(%iterArg = %0#1) : tensor<4xf32> attributes {mpmd.note = "inner"}
  // CHECK-NEXT: cond {
  // CHECK: } do {
  %s = stablehlo.while(%v = %r#1) : tensor<4xf32> attributes {mpmd.note = "inner"}
   cond {
    %t = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %v : tensor<4xf32>
  }
  // CHECK: stablehlo.while()
  // CHECK-NEXT: cond {
  // CHECK: } do {
  // CHECK-NEXT: stablehlo.return
  // CHECK-NEXT: }
  stablehlo.while() cond {
    %t = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return
  }
  func.return %s : tensor<4xf32>
}

// GENERIC-LABEL: sym_name = "loops"
// GENERIC: "stablehlo.while"(%{{.*}}, %{{.*}}) ({
// GENERIC: }) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>)

// CHECK-LABEL: func.func @barriers_and_tokens(
func.func @barriers_and_tokens(%x: tensor<4xf32>, %y: tensor<2xi32>) -> (tensor<4xf32>, !stablehlo.token) {
  // CHECK: %0 = stablehlo.create_token : !stablehlo.token
  %t = stablehlo.create_token : !stablehlo.token
  // CHECK-NEXT: %1:3 = stablehlo.optimization_barrier %arg0, %arg1, %0 : tensor<4xf32>, tensor<2xi32>, !stablehlo.token
  %b:3 = stablehlo.optimization_barrier %x, %y, %t : tensor<4xf32>, tensor<2xi32>, !stablehlo.token
  // CHECK-NEXT: %2 = stablehlo.optimization_barrier %1#0 : tensor<4xf32>
  %c = stablehlo.optimization_barrier %b#0 : tensor<4xf32>
  // CHECK-NEXT: stablehlo.optimization_barrier()
  stablehlo.optimization_barrier()
  // CHECK-NEXT: %3 = stablehlo.optimization_barrier {mpmd.note = 1 : i64} %2 : tensor<4xf32>
  %d = stablehlo.optimization_barrier {mpmd.note = 1} %c : tensor<4xf32>
  func.return %d, %b#2 : tensor<4xf32>, !stablehlo.token
}

// GENERIC-LABEL: sym_name = "barriers_and_tokens"
// GENERIC: "stablehlo.create_token"() : () -> !stablehlo.token
// GENERIC: "stablehlo.optimization_barrier"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<2xi32>, !stablehlo.token) -> (tensor<4xf32>, tensor<2xi32>, !stablehlo.token)
