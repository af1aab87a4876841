// custom_call (without default-valued properties, which upstream leaves
// out of its pretty form and this dialect keeps), while,
// optimization_barrier, create_token and the sdy ops print byte-identical to
// upstream StableHLO's and Shardy's printers (jaxlib's), pretty and generic.

// RUN: mpmd-opt %s -o %t.ours.mlir
// RUN: %python %mpmd_src_root/test/Interop/Inputs/jaxlib_print.py %s > %t.upstream.mlir
// RUN: diff %t.upstream.mlir %t.ours.mlir
// RUN: mpmd-opt --mlir-print-op-generic %s -o %t.ours.generic.mlir
// RUN: %python %mpmd_src_root/test/Interop/Inputs/jaxlib_print.py %s --generic > %t.upstream.generic.mlir
// RUN: diff %t.upstream.generic.mlir %t.ours.generic.mlir

sdy.mesh @grid = <["p"=4, "q"=2]>

func.func @calls(%a: tensor<2x3xf32>, %b: tensor<3xi32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a, %b) : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  %1 = stablehlo.custom_call @my_kernel(%0) {api_version = 2 : i32, backend_config = "bytes", has_side_effect = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = stablehlo.custom_call @ffi(%1) {api_version = 4 : i32, backend_config = {scale = 2.0 : f32}, called_computations = [@calls], operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  stablehlo.custom_call @"a target"() {mhlo.frontend_attributes = {tag = "x"}} : () -> ()
  %3:2 = stablehlo.custom_call @split(%2) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %3#1 : tensor<2x3xf32>
}

func.func @loops(%x: tensor<4xf32>, %t: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %tok = %t) : tensor<i64>, tensor<4xf32>, !stablehlo.token
   cond {
    %p = stablehlo.compare LT, %i, %one, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    %b:2 = stablehlo.optimization_barrier %v, %tok : tensor<4xf32>, !stablehlo.token
    stablehlo.return %n, %b#0, %b#1 : tensor<i64>, tensor<4xf32>, !stablehlo.token
  }
  %s = stablehlo.while(%v = %r#1) : tensor<4xf32> attributes {mpmd.note = "inner"}
   cond {
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  } do {
    stablehlo.return %v : tensor<4xf32>
  }
  %new = stablehlo.create_token : !stablehlo.token
  %c = stablehlo.optimization_barrier {mpmd.note = 1} %s : tensor<4xf32>
  return %c, %new : tensor<4xf32>, !stablehlo.token
}

func.func @sharding(%x: tensor<16x6xf32>, %y: tensor<16x6xf32>) -> (tensor<16x6xf32>, tensor<16x6xf32>) {
  %0 = sdy.sharding_constraint %x <@grid, [{"p", ?}, {?}], replicated={"q"}> : tensor<16x6xf32>
  sdy.sharding_group %0 group_id=7 : tensor<16x6xf32>
  %1 = sdy.data_flow_edge %y sharding=<@grid, [{"p"}, {"q"}]> : tensor<16x6xf32>
  %2 = sdy.manual_computation(%0, %1) in_shardings=[<@grid, [{"p"}, {}]>, <@grid, [{"p"}, {}]>] out_shardings=[<@grid, [{"p"}, {}]>] manual_axes={"p"} (%l: tensor<4x6xf32>, %m: tensor<4x6xf32>) {
    %s = stablehlo.add %l, %m : tensor<4x6xf32>
    sdy.return %s : tensor<4x6xf32>
  } {mpmd.note = "m"} : (tensor<16x6xf32>, tensor<16x6xf32>) -> tensor<16x6xf32>
  return %2, %1 : tensor<16x6xf32>, tensor<16x6xf32>
}
