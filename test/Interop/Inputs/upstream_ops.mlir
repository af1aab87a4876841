func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>, %d: tensor<?xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.subtract %a, %b : tensor<4xf32>
  %2 = stablehlo.multiply %a, %b : tensor<4xf32>
  %3 = stablehlo.divide %a, %b : tensor<4xf32>
  %4 = stablehlo.maximum %a, %b : tensor<4xf32>
  %5 = stablehlo.minimum %a, %b : tensor<4xf32>
  %6 = stablehlo.power %a, %b : tensor<4xf32>
  %7 = stablehlo.remainder %a, %b : tensor<4xf32>
  %8 = stablehlo.and %p, %p : tensor<4xi1>
  %9 = stablehlo.or %i, %i : tensor<4xi32>
  %10 = stablehlo.xor %i, %i : tensor<4xi32>
  %11 = stablehlo.atan2 %a, %b : tensor<4xf32>
  %12 = stablehlo.shift_left %i, %i : tensor<4xi32>
  %13 = stablehlo.shift_right_arithmetic %i, %i : tensor<4xi32>
  %14 = stablehlo.shift_right_logical %i, %i : tensor<4xi32>
  %15 = stablehlo.add %d, %a : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  %16 = stablehlo.add %a, %b {mpmd.note = "kept"} : tensor<4xf32>
  %17 = stablehlo.negate %a : tensor<4xf32>
  %18 = stablehlo.abs %a : tensor<4xf32>
  %19 = stablehlo.exponential %a : tensor<4xf32>
  %20 = stablehlo.log %a : tensor<4xf32>
  %21 = stablehlo.tanh %a : tensor<4xf32>
  %22 = stablehlo.sqrt %a : tensor<4xf32>
  %23 = stablehlo.rsqrt %a : tensor<4xf32>
  %24 = stablehlo.logistic %a : tensor<4xf32>
  %25 = stablehlo.sine %a : tensor<4xf32>
  %26 = stablehlo.cosine %a : tensor<4xf32>
  %27 = stablehlo.floor %a : tensor<4xf32>
  %28 = stablehlo.ceil %a : tensor<4xf32>
  %29 = stablehlo.sign %a : tensor<4xf32>
  %30 = stablehlo.not %p : tensor<4xi1>
  %31 = stablehlo.exponential_minus_one %a : tensor<4xf32>
  %32 = stablehlo.log_plus_one %a : tensor<4xf32>
  %33 = stablehlo.tan %a : tensor<4xf32>
  %34 = stablehlo.cbrt %a : tensor<4xf32>
  %35 = stablehlo.round_nearest_afz %a : tensor<4xf32>
  %36 = stablehlo.round_nearest_even %a : tensor<4xf32>
  %37 = stablehlo.popcnt %i : tensor<4xi32>
  %38 = stablehlo.count_leading_zeros %i : tensor<4xi32>
  %39 = stablehlo.is_finite %a : (tensor<4xf32>) -> tensor<4xi1>
  %40 = stablehlo.abs %d : (tensor<?xf32>) -> tensor<4xf32>
  %41 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<4xf32>
  %42 = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xf32>
  %43 = stablehlo.convert %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @constants() -> (tensor<f32>, tensor<2xi32>, tensor<i1>, tensor<complex<f32>>, tensor<2x2xbf16>) {
  %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %1 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %2 = stablehlo.constant dense<true> : tensor<i1>
  %3 = stablehlo.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>
  %4 = stablehlo.constant {mpmd.note = 1 : i64} dense<0.000000e+00> : tensor<2x2xbf16>
  %5 = stablehlo.constant() <{value = dense<7> : tensor<2xi32>}> : () -> tensor<2xi32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<2xi32>, tensor<i1>, tensor<complex<f32>>, tensor<2x2xbf16>
}

func.func @compare_select(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %s: tensor<i1>, %d: tensor<?xf32>) -> tensor<4xf32> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.compare EQ, %i, %i, SIGNED {mpmd.note = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = stablehlo.compare NE, %i, %i, UNSIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %4 = stablehlo.compare GE, %a, %b, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %5 = stablehlo.compare LE, %a, %b, NOTYPE : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %6 = stablehlo.select %0, %a, %b : tensor<4xi1>, tensor<4xf32>
  %7 = stablehlo.select %s, %a, %b : tensor<i1>, tensor<4xf32>
  %8 = stablehlo.select %0, %d, %b : (tensor<4xi1>, tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %6 : tensor<4xf32>
}

func.func @shapes(%a: tensor<4xf32>, %m: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<3x2xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %2 = stablehlo.reshape %m : (tensor<2x3xf32>) -> tensor<6xf32>
  %3 = stablehlo.transpose %m, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %4 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %5 = stablehlo.concatenate %m, %m, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %6 = stablehlo.concatenate %a, dim = 0 : (tensor<4xf32>) -> tensor<4xf32>
  %7 = stablehlo.slice %m [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %8 = stablehlo.slice %m [1:2, 0:3] {mpmd.note = 1 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %9 = stablehlo.transpose %m, dims = [1, 0] {mpmd.note = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %3 : tensor<3x2xf32>
}

func.func @dynamic_slices(%x: tensor<4x4xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>, %j: tensor<i32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>
  %1 = stablehlo.dynamic_slice %x, %j, %j, sizes = [1, 4] {mpmd.note = 1 : i64} : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  %2 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  %3 = stablehlo.dynamic_update_slice %x, %u, %j, %j {mpmd.note = 1 : i64} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
  return %0 : tensor<2x2xf32>
}

func.func @dots(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<2x3x4xf32>, %c: tensor<2x4x5xf32>, %v: tensor<3xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.dot_general %b, %c, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %2 = stablehlo.dot_general %v, %v, contracting_dims = [] x [] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %3 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [HIGHEST, HIGH] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %4 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %5 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %6 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {mpmd.note = 1 : i64} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

func.func @reduces(%x: tensor<8x4xf32>, %i: tensor<8x4xi32>, %zf: tensor<f32>, %zi: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.reduce(%x init: %zf) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reduce(%x init: %zf) applies stablehlo.maximum across dimensions = [0, 1] {mpmd.note = 1 : i64} : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.reduce(%x init: %zf) across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
   reducer(%e: tensor<f32>, %acc: tensor<f32>)  {
    %r = stablehlo.subtract %acc, %e : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }
  %3:2 = stablehlo.reduce(%x init: %zf), (%i init: %zi) across dimensions = [0] : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%e0: tensor<f32>, %a0: tensor<f32>) (%e1: tensor<i32>, %a1: tensor<i32>)  {
    %r0 = stablehlo.add %e0, %a0 : tensor<f32>
    %r1 = stablehlo.add %e1, %a1 : tensor<i32>
    stablehlo.return %r0, %r1 : tensor<f32>, tensor<i32>
  }
  return %0 : tensor<4xf32>
}

func.func @empty_return(%i: tensor<i32>) {
  "stablehlo.case"(%i) ({
    stablehlo.return
  }) : (tensor<i32>) -> ()
  return
}

func.func @default_accuracy(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %a {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<4xf32>
  %1 = stablehlo.cosine %a {result_accuracy = #stablehlo.result_accuracy<ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
