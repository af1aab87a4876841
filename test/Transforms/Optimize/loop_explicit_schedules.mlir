// A loop whose own schedule the client evaluates (`explicit:<id>`) is
// ordered by the order given for it (`MESH@LOOP=KEY|...`), next to a loop
// with a built-in schedule.
// RUN: mpmd-opt %s -split-input-file -mpmd-schedule="order=m1@for0=a#1|a#0|a(1)#1|a(1)#0" -verify-diagnostics | grep 'mesh="m1"' | FileCheck %s --check-prefix=M1
// RUN: mpmd-opt %s -split-input-file -mpmd-schedule="order=m1@for0=a#1|a#0|a(1)#1|a(1)#0" -verify-diagnostics | grep 'mesh="m2"' | FileCheck %s --check-prefix=M2
// RUN: not mpmd-opt %s -split-input-file -mpmd-schedule="order=m1@=a#0" 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: invalid schedule order entry 'm1@=a#0': expected MESH=KEY|KEY|... or MESH@LOOP=KEY|KEY|...

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Loop "for0" on m1 runs microbatch 1 first, as its table says; loop
// "for1" on m2 runs GPipe.
// M1: origin=["a"]> {{.*}}call_counter = 1
// M1-NEXT: origin=["a"]> {{.*}}call_counter = 0
// M1-NEXT: origin=["a"(1)]> {{.*}}call_counter = 1
// M1-NEXT: origin=["a"(1)]> {{.*}}call_counter = 0
// M2: origin=["b"]> {{.*}}call_counter = 0
// M2-NEXT: origin=["b"]> {{.*}}call_counter = 1
// M2-NEXT: origin=["b"(1)]> {{.*}}call_counter = 0
// M2-NEXT: origin=["b"(1)]> {{.*}}call_counter = 1
func.func @explicit_loop(%arg0: !m1, %arg1: !m2) -> (!m1, !m1, !m2, !m2)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "explicit:t1"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %ga0 = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%a0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "explicit:t1"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %a1 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "explicit:t1"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %ga1 = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%a1) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "explicit:t1"} (%x: !t) {
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

// Zero bubble on a loop without a backward does not fit it.
func.func @forward_only_zero_bubble(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{fragment 'a#0' on mesh "m1" is in loop 'for0', whose own schedule zero-bubble-h1 does not fit it: the loop runs forwards only}}
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "zero-bubble-h1"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %a1 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 1 : ui32, mpmd.loop = "for0", mpmd.loop_schedule = "zero-bubble-h1"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %a0, %a1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// An explicit loop without an order is an error on its first fragment.
func.func @no_order(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{fragment 'a#0' on mesh "m1" is in loop 'for7', whose schedule is explicit, but no order was given for it}}
  %a0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 0 : ui32, mpmd.loop = "for7", mpmd.loop_schedule = "explicit:c0"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %a1 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) {call_counter = 1 : ui32, mpmd.loop = "for7", mpmd.loop_schedule = "explicit:c0"} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %a0, %a1 : !m1, !m1
}
