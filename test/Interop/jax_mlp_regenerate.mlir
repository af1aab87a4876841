// (b) Regenerating the MLP module with JAX gives the checked-in file (the
// generator is deterministic and the file is current), and the fresh output
// round-trips byte-identical as well.

// RUN: %python %mpmd_src_root/tools/gen_jax_module.py > %t.mlir
// RUN: diff %S/jax_mlp_train_step.generic.mlir %t.mlir
// RUN: mpmd-opt --mlir-print-op-generic %t.mlir -o %t.roundtrip.mlir
// RUN: diff %t.mlir %t.roundtrip.mlir
