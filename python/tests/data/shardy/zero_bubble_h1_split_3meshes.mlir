module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
  func.func public @main(%arg0: !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, %arg1: !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, %arg2: !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, %arg3: !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, %arg4: !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, %arg5: !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, %arg6: !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, %arg7: !mpmd.mesh_tensor<"mesh2", tensor<4x4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>> {jax.result_info = "result[0][0]['b']"}, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>> {jax.result_info = "result[0][0]['w']"}, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>> {jax.result_info = "result[0][1]['b']"}, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>> {jax.result_info = "result[0][1]['w']"}, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>> {jax.result_info = "result[0][2]['b']"}, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>> {jax.result_info = "result[0][2]['w']"}, !mpmd.mesh_tensor<"mesh2", tensor<f32>> {jax.result_info = "result[1]"}) attributes {topology = #mpmd.topology<<"mesh0" : <["data"=2]>>, <"mesh1" : <["data"=2]>>, <"mesh2" : <["data"=2]>>>} {
    %0:8 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p0_stage0_fwd_call0.step(%arg6, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %1 = mpmd.transfer %0#7 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %2:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %1) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %3 = mpmd.transfer %2#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %4:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %3) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %5:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p3_stage2_bwd_call0.step(%4#1, %arg7, %arg5, %4#0) : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %6:6 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p4_stage2_bwd_call0.step(%3, %5#1, %5#2) : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %7 = mpmd.transfer %5#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %8:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#2, %arg6, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %9 = mpmd.transfer %8#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %10:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %9) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %11 = mpmd.transfer %10#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %12:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %11) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %13:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p6_stage2_bwd_calls1to2.step(%6#2, %12#1, %arg7, %arg5, %12#0) : (!mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %14 = mpmd.transfer %13#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %15:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#1, %arg6, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %16 = mpmd.transfer %15#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %17:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p7_stage1_bwd_calls0to3.step(%arg3, %2#1, %2#0, %7) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %18 = mpmd.transfer %17#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %19:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p8_stage0_bwd_calls0to2.step(%0#7, %0#6, %18, %0#5, %0#3, %0#4) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %20:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %16) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %21 = mpmd.transfer %20#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %22:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %21) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %23:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p6_stage2_bwd_calls1to2.step(%6#1, %22#1, %arg7, %arg5, %22#0) : (!mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %24 = mpmd.transfer %23#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %25:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#0, %arg6, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %26 = mpmd.transfer %25#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %27:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p7_stage1_bwd_calls0to3.step(%arg3, %10#1, %10#0, %14) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %28 = mpmd.transfer %27#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %29:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p8_stage0_bwd_calls0to2.step(%8#2, %8#1, %28, %8#0, %19#0, %19#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %30:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p9_stage1_bwd_call0.step(%1, %17#1) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %31:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %26) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %32 = mpmd.transfer %31#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %33:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %32) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %34:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p10_stage2_bwd_call3.step(%6#0, %33#1, %arg7, %arg5, %33#0) : (!mpmd.mesh_tensor<"mesh2", tensor<ui32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %35 = mpmd.transfer %34#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %36:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p11_stage2_bwd_calls1to2.step(%11, %13#1, %6#5, %6#4, %13#2, %6#3) : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<f32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %37:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p11_stage2_bwd_calls1to2.step(%21, %23#1, %36#2, %36#1, %23#2, %36#0) : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<f32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %38:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p7_stage1_bwd_calls0to3.step(%arg3, %20#1, %20#0, %24) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %39 = mpmd.transfer %38#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %40:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p8_stage0_bwd_calls0to2.step(%15#2, %15#1, %39, %15#0, %29#0, %29#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %41:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p12_stage2_bwd_call3.step(%34#1, %37#0, %32, %34#2, %37#2, %arg5, %37#1, %arg4) : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>)
    %42:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p13_stage1_bwd_calls1to2.step(%9, %27#1, %30#1, %30#0) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %43:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p7_stage1_bwd_calls0to3.step(%arg3, %31#1, %31#0, %35) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %44 = mpmd.transfer %43#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %45:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p14_stage0_bwd_call3.step(%25#2, %25#1, %44, %25#0, %40#0, %40#1, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %46:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p13_stage1_bwd_calls1to2.step(%16, %38#1, %42#1, %42#0) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %47:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p15_stage1_bwd_call3.step(%26, %43#1, %46#1, %arg3, %46#0, %arg2) : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    return %45#0, %45#1, %47#0, %47#1, %41#0, %41#1, %41#2 : !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<f32>>
  }
  func.func @p0_stage0_fwd_call0.step(%arg0: tensor<4x4x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8x8xf32>) -> (tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<8xf32>, tensor<8x8xf32>, tensor<1x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 0 : i64} {
    %c = stablehlo.constant {unroll_counter = 3 : ui32} dense<3> : tensor<ui32>
    %c_0 = stablehlo.constant {unroll_counter = 2 : ui32} dense<2> : tensor<ui32>
    %c_1 = stablehlo.constant {unroll_counter = 1 : ui32} dense<1> : tensor<ui32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg0 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.reshape %arg1 : (tensor<8xf32>) -> tensor<1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x8xf32>
    %6 = stablehlo.tanh %5 : tensor<4x8xf32>
    %7 = stablehlo.subtract %cst_3, %6 : tensor<4x8xf32>
    return %c, %c_0, %c_1, %cst, %cst_2, %0, %7, %6 : tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<8xf32>, tensor<8x8xf32>, tensor<1x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p1_stage1_fwd_calls0to3.step(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1056 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = stablehlo.tanh %3 : tensor<4x8xf32>
    %5 = stablehlo.subtract %cst, %4 : tensor<4x8xf32>
    return %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p2_stage2_fwd_calls0to3.step(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1576 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = stablehlo.tanh %3 : tensor<4x8xf32>
    %5 = stablehlo.subtract %cst, %4 : tensor<4x8xf32>
    return %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p3_stage2_bwd_call0.step(%arg0: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<4x4x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<4x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 160 : i64} {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg1 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_0 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg3 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %8, %7, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p4_stage2_bwd_call0.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}) -> (tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 928 : i64} {
    %c = stablehlo.constant {unroll_counter = 3 : ui32} dense<3> : tensor<ui32>
    %c_0 = stablehlo.constant {unroll_counter = 2 : ui32} dense<2> : tensor<ui32>
    %c_1 = stablehlo.constant {unroll_counter = 1 : ui32} dense<1> : tensor<ui32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.multiply %arg2, %arg2 : tensor<4x8xf32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %7 = stablehlo.divide %6, %cst_2 : tensor<f32>
    return %c, %c_0, %c_1, %7, %2, %4 : tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p5_stage0_fwd_calls1to3.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x4x8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8x8xf32>) -> (tensor<1x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1060 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<ui32>) -> tensor<i32>
    %1 = stablehlo.add %0, %c_0 : tensor<i32>
    %2 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.select %2, %1, %0 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg1, %3, %c, %c, sizes = [1, 4, 8] : (tensor<4x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %7 = stablehlo.reshape %arg2 : (tensor<8xf32>) -> tensor<1x8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %9 = stablehlo.add %6, %8 : tensor<4x8xf32>
    %10 = stablehlo.tanh %9 : tensor<4x8xf32>
    %11 = stablehlo.subtract %cst, %10 : tensor<4x8xf32>
    return %4, %11, %10 : tensor<1x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p6_stage2_bwd_calls1to2.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x4x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<4x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 840 : i64} {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<ui32>) -> tensor<i32>
    %1 = stablehlo.add %0, %c_1 : tensor<i32>
    %2 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.select %2, %1, %0 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg2, %3, %c, %c, sizes = [1, 4, 8] : (tensor<4x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.subtract %arg1, %5 : tensor<4x8xf32>
    %7 = stablehlo.multiply %6, %cst : tensor<4x8xf32>
    %8 = stablehlo.multiply %7, %cst_0 : tensor<4x8xf32>
    %9 = stablehlo.multiply %8, %arg4 : tensor<4x8xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<4x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x8xf32>
    %12 = stablehlo.dot_general %11, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %12, %11, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p7_stage1_bwd_calls0to3.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg3: tensor<4x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1216 : i64} {
    %0 = stablehlo.multiply %arg3, %arg2 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %3, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p8_stage0_bwd_calls0to2.step(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}, %arg3: tensor<1x4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1572 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reshape %arg3 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %2 = stablehlo.multiply %1, %arg0 : tensor<4x8xf32>
    %3 = stablehlo.add %1, %2 : tensor<4x8xf32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = stablehlo.reshape %4 : (tensor<8xf32>) -> tensor<1x8xf32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %7 = stablehlo.dot_general %3, %0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.add %arg4, %6 : tensor<8xf32>
    %10 = stablehlo.add %arg5, %8 : tensor<8x8xf32>
    return %9, %10 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p9_stage1_bwd_call0.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1184 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %2, %4 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p10_stage2_bwd_call3.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x4x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<4x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1220 : i64} {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<ui32>) -> tensor<i32>
    %1 = stablehlo.add %0, %c_1 : tensor<i32>
    %2 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.select %2, %1, %0 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg2, %3, %c, %c, sizes = [1, 4, 8] : (tensor<4x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.subtract %arg1, %5 : tensor<4x8xf32>
    %7 = stablehlo.multiply %6, %cst : tensor<4x8xf32>
    %8 = stablehlo.multiply %7, %cst_0 : tensor<4x8xf32>
    %9 = stablehlo.multiply %8, %arg4 : tensor<4x8xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<4x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x8xf32>
    %12 = stablehlo.dot_general %11, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %12, %6, %11 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p11_stage2_bwd_calls1to2.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<f32> {tf.aliasing_output = 0 : i32}) -> (tensor<f32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1568 : i64} {
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.multiply %arg4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.reduce(%5 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %7 = stablehlo.divide %6, %cst : tensor<f32>
    %8 = stablehlo.add %arg5, %7 : tensor<f32>
    %9 = stablehlo.add %arg3, %2 : tensor<8xf32>
    %10 = stablehlo.add %arg2, %4 : tensor<8x8xf32>
    return %8, %9, %10 : tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p12_stage2_bwd_call3.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<f32> {tf.aliasing_output = 2 : i32}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}, %arg5: tensor<8x8xf32>, %arg6: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg7: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x8xf32>, tensor<f32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 512 : i64} {
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_4 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg3 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg3, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.multiply %arg0, %arg0 : tensor<4x8xf32>
    %6 = stablehlo.reduce(%5 init: %cst_5) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %7 = stablehlo.divide %6, %cst_4 : tensor<f32>
    %8 = stablehlo.add %arg1, %7 : tensor<f32>
    %9 = stablehlo.add %arg6, %2 : tensor<8xf32>
    %10 = stablehlo.add %arg4, %4 : tensor<8x8xf32>
    %11 = stablehlo.multiply %9, %cst_2 : tensor<8xf32>
    %12 = stablehlo.divide %11, %cst_3 : tensor<8xf32>
    %13 = stablehlo.subtract %arg7, %12 : tensor<8xf32>
    %14 = stablehlo.multiply %10, %cst_0 : tensor<8x8xf32>
    %15 = stablehlo.divide %14, %cst_1 : tensor<8x8xf32>
    %16 = stablehlo.subtract %arg5, %15 : tensor<8x8xf32>
    %17 = stablehlo.divide %8, %cst : tensor<f32>
    return %13, %16, %17 : tensor<8xf32>, tensor<8x8xf32>, tensor<f32>
  }
  func.func @p13_stage1_bwd_calls1to2.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}, %arg3: tensor<8xf32> {tf.aliasing_output = 0 : i32}) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1056 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.add %arg3, %2 : tensor<8xf32>
    %6 = stablehlo.add %arg2, %4 : tensor<8x8xf32>
    return %5, %6 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p14_stage0_bwd_call3.step(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}, %arg3: tensor<1x4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8xf32>, %arg7: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 512 : i64} {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reshape %arg3 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %arg2, %arg1 : tensor<4x8xf32>
    %2 = stablehlo.multiply %1, %arg0 : tensor<4x8xf32>
    %3 = stablehlo.add %1, %2 : tensor<4x8xf32>
    %4 = stablehlo.reduce(%3 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = stablehlo.reshape %4 : (tensor<8xf32>) -> tensor<1x8xf32>
    %6 = stablehlo.reduce(%5 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %7 = stablehlo.dot_general %3, %0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.add %arg4, %6 : tensor<8xf32>
    %10 = stablehlo.add %arg5, %8 : tensor<8x8xf32>
    %11 = stablehlo.multiply %9, %cst_1 : tensor<8xf32>
    %12 = stablehlo.divide %11, %cst_2 : tensor<8xf32>
    %13 = stablehlo.subtract %arg6, %12 : tensor<8xf32>
    %14 = stablehlo.multiply %10, %cst : tensor<8x8xf32>
    %15 = stablehlo.divide %14, %cst_0 : tensor<8x8xf32>
    %16 = stablehlo.subtract %arg7, %15 : tensor<8x8xf32>
    return %13, %16 : tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p15_stage1_bwd_call3.step(%arg0: tensor<4x8xf32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}, %arg3: tensor<8x8xf32>, %arg4: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg5: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.reshape %0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.reduce(%1 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.add %arg4, %2 : tensor<8xf32>
    %6 = stablehlo.add %arg2, %4 : tensor<8x8xf32>
    %7 = stablehlo.multiply %5, %cst_1 : tensor<8xf32>
    %8 = stablehlo.divide %7, %cst_2 : tensor<8xf32>
    %9 = stablehlo.subtract %arg5, %8 : tensor<8xf32>
    %10 = stablehlo.multiply %6, %cst : tensor<8x8xf32>
    %11 = stablehlo.divide %10, %cst_0 : tensor<8x8xf32>
    %12 = stablehlo.subtract %arg3, %11 : tensor<8x8xf32>
    return %9, %12 : tensor<8xf32>, tensor<8x8xf32>
  }
}
