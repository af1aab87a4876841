// Every modelled op prints byte-identical to upstream StableHLO's printer
// (jaxlib's), in pretty and in generic form, for IR written in pretty syntax.

// RUN: mpmd-opt %S/Inputs/upstream_ops.mlir -o %t.ours.mlir
// RUN: %python %S/Inputs/jaxlib_print.py %S/Inputs/upstream_ops.mlir > %t.upstream.mlir
// RUN: diff %t.upstream.mlir %t.ours.mlir

// RUN: mpmd-opt --mlir-print-op-generic %S/Inputs/upstream_ops.mlir -o %t.ours.generic.mlir
// RUN: %python %S/Inputs/jaxlib_print.py %S/Inputs/upstream_ops.mlir --generic > %t.upstream.generic.mlir
// RUN: diff %t.upstream.generic.mlir %t.ours.generic.mlir

// RUN: mpmd-opt --mlir-print-op-generic %S/Inputs/upstream_generic_form.mlir -o %t.ours.attrs.mlir
// RUN: %python %S/Inputs/jaxlib_print.py %S/Inputs/upstream_generic_form.mlir --generic > %t.upstream.attrs.mlir
// RUN: diff %t.upstream.attrs.mlir %t.ours.attrs.mlir
// RUN: mpmd-opt %S/Inputs/upstream_generic_form.mlir -o %t.ours.attrs.pretty.mlir
// RUN: %python %S/Inputs/jaxlib_print.py %S/Inputs/upstream_generic_form.mlir > %t.upstream.attrs.pretty.mlir
// RUN: diff %t.upstream.attrs.pretty.mlir %t.ours.attrs.pretty.mlir
