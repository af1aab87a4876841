"builtin.module"() <{sym_name = "jit_train_step"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], function_type = (tensor<16x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1][0][0]"}, {jax.result_info = "result[1][0][1]"}, {jax.result_info = "result[1][1][0]"}, {jax.result_info = "result[1][1][1]"}, {jax.result_info = "result[1][2][0]"}, {jax.result_info = "result[1][2][1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32x32xf32>, %arg3: tensor<32xf32>, %arg4: tensor<32x4xf32>, %arg5: tensor<4xf32>, %arg6: tensor<8x16xf32>, %arg7: tensor<8x4xf32>):
    %0:2 = "mpmd.named_computation"(%arg0, %arg1, %arg6) <{origin = #mpmd.user_origin<"layer1">}> ({
    ^bb0(%arg42: tensor<16x32xf32>, %arg43: tensor<32xf32>, %arg44: tensor<8x16xf32>):
      %99 = "stablehlo.dot_general"(%arg44, %arg42) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %100 = "stablehlo.broadcast_in_dim"(%arg43) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %101 = "stablehlo.broadcast_in_dim"(%100) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %102 = "stablehlo.add"(%99, %101) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %103 = "stablehlo.tanh"(%102) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      %104 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %105 = "stablehlo.broadcast_in_dim"(%104) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x32xf32>
      %106 = "stablehlo.subtract"(%105, %103) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      "mpmd.return"(%103, %106) : (tensor<8x32xf32>, tensor<8x32xf32>) -> ()
    }) : (tensor<16x32xf32>, tensor<32xf32>, tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>)
    %1:2 = "mpmd.named_computation"(%arg2, %arg3, %0#0) <{origin = #mpmd.user_origin<"layer2">}> ({
    ^bb0(%arg39: tensor<32x32xf32>, %arg40: tensor<32xf32>, %arg41: tensor<8x32xf32>):
      %91 = "stablehlo.dot_general"(%arg41, %arg39) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
      %92 = "stablehlo.broadcast_in_dim"(%arg40) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %93 = "stablehlo.broadcast_in_dim"(%92) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %94 = "stablehlo.add"(%91, %93) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %95 = "stablehlo.tanh"(%94) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      %96 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %97 = "stablehlo.broadcast_in_dim"(%96) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x32xf32>
      %98 = "stablehlo.subtract"(%97, %95) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      "mpmd.return"(%95, %98) : (tensor<8x32xf32>, tensor<8x32xf32>) -> ()
    }) : (tensor<32x32xf32>, tensor<32xf32>, tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>)
    %2:2 = "mpmd.named_computation"(%arg4, %arg5, %1#0) <{origin = #mpmd.user_origin<"layer3">}> ({
    ^bb0(%arg36: tensor<32x4xf32>, %arg37: tensor<4xf32>, %arg38: tensor<8x32xf32>):
      %83 = "stablehlo.dot_general"(%arg38, %arg36) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
      %84 = "stablehlo.broadcast_in_dim"(%arg37) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
      %85 = "stablehlo.broadcast_in_dim"(%84) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<8x4xf32>
      %86 = "stablehlo.add"(%83, %85) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %87 = "stablehlo.tanh"(%86) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %88 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %89 = "stablehlo.broadcast_in_dim"(%88) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x4xf32>
      %90 = "stablehlo.subtract"(%89, %87) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      "mpmd.return"(%87, %90) : (tensor<8x4xf32>, tensor<8x4xf32>) -> ()
    }) : (tensor<32x4xf32>, tensor<4xf32>, tensor<8x32xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
    %3 = "stablehlo.subtract"(%2#0, %arg7) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %4 = "stablehlo.multiply"(%3, %3) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %5 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x4xf32>
    %7 = "stablehlo.multiply"(%6, %3) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.reduce"(%4, %8) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
      %82 = "stablehlo.add"(%arg34, %arg35) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%82) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
    %10 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.divide"(%9, %10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %12 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.divide"(%12, %13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x4xf32>
    %16 = "stablehlo.multiply"(%15, %7) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %17:3 = "mpmd.named_computation"(%arg4, %1#0, %2#0, %2#1, %16) <{origin = #mpmd.user_origin<"layer3"(1)>}> ({
    ^bb0(%arg25: tensor<32x4xf32>, %arg26: tensor<8x32xf32>, %arg27: tensor<8x4xf32>, %arg28: tensor<8x4xf32>, %arg29: tensor<8x4xf32>):
      %69 = "stablehlo.multiply"(%arg29, %arg28) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %70 = "stablehlo.multiply"(%69, %arg27) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %71 = "stablehlo.add"(%69, %70) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %72 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %73 = "stablehlo.reduce"(%71, %72) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
        %81 = "stablehlo.add"(%arg32, %arg33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%81) : (tensor<f32>) -> ()
      }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
      %74 = "stablehlo.reshape"(%73) : (tensor<4xf32>) -> tensor<1x4xf32>
      %75 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %76 = "stablehlo.reduce"(%74, %75) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
        %80 = "stablehlo.add"(%arg30, %arg31) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%80) : (tensor<f32>) -> ()
      }) : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
      %77 = "stablehlo.dot_general"(%71, %arg26) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x4xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
      %78 = "stablehlo.transpose"(%77) <{permutation = array<i64: 1, 0>}> : (tensor<4x32xf32>) -> tensor<32x4xf32>
      %79 = "stablehlo.dot_general"(%71, %arg25) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x4xf32>, tensor<32x4xf32>) -> tensor<8x32xf32>
      "mpmd.return"(%78, %76, %79) : (tensor<32x4xf32>, tensor<4xf32>, tensor<8x32xf32>) -> ()
    }) : (tensor<32x4xf32>, tensor<8x32xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<32x4xf32>, tensor<4xf32>, tensor<8x32xf32>)
    %18:3 = "mpmd.named_computation"(%arg2, %0#0, %1#0, %1#1, %17#2) <{origin = #mpmd.user_origin<"layer2"(1)>}> ({
    ^bb0(%arg16: tensor<32x32xf32>, %arg17: tensor<8x32xf32>, %arg18: tensor<8x32xf32>, %arg19: tensor<8x32xf32>, %arg20: tensor<8x32xf32>):
      %56 = "stablehlo.multiply"(%arg20, %arg19) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %57 = "stablehlo.multiply"(%56, %arg18) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %58 = "stablehlo.add"(%56, %57) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %59 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %60 = "stablehlo.reduce"(%58, %59) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg23: tensor<f32>, %arg24: tensor<f32>):
        %68 = "stablehlo.add"(%arg23, %arg24) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%68) : (tensor<f32>) -> ()
      }) : (tensor<8x32xf32>, tensor<f32>) -> tensor<32xf32>
      %61 = "stablehlo.reshape"(%60) : (tensor<32xf32>) -> tensor<1x32xf32>
      %62 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %63 = "stablehlo.reduce"(%61, %62) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
        %67 = "stablehlo.add"(%arg21, %arg22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%67) : (tensor<f32>) -> ()
      }) : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
      %64 = "stablehlo.dot_general"(%58, %arg17) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<32x32xf32>
      %65 = "stablehlo.transpose"(%64) <{permutation = array<i64: 1, 0>}> : (tensor<32x32xf32>) -> tensor<32x32xf32>
      %66 = "stablehlo.dot_general"(%58, %arg16) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
      "mpmd.return"(%65, %63, %66) : (tensor<32x32xf32>, tensor<32xf32>, tensor<8x32xf32>) -> ()
    }) : (tensor<32x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> (tensor<32x32xf32>, tensor<32xf32>, tensor<8x32xf32>)
    %19:2 = "mpmd.named_computation"(%arg6, %0#0, %0#1, %18#2) <{origin = #mpmd.user_origin<"layer1"(1)>}> ({
    ^bb0(%arg8: tensor<8x16xf32>, %arg9: tensor<8x32xf32>, %arg10: tensor<8x32xf32>, %arg11: tensor<8x32xf32>):
      %44 = "stablehlo.multiply"(%arg11, %arg10) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %45 = "stablehlo.multiply"(%44, %arg9) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %46 = "stablehlo.add"(%44, %45) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %47 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %48 = "stablehlo.reduce"(%46, %47) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
        %55 = "stablehlo.add"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%55) : (tensor<f32>) -> ()
      }) : (tensor<8x32xf32>, tensor<f32>) -> tensor<32xf32>
      %49 = "stablehlo.reshape"(%48) : (tensor<32xf32>) -> tensor<1x32xf32>
      %50 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %51 = "stablehlo.reduce"(%49, %50) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
        %54 = "stablehlo.add"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%54) : (tensor<f32>) -> ()
      }) : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
      %52 = "stablehlo.dot_general"(%46, %arg8) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
      %53 = "stablehlo.transpose"(%52) <{permutation = array<i64: 1, 0>}> : (tensor<32x16xf32>) -> tensor<16x32xf32>
      "mpmd.return"(%53, %51) : (tensor<16x32xf32>, tensor<32xf32>) -> ()
    }) : (tensor<8x16xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> (tensor<16x32xf32>, tensor<32xf32>)
    %20 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x32xf32>
    %22 = "stablehlo.multiply"(%21, %19#0) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %23 = "stablehlo.subtract"(%arg0, %22) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %24 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<32xf32>
    %26 = "stablehlo.multiply"(%25, %19#1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %27 = "stablehlo.subtract"(%arg1, %26) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %28 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<32x32xf32>
    %30 = "stablehlo.multiply"(%29, %18#0) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %31 = "stablehlo.subtract"(%arg2, %30) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %32 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<32xf32>
    %34 = "stablehlo.multiply"(%33, %18#1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %35 = "stablehlo.subtract"(%arg3, %34) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %36 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<32x4xf32>
    %38 = "stablehlo.multiply"(%37, %17#0) : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
    %39 = "stablehlo.subtract"(%arg4, %38) : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
    %40 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %41 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %42 = "stablehlo.multiply"(%41, %17#1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %43 = "stablehlo.subtract"(%arg5, %42) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%11, %23, %27, %31, %35, %39, %43) : (tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>) -> ()
  }) {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>} : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

