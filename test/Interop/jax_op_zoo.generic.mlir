"builtin.module"() <{sym_name = "jit_zoo"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}]}} : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[]>, sym_name = "empty_mesh"}> {stablehlo.mesh = {axes = []}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, {}, {sdy.sharding = #sdy.sharding<@empty_mesh, [{}]>}, {}, {}, {}], function_type = (tensor<4x4xf32>, tensor<2xi32>, tensor<2xui32>, tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>, tensor<3x3xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<1x3x8x8xf32>, tensor<2x3xf32>, tensor<4x4xbf16>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x4xi32>, tensor<2x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xui32>, tensor<2x4xf32>, tensor<4x2x2xf32>, tensor<4x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}, {jax.result_info = "result[8]"}, {jax.result_info = "result[9]"}, {jax.result_info = "result[10]"}, {jax.result_info = "result[11]"}, {jax.result_info = "result[12]"}, {jax.result_info = "result[13]"}, {jax.result_info = "result[14]"}, {jax.result_info = "result[15]"}, {jax.result_info = "result[16]"}, {jax.result_info = "result[17]"}, {jax.result_info = "result[18]"}, {jax.result_info = "result[19]"}, {jax.result_info = "result[20]"}, {jax.result_info = "result[21]"}, {jax.result_info = "result[22]"}, {jax.result_info = "result[23]"}, {jax.result_info = "result[24]"}, {jax.result_info = "result[25]"}, {jax.result_info = "result[26][0]"}, {jax.result_info = "result[26][1]"}, {jax.result_info = "result[26][2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg53: tensor<4x4xf32>, %arg54: tensor<2xi32>, %arg55: tensor<2xui32>, %arg56: tensor<1x2x8x8xf32>, %arg57: tensor<3x2x3x3xf32>, %arg58: tensor<3x3xf32>):
    %179 = "sdy.sharding_constraint"(%arg53) <{sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %180 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %181:2 = "stablehlo.while"(%180, %179) ({
    ^bb0(%arg70: tensor<i32>, %arg71: tensor<4x4xf32>):
      %307 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %308 = "stablehlo.compare"(%arg70, %307) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%308) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg68: tensor<i32>, %arg69: tensor<4x4xf32>):
      %304 = "func.call"(%arg69) <{callee = @closed_call}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %305 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %306 = "stablehlo.add"(%arg68, %305) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%306, %304) : (tensor<i32>, tensor<4x4xf32>) -> ()
    }) : (tensor<i32>, tensor<4x4xf32>) -> (tensor<i32>, tensor<4x4xf32>)
    %182 = "stablehlo.slice"(%179) <{limit_indices = array<i64: 1, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<4x4xf32>) -> tensor<1x1xf32>
    %183 = "stablehlo.reshape"(%182) : (tensor<1x1xf32>) -> tensor<f32>
    %184 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %185 = "stablehlo.compare"(%183, %184) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %186 = "stablehlo.convert"(%185) : (tensor<i1>) -> tensor<i32>
    %187 = "stablehlo.case"(%186) ({
      %301 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %302 = "stablehlo.broadcast_in_dim"(%301) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
      %303 = "stablehlo.subtract"(%179, %302) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      "stablehlo.return"(%303) : (tensor<4x4xf32>) -> ()
    }, {
      %298 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %299 = "stablehlo.broadcast_in_dim"(%298) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
      %300 = "stablehlo.add"(%179, %299) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      "stablehlo.return"(%300) : (tensor<4x4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4x4xf32>
    %188:2 = "func.call"(%arg58) <{callee = @eigh}> : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>)
    %189 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %190 = "stablehlo.constant"() <{value = dense<32> : tensor<i32>}> : () -> tensor<i32>
    %191 = "stablehlo.shift_right_logical"(%189, %190) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %192 = "stablehlo.convert"(%191) : (tensor<i32>) -> tensor<ui32>
    %193 = "stablehlo.broadcast_in_dim"(%192) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
    %194 = "stablehlo.constant"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
    %195 = "stablehlo.and"(%189, %194) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %196 = "stablehlo.convert"(%195) : (tensor<i32>) -> tensor<ui32>
    %197 = "stablehlo.broadcast_in_dim"(%196) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
    %198 = "stablehlo.concatenate"(%193, %197) <{dimension = 0 : i64}> : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
    %199 = "stablehlo.concatenate"(%198, %198) <{dimension = 0 : i64}> : (tensor<2xui32>, tensor<2xui32>) -> tensor<4xui32>
    %200 = "stablehlo.reshape"(%199) : (tensor<4xui32>) -> tensor<2x2xui32>
    %201 = "stablehlo.bitcast_convert"(%200) : (tensor<2x2xui32>) -> tensor<2xui64>
    %202:2 = "stablehlo.rng_bit_generator"(%201) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %203 = "stablehlo.bitcast_convert"(%202#0) : (tensor<2xui64>) -> tensor<2x2xui32>
    %204 = "stablehlo.reshape"(%203) : (tensor<2x2xui32>) -> tensor<4xui32>
    %205 = "func.call"(%179) <{callee = @sort}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %206 = "func.call"(%179) <{callee = @argmax}> : (tensor<4x4xf32>) -> tensor<4xi32>
    %207 = "func.call"(%179) <{callee = @cumsum}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %208 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %209 = "stablehlo.broadcast_in_dim"(%208) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %210 = "stablehlo.compare"(%arg54, %209) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %211 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %212 = "stablehlo.broadcast_in_dim"(%211) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %213 = "stablehlo.add"(%arg54, %212) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %214 = "stablehlo.select"(%210, %213, %arg54) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %215 = "stablehlo.broadcast_in_dim"(%214) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %216 = "stablehlo.gather"(%179, %215) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<4x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
    %217 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %218 = "stablehlo.broadcast_in_dim"(%217) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %219 = "stablehlo.compare"(%arg54, %218) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %220 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %221 = "stablehlo.broadcast_in_dim"(%220) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %222 = "stablehlo.add"(%arg54, %221) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %223 = "stablehlo.select"(%219, %222, %arg54) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %224 = "stablehlo.broadcast_in_dim"(%223) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %225 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %226 = "stablehlo.broadcast_in_dim"(%225) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4xf32>
    %227 = "stablehlo.scatter"(%179, %224, %226) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg66: tensor<f32>, %arg67: tensor<f32>):
      %297 = "stablehlo.add"(%arg66, %arg67) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%297) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %228 = "func.call"(%arg55) <{callee = @_normal}> : (tensor<2xui32>) -> tensor<4xf32>
    %229 = "chlo.erf"(%179) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %230:2 = "chlo.top_k"(%179) <{k = 2 : i64}> : (tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %231 = "stablehlo.convolution"(%arg56, %arg57) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x8x8xf32>
    %232 = "stablehlo.slice"(%arg54) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xi32>) -> tensor<1xi32>
    %233 = "stablehlo.reshape"(%232) : (tensor<1xi32>) -> tensor<i32>
    %234 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %235 = "stablehlo.compare"(%233, %234) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %236 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %237 = "stablehlo.add"(%233, %236) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %238 = "stablehlo.select"(%235, %237, %233) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %239 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %240 = "stablehlo.dynamic_slice"(%179, %238, %239) <{slice_sizes = array<i64: 2, 3>}> : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %241 = "stablehlo.convert"(%179) : (tensor<4x4xf32>) -> tensor<4x4xi8>
    %242 = "stablehlo.convert"(%241) : (tensor<4x4xi8>) -> tensor<4x4xbf16>
    %243 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %244 = "stablehlo.reduce"(%179, %243) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg64: tensor<f32>, %arg65: tensor<f32>):
      %296 = "stablehlo.maximum"(%arg64, %arg65) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%296) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    %245 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %246 = "stablehlo.broadcast_in_dim"(%245) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %247 = "stablehlo.maximum"(%246, %244) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %248 = "stablehlo.is_finite"(%247) : (tensor<4xf32>) -> tensor<4xi1>
    %249 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %250 = "stablehlo.broadcast_in_dim"(%249) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %251 = "stablehlo.select"(%248, %247, %250) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %252 = "stablehlo.broadcast_in_dim"(%251) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %253 = "stablehlo.broadcast_in_dim"(%252) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x4xf32>
    %254 = "stablehlo.subtract"(%179, %253) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %255 = "stablehlo.exponential"(%254) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %256 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %257 = "stablehlo.reduce"(%255, %256) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg62: tensor<f32>, %arg63: tensor<f32>):
      %295 = "stablehlo.add"(%arg62, %arg63) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%295) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    %258 = "stablehlo.abs"(%257) : (tensor<4xf32>) -> tensor<4xf32>
    %259 = "stablehlo.log"(%258) : (tensor<4xf32>) -> tensor<4xf32>
    %260 = "stablehlo.add"(%259, %251) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %261 = "stablehlo.dot_general"(%179, %179) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %262 = "stablehlo.constant"() <{value = dense<-1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %263 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %264 = "func.call"(%179, %262, %263) <{callee = @clip}> : (tensor<4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32>
    %265 = "stablehlo.constant"() <{value = dense<3.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %266 = "stablehlo.broadcast_in_dim"(%265) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %267 = "stablehlo.power"(%179, %266) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %268 = "stablehlo.exponential_minus_one"(%179) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %269 = "stablehlo.abs"(%179) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %270 = "stablehlo.log_plus_one"(%269) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %271 = "stablehlo.add"(%268, %270) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %272 = "stablehlo.negate"(%179) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %273 = "stablehlo.exponential"(%272) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %274 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %275 = "stablehlo.broadcast_in_dim"(%274) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %276 = "stablehlo.add"(%275, %273) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %277 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %278 = "stablehlo.broadcast_in_dim"(%277) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %279 = "stablehlo.divide"(%278, %276) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %280 = "stablehlo.add"(%271, %279) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %281 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<12xi32>
    %282 = "stablehlo.reshape"(%281) : (tensor<12xi32>) -> tensor<3x4xi32>
    %283 = "stablehlo.concatenate"(%179, %179) <{dimension = 0 : i64}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    %284 = "stablehlo.slice"(%283) <{limit_indices = array<i64: 5, 4>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 1>}> : (tensor<8x4xf32>) -> tensor<2x4xf32>
    %285 = "stablehlo.convert"(%179) : (tensor<4x4xf32>) -> tensor<4x4xcomplex<f32>>
    %286 = "func.call"(%285) <{callee = @fft}> : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %287 = "stablehlo.optimization_barrier"(%179) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %288 = "stablehlo.reduce_precision"(%179) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %289:3 = "sdy.manual_computation"(%179) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>, manual_axes = #sdy<manual_axes{"a", "b"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {"b"}]>, <@mesh, [{"a"}, {}, {}]>, <@mesh, [{"a"}, {"b"}]>]>}> ({
    ^bb0(%arg59: tensor<2x2xf32>):
      %290 = "stablehlo.all_reduce"(%arg59) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg60: tensor<f32>, %arg61: tensor<f32>):
        %294 = "stablehlo.add"(%arg60, %arg61) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%294) : (tensor<f32>) -> ()
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %291 = "stablehlo.broadcast_in_dim"(%arg59) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
      %292 = "stablehlo.all_gather"(%291) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> : (tensor<1x2x2xf32>) -> tensor<2x2x2xf32>
      %293 = "stablehlo.collective_permute"(%arg59) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 0], [1, 3], [3, 1]]> : tensor<4x2xi64>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
      "sdy.return"(%290, %292, %293) : (tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>) -> ()
    }) : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<4x2x2xf32>, tensor<4x4xf32>)
    "func.return"(%181#1, %187, %205, %206, %207, %216, %227, %228, %229, %230#0, %231, %240, %242, %260, %261, %264, %267, %280, %282, %284, %188#0, %188#1, %286, %287, %288, %202#1, %289#0, %289#1, %289#2) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<1x3x8x8xf32>, tensor<2x3xf32>, tensor<4x4xbf16>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x4xi32>, tensor<2x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xui32>, tensor<2x4xf32>, tensor<4x2x2xf32>, tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, res_attrs = [{}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg52: tensor<4x4xf32>):
    %174 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %175 = "stablehlo.broadcast_in_dim"(%174) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %176 = "stablehlo.multiply"(%arg52, %175) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %177 = "stablehlo.sine"(%arg52) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %178 = "stablehlo.add"(%176, %177) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%178) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>), res_attrs = [{}, {}], sym_name = "eigh", sym_visibility = "private"}> ({
  ^bb0(%arg51: tensor<3x3xf32>):
    %155 = "stablehlo.transpose"(%arg51) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %156 = "stablehlo.add"(%arg51, %155) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %157 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %158 = "stablehlo.broadcast_in_dim"(%157) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %159 = "stablehlo.divide"(%156, %158) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %160:3 = "stablehlo.custom_call"(%159) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_ssyevd_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<i32>)
    %161 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %162 = "stablehlo.broadcast_in_dim"(%161) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %163 = "stablehlo.compare"(%160#2, %162) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %164 = "stablehlo.broadcast_in_dim"(%163) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %165 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %166 = "stablehlo.broadcast_in_dim"(%165) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %167 = "stablehlo.broadcast_in_dim"(%164) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %168 = "stablehlo.select"(%167, %160#0, %166) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %169 = "stablehlo.broadcast_in_dim"(%163) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %170 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %171 = "stablehlo.broadcast_in_dim"(%170) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %172 = "stablehlo.broadcast_in_dim"(%169) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %173 = "stablehlo.select"(%172, %160#1, %171) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%173, %168) : (tensor<3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, res_attrs = [{}], sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg48: tensor<4x4xf32>):
    %139 = "stablehlo.sort"(%arg48) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg49: tensor<f32>, %arg50: tensor<f32>):
      %140 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %141 = "stablehlo.compare"(%arg49, %140) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %142 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %143 = "stablehlo.select"(%141, %142, %arg49) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %144 = "stablehlo.compare"(%arg49, %arg49) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %145 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %146 = "stablehlo.select"(%144, %145, %143) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %147 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %148 = "stablehlo.compare"(%arg50, %147) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %149 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %150 = "stablehlo.select"(%148, %149, %arg50) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %151 = "stablehlo.compare"(%arg50, %arg50) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %152 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %153 = "stablehlo.select"(%151, %152, %150) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %154 = "stablehlo.compare"(%146, %153) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%154) : (tensor<i1>) -> ()
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%139) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4xi32>, sym_name = "argmax", sym_visibility = "private"}> ({
  ^bb0(%arg43: tensor<4x4xf32>):
    %126 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x4xi32>
    %127 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %128 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %129:2 = "stablehlo.reduce"(%arg43, %126, %127, %128) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg44: tensor<f32>, %arg45: tensor<i32>, %arg46: tensor<f32>, %arg47: tensor<i32>):
      %130 = "stablehlo.compare"(%arg44, %arg46) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %131 = "stablehlo.compare"(%arg44, %arg44) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %132 = "stablehlo.or"(%130, %131) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %133 = "stablehlo.compare"(%arg44, %arg46) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %134 = "stablehlo.compare"(%arg45, %arg47) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %135 = "stablehlo.and"(%133, %134) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %136 = "stablehlo.or"(%132, %135) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %137 = "stablehlo.select"(%132, %arg44, %arg46) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %138 = "stablehlo.select"(%136, %arg45, %arg47) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%137, %138) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<4x4xf32>, tensor<4x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
    "func.return"(%129#1) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, res_attrs = [{}], sym_name = "cumsum", sym_visibility = "private"}> ({
  ^bb0(%arg42: tensor<4x4xf32>):
    %125 = "func.call"(%arg42) <{callee = @cumsum_0}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%125) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, sym_name = "cumsum_0", sym_visibility = "private"}> ({
  ^bb0(%arg39: tensor<4x4xf32>):
    %121 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %122 = "stablehlo.broadcast_in_dim"(%121) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %123 = "stablehlo.reduce_window"(%arg39, %122) <{base_dilations = array<i64: 1, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg40: tensor<f32>, %arg41: tensor<f32>):
      %124 = "stablehlo.add"(%arg40, %arg41) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%124) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    "func.return"(%123) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<4xf32>, res_attrs = [{}], sym_name = "_normal", sym_visibility = "private"}> ({
  ^bb0(%arg38: tensor<2xui32>):
    %120 = "func.call"(%arg38) <{callee = @_normal_real}> : (tensor<2xui32>) -> tensor<4xf32>
    "func.return"(%120) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<4xf32>, res_attrs = [{}], sym_name = "_normal_real", sym_visibility = "private"}> ({
  ^bb0(%arg37: tensor<2xui32>):
    %113 = "stablehlo.constant"() <{value = dense<-0.99999994> : tensor<f32>}> : () -> tensor<f32>
    %114 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %115 = "func.call"(%arg37, %113, %114) <{callee = @_uniform}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
    %116 = "chlo.erf_inv"(%115) : (tensor<4xf32>) -> tensor<4xf32>
    %117 = "stablehlo.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
    %118 = "stablehlo.broadcast_in_dim"(%117) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %119 = "stablehlo.multiply"(%118, %116) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%119) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>, res_attrs = [{}], sym_name = "_uniform", sym_visibility = "private"}> ({
  ^bb0(%arg34: tensor<2xui32>, %arg35: tensor<f32>, %arg36: tensor<f32>):
    %79 = "stablehlo.broadcast_in_dim"(%arg35) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %80 = "stablehlo.broadcast_in_dim"(%arg36) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %81 = "stablehlo.slice"(%arg34) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %82 = "stablehlo.reshape"(%81) : (tensor<1xui32>) -> tensor<ui32>
    %83 = "stablehlo.slice"(%arg34) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %84 = "stablehlo.reshape"(%83) : (tensor<1xui32>) -> tensor<ui32>
    %85 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xui64>
    %86 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %87 = "stablehlo.broadcast_in_dim"(%86) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<4xui64>
    %88 = "stablehlo.multiply"(%87, %85) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    %89 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %90 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<4xui64>
    %91 = "stablehlo.shift_right_logical"(%88, %90) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    %92 = "stablehlo.convert"(%88) : (tensor<4xui64>) -> tensor<4xui32>
    %93 = "stablehlo.convert"(%91) : (tensor<4xui64>) -> tensor<4xui32>
    %94:2 = "func.call"(%82, %84, %93, %92) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>)
    %95 = "stablehlo.xor"(%94#0, %94#1) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %96 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
    %97 = "stablehlo.broadcast_in_dim"(%96) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %98 = "stablehlo.shift_right_logical"(%95, %97) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %99 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
    %100 = "stablehlo.broadcast_in_dim"(%99) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %101 = "stablehlo.or"(%98, %100) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %102 = "stablehlo.bitcast_convert"(%101) : (tensor<4xui32>) -> tensor<4xf32>
    %103 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %104 = "stablehlo.broadcast_in_dim"(%103) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %105 = "stablehlo.subtract"(%102, %104) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %106 = "stablehlo.subtract"(%80, %79) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %107 = "stablehlo.broadcast_in_dim"(%106) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<4xf32>
    %108 = "stablehlo.multiply"(%105, %107) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %109 = "stablehlo.broadcast_in_dim"(%79) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<4xf32>
    %110 = "stablehlo.add"(%108, %109) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %111 = "stablehlo.broadcast_in_dim"(%79) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<4xf32>
    %112 = "stablehlo.maximum"(%111, %110) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%112) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<ui32>, %arg13: tensor<ui32>, %arg14: tensor<4xui32>, %arg15: tensor<4xui32>):
    %62 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %63 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %64 = "stablehlo.xor"(%arg12, %arg13) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %65 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %66 = "stablehlo.xor"(%64, %65) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %67 = "stablehlo.broadcast_in_dim"(%arg12) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %68 = "stablehlo.add"(%arg14, %67) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %69 = "stablehlo.broadcast_in_dim"(%arg13) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %70 = "stablehlo.add"(%arg15, %69) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %71 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %72 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %73:9 = "stablehlo.while"(%72, %71, %68, %70, %arg13, %66, %arg12, %62, %63) ({
    ^bb0(%arg25: tensor<i32>, %arg26: tensor<i32>, %arg27: tensor<4xui32>, %arg28: tensor<4xui32>, %arg29: tensor<ui32>, %arg30: tensor<ui32>, %arg31: tensor<ui32>, %arg32: tensor<4xui32>, %arg33: tensor<4xui32>):
      %77 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %78 = "stablehlo.compare"(%arg25, %77) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%78) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg16: tensor<i32>, %arg17: tensor<i32>, %arg18: tensor<4xui32>, %arg19: tensor<4xui32>, %arg20: tensor<ui32>, %arg21: tensor<ui32>, %arg22: tensor<ui32>, %arg23: tensor<4xui32>, %arg24: tensor<4xui32>):
      %74:8 = "func.call"(%arg17, %arg18, %arg19, %arg20, %arg21, %arg22, %arg23, %arg24) <{callee = @closed_call_1}> : (tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %75 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %76 = "stablehlo.add"(%arg16, %75) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%76, %74#0, %74#1, %74#2, %74#3, %74#4, %74#5, %74#6, %74#7) : (tensor<i32>, tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%73#2, %73#3) : (tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call_1", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<i32>, %arg5: tensor<4xui32>, %arg6: tensor<4xui32>, %arg7: tensor<ui32>, %arg8: tensor<ui32>, %arg9: tensor<ui32>, %arg10: tensor<4xui32>, %arg11: tensor<4xui32>):
    %7 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.add"(%arg4, %7) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %9 = "stablehlo.slice"(%arg10) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %10 = "stablehlo.reshape"(%9) : (tensor<1xui32>) -> tensor<ui32>
    %11 = "stablehlo.add"(%arg5, %arg6) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %12 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %13 = "stablehlo.shift_left"(%arg6, %12) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %14 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %15 = "stablehlo.subtract"(%14, %10) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %17 = "stablehlo.shift_right_logical"(%arg6, %16) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %18 = "stablehlo.or"(%13, %17) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %19 = "stablehlo.xor"(%11, %18) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %20 = "stablehlo.slice"(%arg10) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %21 = "stablehlo.reshape"(%20) : (tensor<1xui32>) -> tensor<ui32>
    %22 = "stablehlo.add"(%11, %19) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %23 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %24 = "stablehlo.shift_left"(%19, %23) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %25 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %26 = "stablehlo.subtract"(%25, %21) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %28 = "stablehlo.shift_right_logical"(%19, %27) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %29 = "stablehlo.or"(%24, %28) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %30 = "stablehlo.xor"(%22, %29) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %31 = "stablehlo.slice"(%arg10) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %32 = "stablehlo.reshape"(%31) : (tensor<1xui32>) -> tensor<ui32>
    %33 = "stablehlo.add"(%22, %30) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %34 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %35 = "stablehlo.shift_left"(%30, %34) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %36 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %37 = "stablehlo.subtract"(%36, %32) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %39 = "stablehlo.shift_right_logical"(%30, %38) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %40 = "stablehlo.or"(%35, %39) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %41 = "stablehlo.xor"(%33, %40) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %42 = "stablehlo.slice"(%arg10) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %43 = "stablehlo.reshape"(%42) : (tensor<1xui32>) -> tensor<ui32>
    %44 = "stablehlo.add"(%33, %41) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %45 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %46 = "stablehlo.shift_left"(%41, %45) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %47 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %48 = "stablehlo.subtract"(%47, %43) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %49 = "stablehlo.broadcast_in_dim"(%48) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %50 = "stablehlo.shift_right_logical"(%41, %49) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %51 = "stablehlo.or"(%46, %50) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %52 = "stablehlo.xor"(%44, %51) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %53 = "stablehlo.broadcast_in_dim"(%arg7) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %54 = "stablehlo.add"(%44, %53) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %55 = "stablehlo.broadcast_in_dim"(%arg8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %56 = "stablehlo.add"(%52, %55) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %57 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %58 = "stablehlo.add"(%arg4, %57) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %59 = "stablehlo.convert"(%58) : (tensor<i32>) -> tensor<ui32>
    %60 = "stablehlo.broadcast_in_dim"(%59) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %61 = "stablehlo.add"(%56, %60) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    "func.return"(%8, %54, %61, %arg8, %arg9, %arg7, %arg11, %arg10) : (tensor<i32>, tensor<4xui32>, tensor<4xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32>, res_attrs = [{}], sym_name = "clip", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<4x4xf32>, %arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %3 = "stablehlo.maximum"(%2, %arg1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %4 = "stablehlo.convert"(%arg3) : (tensor<f32>) -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %6 = "stablehlo.minimum"(%5, %3) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%6) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>, res_attrs = [{}], sym_name = "fft", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x4xcomplex<f32>>):
    %0 = "stablehlo.fft"(%arg0) <{fft_length = array<i64: 4>, fft_type = #stablehlo<fft_type FFT>}> : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    "func.return"(%0) : (tensor<4x4xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

