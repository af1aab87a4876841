// Regenerating the labelled MLP with JAX and the mpmd front end
// (named_computation) gives the checked-in input of the jax_mlp_import
// tests, so it cannot go stale unnoticed, and the fresh module imports.

// RUN: %python %mpmd_src_root/tools/gen_labelled_mlp.py > %t.mlir
// RUN: diff %S/Inputs/labelled_mlp_train_step.generic.mlir %t.mlir
// RUN: mpmd-opt %t.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2" | FileCheck %s

// CHECK: mpmd.fragment<mesh="m1", origin=["layer1"], stage=0>
// CHECK: mpmd.fragment<mesh="m2", origin=["layer2"], stage=1>
// CHECK: mpmd.fragment<mesh="m3", origin=["layer3"], stage=2>
// CHECK: mpmd.fragment<mesh="m3", origin=["layer3"(1)], stage=2>
// CHECK: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1>
// CHECK: mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0>
