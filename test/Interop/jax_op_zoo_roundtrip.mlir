// A module with many ops the dialect does not model (while, case, sort,
// scatter, convolution, FFT, LAPACK custom calls, collectives under
// shard_map, Shardy meshes and constraints, CHLO ops) round-trips
// byte-identical in generic form, and through the pretty form up to the
// empty `arg_attrs`/`res_attrs` lists of func.func (see
// jax_mlp_pretty_roundtrip.mlir).

// RUN: mpmd-opt --mlir-print-op-generic %S/jax_op_zoo.generic.mlir -o %t.mlir
// RUN: diff %S/jax_op_zoo.generic.mlir %t.mlir

// RUN: %python %mpmd_src_root/tools/gen_jax_module.py --module=ops > %t.regenerated.mlir
// RUN: diff %S/jax_op_zoo.generic.mlir %t.regenerated.mlir

// RUN: mpmd-opt %S/jax_op_zoo.generic.mlir -o %t.pretty.mlir
// RUN: mpmd-opt --mlir-print-op-generic %t.pretty.mlir -o %t.generic.mlir
// RUN: sed -E 's/(arg|res)_attrs = \[\{\}(, \{\})*\], //g' %S/jax_op_zoo.generic.mlir > %t.expected.mlir
// RUN: diff %t.expected.mlir %t.generic.mlir
