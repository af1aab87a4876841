// RUN: mpmd-opt %s -split-input-file -mpmd-schedule -verify-diagnostics | grep 'mesh="m1"' | FileCheck %s --check-prefix=M1
// RUN: mpmd-opt %s -split-input-file -mpmd-schedule -verify-diagnostics | grep 'mesh="m2"' | FileCheck %s --check-prefix=M2
// RUN: mpmd-opt %s -split-input-file -mpmd-unroll-loops | FileCheck %s --check-prefix=UNROLL
// RUN: mpmd-opt %s -split-input-file -mpmd-schedule="schedule=1f1b" -verify-diagnostics | FileCheck %s --check-prefix=ONEMESH

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Two loops of two microbatches, in program order (F0 B0 F1 B1 each): loop
// "for0" on m1 with its own 1F1B, loop "for1" on m2 with its own GPipe,
// and no schedule for the function. On one stage 1F1B alternates (F0 B0
// F1 B1); GPipe runs every forward first (F0 F1 B0 B1).
// (Each mesh's fragments, in the new order.)
// M1: origin=["a"]> {{.*}}call_counter = 0
// M1-NEXT: origin=["a"(1)]> {{.*}}call_counter = 0
// M1-NEXT: origin=["a"]> {{.*}}call_counter = 1
// M1-NEXT: origin=["a"(1)]> {{.*}}call_counter = 1
// M2: origin=["b"]> {{.*}}call_counter = 0
// M2-NEXT: origin=["b"]> {{.*}}call_counter = 1
// M2-NEXT: origin=["b"(1)]> {{.*}}call_counter = 0
// M2-NEXT: origin=["b"(1)]> {{.*}}call_counter = 1
func.func @two_loops(%arg0: !m1, %arg1: !m2) -> (!m1, !m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %ga0 = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%a0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %a1 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %ga1 = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%a1) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "1f1b"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %b0 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg1) {call_counter = 0 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %gb0 = mpmd.fragment<mesh="m2", origin=["b"(1)]> (%b0) {call_counter = 0 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %b1 = mpmd.fragment<mesh="m2", origin=["b"]> (%arg1) {call_counter = 1 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %gb1 = mpmd.fragment<mesh="m2", origin=["b"(1)]> (%b1) {call_counter = 1 : ui32, mpmd.loop = "for1", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  func.return %ga0, %ga1, %gb0, %gb1 : !m1, !m1, !m2, !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A loop schedule that is not a built-in name is an error on its fragment.
func.func @bad_loop_schedule(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{has loop schedule 'zigzag'; a loop's own schedule is one of gpipe, 1f1b}}
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "zigzag"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %a0 : !m1
}

// -----

!t = tensor<4xf32>

// The loop's schedule goes to its iterations' named computations, with
// the loop's name; a loop without one leaves them unlabelled.
// UNROLL-LABEL: func.func @labelled_loop
// UNROLL: mpmd.named_computation<"f"> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"}
// UNROLL: mpmd.named_computation<"f"> (%{{.*}}) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"}
// UNROLL: mpmd.named_computation<"g"> (%{{.*}}) {call_counter = 0 : ui32}
// UNROLL-NOT: mpmd.loop
func.func @labelled_loop(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32, unroll_factor = 2 : ui32, mpmd.loop_schedule = "gpipe"} (%x: !t, %index: tensor<ui32>) {
    %1 = mpmd.named_computation<"f"> (%x) (%y: !t) {
      %2 = stablehlo.add %y, %y : !t
      mpmd.return %2 : !t
    } : (!t) -> !t
    mpmd.return %1 : !t
  } : !t
  %3 = mpmd.for (%0) {iterations = 1 : ui32, unroll_factor = 1 : ui32} (%x: !t, %index: tensor<ui32>) {
    %4 = mpmd.named_computation<"g"> (%x) (%y: !t) {
      mpmd.return %y : !t
    } : (!t) -> !t
    mpmd.return %4 : !t
  } : !t
  func.return %3 : !t
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Two loops on one mesh: "for0" with its own GPipe, then one ordered by the
// function's 1F1B, which reads the first. The mesh runs them in program
// order (the first loop's fragments first), whichever schedule orders each.
// UNROLL-LABEL: func.func @two_loops_one_mesh
// ONEMESH-LABEL: func.func @two_loops_one_mesh
// ONEMESH: origin=["f"]> {{.*}}call_counter = 0
// ONEMESH: origin=["f"]> {{.*}}call_counter = 1
// ONEMESH: origin=["g"]> {{.*}}call_counter = 0
func.func @two_loops_one_mesh(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %f0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %f1 = mpmd.fragment<mesh="m1", origin=["f"]> (%f0) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "gpipe"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %g0 = mpmd.fragment<mesh="m1", origin=["g"]> (%f1) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %g0 : !m1
}
