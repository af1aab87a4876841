// RUN: mpmd-opt %s -mpmd-fold-constant-indices -split-input-file | FileCheck %s
// RUN: mpmd-opt %s -split-input-file --mpmd-import="assignment=f=m1" | FileCheck %s --check-prefix=IMPORT

// What JAX emits for `xs[i]` inside a loop body, once the loop is unrolled
// and i is a constant: the index is converted, wrapped when negative, and
// the slice is dynamic. Everything folds to one static slice.
// CHECK-LABEL: func.func @jax_index
// CHECK-NEXT: %[[S:.*]] = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<8x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %[[S]]
// CHECK-NEXT: return %[[R]]
func.func @jax_index(%xs: tensor<8x4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %i = stablehlo.constant dense<2> : tensor<ui32>
  %0 = stablehlo.convert %i : (tensor<ui32>) -> tensor<i32>
  %len = stablehlo.constant dense<8> : tensor<i32>
  %1 = stablehlo.add %0, %len : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %neg = stablehlo.compare LT, %0, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %2 = stablehlo.select %neg, %1, %0 : tensor<i1>, tensor<i32>
  %3 = "stablehlo.dynamic_slice"(%xs, %2, %zero) <{slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  %4 = stablehlo.reshape %3 : (tensor<1x4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// A negative index wraps; starts past the end are clamped as dynamic_slice
// clamps them (9 - 2 = 7 at most for a slice of 2 out of 8); an unsigned
// compare reads 0xFFFFFFFF as large.
// CHECK-LABEL: func.func @wrap_and_clamp
// CHECK-DAG: stablehlo.slice %arg0 [7:8] : (tensor<8xf32>) -> tensor<1xf32>
// CHECK-DAG: stablehlo.slice %arg0 [6:8] : (tensor<8xf32>) -> tensor<2xf32>
// CHECK-DAG: %[[T:.*]] = stablehlo.constant dense<true> : tensor<i1>
// CHECK-NOT: dynamic_slice
// CHECK: return {{.*}}, {{.*}}, %[[T]]
func.func @wrap_and_clamp(%xs: tensor<8xf32>) -> (tensor<1xf32>, tensor<2xf32>, tensor<i1>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %minus1 = stablehlo.constant dense<-1> : tensor<i32>
  %len = stablehlo.constant dense<8> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %neg = stablehlo.compare LT, %minus1, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %wrapped = stablehlo.add %minus1, %len : tensor<i32>
  %idx = stablehlo.select %neg, %wrapped, %minus1 : tensor<i1>, tensor<i32>
  %a = "stablehlo.dynamic_slice"(%xs, %idx) <{slice_sizes = array<i64: 1>}> : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
  %far = stablehlo.constant dense<9> : tensor<i32>
  %b = "stablehlo.dynamic_slice"(%xs, %far) <{slice_sizes = array<i64: 2>}> : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>
  %big = stablehlo.constant dense<4294967295> : tensor<ui32>
  %one = stablehlo.constant dense<1> : tensor<ui32>
  %gt = stablehlo.compare GT, %big, %one, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  func.return %a, %b, %gt : tensor<1xf32>, tensor<2xf32>, tensor<i1>
}

// -----

// Nothing to fold: a start that is not a constant, float arithmetic, and
// tensors of rank 1 stay as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK: stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<2xi32>
func.func @left_alone(%xs: tensor<8xf32>, %i: tensor<i32>) -> (tensor<1xf32>, tensor<f32>, tensor<2xi32>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %a = "stablehlo.dynamic_slice"(%xs, %i) <{slice_sizes = array<i64: 1>}> : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
  %f = stablehlo.constant dense<1.0> : tensor<f32>
  %g = stablehlo.add %f, %f : tensor<f32>
  %v = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %w = stablehlo.add %v, %v : tensor<2xi32>
  func.return %a, %g, %w : tensor<1xf32>, tensor<f32>, tensor<2xi32>
}

// -----

// Through the import pipeline: a loop reading its microbatch by index reads
// it, in each unrolled iteration, with a static slice of its own.
// IMPORT-LABEL: func.func @loop_reads_microbatch
// IMPORT: stablehlo.slice %{{.*}} [0:1, 0:4]
// IMPORT: stablehlo.slice %{{.*}} [1:2, 0:4]
// IMPORT: stablehlo.slice %{{.*}} [2:3, 0:4]
// IMPORT-NOT: dynamic_slice
!t = tensor<4xf32>
func.func @loop_reads_microbatch(%xs: tensor<3x4xf32>, %acc: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.for (%acc) {iterations = 3 : ui32, unroll_factor = 1 : ui32} (%carry: !t, %index: tensor<ui32>) {
    %i = stablehlo.convert %index : (tensor<ui32>) -> tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %row = "stablehlo.dynamic_slice"(%xs, %i, %zero) <{slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %x = stablehlo.reshape %row : (tensor<1x4xf32>) -> !t
    %1 = mpmd.named_computation<"f"> (%carry, %x) (%c: !t, %y: !t) {
      %2 = stablehlo.add %c, %y : !t
      mpmd.return %2 : !t
    } : (!t, !t) -> !t
    mpmd.return %1 : !t
  } : !t
  func.return %0 : !t
}
