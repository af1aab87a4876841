// Bad assignments are reported against the program they do not fit.
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m9" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1,f=m2" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1:x" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1,ghost=m2" 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1#pinned_host" 2>&1 | FileCheck %s --check-prefix=KIND_ON_COMPUTATION
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1#hbm" 2>&1 | FileCheck %s --check-prefix=BAD_KIND
// RUN: not mpmd-opt %s -mpmd-map-named-ops="assignment=f=m9#pinned_host" 2>&1 | FileCheck %s --check-prefix=UNKNOWN_WITH_KIND

// UNKNOWN: error: assignment of 'f' names mesh "m9", which is not in the topology (meshes: "m1", "m2")
// TWICE: error: 'f' is assigned twice (to "m1" and "m2"); keep one entry per name
// MALFORMED: for the --assignment option: invalid assignment entry 'f': expected NAME=MESH or NAME=MESH:STAGE
// STAGE: for the --assignment option: invalid stage in assignment entry 'f=m1:x': expected a non-negative integer
// UNUSED: warning: assignment entry 'ghost' matches no named_computation or named_tensor
// UNUSED: mpmd.fragment<mesh="m1", origin=["f"]>
// KIND_ON_COMPUTATION: error: 'mpmd.named_computation' op named_computation 'f' is assigned "m1#pinned_host": a memory kind says where a value lives, so only named_tensor takes one; assign 'f' to "m1"
// BAD_KIND: error: assignment of 'f' to "m1#hbm" names memory kind "hbm"; expected "device", "pinned_host" or "unpinned_host"
// UNKNOWN_WITH_KIND: error: assignment of 'f' names mesh "m9", which is not in the topology

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
