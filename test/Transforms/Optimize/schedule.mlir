// RUN: mpmd-opt %s -mpmd-schedule=schedule=explicit -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not mpmd-opt %s -split-input-file -mpmd-schedule="schedule=explicit order=m1=b#0|a#0" 2>&1 | FileCheck %s --check-prefix=OPTION

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
