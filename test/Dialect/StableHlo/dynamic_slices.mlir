// stablehlo.dynamic_slice and stablehlo.dynamic_update_slice in upstream's
// pretty syntax: written pretty or generic, they print pretty, and what is
// printed parses back to the same ops (pretty and generic).
// test/Interop/upstream_pretty_syntax.mlir compares them with jaxlib.

// RUN: mpmd-opt %s | FileCheck %s --strict-whitespace
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s --strict-whitespace
// RUN: mpmd-opt %s --mlir-print-op-generic | mpmd-opt | FileCheck %s --strict-whitespace
// RUN: mpmd-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

func.func @pretty(%x: tensor<4x4xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>, %j: tensor<i64>) -> (tensor<2x2xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
  %1 = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @pretty(
// CHECK-NEXT: %0 = stablehlo.dynamic_slice %arg0, %arg2, %arg3, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>{{$}}
// CHECK-NEXT: %1 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3 : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>{{$}}

// GENERIC-LABEL: sym_name = "pretty"
// GENERIC: = "stablehlo.dynamic_slice"(%[[X:.*]], %[[I:.*]], %[[J:.*]]) <{slice_sizes = array<i64: 2, 2>}> : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
// GENERIC-NEXT: = "stablehlo.dynamic_update_slice"(%[[X]], %{{.*}}, %[[I]], %[[J]]) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>

// What JAX prints (generic form, sizes in the properties, i32 starts),
// discardable attributes, a dynamic dimension.
func.func @generic(%x: tensor<8x4xf32>, %r: tensor<1x4xf32>, %i: tensor<i32>, %z: tensor<i32>, %d: tensor<?x4xf32>) -> (tensor<1x4xf32>, tensor<8x4xf32>, tensor<1x4xf32>, tensor<?x4xf32>) {
  %0 = "stablehlo.dynamic_slice"(%x, %i, %z) <{slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  %1 = "stablehlo.dynamic_update_slice"(%x, %r, %i, %z) {mpmd.note = 1 : i64} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
  %2 = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 4] {mpmd.note = "kept"} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  %3 = stablehlo.dynamic_update_slice %d, %r, %i, %z : (tensor<?x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<?x4xf32>
  return %0, %1, %2, %3 : tensor<1x4xf32>, tensor<8x4xf32>, tensor<1x4xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func.func @generic(
// CHECK-NEXT: %0 = stablehlo.dynamic_slice %arg0, %arg2, %arg3, sizes = [1, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>{{$}}
// CHECK-NEXT: %1 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3 {mpmd.note = 1 : i64} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>{{$}}
// CHECK-NEXT: %2 = stablehlo.dynamic_slice %arg0, %arg2, %arg3, sizes = [1, 4] {mpmd.note = "kept"} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>{{$}}
// CHECK-NEXT: %3 = stablehlo.dynamic_update_slice %arg4, %arg1, %arg2, %arg3 : (tensor<?x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<?x4xf32>{{$}}

// A scalar operand has no start index. Upstream prints that slice as
// `%arg0, , sizes = []`, which its own parser rejects; here it prints
// without the stray comma and parses back (the upstream text is accepted
// too).
func.func @scalar(%s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = "stablehlo.dynamic_slice"(%s) <{slice_sizes = array<i64>}> : (tensor<f32>) -> tensor<f32>
  %1 = stablehlo.dynamic_slice %s, , sizes = [] : (tensor<f32>) -> tensor<f32>
  %2 = stablehlo.dynamic_update_slice %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @scalar(
// CHECK-NEXT: %0 = stablehlo.dynamic_slice %arg0, sizes = [] : (tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %1 = stablehlo.dynamic_slice %arg0, sizes = [] : (tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT: %2 = stablehlo.dynamic_update_slice %arg0, %arg0 : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
