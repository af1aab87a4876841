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
