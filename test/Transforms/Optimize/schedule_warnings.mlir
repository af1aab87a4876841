// Programs a built-in schedule cannot pipeline as the user meant.
// RUN: mpmd-opt %s -mpmd-schedule=schedule=1f1b -split-input-file -verify-diagnostics

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Microbatches unrolled by a Python loop without call counters: nothing
// for 1F1B to interleave.
// expected-warning @+1 {{pipeline schedule 1f1b has nothing to order: no fragment has a call counter (microbatch), so every mesh runs its fragments in program order, one microbatch after another, without pipelining. Trace the microbatches as one loop whose iterations carry call counters (from Python: mpmd.fori_loop, or mpmd.call(..., call_counter=i) in a Python loop)}}
func.func @no_call_counters(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["layer"], stage=0> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["layer"], stage=0> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0, %1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Without a schedule's fragments at all (no user fragment), nothing to say.
func.func @only_inferred(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=[]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %0 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// The first layer was given the later stage.
func.func @stages_against_data_flow(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["first"], stage=1> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  // expected-warning @+1 {{stage numbers run against the data flow: 'second' (stage 0) reads the forward of 'first' (stage 1); a stage feeds the stages after it, so give 'first' a stage before 0}}
  %2 = mpmd.fragment<mesh="m2", origin=["second"], stage=0> (%1) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  func.return %2 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Stages that follow the data: no warning.
func.func @stages_with_data_flow(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["first"], stage=0> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  %2 = mpmd.fragment<mesh="m2", origin=["second"], stage=1> (%1) {call_counter = 0 : ui32} (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  func.return %2 : !m2
}
