// RUN: mpmd-opt %s -mpmd-merge-fragments="rules=f:f(1)" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: mpmd-opt %s -mpmd-merge-fragments="merge-last-stage=true" -split-input-file 2>&1 | FileCheck %s --check-prefix=LAST
// RUN: not mpmd-opt %s -mpmd-merge-fragments="rules=f" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --rules option: invalid merge rule 'f': expected LABEL:LABEL

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Per microbatch, f and f(1) become one program at f(1)'s position; the
// transfer that read f's result moves after the merged fragment. m1 holds
// the last stage, so merge-last-stage does the same.
// CHECK-LABEL: func.func @rule
// CHECK: %[[M0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f", "f"(1)], stage=0> (%arg0) {call_counter = 0 : ui32}
// CHECK-NEXT: stablehlo.negate
// CHECK-NEXT: stablehlo.abs
// CHECK: mpmd.transfer %[[M0]]#0
// CHECK: mpmd.fragment<mesh="m1", origin=["f", "f"(1)], stage=0> (%arg0) {call_counter = 1 : ui32}
// LAST-LABEL: func.func @rule
// LAST-COUNT-2: origin=["f", "f"(1)], stage=0
func.func @rule(%arg0: !m1) -> (!m1, !m2, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  %2 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %3 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %4 = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%3) {call_counter = 1 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %2, %1, %4 : !m1, !m2, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// f(1) needs g on another mesh, which needs f: merging f and f(1) would
// make the merged program wait for itself.
func.func @cycle(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  %2 = mpmd.fragment<mesh="m2", origin=["g"]> (%1) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %3 = mpmd.transfer %2 : (!m2) -> !m1
  // expected-error @+1 {{cannot be merged with 'f' (rule f:f(1)): it reads a value that depends on 'f' through mpmd.transfer between them}}
  %4 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%3) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %4 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-warning @+1 {{merge rule 'f:f(1)' matches no pair of fragments}}
func.func @unmatched(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["g"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Two loops with schedules of their own run f and f(1) on m1, each with
// call counter 0: each loop's pair merges, never f of one loop with f(1)
// of the other; merge-last-stage keeps the loops apart too.
// CHECK-LABEL: func.func @two_loops
// CHECK: origin=["f", "f"(1)]> {{.*}}mpmd.loop = "for0"
// CHECK: origin=["f", "f"(1)]> {{.*}}mpmd.loop = "for1"
// LAST-LABEL: func.func @two_loops
// LAST: origin=["f", "f"(1)]> {{.*}}mpmd.loop = "for0"
// LAST: origin=["f", "f"(1)]> {{.*}}mpmd.loop = "for1"
func.func @two_loops(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %3 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%1) {call_counter = 0 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %2, %3 : !m1, !m1
}
