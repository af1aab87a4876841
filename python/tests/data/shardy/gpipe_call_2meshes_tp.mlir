module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 2 : i64}]}}
  sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
  func.func public @main(%arg0: !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, %arg1: !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, %arg2: !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, %arg3: !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, %arg4: !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>, %arg5: !mpmd.mesh_tensor<"mesh1", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>> {jax.result_info = "result[0][0]['b']"}, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>> {jax.result_info = "result[0][0]['w']"}, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>> {jax.result_info = "result[0][1]['b']"}, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>> {jax.result_info = "result[0][1]['w']"}, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>> {jax.result_info = "result[1]"}) attributes {topology = #mpmd.topology<<"mesh0" : <["data"=2, "model"=2]>>, <"mesh1" : <["data"=2, "model"=2]>>>} {
    %0:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p0_stage0_fwd_call0.step(%arg0, %arg1, %arg4) : (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %1 = mpmd.transfer %0#1 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %2:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %1) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %3:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p2_stage0_fwd_call1.step(%arg0, %arg1, %arg4) : (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %4 = mpmd.transfer %3#1 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %5:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %4) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %6:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p3_stage0_fwd_call2.step(%arg0, %arg1, %arg4) : (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %7 = mpmd.transfer %6#1 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %8:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %7) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %9:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p4_stage0_fwd_call3.step(%arg0, %arg1, %arg4) : (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %10 = mpmd.transfer %9#1 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %11:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %10) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %12:4 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p5_stage1_bwd_call0.step(%2#1, %arg5, %arg3, %1, %2#0) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %13 = mpmd.transfer %12#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %14:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p6_stage0_bwd_call0.step(%0#1, %0#0, %13, %arg4) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %15:4 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p7_stage1_bwd_call1.step(%5#1, %arg5, %arg3, %4, %5#0, %12#1, %12#2, %12#3) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %16 = mpmd.transfer %15#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %17:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p8_stage0_bwd_call1.step(%3#1, %3#0, %16, %arg4, %14#0, %14#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %18:4 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p9_stage1_bwd_call2.step(%8#1, %arg5, %arg3, %7, %8#0, %15#1, %15#2, %15#3) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %19 = mpmd.transfer %18#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %20:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p10_stage0_bwd_call2.step(%6#1, %6#0, %19, %arg4, %17#0, %17#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    %21:4 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p11_stage1_bwd_call3.step(%11#1, %arg5, %arg3, %10, %11#0, %18#1, %18#2, %18#3, %arg2) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>)
    %22 = mpmd.transfer %21#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>
    %23:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p12_stage0_bwd_call3.step(%9#1, %9#0, %22, %arg4, %20#0, %20#1, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>, sharding=<@mesh, [{}, {}, {}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>)
    return %23#0, %23#1, %21#1, %21#2, %21#3 : !mpmd.mesh_tensor<"mesh0", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>, sharding=<@mesh, [{"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>, sharding=<@mesh, [{}, {"model"}]>>, !mpmd.mesh_tensor<"mesh1", tensor<f32>, sharding=<@mesh, []>>
  }
  func.func @p0_stage0_fwd_call0.step(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg2 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x8xf32>
    %6 = stablehlo.tanh %5 : tensor<4x8xf32>
    %7 = stablehlo.subtract %cst, %6 : tensor<4x8xf32>
    return %7, %6 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p1_stage1_fwd_calls0to3.step(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 832 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = stablehlo.tanh %3 : tensor<4x8xf32>
    %5 = stablehlo.subtract %cst, %4 : tensor<4x8xf32>
    return %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p2_stage0_fwd_call1.step(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 128 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg2 [1:2, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x8xf32>
    %6 = stablehlo.tanh %5 : tensor<4x8xf32>
    %7 = stablehlo.subtract %cst, %6 : tensor<4x8xf32>
    return %7, %6 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p3_stage0_fwd_call2.step(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 256 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg2 [2:3, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x8xf32>
    %6 = stablehlo.tanh %5 : tensor<4x8xf32>
    %7 = stablehlo.subtract %cst, %6 : tensor<4x8xf32>
    return %7, %6 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p4_stage0_fwd_call3.step(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 384 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg2 [3:4, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x8xf32>
    %6 = stablehlo.tanh %5 : tensor<4x8xf32>
    %7 = stablehlo.subtract %cst, %6 : tensor<4x8xf32>
    return %7, %6 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p5_stage1_bwd_call0.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 592 : i64} {
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg1 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst_0 : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_1 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8xf32>) -> tensor<1x8xf32>
    %10 = stablehlo.reduce(%9 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.dot_general %7, %arg3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %13 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.multiply %2, %2 : tensor<4x8xf32>
    %15 = stablehlo.reduce(%14 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.divide %15, %cst : tensor<f32>
    return %13, %16, %10, %12 : tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p6_stage0_bwd_call0.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 528 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg3 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<4x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.reshape %5 : (tensor<8xf32>) -> tensor<1x8xf32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.dot_general %4, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %7, %9 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p7_stage1_bwd_call1.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>, tf.aliasing_output = 1 : i32}, %arg6: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 2 : i32}, %arg7: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 3 : i32}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 400 : i64} {
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg1 [1:2, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst_0 : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_1 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8xf32>) -> tensor<1x8xf32>
    %10 = stablehlo.reduce(%9 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.dot_general %7, %arg3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %13 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.multiply %2, %2 : tensor<4x8xf32>
    %15 = stablehlo.reduce(%14 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.divide %15, %cst : tensor<f32>
    %17 = stablehlo.add %arg5, %16 : tensor<f32>
    %18 = stablehlo.add %arg6, %10 : tensor<8xf32>
    %19 = stablehlo.add %arg7, %12 : tensor<8x8xf32>
    return %13, %17, %18, %19 : tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p8_stage0_bwd_call1.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg4: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 1 : i32}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 400 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg3 [1:2, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<4x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.reshape %5 : (tensor<8xf32>) -> tensor<1x8xf32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.dot_general %4, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %10 = stablehlo.add %arg4, %7 : tensor<8xf32>
    %11 = stablehlo.add %arg5, %9 : tensor<8x8xf32>
    return %10, %11 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p9_stage1_bwd_call2.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>, tf.aliasing_output = 1 : i32}, %arg6: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 2 : i32}, %arg7: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 3 : i32}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 208 : i64} {
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg1 [2:3, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst_0 : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_1 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8xf32>) -> tensor<1x8xf32>
    %10 = stablehlo.reduce(%9 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.dot_general %7, %arg3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %13 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.multiply %2, %2 : tensor<4x8xf32>
    %15 = stablehlo.reduce(%14 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.divide %15, %cst : tensor<f32>
    %17 = stablehlo.add %arg5, %16 : tensor<f32>
    %18 = stablehlo.add %arg6, %10 : tensor<8xf32>
    %19 = stablehlo.add %arg7, %12 : tensor<8x8xf32>
    return %13, %17, %18, %19 : tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p10_stage0_bwd_call2.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg4: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 1 : i32}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 272 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg3 [2:3, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<4x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.reshape %5 : (tensor<8xf32>) -> tensor<1x8xf32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.dot_general %4, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %10 = stablehlo.add %arg4, %7 : tensor<8xf32>
    %11 = stablehlo.add %arg5, %9 : tensor<8x8xf32>
    return %10, %11 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p11_stage1_bwd_call3.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>, tf.aliasing_output = 3 : i32}, %arg6: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 1 : i32}, %arg7: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 2 : i32}, %arg8: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_4 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_5 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_6 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg1 [3:4, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst_5 : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_6 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.reduce(%7 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8xf32>) -> tensor<1x8xf32>
    %10 = stablehlo.reduce(%9 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.dot_general %7, %arg3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %13 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.multiply %2, %2 : tensor<4x8xf32>
    %15 = stablehlo.reduce(%14 init: %cst_7) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.divide %15, %cst_4 : tensor<f32>
    %17 = stablehlo.add %arg5, %16 : tensor<f32>
    %18 = stablehlo.add %arg6, %10 : tensor<8xf32>
    %19 = stablehlo.add %arg7, %12 : tensor<8x8xf32>
    %20 = stablehlo.multiply %18, %cst_2 : tensor<8xf32>
    %21 = stablehlo.divide %20, %cst_3 : tensor<8xf32>
    %22 = stablehlo.subtract %arg8, %21 : tensor<8xf32>
    %23 = stablehlo.multiply %19, %cst_0 : tensor<8x8xf32>
    %24 = stablehlo.divide %23, %cst_1 : tensor<8x8xf32>
    %25 = stablehlo.subtract %arg2, %24 : tensor<8x8xf32>
    %26 = stablehlo.divide %17, %cst : tensor<f32>
    return %13, %22, %25, %26 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<f32>
  }
  func.func @p12_stage0_bwd_call3.step(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<4x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg4: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>, tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, tf.aliasing_output = 1 : i32}, %arg6: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg7: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) attributes {mesh_shape = #sdy.mesh<["data"=2, "model"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.slice %arg3 [3:4, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<4x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.reshape %5 : (tensor<8xf32>) -> tensor<1x8xf32>
    %7 = stablehlo.reduce(%6 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.dot_general %4, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %10 = stablehlo.add %arg4, %7 : tensor<8xf32>
    %11 = stablehlo.add %arg5, %9 : tensor<8x8xf32>
    %12 = stablehlo.multiply %10, %cst_1 : tensor<8xf32>
    %13 = stablehlo.divide %12, %cst_2 : tensor<8xf32>
    %14 = stablehlo.subtract %arg6, %13 : tensor<8xf32>
    %15 = stablehlo.multiply %11, %cst : tensor<8x8xf32>
    %16 = stablehlo.divide %15, %cst_0 : tensor<8x8xf32>
    %17 = stablehlo.subtract %arg7, %16 : tensor<8x8xf32>
    return %14, %17 : tensor<8xf32>, tensor<8x8xf32>
  }
}
