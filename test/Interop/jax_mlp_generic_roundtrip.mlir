// (a) The MLP train step exactly as JAX prints it (tools/gen_jax_module.py)
// parses and prints back byte-identical in generic form. Nothing is stripped:
// the checked-in file ends with the newline that mpmd-opt also writes after
// the module.

// RUN: mpmd-opt --mlir-print-op-generic %S/jax_mlp_train_step.generic.mlir -o %t.mlir
// RUN: diff %S/jax_mlp_train_step.generic.mlir %t.mlir

// It parses into the registered ops, not into unknown ones: the pretty form
// uses their syntax.
// RUN: mpmd-opt %S/jax_mlp_train_step.generic.mlir | FileCheck %s
// CHECK: stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK: stablehlo.tanh %3 : tensor<8x32xf32>
// CHECK: stablehlo.reduce(%12 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NOT: "stablehlo.
