"builtin.module"() ({
  "func.func"() <{function_type = (tensor<?x4xf32, #stablehlo.bounds<8, ?>>, !stablehlo.token, tensor<4xf32>, tensor<?xf32, #stablehlo.type_extensions<bounds = [3]>>) -> (!stablehlo.token, tensor<4xf32>), sym_name = "opaque"}> ({
  ^bb0(%arg0: tensor<?x4xf32, #stablehlo.bounds<8, ?>>, %arg1: !stablehlo.token, %arg2: tensor<4xf32>, %arg3: tensor<?xf32, #stablehlo.type_extensions<bounds = [3]>>):
    %0 = "stablehlo.after_all"(%arg1, %arg1) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
    %1 = "stablehlo.custom_call"(%arg2) <{api_version = 4 : i32, backend_config = {foo = 1 : i64}, call_target_name = "my_target", has_side_effect = false, operand_layouts = [dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<0> : tensor<1xindex>]}> {mhlo.frontend_attributes = {_xla_stream = "1"}, mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
    %2:2 = "stablehlo.rng_bit_generator"(%arg2) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}> : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xui32>)
    %3 = "stablehlo.fft"(%arg2) <{fft_length = array<i64: 4>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<4xf32>) -> tensor<3xcomplex<f32>>
    %4 = "stablehlo.sine"(%arg2) <{result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %12 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.some_future_op"(%arg2) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32>, comparison_direction = #stablehlo<comparison_direction BOGUS>, dims = #stablehlo.dot<lhs_ragged_dimensions = [1]>, empty = #stablehlo.comparison_direction, plain = #stablehlo.future_attr, precision = #stablehlo<precision DEFAULT extra>, text = #stablehlo<"quoted">}> : (tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.future_op_with_type"() : () -> !stablehlo.future<4, "x">
    %8 = "chlo.erf"(%arg2) : (tensor<4xf32>) -> tensor<4xf32>
    %9 = "chlo.broadcast_add"(%arg2, %arg0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>, tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x4xf32>
    %10 = "mhlo.copy"(%arg2) {mhlo.sharding = #mhlo.sharding<"{devices=[2]<=[2]}">, xla_shape = #mhlo.type_extensions<bounds = [4]>} : (tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.compare"(%arg3, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<?xf32, #stablehlo.type_extensions<bounds = [3]>>, tensor<?xf32, #stablehlo.type_extensions<bounds = [3]>>) -> tensor<?xi1>
    "func.return"(%0, %1) : (!stablehlo.token, tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

