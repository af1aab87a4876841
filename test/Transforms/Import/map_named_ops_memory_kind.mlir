// RUN: mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1,g=m1,kept=m1#pinned_host" | FileCheck %s
// RUN: mpmd-opt %s -mpmd-import="assignment=f=m1,g=m1,kept=m1#pinned_host input-assignment=0=m1 output-assignment=0=m1" -mpmd-export | FileCheck %s --check-prefix=EXPORT

!t = tensor<4xf32>

// A named tensor assigned "m1#pinned_host" is kept in pinned host memory
// of m1 and moved back to device memory for its users. After import and
// export, the value leaves right after f makes it and comes back right
// before g, the first program that reads it (no user fragment of m1 runs
// in between to overlap the copy with).
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = mpmd.assign {origin = "kept"} %{{.*}} : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[H:.*]] = mpmd.transfer %[[A]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
// CHECK-NEXT: %[[D:.*]] = mpmd.transfer %[[H]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: %[[U:.*]] = mpmd.unassign {origin = "kept"} %[[D]]
// EXPORT-LABEL: func.func @main
// EXPORT: %[[F:.*]] = mpmd.fragment_call<mesh="m1", origin=["f"]>
// EXPORT-NEXT: %[[H:.*]] = mpmd.transfer %[[F]] {{.*}}memory_kind="pinned_host">
// EXPORT-NEXT: %[[D:.*]] = mpmd.transfer %[[H]]
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["g"]> @{{.*}}(%[[D]])
func.func @main(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: !t) {
    %1 = stablehlo.tanh %x : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  %2 = mpmd.named_tensor %0 name="kept" : !t
  %3 = mpmd.named_computation<"g"> (%2) (%x: !t) {
    %4 = stablehlo.negate %x : !t
    mpmd.return %4 : !t
  } : (!t) -> !t
  func.return %3 : !t
}
