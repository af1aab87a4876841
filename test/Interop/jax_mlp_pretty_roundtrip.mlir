// (c) The MLP module printed in pretty form is byte-identical to what
// upstream StableHLO (jaxlib) prints for it; parsing that pretty form and
// printing it generic again gives the original generic text.
//
// One difference is not ours and is stripped from the expected text: JAX
// writes `arg_attrs = [{}, ...]` (every argument without attributes) on
// `func.func`; func's pretty syntax has no place for empty argument
// attributes and its parser does not recreate them, so the list vanishes on
// any pretty round trip (jaxlib's own does the same). Lists with content are
// kept and compared.

// RUN: mpmd-opt %S/jax_mlp_train_step.generic.mlir -o %t.pretty.mlir
// RUN: %python %S/Inputs/jaxlib_print.py %S/jax_mlp_train_step.generic.mlir > %t.upstream.mlir
// RUN: diff %t.upstream.mlir %t.pretty.mlir

// RUN: mpmd-opt --mlir-print-op-generic %t.pretty.mlir -o %t.generic.mlir
// RUN: sed -E 's/(arg|res)_attrs = \[\{\}(, \{\})*\], //g' %S/jax_mlp_train_step.generic.mlir > %t.expected.mlir
// RUN: diff %t.expected.mlir %t.generic.mlir
