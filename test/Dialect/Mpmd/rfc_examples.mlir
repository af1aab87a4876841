// Every MPMD IR example of the Shardy:MPMD RFC (rfcs/2025-06-18-mpmd-rfc.md),
// with the type and attribute aliases it uses defined up front. Each parses,
// verifies, and printing is a fixed point.
// RUN: mpmd-opt %s -split-input-file -o %t.1.mlir
// RUN: mpmd-opt %t.1.mlir -split-input-file -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: FileCheck %s --input-file %t.1.mlir

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>

func.func @main(%arg0: !t, %arg1: !t) -> (!t, !t)
  attributes {topology=#topology} {
  // CHECK: mpmd.named_computation<"layer1"> (%arg0, %arg1)
  %1 = mpmd.named_computation<"layer1"> (%arg0, %arg1) (%arg2: !t, %arg3: !t) {
    %10 = stablehlo.add %arg2, %arg2 : !t
    mpmd.return %10 : !t
  } : (!t, !t) -> !t

  %c = stablehlo.constant dense<0.000000e+00> : !t
  %2 = mpmd.named_computation<"layer2"> (%1, %c) (%arg2: !t, %arg3: !t) {
    %10 = stablehlo.add %arg2, %arg2 : !t
    mpmd.return %10 : !t
  } : (!t, !t) -> !t

  %3 = stablehlo.multiply %1, %1 : !t
  %4 = stablehlo.divide %2, %2 : !t

  func.return %3, %4  : !t, !t
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !t, %arg1: !t) -> (!t, !t) attributes {topology=#topology} {
    %0 = mpmd.assign %arg0 : (!t) -> !m1_t
    // CHECK: mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%0) (%arg2: tensor<4xf32>)
    %1 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%0) (%arg2: !t) {
      %8 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %8 : !t
    } : (!m1_t) -> !m1_t
    %2 = mpmd.unassign %1 : (!m1_t) -> !t

    // We introduce a cross-mesh transfer.
    %3 = mpmd.transfer %1 : (!m1_t) -> !m2_t
    %4 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%3) (%arg2: !t) {
      %8 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %8 : !t
    } : (!m2_t) -> !m2_t
    %5 = mpmd.unassign %4 : (!m2_t) -> !t
    %6 = stablehlo.multiply %2, %2 : !t
    %7 = stablehlo.divide %5, %5 : !t
    return %6, %7 : !t, !t
  }
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !m1_t, %arg1: !m1_t) -> (!m1_t, !m2_t) attributes {topology=#topology} {
    // CHECK: %[[F:.*]]:2 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0)
    %0:2 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) (%arg2: tensor<4xf32>) {
      %3 = stablehlo.add %arg2, %arg2 : tensor<4xf32>
      %4 = stablehlo.multiply %3, %3 : tensor<4xf32>
      mpmd.return %3, %4 : tensor<4xf32>, tensor<4xf32>
    } : (!m1_t) -> (!m1_t, !m1_t)
    // CHECK: mpmd.transfer %[[F]]#0
    %1 = mpmd.transfer %0#0 : (!m1_t) -> !m2_t
    %2 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%1) (%arg2: tensor<4xf32>) {
      %3 = stablehlo.add %arg2, %arg2 : tensor<4xf32>
      %4 = stablehlo.divide %3, %3 : tensor<4xf32>
      mpmd.return %4 : tensor<4xf32>
    } : (!m2_t) -> !m2_t
    return %0#1, %2 : !m1_t, !m2_t
  }
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
#batch_shard = #sdy.sharding<@mesh, [{"x"}]>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>
!m1_t_batch = !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}]>>
!m2_t_batch = !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}]>>

module attributes {mpmd.fragments.global_view} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !m1_t {sdy.sharding=#batch_shard}) -> (!m1_t, !m1_t) attributes {topology=#topology} {
    // CHECK: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=2> (%{{.*}}) {call_counter = 0 : ui32}
    %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 0 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m1_t) -> !m1_t

    %1 = mpmd.transfer %0 : (!m1_t) -> !m2_t

    %2 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%1) {call_counter = 0 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m2_t) -> !m2_t

    %3 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=2> (%2) {call_counter = 0 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m2_t) -> !m2_t

    %4 = mpmd.transfer %3 : (!m2_t) -> !m1_t

    %5 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%4) {call_counter = 0 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m1_t) -> !m1_t

    %10 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 1 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m1_t) -> !m1_t

    %11 = mpmd.transfer %10 : (!m1_t) -> !m2_t

    %12 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%11) {call_counter = 1 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m2_t) -> !m2_t

    %13 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=2> (%12) {call_counter = 1 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m2_t) -> !m2_t

    %14 = mpmd.transfer %13 : (!m2_t) -> !m1_t

    %15 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%14) {call_counter = 1 : ui32} (%arg2: !t) {
      %30 = stablehlo.add %arg2, %arg2 : !t
      mpmd.return %30 : !t
    } : (!m1_t) -> !m1_t

    return %5, %15 : !m1_t, !m1_t
  }
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
#batch_shard = #sdy.sharding<@mesh, [{"x"}]>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>
!m1_t_batch = !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}]>>
!m2_t_batch = !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}]>>

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: !m1_t {sdy.sharding = #batch_shard}) -> (!m1_t, !m1_t) attributes {topology = #topology} {

    %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 0 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m1_t) -> !m1_t
  %1 = mpmd.transfer %0 : (!m1_t) -> !m2_t

    %2 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%1) {call_counter = 0 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m2_t) -> !m2_t
    %3 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=2> (%2) {call_counter = 0 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m2_t) -> !m2_t
  %4 = mpmd.transfer %3 : (!m2_t) -> !m1_t

    %5 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 1 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m1_t) -> !m1_t
  %6 = mpmd.transfer %5 : (!m1_t) -> !m2_t
    %7 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%6) {call_counter = 1 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m2_t) -> !m2_t
    %8 = mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=2> (%7) {call_counter = 1 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m2_t) -> !m2_t
  %9 = mpmd.transfer %8 : (!m2_t) -> !m1_t

    %10 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%4) {call_counter = 0 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m1_t) -> !m1_t
    %11 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%9) {call_counter = 1 : ui32} (%arg1: !t) {
      %12 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %12 : !t
    } : (!m1_t) -> !m1_t

  return %10, %11 : !m1_t, !m1_t
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
#batch_shard = #sdy.sharding<@mesh, [{"x"}]>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>
!m1_t_batch = !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}]>>
!m2_t_batch = !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}]>>

module attributes {mpmd.fragments.global_view} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !m1_t {sdy.sharding = #batch_shard}) -> (!m1_t, !m1_t) attributes {topology = #topology} {
    // CHECK: mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=2>
    %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t) -> !m1_t
    %1 = mpmd.transfer %0 : (!m1_t) -> !m2_t
    %2 = mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=2> (%1) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      %11 = stablehlo.add %10, %10 : !t
      mpmd.return %11 : !t
    } : (!m2_t) -> !m2_t
    %3 = mpmd.transfer %2 : (!m2_t) -> !m1_t

    %4 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t) -> !m1_t
    %5 = mpmd.transfer %4 : (!m1_t) -> !m2_t
    %6 = mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=2> (%5) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      %11 = stablehlo.add %10, %10 : !t
      mpmd.return %11 : !t
    } : (!m2_t) -> !m2_t
    %7 = mpmd.transfer %6 : (!m2_t) -> !m1_t

    %8 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%3) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t) -> !m1_t
    %9 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%7) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t) -> !m1_t

    return %8, %9 : !m1_t, !m1_t
  }
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
#batch_shard = #sdy.sharding<@mesh, [{"x"}]>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>
!m1_t_batch = !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}]>>
!m2_t_batch = !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}]>>

module attributes {mpmd.fragments.global_view} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !m1_t_batch) -> (!m1_t_batch, !m1_t_batch) attributes {topology = #topology} {
    // CHECK: (!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
    %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t_batch) -> !m1_t_batch
    %1 = mpmd.transfer %0 : (!m1_t_batch) -> !m2_t_batch
    %2 = mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=2> (%1) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      %11 = stablehlo.add %10, %10 : !t
      mpmd.return %11 : !t
    } : (!m2_t_batch) -> !m2_t_batch
    %3 = mpmd.transfer %2 : (!m2_t_batch) -> !m1_t_batch

    %4 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t_batch) -> !m1_t_batch
    %5 = mpmd.transfer %4 : (!m1_t_batch) -> !m2_t_batch
    %6 = mpmd.fragment<mesh="m2", origin=["layer2", "layer2"(1)], stage=2> (%5) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      %11 = stablehlo.add %10, %10 : !t
      mpmd.return %11 : !t
    } : (!m2_t_batch) -> !m2_t_batch
    %7 = mpmd.transfer %6 : (!m2_t_batch) -> !m1_t_batch

    %8 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%3) {call_counter = 0 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t_batch) -> !m1_t_batch
    %9 = mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=1> (%7) {call_counter = 1 : ui32} (%arg1: !t) {
      %10 = stablehlo.add %arg1, %arg1 : !t
      mpmd.return %10 : !t
    } : (!m1_t_batch) -> !m1_t_batch

    return %8, %9 : !m1_t_batch, !m1_t_batch
  }
}

// -----

#topology = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
#batch_shard = #sdy.sharding<@mesh, [{"x"}]>
!t = tensor<4xf32>
!m1_t = !mpmd.mesh_tensor<"m1", !t>
!m2_t = !mpmd.mesh_tensor<"m2", !t>
!m1_t_batch = !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}]>>
!m2_t_batch = !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}]>>

module attributes {mpmd.fragments.global_view} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: !m1_t_batch) -> (!m1_t_batch, !m1_t_batch) attributes {topology = #topology} {
    // CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"]> @p0_stage1_fwd_calls0to1.main(%arg0)
    %0 = mpmd.fragment_call<mesh="m1", origin=["layer1"]> @p0_stage1_fwd_calls0to1.main(%arg0) : (!m1_t_batch) -> !m1_t_batch
    %1 = mpmd.transfer %0 : (!m1_t_batch) -> !m2_t_batch
    %2 = mpmd.fragment_call<mesh="m2", origin=["layer2", "layer2"(1)]> @p1_stage2_fwd_bwd_calls0to1.main(%1) : (!m2_t_batch) -> !m2_t_batch
    %3 = mpmd.transfer %2 : (!m2_t_batch) -> !m1_t_batch

    %4 = mpmd.fragment_call<mesh="m1", origin=["layer1"]> @p0_stage1_fwd_calls0to1.main(%arg0) : (!m1_t_batch) -> !m1_t_batch
    %5 = mpmd.transfer %4 : (!m1_t_batch) -> !m2_t_batch
    %6 = mpmd.fragment_call<mesh="m2", origin=["layer2", "layer2"(1)]> @p1_stage2_fwd_bwd_calls0to1.main(%5) : (!m2_t_batch) -> !m2_t_batch
    %7 = mpmd.transfer %6 : (!m2_t_batch) -> !m1_t_batch

    %8 = mpmd.fragment_call<mesh="m1", origin=["layer1"(1)]> @p2_stage1_bwd_calls0to1.main(%3) : (!m1_t_batch) -> !m1_t_batch
    %9 = mpmd.fragment_call<mesh="m1", origin=["layer1"(1)]> @p2_stage1_bwd_calls0to1.main(%7) : (!m1_t_batch) -> !m1_t_batch

    return %8, %9 : !m1_t_batch, !m1_t_batch
  }
  // CHECK: mesh_shape = #sdy.mesh<"x"=2>
  func.func @p0_stage1_fwd_calls0to1.main(%arg0: !t) -> !t attributes {mesh_shape = #sdy.mesh<"x"=2>} {
    %0 = stablehlo.add %arg0, %arg0 : !t
    return %0 : !t
  }
  func.func @p1_stage2_fwd_bwd_calls0to1.main(%arg0: !t {tf.aliasing_output = 0 : i32}) -> !t attributes {mesh_shape = #sdy.mesh<"x"=2>} {
    %0 = stablehlo.add %arg0, %arg0 : !t
    %1 = stablehlo.add %0, %0 : !t
    return %1 : !t
  }
  func.func @p2_stage1_bwd_calls0to1.main(%arg0: !t {tf.aliasing_output = 0 : i32}) -> !t attributes {mesh_shape = #sdy.mesh<"x"=2>} {
    %0 = stablehlo.add %arg0, %arg0 : !t
    return %0 : !t
  }
}
