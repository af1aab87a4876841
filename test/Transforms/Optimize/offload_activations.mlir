// RUN: mpmd-opt %s -mpmd-offload-activations -mpmd-cleanup -split-input-file -verify-diagnostics | FileCheck %s
// RUN: mpmd-opt %s -mpmd-optimize="offload-activations=true" -mpmd-export -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=EXPORT

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Three microbatches' forwards f run on m1 before microbatch 0's backward
// f(1), which reads f#0's residual (the pre-activation). The residual goes
// to pinned host memory right after f#0 and comes back for f(1)#0, which
// reads what came back: written right before it here, issued before f#2
// (the last m1 fragment before f(1)#0) after export. f#0's activation
// leaves for m2 and stays as it is.
// CHECK-LABEL: func.func @offload
// CHECK: %[[F0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32}
// CHECK: %[[HOST:.*]] = mpmd.transfer %[[F0]]#1 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">
// CHECK: mpmd.transfer %[[F0]]#0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2, %arg1) {call_counter = 1 : ui32}
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg3, %arg1) {call_counter = 2 : ui32}
// CHECK: %[[BACK:.*]] = mpmd.transfer %[[HOST]] : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%{{.*}}, %[[BACK]]) {call_counter = 0 : ui32}
// Only microbatch 0's backward runs here: the others' residuals stay.
// CHECK-NOT: pinned_host
// CHECK: return
// EXPORT-LABEL: func.func @offload
// EXPORT: %[[F0:.*]]:2 = mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg0, %arg1)
// EXPORT-NEXT: %[[HOST:.*]] = mpmd.transfer %[[F0]]#1 {{.*}}memory_kind="pinned_host">
// EXPORT: mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg2, %arg1)
// EXPORT: %[[BACK:.*]] = mpmd.transfer %[[HOST]]
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg3, %arg1)
// EXPORT: mpmd.fragment_call<mesh="m1", origin=["f"(1)]> @{{.*}}(%{{.*}}, %[[BACK]])
func.func @offload(%arg0: !m1, %arg1: !m1, %arg2: !m1, %arg3: !m1) -> (!m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0, %arg1) {call_counter = 0 : ui32} (%x: !t, %w: !t) {
    %m = stablehlo.multiply %x, %w : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a, %m : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %a0 = mpmd.transfer %f0#0 : (!m1) -> !m2
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2, %arg1) {call_counter = 1 : ui32} (%x: !t, %w: !t) {
    %m = stablehlo.multiply %x, %w : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a, %m : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %a1 = mpmd.transfer %f1#0 : (!m1) -> !m2
  %g0 = mpmd.fragment<mesh="m2", origin=["g"(1)], stage=1> (%a0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m2) -> !m2
  %d0 = mpmd.transfer %g0 : (!m2) -> !m1
  %f2:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg3, %arg1) {call_counter = 2 : ui32} (%x: !t, %w: !t) {
    %m = stablehlo.multiply %x, %w : !t
    %a = stablehlo.tanh %m : !t
    mpmd.return %a, %m : !t, !t
  } : (!m1, !m1) -> (!m1, !m1)
  %a2 = mpmd.transfer %f2#0 : (!m1) -> !m2
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%d0, %f0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %c = stablehlo.cosine %r : !t
    %p = stablehlo.multiply %d, %c : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b0, %a1, %a2 : !m1, !m2, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Only the microbatch's own work (g) runs on m1 between the forward and its
// backward: the residual is not kept across other work and stays on the
// device.
// CHECK-LABEL: func.func @adjacent
// CHECK-NOT: pinned_host
// EXPORT-LABEL: func.func @adjacent
// EXPORT-NOT: pinned_host
func.func @adjacent(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %g = mpmd.fragment<mesh="m1", origin=["g"], stage=0> (%f#0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %b = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%g, %f#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// f#0's pre-activation is also returned: it stays alive on the device to
// the end, so moving a copy to the host would save nothing; its activation
// goes (f#1 and f#2 run while it is away).
// CHECK-LABEL: func.func @read_late
// CHECK: %[[F0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"]
// CHECK-NEXT: tanh
// CHECK-NEXT: mpmd.return
// CHECK-NEXT: }
// CHECK-NEXT: %[[HOST:.*]] = mpmd.transfer %[[F0]]#0 {{.*}}memory_kind="pinned_host">
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2) {call_counter = 2 : ui32}
// CHECK: %[[BACK:.*]] = mpmd.transfer %[[HOST]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%[[BACK]], %[[F0]]#1)
// CHECK-NOT: pinned_host
// CHECK: return
// EXPORT-LABEL: func.func @read_late
// EXPORT: %[[F0:.*]]:2 = mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg0)
// EXPORT-NEXT: %[[HOST:.*]] = mpmd.transfer %[[F0]]#0 {{.*}}memory_kind="pinned_host">
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg1)
// EXPORT-NEXT: %[[BACK:.*]] = mpmd.transfer %[[HOST]]
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg2)
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"(1)]> @{{.*}}(%[[BACK]], %[[F0]]#1)
func.func @read_late(%arg0: !m1, %arg1: !m1, %arg2: !m1) -> (!m1, !m1, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f2:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2) {call_counter = 2 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%f0#0, %f0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b0, %f1#0, %f2#0, %f0#1 : !m1, !m1, !m1, !m1
}


// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// One other microbatch runs between f#0 and f(1)#0, but the residual would
// come back before it (f#1 is where it is brought back): it stays.
// CHECK-LABEL: func.func @back_at_once
// CHECK-NOT: pinned_host
// EXPORT-LABEL: func.func @back_at_once
// EXPORT-NOT: pinned_host
func.func @back_at_once(%arg0: !m1, %arg1: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%f0#0, %f0#1) {call_counter = 0 : ui32} (%d: !t, %r: !t) {
    %p = stablehlo.multiply %d, %r : !t
    mpmd.return %p : !t
  } : (!m1, !m1) -> !m1
  func.return %b0, %f1#0 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// An inferred fragment (no origin: e.g. gradient accumulation) right before
// the backward does not count as the fragment the copy overlaps: export
// merges it into a neighbour, possibly the backward. The residual comes
// back before f#2, the last user fragment.
// CHECK-LABEL: func.func @inferred_in_between
// CHECK: %[[HOST:.*]] = mpmd.transfer %{{.*}}#1 {{.*}}memory_kind="pinned_host">
// CHECK: mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2) {call_counter = 2 : ui32}
// CHECK: mpmd.fragment<mesh="m1", origin=[]>
// CHECK: %[[BACK:.*]] = mpmd.transfer %[[HOST]]
// CHECK-NEXT: mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%[[BACK]])
// EXPORT-LABEL: func.func @inferred_in_between
// EXPORT: %[[BACK:.*]] = mpmd.transfer %{{.*}} : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind="pinned_host">)
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @{{.*}}(%arg2,
// EXPORT-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"(1)]> @{{.*}}(%[[BACK]])
func.func @inferred_in_between(%arg0: !m1, %arg1: !m1, %arg2: !m1) -> (!m1, !m1, !m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f0:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f1:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg1) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %f2:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg2) {call_counter = 2 : ui32} (%x: !t) {
    %a = stablehlo.tanh %x : !t
    mpmd.return %a, %x : !t, !t
  } : (!m1) -> (!m1, !m1)
  %sum = mpmd.fragment<mesh="m1", origin=[]> (%f1#0, %f2#0) (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%f0#1) {call_counter = 0 : ui32} (%r: !t) {
    %p = stablehlo.cosine %r : !t
    mpmd.return %p : !t
  } : (!m1) -> !m1
  func.return %b0, %sum, %f0#0, %f1#1 : !m1, !m1, !m1, !m1
}
