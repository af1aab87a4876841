// RUN: mpmd-opt %s -mpmd-merge-inferred-fragments -split-input-file | FileCheck %s

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// An inferred fragment joins the earlier fragment of its mesh that produces
// its operand; the merged fragment keeps the user fragment's metadata.
// CHECK-LABEL: func.func @into_producer
func.func @into_producer(%arg0: !m1) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK-NEXT: %[[M:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 3 : ui32} (%[[X:.*]]: tensor<4xf32>) {
  // CHECK-NEXT:   %[[A:.*]] = stablehlo.add %[[X]], %[[X]]
  // CHECK-NEXT:   %[[B:.*]] = stablehlo.multiply %[[A]], %[[A]]
  // CHECK-NEXT:   mpmd.return %[[A]], %[[B]]
  // CHECK-NEXT: }
  // CHECK-NEXT: return %[[M]]#0, %[[M]]#1
  %0 = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%arg0) {call_counter = 3 : ui32} (%x: !t) {
    %a = stablehlo.add %x, %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=[]> (%0) (%x: !t) {
    %b = stablehlo.multiply %x, %x : !t
    mpmd.return %b : !t
  } : (!m1) -> !m1
  func.return %0, %1 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Its operand arrives (by transfer) after the earlier fragment of m2, so it
// joins the later one instead.
// CHECK-LABEL: func.func @into_consumer
func.func @into_consumer(%arg0: !m1, %arg1: !m2) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK: mpmd.fragment<mesh="m2", origin=["early"]>
  %0 = mpmd.fragment<mesh="m2", origin=["early"]> (%arg1) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %1 = mpmd.transfer %arg0 : (!m1) -> !m2
  %2 = mpmd.fragment<mesh="m2", origin=[]> (%1) (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m2) -> !m2
  // CHECK: %[[T:.*]] = mpmd.transfer
  // CHECK-NEXT: %[[L:.*]]:2 = mpmd.fragment<mesh="m2", origin=["late"]> (%[[T]], %[[E:.*]]) (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) {
  // CHECK-NEXT:   %[[N:.*]] = stablehlo.negate %[[X]]
  // CHECK-NEXT:   %[[S:.*]] = stablehlo.add %[[N]], %[[Y]]
  // CHECK-NEXT:   mpmd.return %[[N]], %[[S]]
  %3 = mpmd.fragment<mesh="m2", origin=["late"]> (%2, %0) (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m2, !m2) -> !m2
  func.return %3 : !m2
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// Neither move is possible: its operand comes after the earlier fragment of
// m1, and a transfer reads its result before the later one. It stays.
// CHECK-LABEL: func.func @stuck
func.func @stuck(%arg0: !m1, %arg1: !m2) -> (!m1, !m1)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.transfer %arg1 : (!m2) -> !m1
  // CHECK: mpmd.fragment<mesh="m1", origin=[]>
  %2 = mpmd.fragment<mesh="m1", origin=[]> (%1) (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %3 = mpmd.transfer %2 : (!m1) -> !m2
  %4 = mpmd.fragment<mesh="m2", origin=["b"]> (%3) (%x: !t) {
    mpmd.return %x : !t
  } : (!m2) -> !m2
  %5 = mpmd.transfer %4 : (!m2) -> !m1
  %6 = mpmd.fragment<mesh="m1", origin=["c"]> (%5, %2) (%x: !t, %y: !t) {
    mpmd.return %x : !t
  } : (!m1, !m1) -> !m1
  func.return %0, %6 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A chain of inferred fragments collapses into one.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: mpmd.fragment
// CHECK-NOT: mpmd.fragment
func.func @chain(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=[]> (%arg0) (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=[]> (%0) (%x: !t) {
    %a = stablehlo.exponential %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=[]> (%1, %arg0) (%x: !t, %y: !t) {
    %a = stablehlo.add %x, %y : !t
    mpmd.return %a : !t
  } : (!m1, !m1) -> !m1
  func.return %2 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Two user fragments are never merged with each other here.
// CHECK-LABEL: func.func @user_fragments_stay
// CHECK-COUNT-2: mpmd.fragment<mesh="m1", origin=["
func.func @user_fragments_stay(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["a"]> (%arg0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["b"]> (%0) (%x: !t) {
    mpmd.return %x : !t
  } : (!m1) -> !m1
  func.return %1 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// Gradient accumulation: the sum reads two backward fragments. Merging it
// into either would add a dependency, so by default it stays; once the
// order is final (scheduled=true) it joins the previous fragment of its
// mesh, which runs right before it anyway.
// RUN: mpmd-opt %s -split-input-file -mpmd-merge-inferred-fragments=scheduled=true | FileCheck %s --check-prefix=SCHEDULED
// CHECK-LABEL: func.func @accumulate
// CHECK: mpmd.fragment<mesh="m1", origin=[]>
// SCHEDULED-LABEL: func.func @accumulate
// SCHEDULED: mpmd.fragment<mesh="m1", origin=["b"(1)]>
// SCHEDULED: %[[M:.*]]:2 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0, %{{.*}}) {call_counter = 1 : ui32}
// SCHEDULED: stablehlo.add
// SCHEDULED-NOT: origin=[]
func.func @accumulate(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=[]> (%0, %1) (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  func.return %2 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// An unrolled loop (mpmd.loop_iterations_known): gradients of two
// microbatches accumulated into zeros, then an update after the loop. The
// zeros are the loop's initial value: they stay apart instead of entering
// microbatch 0's accumulation, so both accumulations read alike. Each
// accumulation joins its own microbatch's backward, never another one's,
// and the update (outside the loop) does not join microbatch 1's: it stays
// a fragment of its own. Export drops the labels.
// CHECK-LABEL: func.func @accumulate_in_loop
// CHECK: mpmd.fragment<mesh="m1", origin=[]> () ()
// CHECK-NEXT: stablehlo.constant
// SCHEDULED-LABEL: func.func @accumulate_in_loop
// SCHEDULED-NOT: mpmd.loop_iterations_known
// SCHEDULED: %[[ZERO:.*]] = mpmd.fragment<mesh="m1", origin=[]> () (
// SCHEDULED-NEXT: stablehlo.constant
// SCHEDULED: %[[B0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0, %[[ZERO]]) {call_counter = 0 : ui32}
// SCHEDULED-NEXT: stablehlo.negate
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED: %[[B1:.*]]:2 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0, %[[B0]]#1) {call_counter = 1 : ui32}
// SCHEDULED-NEXT: stablehlo.negate
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED: mpmd.fragment<mesh="m1", origin=[]> (%arg0, %[[B1]]#1) (
// SCHEDULED-NEXT: stablehlo.subtract
// SCHEDULED-NOT: mpmd.loop_iteration
func.func @accumulate_in_loop(%arg0: !m1) -> !m1
    attributes {mpmd.loop_iterations_known,
                topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %zero = mpmd.fragment<mesh="m1", origin=[]> () () {
    %z = stablehlo.constant dense<0.0> : !t
    mpmd.return %z : !t
  } : () -> !m1
  %0 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %1 = mpmd.fragment<mesh="m1", origin=[]> (%zero, %0) {mpmd.loop_iteration = 0 : ui32} (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  %2 = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %3 = mpmd.fragment<mesh="m1", origin=[]> (%1, %2) {mpmd.loop_iteration = 1 : ui32} (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  %4 = mpmd.fragment<mesh="m1", origin=[]> (%arg0, %3) (%x: !t, %y: !t) {
    %u = stablehlo.subtract %x, %y : !t
    mpmd.return %u : !t
  } : (!m1, !m1) -> !m1
  func.return %4 : !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A schedule's warm-up runs F0 F1 before B0: microbatch 0's loss sum,
// placed after F1, still joins F0 (the first fragment of its iteration
// where its operands are ready), as microbatch 1's joins F1. Both forwards
// then read alike; neither the neighbour F1 (another iteration) nor B0
// takes it.
// SCHEDULED-LABEL: func.func @iteration_target_by_data
// SCHEDULED: %[[F0:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0, %arg1) {call_counter = 0 : ui32}
// SCHEDULED-NEXT: stablehlo.negate
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED: %[[F1:.*]]:2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0, %[[F0]]#1) {call_counter = 1 : ui32}
// SCHEDULED-NEXT: stablehlo.negate
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED: mpmd.fragment<mesh="m1", origin=["f"(1)]> (%[[F0]]#0) {call_counter = 0 : ui32}
// SCHEDULED-NOT: stablehlo.add
// SCHEDULED: return
func.func @iteration_target_by_data(%arg0: !m1, %arg1: !m1) -> (!m1, !m1)
    attributes {mpmd.loop_iterations_known,
                topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %f0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %f1 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 1 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %s0 = mpmd.fragment<mesh="m1", origin=[]> (%arg1, %f0) {mpmd.loop_iteration = 0 : ui32} (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  %b0 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%f0) {call_counter = 0 : ui32} (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %s1 = mpmd.fragment<mesh="m1", origin=[]> (%s0, %f1) {mpmd.loop_iteration = 1 : ui32} (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  func.return %s1, %b0 : !m1, !m1
}

// -----

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// A loss's prologue (the targets' one-hot) reads only an argument, so it
// is ready before the block's forward, the first fragment of its
// iteration. It joins the head it feeds instead (once the loss sum that
// reads it has joined the head): the block's program is then the same as
// that of the blocks on other meshes.
// SCHEDULED-LABEL: func.func @prologue_joins_its_reader
// SCHEDULED: %[[BLOCK:.*]] = mpmd.fragment<mesh="m1", origin=["block"]> (%arg0) {call_counter = 0 : ui32}
// SCHEDULED-NEXT: stablehlo.negate
// SCHEDULED-NEXT: mpmd.return
// SCHEDULED: %[[HEAD:[0-9]+]]:3 = mpmd.fragment<mesh="m1", origin=["head"]> (%arg1, %[[BLOCK]]) {call_counter = 0 : ui32}
// SCHEDULED-NEXT: stablehlo.abs
// SCHEDULED-NEXT: stablehlo.exponential
// SCHEDULED-NEXT: stablehlo.multiply
// SCHEDULED: mpmd.fragment<mesh="m1", origin=["head"(1)]> (%[[HEAD]]#1, %[[HEAD]]#0)
// SCHEDULED-NOT: origin=[]
// SCHEDULED: return %[[HEAD]]#2
func.func @prologue_joins_its_reader(%arg0: !m1, %arg1: !m1) -> (!m1, !m1)
    attributes {mpmd.loop_iterations_known,
                topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %prep = mpmd.fragment<mesh="m1", origin=[]> (%arg1) {mpmd.loop_iteration = 0 : ui32} (%x: !t) {
    %a = stablehlo.abs %x : !t
    mpmd.return %a : !t
  } : (!m1) -> !m1
  %block = mpmd.fragment<mesh="m1", origin=["block"]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %head = mpmd.fragment<mesh="m1", origin=["head"]> (%block) {call_counter = 0 : ui32} (%x: !t) {
    %e = stablehlo.exponential %x : !t
    mpmd.return %e : !t
  } : (!m1) -> !m1
  %loss = mpmd.fragment<mesh="m1", origin=[]> (%head, %prep) {mpmd.loop_iteration = 0 : ui32} (%x: !t, %y: !t) {
    %m = stablehlo.multiply %x, %y : !t
    mpmd.return %m : !t
  } : (!m1, !m1) -> !m1
  %grad = mpmd.fragment<mesh="m1", origin=["head"(1)]> (%head, %prep) {call_counter = 0 : ui32} (%x: !t, %y: !t) {
    %s = stablehlo.add %x, %y : !t
    mpmd.return %s : !t
  } : (!m1, !m1) -> !m1
  func.return %loss, %grad : !m1, !m1
}

// -----

!t = tensor<4xf32>
!s = tensor<f32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m1s = !mpmd.mesh_tensor<"m1", tensor<f32>>

// After the loop, the updates of two named computations' weights on one
// mesh (interleaved in program order) become one fragment each, so the
// update of a block equal to blocks on other meshes is their program too.
// The step counter's work, read by both, is copied into each; the counter
// the function returns stays with one of them.
// SCHEDULED-LABEL: func.func @updates_by_computation
// SCHEDULED: %[[GA:.*]] = mpmd.fragment<mesh="m1", origin=["a"(1)]>
// SCHEDULED: %[[GB:.*]] = mpmd.fragment<mesh="m1", origin=["b"(1)]>
// SCHEDULED: %[[UA:[0-9]+]]:3 = mpmd.fragment<mesh="m1", origin=[]> (%arg2, %[[GA]], %arg3) (
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED-NEXT: stablehlo.broadcast_in_dim
// SCHEDULED-NEXT: stablehlo.multiply
// SCHEDULED-NEXT: stablehlo.subtract
// SCHEDULED: %[[UB:[0-9]+]]:4 = mpmd.fragment<mesh="m1", origin=[]> (%arg2, %[[GB]], %arg4) (
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED-NEXT: stablehlo.add
// SCHEDULED-NEXT: stablehlo.broadcast_in_dim
// SCHEDULED-NEXT: stablehlo.multiply
// SCHEDULED-NEXT: stablehlo.subtract
// SCHEDULED-NOT: mpmd.fragment
// SCHEDULED: return %[[UA]]#2, %[[UB]]#3, %[[UB]]#1
func.func @updates_by_computation(%arg0: !m1, %arg1: !m1, %arg2: !m1s, %arg3: !m1, %arg4: !m1) -> (!m1, !m1, !m1s)
    attributes {mpmd.loop_iterations_known,
                topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %ga = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %gb = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg1) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %count = mpmd.fragment<mesh="m1", origin=[]> (%arg2) (%x: !s) {
    %c = stablehlo.add %x, %x : !s
    mpmd.return %c : !s
  } : (!m1s) -> !m1s
  %ua = mpmd.fragment<mesh="m1", origin=[]> (%ga, %count) (%x: !t, %c: !s) {
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (!s) -> !t
    %m = stablehlo.multiply %x, %b : !t
    mpmd.return %m : !t
  } : (!m1, !m1s) -> !m1
  %ub = mpmd.fragment<mesh="m1", origin=[]> (%gb, %count) (%x: !t, %c: !s) {
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (!s) -> !t
    %m = stablehlo.multiply %x, %b : !t
    mpmd.return %m : !t
  } : (!m1, !m1s) -> !m1
  %va = mpmd.fragment<mesh="m1", origin=[]> (%ua, %arg3) (%x: !t, %w: !t) {
    %d = stablehlo.subtract %w, %x : !t
    mpmd.return %d : !t
  } : (!m1, !m1) -> !m1
  %vb = mpmd.fragment<mesh="m1", origin=[]> (%ub, %arg4) (%x: !t, %w: !t) {
    %d = stablehlo.subtract %w, %x : !t
    mpmd.return %d : !t
  } : (!m1, !m1) -> !m1
  func.return %va, %vb, %count : !m1, !m1, !m1s
}

// -----

!t = tensor<4xf32>
!s = tensor<f32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m1s = !mpmd.mesh_tensor<"m1", tensor<f32>>

// Work with a side effect is never copied, even when small and read by
// two named computations' updates: it runs once.
// SCHEDULED-LABEL: func.func @side_effects_are_not_copied
// SCHEDULED: stablehlo.custom_call @log_step
// SCHEDULED-NOT: stablehlo.custom_call
// SCHEDULED: return
func.func @side_effects_are_not_copied(%arg0: !m1, %arg1: !m1, %arg2: !m1s) -> (!m1, !m1)
    attributes {mpmd.loop_iterations_known,
                topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %ga = mpmd.fragment<mesh="m1", origin=["a"(1)]> (%arg0) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %gb = mpmd.fragment<mesh="m1", origin=["b"(1)]> (%arg1) {call_counter = 0 : ui32} (%x: !t) {
    %n = stablehlo.negate %x : !t
    mpmd.return %n : !t
  } : (!m1) -> !m1
  %count = mpmd.fragment<mesh="m1", origin=[]> (%arg2) (%x: !s) {
    %c = stablehlo.custom_call @log_step(%x) {has_side_effect = true} : (!s) -> !s
    mpmd.return %c : !s
  } : (!m1s) -> !m1s
  %ua = mpmd.fragment<mesh="m1", origin=[]> (%ga, %count) (%x: !t, %c: !s) {
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (!s) -> !t
    %m = stablehlo.multiply %x, %b : !t
    mpmd.return %m : !t
  } : (!m1, !m1s) -> !m1
  %ub = mpmd.fragment<mesh="m1", origin=[]> (%gb, %count) (%x: !t, %c: !s) {
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (!s) -> !t
    %m = stablehlo.multiply %x, %b : !t
    mpmd.return %m : !t
  } : (!m1, !m1s) -> !m1
  func.return %ua, %ub : !m1, !m1
}
