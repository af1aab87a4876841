// Each verifier rule of the mpmd dialect, pinned with its message.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{topology has two meshes named "m1"}}
func.func @duplicate_mesh() attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m1" : <["x"=4]>>>} {
  func.return
}

// -----

// expected-error @+2 {{expected '<'}}
// expected-error @+1 {{failed to parse Mpmd_Topology parameter 'meshes'}}
func.func @empty_topology() attributes {topology = #mpmd.topology<>} {
  func.return
}

// -----

// expected-error @+1 {{mesh tensor sharding has rank 1 but 'tensor<4x8xf32>' has rank 2}}
func.func @sharding_rank(%arg0: !mpmd.mesh_tensor<"m", tensor<4x8xf32>, sharding=<@mesh, [{"x"}]>>) {
  func.return
}

// -----

// expected-error @+1 {{unknown memory kind "hbm"}}
func.func @memory_kind(%arg0: !mpmd.mesh_tensor<"m", tensor<4xf32>, memory_kind="hbm">) {
  func.return
}

// -----

// expected-error @+1 {{mesh tensor must wrap a ranked tensor type, got 'tensor<*xf32>'}}
func.func @unranked(%arg0: !mpmd.mesh_tensor<"m", tensor<*xf32>>) {
  func.return
}

// -----

// expected-error @+1 {{expected 'memory_kind'}}
func.func @trailing_comma(%arg0: !mpmd.mesh_tensor<"m", tensor<4xf32>, sharding=<@mesh, [{}]>, >) {
  func.return
}

// -----

// expected-error @+1 {{origin "f" has a negative transpose count -1}}
func.func @negative_transpose() attributes {mpmd.o = #mpmd.user_origin<"f"(-1)>} {
  func.return
}

// -----

// expected-error @+1 {{origin name must not be empty}}
func.func @empty_origin() attributes {mpmd.o = #mpmd.user_origin<"">} {
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_unknown_mesh(%arg0: !m1) attributes {topology = #mpmd.topology<<"m2" : <["x"=2]>>, <"m3" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op fragment refers to mesh "m1", which is not in the topology; known meshes: "m2", "m3"}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
func.func @fragment_operand_mesh(%arg0: !m2) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op operand 0 lives on mesh "m2" but the op is on mesh "m1"}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m2) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
func.func @fragment_result_mesh(%arg0: !m1) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op result 0 lives on mesh "m2" but the op is on mesh "m1"}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m2
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_block_arg_type(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op block argument 0 has type 'tensor<8xf32>' but global type of operand 0 requires 'tensor<4xf32>'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<8xf32>) {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    mpmd.return %c : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_block_arg_count(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op has 0 block arguments but 1 global type of operands}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) () {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    mpmd.return %c : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m1b = !mpmd.mesh_tensor<"m1", tensor<2xf32>>
func.func @fragment_return_type(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op returned value 0 has type 'tensor<4xf32>' but global type of result 0 requires 'tensor<2xf32>'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1b
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @stage_without_origin(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op has a stage but no origin}}
  %0 = mpmd.fragment<mesh="m1", origin=[], stage=0> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @negative_stage(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op stage must be non-negative, got -2}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"], stage=-2> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @call_counter_type(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op call_counter must be a ui32 integer}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) {call_counter = 1 : i64} (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @in_shardings_count(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op has 2 in_shardings but 1 values}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, [{}]>, <@mesh, [{}]>]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @out_shardings_rank(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment' op out_shardings 0 has rank 2 but the value has rank 1}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"], out_shardings=[<@mesh, [{}, {}]>]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @bad_header(%arg0: !m1) {
  // expected-error @+1 {{expected 'stage', 'in_shardings' or 'out_shardings', got 'stages'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"], stages=1> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @nested_fragment(%arg0: !m1) {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    // expected-error @+1 {{'mpmd.fragment' op must be directly inside a func.func or mpmd.for}}
    %1 = mpmd.fragment<mesh="m1", origin=["g"]> () () {
      %c = stablehlo.constant dense<1.0> : tensor<4xf32>
      mpmd.return %c : tensor<4xf32>
    } : () -> !m1
    mpmd.return %x : tensor<4xf32>
  } : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_call_missing_callee(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment_call' op calls @nowhere, which is not a func.func in this module}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @nowhere(%arg0) : (!m1) -> !m1
  func.return
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_call_signature(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment_call' op global type of operand 0 has type 'tensor<4xf32>' but callee argument 0 requires 'tensor<8xf32>'}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @callee(%arg0) : (!m1) -> !m1
  func.return
}
func.func private @callee(%arg0: tensor<8xf32>) -> tensor<4xf32>

// -----

// Constant arguments come after the operands and must match the callee.
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_call_constant_args(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment_call' op operand or constant argument 1 has type 'tensor<i64>' but callee argument 1 requires 'tensor<i32>'}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @callee(%arg0) {mpmd.constant_args = [dense<3> : tensor<i64>]} : (!m1) -> !m1
  func.return
}
func.func private @callee(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32>

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_call_results(%arg0: !m1) {
  // expected-error @+1 {{'mpmd.fragment_call' op has 1 global type of results but 2 callee results}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @callee(%arg0) : (!m1) -> !m1
  func.return
}
func.func private @callee(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>
func.func @fragment_call_mesh(%arg0: !m2) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment_call' op operand 0 lives on mesh "m2" but the op is on mesh "m1"}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @callee(%arg0) : (!m2) -> !m1
  func.return
}
func.func private @callee(%arg0: tensor<4xf32>) -> tensor<4xf32>

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_call_unknown_mesh(%arg0: !m1) attributes {topology = #mpmd.topology<<"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment_call' op fragment_call refers to mesh "m1", which is not in the topology; known meshes: "m2"}}
  %0 = mpmd.fragment_call<mesh="m1", origin=[]> @callee(%arg0) : (!m1) -> !m1
  func.return
}
func.func private @callee(%arg0: tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @transfer_changes_type(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) {
  // expected-error @+1 {{'mpmd.transfer' op must keep the global type, but transfers 'tensor<4xf32>' to 'tensor<4xf16>'}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf16>>
  func.return
}

// -----

func.func @transfer_unknown_mesh(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.transfer' op destination refers to mesh "m9", which is not in the topology; known meshes: "m1"}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m9", tensor<4xf32>>
  func.return
}

// -----

func.func @assign_type(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.assign' op result global type 'tensor<8xf32>' must equal the operand type 'tensor<4xf32>'}}
  %0 = mpmd.assign %arg0 : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m1", tensor<8xf32>>
  func.return
}

// -----

func.func @assign_unknown_mesh(%arg0: tensor<4xf32>) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.assign' op result refers to mesh "m2", which is not in the topology}}
  %0 = mpmd.assign %arg0 : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  func.return
}

// -----

func.func @unassign_type(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) {
  // expected-error @+1 {{'mpmd.unassign' op result type 'tensor<4xi32>' must equal the operand's global type 'tensor<4xf32>'}}
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> tensor<4xi32>
  func.return
}

// -----

func.func @unassign_unknown_mesh(%arg0: !mpmd.mesh_tensor<"m3", tensor<4xf32>>) attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.unassign' op operand refers to mesh "m3", which is not in the topology}}
  %0 = mpmd.unassign %arg0 : (!mpmd.mesh_tensor<"m3", tensor<4xf32>>) -> tensor<4xf32>
  func.return
}

// -----

func.func @call_missing(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.call' op calls @missing, which is not a func.func in this module}}
  %0 = mpmd.call @missing(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @call_signature(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.call' op operand 0 has type 'tensor<4xf32>' but callee argument 0 requires 'tensor<4xi32>'}}
  %0 = mpmd.call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
func.func private @f(%arg0: tensor<4xi32>) -> tensor<4xf32>

// -----

func.func @for_zero_iterations(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.for' op must run at least one iteration}}
  %0 = mpmd.for (%arg0) {iterations = 0 : ui32} (%x: tensor<4xf32>, %index: tensor<ui32>) {
    mpmd.return %x : tensor<4xf32>
  } : tensor<4xf32>
  func.return
}

// -----

func.func @for_unroll(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.for' op unroll factor 4 must be positive and divide the iteration count 6}}
  %0 = mpmd.for (%arg0) {iterations = 6 : ui32, unroll_factor = 4 : ui32} (%x: tensor<4xf32>, %index: tensor<ui32>) {
    mpmd.return %x : tensor<4xf32>
  } : tensor<4xf32>
  func.return
}

// -----

func.func @for_missing_index(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.for' op has 1 block arguments but 2 operand type (then the tensor<ui32> index)s}}
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32} (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : tensor<4xf32>
  func.return
}

// -----

func.func @for_return(%arg0: tensor<4xf32>, %arg1: tensor<2xf32>) {
  // expected-error @+1 {{'mpmd.for' op returned value 0 has type 'tensor<2xf32>' but result 0 requires 'tensor<4xf32>'}}
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32} (%x: tensor<4xf32>, %index: tensor<ui32>) {
    %c = stablehlo.constant dense<1.0> : tensor<2xf32>
    mpmd.return %c : tensor<2xf32>
  } : tensor<4xf32>
  func.return
}

// -----

func.func @named_computation_block_args(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.named_computation' op block argument 0 has type 'tensor<4xi32>' but operand 0 requires 'tensor<4xf32>'}}
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: tensor<4xi32>) {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    mpmd.return %c : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @named_computation_results(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.named_computation' op has 1 returned values but 2 results}}
  %0:2 = mpmd.named_computation<"f"> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return
}

// -----

func.func @named_computation_free_variable(%arg0: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = mpmd.named_computation<"f"> () () {
    // expected-error @+1 {{using value defined outside the region}}
    mpmd.return %arg0 : tensor<4xf32>
  } : () -> tensor<4xf32>
  func.return
}

// -----

func.func @named_tensor_name(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.named_tensor' op needs a non-empty name}}
  %0 = mpmd.named_tensor %arg0 name="" : tensor<4xf32>
  func.return
}

// -----

func.func @reduce_none_arity(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.reduce' op with reduction 'none' takes exactly one operand, got 2}}
  %0 = mpmd.reduce<none> %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_or_float(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.reduce' op reduction 'or' needs integer or boolean elements, got 'f32'}}
  %0 = mpmd.reduce<or> %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_kind(%arg0: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::mpmd::ReductionType to be one of: none, add, max, min, mul, or, and}}
  // expected-error @+1 {{failed to parse Mpmd_Reduction parameter 'reduction_type'}}
  %0 = mpmd.reduce<avg> %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @return_outside(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'mpmd.return' op expects parent op to be one of 'mpmd.named_computation, mpmd.fragment, mpmd.for'}}
  mpmd.return %arg0 : tensor<4xf32>
}
