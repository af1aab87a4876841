// RUN: mpmd-opt %s -mpmd-schedule=schedule=explicit -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not mpmd-opt %s -split-input-file -mpmd-schedule="schedule=explicit order=m1=b#0|a#0" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: mpmd-opt %s -split-input-file -mpmd-schedule=schedule=gpipe | FileCheck %s --check-prefix=GPIPE

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// An explicit per-mesh order from the mpmd.schedule attribute: b runs
// first although a comes first in the program.
// CHECK-LABEL: func.func @explicit
// CHECK: origin=["b"]
// CHECK: origin=["a"]
// OPTION-LABEL: func.func @explicit
// OPTION: origin=["b"]
// OPTION: origin=["a"]
func.func @explicit(%arg0: !m1) -> (!m1, !m1) attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["b#0", "a#0"]}} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["b"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0, %1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{the schedule of mesh "m1" names 'c#0', which is not a fragment there; fragments on that mesh: 'a#0', 'b#0'}}
func.func @unknown_fragment(%arg0: !m1) -> (!m1, !m1) attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["c#0", "a#0"]}} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["b"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0, %1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{the schedule of mesh "m1" does not place fragment 'b#0'; list every fragment of the mesh}}
func.func @missing_fragment(%arg0: !m1) -> (!m1, !m1) attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["a#0"]}} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["b"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0, %1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{the schedule of mesh "m1" lists 'a#0' twice}}
func.func @twice(%arg0: !m1) -> !m1 attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["a#0", "a#0"]}} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// The order contradicts the data: b reads a's result.
func.func @against_data(%arg0: !m1) -> !m1 attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["b#0", "a#0"]}} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  // expected-error @+1 {{pipeline schedule explicit contradicts the data flow; cycle: 'b#0' on m1 -(schedule)-> 'a#0' on m1 -> 'b#0' on m1}}
  %1 = mpmd.fragment<mesh="m1", origin=["b"]> (%0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %1 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{the explicit schedule needs a 'mpmd.schedule' attribute on @no_table}}
func.func @no_table(%arg0: !m1) -> !m1 attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Only the loop's microbatches (fragments with call counters) are
// scheduled; `init`, outside the loop, keeps its place. GPipe puts both
// forwards before the backwards.
// CHECK-LABEL: func.func @one_loop
// GPIPE-LABEL: func.func @one_loop
// GPIPE: origin=["init"]
// GPIPE: origin=["f"]> (%{{.*}}) {call_counter = 0
// GPIPE: origin=["f"]> (%{{.*}}) {call_counter = 1
// GPIPE: origin=["f"(1)]> (%{{.*}}) {call_counter = 0
// GPIPE: origin=["f"(1)]> (%{{.*}}) {call_counter = 1
// CHECK: origin=["init"]
// CHECK: origin=["f"]> (%{{.*}}) {call_counter = 0
// CHECK: origin=["f"]> (%{{.*}}) {call_counter = 1
// CHECK: origin=["f"(1)]> (%{{.*}}) {call_counter = 0
// CHECK: origin=["f"(1)]> (%{{.*}}) {call_counter = 1
func.func @one_loop(%arg0: !m1) -> (!m1, !m1) attributes {
    topology = #mpmd.topology<<"m1" : <["x"=1]>>>,
    mpmd.schedule = {m1 = ["init", "f#0", "f#1", "f(1)#0", "f(1)#1"]}} {
  %i = mpmd.fragment<mesh="m1", origin=["init"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%i) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=["f"]> (%i) {call_counter = 1 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %3 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%2) {call_counter = 1 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %1, %3 : !m1, !m1
}
