module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
  func.func public @main(%arg0: !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, %arg1: !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, %arg2: !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, %arg3: !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, %arg4: !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, %arg5: !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, %arg6: !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, %arg7: !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, %arg8: !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, %arg9: !mpmd.mesh_tensor<"mesh3", tensor<4x4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>> {jax.result_info = "result[0][0]['b']"}, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>> {jax.result_info = "result[0][0]['w']"}, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>> {jax.result_info = "result[0][1]['b']"}, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>> {jax.result_info = "result[0][1]['w']"}, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>> {jax.result_info = "result[0][2]['b']"}, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>> {jax.result_info = "result[0][2]['w']"}, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>> {jax.result_info = "result[0][3]['b']"}, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>> {jax.result_info = "result[0][3]['w']"}, !mpmd.mesh_tensor<"mesh3", tensor<f32>> {jax.result_info = "result[1]"}) attributes {topology = #mpmd.topology<<"mesh0" : <["data"=2]>>, <"mesh1" : <["data"=2]>>, <"mesh2" : <["data"=2]>>, <"mesh3" : <["data"=2]>>>} {
    %0:8 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p0_stage0_fwd_call0.step(%arg8, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %1 = mpmd.transfer %0#7 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %2:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %1) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %3 = mpmd.transfer %2#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %4:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %3) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %5 = mpmd.transfer %4#1 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>
    %6:2 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"]> @p3_stage3_fwd_calls0to3.step(%arg6, %arg7, %5) : (!mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>)
    %7:7 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"(1)]> @p4_stage3_bwd_call0.step(%6#1, %arg9, %arg7, %5, %6#0) : (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>)
    %8 = mpmd.transfer %7#3 : (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %9:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#2, %arg8, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %10 = mpmd.transfer %9#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %11:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %10) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %12 = mpmd.transfer %11#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %13:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %12) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %14 = mpmd.transfer %13#1 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>
    %15:2 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"]> @p3_stage3_fwd_calls0to3.step(%arg6, %arg7, %14) : (!mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>)
    %16:4 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"(1)]> @p6_stage3_bwd_calls1to2.step(%7#2, %15#1, %arg9, %arg7, %14, %15#0, %7#4, %7#5, %7#6) : (!mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>)
    %17 = mpmd.transfer %16#0 : (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %18:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#1, %arg8, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %19 = mpmd.transfer %18#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %20:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %19) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %21 = mpmd.transfer %20#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %22:3 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"]> @p5_stage0_fwd_calls1to3.step(%0#0, %arg8, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<ui32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>)
    %23 = mpmd.transfer %22#2 : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %24:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p7_stage2_bwd_call0.step(%arg5, %3, %4#1, %4#0, %8) : (!mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %25 = mpmd.transfer %24#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %26:3 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p8_stage1_bwd_call0.step(%arg3, %1, %2#1, %2#0, %25) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %27 = mpmd.transfer %26#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %28:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p9_stage0_bwd_calls0to2.step(%0#7, %0#6, %27, %0#5, %0#3, %0#4) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %29:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %21) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %30 = mpmd.transfer %29#1 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>
    %31:2 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"]> @p3_stage3_fwd_calls0to3.step(%arg6, %arg7, %30) : (!mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>)
    %32:4 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"(1)]> @p6_stage3_bwd_calls1to2.step(%7#1, %31#1, %arg9, %arg7, %30, %31#0, %16#1, %16#2, %16#3) : (!mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>)
    %33 = mpmd.transfer %32#0 : (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %34:2 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"]> @p1_stage1_fwd_calls0to3.step(%arg2, %arg3, %23) : (!mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>)
    %35 = mpmd.transfer %34#1 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %36:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p10_stage2_bwd_calls1to2.step(%arg5, %12, %13#1, %13#0, %17, %24#1, %24#2) : (!mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %37 = mpmd.transfer %36#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %38:3 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p11_stage1_bwd_calls1to2.step(%arg3, %10, %11#1, %11#0, %37, %26#1, %26#2) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %39 = mpmd.transfer %38#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %40:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p9_stage0_bwd_calls0to2.step(%9#2, %9#1, %39, %9#0, %28#0, %28#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %41:2 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"]> @p2_stage2_fwd_calls0to3.step(%arg4, %arg5, %35) : (!mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>)
    %42 = mpmd.transfer %41#1 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>
    %43:2 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"]> @p3_stage3_fwd_calls0to3.step(%arg6, %arg7, %42) : (!mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>)
    %44:4 = mpmd.fragment_call<mesh="mesh3", origin=["stage3"(1)]> @p12_stage3_bwd_call3.step(%7#0, %43#1, %arg9, %arg7, %42, %43#0, %32#1, %32#2, %32#3, %arg6) : (!mpmd.mesh_tensor<"mesh3", tensor<ui32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>)
    %45 = mpmd.transfer %44#0 : (!mpmd.mesh_tensor<"mesh3", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>
    %46:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p10_stage2_bwd_calls1to2.step(%arg5, %21, %29#1, %29#0, %33, %36#1, %36#2) : (!mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %47 = mpmd.transfer %46#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %48:3 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p11_stage1_bwd_calls1to2.step(%arg3, %19, %20#1, %20#0, %47, %38#1, %38#2) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %49 = mpmd.transfer %48#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %50:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p9_stage0_bwd_calls0to2.step(%18#2, %18#1, %49, %18#0, %40#0, %40#1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    %51:3 = mpmd.fragment_call<mesh="mesh2", origin=["stage2"(1)]> @p13_stage2_bwd_call3.step(%arg5, %35, %41#1, %41#0, %45, %46#1, %46#2, %arg4) : (!mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>)
    %52 = mpmd.transfer %51#0 : (!mpmd.mesh_tensor<"mesh2", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>
    %53:3 = mpmd.fragment_call<mesh="mesh1", origin=["stage1"(1)]> @p14_stage1_bwd_call3.step(%arg3, %23, %34#1, %34#0, %52, %48#1, %48#2, %arg2) : (!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>) -> (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>)
    %54 = mpmd.transfer %53#0 : (!mpmd.mesh_tensor<"mesh1", tensor<4x8xf32>>) -> !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>
    %55:2 = mpmd.fragment_call<mesh="mesh0", origin=["stage0"(1)]> @p15_stage0_bwd_call3.step(%22#2, %22#1, %54, %22#0, %50#0, %50#1, %arg0, %arg1) : (!mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<1x4x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>) -> (!mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>)
    return %55#0, %55#1, %53#1, %53#2, %51#1, %51#2, %44#1, %44#2, %44#3 : !mpmd.mesh_tensor<"mesh0", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh0", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<8x8xf32>>, !mpmd.mesh_tensor<"mesh3", tensor<f32>>
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
  func.func @p2_stage2_fwd_calls0to3.step(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 800 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = stablehlo.tanh %3 : tensor<4x8xf32>
    %5 = stablehlo.subtract %cst, %4 : tensor<4x8xf32>
    return %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p3_stage3_fwd_calls0to3.step(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 816 : i64} {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = stablehlo.tanh %3 : tensor<4x8xf32>
    %5 = stablehlo.subtract %cst, %4 : tensor<4x8xf32>
    return %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func @p4_stage3_bwd_call0.step(%arg0: tensor<4x8xf32> {tf.aliasing_output = 3 : i32}, %arg1: tensor<4x4x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}) -> (tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 32 : i64} {
    %c = stablehlo.constant {unroll_counter = 3 : ui32} dense<3> : tensor<ui32>
    %c_0 = stablehlo.constant {unroll_counter = 2 : ui32} dense<2> : tensor<ui32>
    %c_1 = stablehlo.constant {unroll_counter = 1 : ui32} dense<1> : tensor<ui32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_4 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %0 = stablehlo.slice %arg1 [0:1, 0:4, 0:8] : (tensor<4x4x8xf32>) -> tensor<1x4x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.multiply %2, %cst_3 : tensor<4x8xf32>
    %4 = stablehlo.multiply %3, %cst_4 : tensor<4x8xf32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<4x8xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.reduce(%7 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8xf32>) -> tensor<1x8xf32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.dot_general %7, %arg3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %13 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.multiply %2, %2 : tensor<4x8xf32>
    %15 = stablehlo.reduce(%14 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.divide %15, %cst_2 : tensor<f32>
    return %c, %c_0, %c_1, %13, %16, %10, %12 : tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p5_stage0_fwd_calls1to3.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x4x8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8x8xf32>) -> (tensor<1x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1440 : i64} {
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
  func.func @p6_stage3_bwd_calls1to2.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x4x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<4x8xf32> {jax.buffer_donor = true}, %arg6: tensor<f32> {tf.aliasing_output = 1 : i32}, %arg7: tensor<8xf32> {tf.aliasing_output = 2 : i32}, %arg8: tensor<8x8xf32> {tf.aliasing_output = 3 : i32}) -> (tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 40 : i64} {
    %cst = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<ui32>) -> tensor<i32>
    %1 = stablehlo.add %0, %c_3 : tensor<i32>
    %2 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.select %2, %1, %0 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg2, %3, %c, %c, sizes = [1, 4, 8] : (tensor<4x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.subtract %arg1, %5 : tensor<4x8xf32>
    %7 = stablehlo.multiply %6, %cst_0 : tensor<4x8xf32>
    %8 = stablehlo.multiply %7, %cst_1 : tensor<4x8xf32>
    %9 = stablehlo.multiply %8, %arg5 : tensor<4x8xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<4x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x8xf32>
    %12 = stablehlo.reduce(%11 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %13 = stablehlo.reshape %12 : (tensor<8xf32>) -> tensor<1x8xf32>
    %14 = stablehlo.reduce(%13 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %15 = stablehlo.dot_general %11, %arg4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %16 = stablehlo.transpose %15, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %17 = stablehlo.dot_general %11, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %18 = stablehlo.multiply %6, %6 : tensor<4x8xf32>
    %19 = stablehlo.reduce(%18 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %20 = stablehlo.divide %19, %cst : tensor<f32>
    %21 = stablehlo.add %arg6, %20 : tensor<f32>
    %22 = stablehlo.add %arg7, %14 : tensor<8xf32>
    %23 = stablehlo.add %arg8, %16 : tensor<8x8xf32>
    return %17, %21, %22, %23 : tensor<4x8xf32>, tensor<f32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p7_stage2_bwd_call0.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 672 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %8, %5, %7 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p8_stage1_bwd_call0.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 928 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %8, %5, %7 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p9_stage0_bwd_calls0to2.step(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}, %arg3: tensor<1x4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 1952 : i64} {
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
  func.func @p10_stage2_bwd_calls1to2.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 672 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %9 = stablehlo.add %arg5, %5 : tensor<8xf32>
    %10 = stablehlo.add %arg6, %7 : tensor<8x8xf32>
    return %8, %9, %10 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p11_stage1_bwd_calls1to2.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 800 : i64} {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %9 = stablehlo.add %arg5, %5 : tensor<8xf32>
    %10 = stablehlo.add %arg6, %7 : tensor<8x8xf32>
    return %8, %9, %10 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p12_stage3_bwd_call3.step(%arg0: tensor<ui32> {jax.buffer_donor = true}, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x4x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<4x8xf32> {jax.buffer_donor = true}, %arg6: tensor<f32> {tf.aliasing_output = 3 : i32}, %arg7: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg8: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}, %arg9: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<f32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_4 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_5 = stablehlo.constant dense<2.000000e+00> : tensor<4x8xf32>
    %cst_6 = stablehlo.constant dense<3.125000e-02> : tensor<4x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_8 = stablehlo.constant dense<4> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<ui32>) -> tensor<i32>
    %1 = stablehlo.add %0, %c_8 : tensor<i32>
    %2 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.select %2, %1, %0 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %arg2, %3, %c, %c, sizes = [1, 4, 8] : (tensor<4x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.subtract %arg1, %5 : tensor<4x8xf32>
    %7 = stablehlo.multiply %6, %cst_5 : tensor<4x8xf32>
    %8 = stablehlo.multiply %7, %cst_6 : tensor<4x8xf32>
    %9 = stablehlo.multiply %8, %arg5 : tensor<4x8xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<4x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x8xf32>
    %12 = stablehlo.reduce(%11 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %13 = stablehlo.reshape %12 : (tensor<8xf32>) -> tensor<1x8xf32>
    %14 = stablehlo.reduce(%13 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %15 = stablehlo.dot_general %11, %arg4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %16 = stablehlo.transpose %15, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %17 = stablehlo.dot_general %11, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %18 = stablehlo.multiply %6, %6 : tensor<4x8xf32>
    %19 = stablehlo.reduce(%18 init: %cst_7) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %20 = stablehlo.divide %19, %cst_4 : tensor<f32>
    %21 = stablehlo.add %arg6, %20 : tensor<f32>
    %22 = stablehlo.add %arg7, %14 : tensor<8xf32>
    %23 = stablehlo.add %arg8, %16 : tensor<8x8xf32>
    %24 = stablehlo.multiply %22, %cst_2 : tensor<8xf32>
    %25 = stablehlo.divide %24, %cst_3 : tensor<8xf32>
    %26 = stablehlo.subtract %arg9, %25 : tensor<8xf32>
    %27 = stablehlo.multiply %23, %cst_0 : tensor<8x8xf32>
    %28 = stablehlo.divide %27, %cst_1 : tensor<8x8xf32>
    %29 = stablehlo.subtract %arg3, %28 : tensor<8x8xf32>
    %30 = stablehlo.divide %21, %cst : tensor<f32>
    return %17, %26, %29, %30 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<f32>
  }
  func.func @p13_stage2_bwd_call3.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}, %arg7: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %9 = stablehlo.add %arg5, %5 : tensor<8xf32>
    %10 = stablehlo.add %arg6, %7 : tensor<8x8xf32>
    %11 = stablehlo.multiply %9, %cst_1 : tensor<8xf32>
    %12 = stablehlo.divide %11, %cst_2 : tensor<8xf32>
    %13 = stablehlo.subtract %arg7, %12 : tensor<8xf32>
    %14 = stablehlo.multiply %10, %cst : tensor<8x8xf32>
    %15 = stablehlo.divide %14, %cst_0 : tensor<8x8xf32>
    %16 = stablehlo.subtract %arg0, %15 : tensor<8x8xf32>
    return %8, %13, %16 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p14_stage1_bwd_call3.step(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32> {tf.aliasing_output = 0 : i32}, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<4x8xf32> {jax.buffer_donor = true}, %arg5: tensor<8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8x8xf32> {tf.aliasing_output = 2 : i32}, %arg7: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 0 : i64} {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<8x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<8xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg4, %arg3 : tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
    %3 = stablehlo.reduce(%2 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.reshape %3 : (tensor<8xf32>) -> tensor<1x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = stablehlo.dot_general %2, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %9 = stablehlo.add %arg5, %5 : tensor<8xf32>
    %10 = stablehlo.add %arg6, %7 : tensor<8x8xf32>
    %11 = stablehlo.multiply %9, %cst_1 : tensor<8xf32>
    %12 = stablehlo.divide %11, %cst_2 : tensor<8xf32>
    %13 = stablehlo.subtract %arg7, %12 : tensor<8xf32>
    %14 = stablehlo.multiply %10, %cst : tensor<8x8xf32>
    %15 = stablehlo.divide %14, %cst_0 : tensor<8x8xf32>
    %16 = stablehlo.subtract %arg0, %15 : tensor<8x8xf32>
    return %8, %13, %16 : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
  func.func @p15_stage0_bwd_call3.step(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32> {jax.buffer_donor = true}, %arg2: tensor<4x8xf32> {jax.buffer_donor = true}, %arg3: tensor<1x4x8xf32> {jax.buffer_donor = true}, %arg4: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg5: tensor<8x8xf32> {tf.aliasing_output = 1 : i32}, %arg6: tensor<8xf32>, %arg7: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8x8xf32>) attributes {mesh_shape = #sdy.mesh<["data"=2]>, reserved_hbm_bytes = 512 : i64} {
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
}
