// RUN: mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2" | FileCheck %s
// RUN: mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2" -mpmd-import | FileCheck %s --check-prefix=IMPORT
// RUN: mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2 assignment=d=m2 memory-limit=1000000" | FileCheck %s --check-prefix=FIXED
// RUN: not mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2 memory-limit=1500" 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: not mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2 assignment=a=m2,d=m1" 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not mpmd-opt %s -split-input-file -mpmd-auto-assign="meshes=m1,m2,m3,m4,m5" 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// RUN: not mpmd-opt %s -split-input-file -mpmd-auto-assign 2>&1 | FileCheck %s --check-prefix=NO-MESHES

// A chain a -> b -> c -> d whose last link costs 10x the others (one FLOP
// per result element: 100, 100, 100, and 500 + 500 for d's concatenate
// and add). By count, d shares a stage: 200 | 1100. The balanced split
// puts it alone: 300 | 1000.
// CHECK: module attributes {mpmd.assignment = {a = "m1:0", b = "m1:0", c = "m1:0", d = "m2:1"}}
// IMPORT-NOT: mpmd.assignment
// IMPORT: mpmd.fragment<mesh="m1", origin=["a"], stage=0>
// IMPORT: mpmd.fragment<mesh="m1", origin=["b"], stage=0>
// IMPORT: mpmd.fragment<mesh="m1", origin=["c"], stage=0>
// IMPORT: mpmd.fragment<mesh="m2", origin=["d"], stage=1>
// Hand-placed d stays on m2 and the rest follows the same balance.
// FIXED: mpmd.assignment = {a = "m1:0", b = "m1:0", c = "m1:0", d = "m2:1"}
// Memory per stage: parameters (%arg0, 400 bytes, read by a; %w, 2000
// bytes, read by d) and the activations kept for backwards (none here).
// Every split has d's 2000 bytes on a stage: the smallest limit.
// LIMIT: error: no split of the named computations into 2 stages fits the memory limit of 1500 bytes per stage; the smallest limit that fits is 2000 bytes
// ORDER: auto_assign.mlir:[[# @LINE + 19]]:8: error: the hand assignment makes a contiguous split impossible: 'a' (stage 1) comes before 'd' (stage 0) in the program
// TOO-MANY: error: cannot split 4 named computations into 5 stages: every stage needs at least one
// NO-MESHES: error: mpmd-auto-assign needs meshes=M1,M2,...
!t = tensor<100xf32>
!big = tensor<500xf32>
func.func @main(%arg0: !t, %w: !big) -> !big
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.named_computation<"a"> (%arg0) (%x: !t) {
    %r = stablehlo.negate %x : !t
    mpmd.return %r : !t
  } : (!t) -> !t
  %1 = mpmd.named_computation<"b"> (%0) (%x: !t) {
    %r = stablehlo.abs %x : !t
    mpmd.return %r : !t
  } : (!t) -> !t
  %2 = mpmd.named_computation<"c"> (%1) (%x: !t) {
    %r = stablehlo.exponential %x : !t
    mpmd.return %r : !t
  } : (!t) -> !t
  %3 = mpmd.named_computation<"d"> (%2, %w) (%x: !t, %v: !big) {
    %c = stablehlo.concatenate %x, %x, %x, %x, %x, dim = 0 : (!t, !t, !t, !t, !t) -> !big
    %p = stablehlo.add %c, %v : !big
    mpmd.return %p : !big
  } : (!t, !big) -> !big
  func.return %3 : !big
}
