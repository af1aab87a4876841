// Generic text the dialect does not model passes through byte-identical:
// unknown stablehlo ops, `#stablehlo...` attributes and `!stablehlo...` types
// kept as text (including text under a modelled mnemonic that does not parse,
// such as a new enum value or field), and unregistered chlo/mhlo ops. The
// input is in the canonical generic form MLIR prints; it equals what
// `mlir-opt --allow-unregistered-dialect` prints with no stablehlo dialect.

// RUN: mpmd-opt --mlir-print-op-generic %S/Inputs/opaque.generic.mlir -o %t.generic.mlir
// RUN: diff %S/Inputs/opaque.generic.mlir %t.generic.mlir

// The pretty form is lossless too: modelled ops print pretty, others stay
// generic, and parsing it back gives the same generic text.
// RUN: mpmd-opt %S/Inputs/opaque.generic.mlir -o %t.pretty.mlir
// RUN: FileCheck %s --input-file=%t.pretty.mlir
// RUN: mpmd-opt --mlir-print-op-generic %t.pretty.mlir -o %t.roundtrip.mlir
// RUN: diff %S/Inputs/opaque.generic.mlir %t.roundtrip.mlir

// CHECK-LABEL: func.func @opaque(
// CHECK-SAME: %arg0: tensor<?x4xf32, #stablehlo.bounds<8, ?>>, %arg1: !stablehlo.token
// CHECK: "stablehlo.after_all"(%arg1, %arg1)
// custom_call is modelled: it prints pretty, with its opaque attributes.
// CHECK: stablehlo.custom_call @my_target(%arg2) {api_version = 4 : i32
// CHECK-SAME: #stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>
// CHECK: "stablehlo.rng_bit_generator"(%arg2) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}>
// CHECK: %4 = stablehlo.sine %arg2 {result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
// CHECK: "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
// CHECK-NEXT: ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
// CHECK-NEXT: stablehlo.add %arg4, %arg5 : tensor<f32>
// CHECK-NEXT: stablehlo.return %12 : tensor<f32>
// CHECK: comparison_direction = #stablehlo<comparison_direction BOGUS>
// CHECK-SAME: dims = #stablehlo.dot<lhs_ragged_dimensions = [1]>
// CHECK: !stablehlo.future<4, "x">
// CHECK: "chlo.erf"(%arg2)
// CHECK: "mhlo.copy"(%arg2) {mhlo.sharding = #mhlo.sharding<"{devices=[2]<=[2]}">
// CHECK: stablehlo.compare GT, %arg3, %arg3, FLOAT :
