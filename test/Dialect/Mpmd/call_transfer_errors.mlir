// Verifier rules of mpmd.call (where it may appear, its call_counter) and of
// memory kinds on transfers, each pinned with its message.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

func.func public @call_in_loop_body(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %arg0) : tensor<i32>, tensor<3x5xf32>
   cond {
    %p = stablehlo.compare LT, %i, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    // expected-error @+1 {{'mpmd.call' op calling @body must be directly inside a func.func or mpmd.for, but is inside stablehlo.while}}
    %1 = mpmd.call @body(%v) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    stablehlo.return %i, %1 : tensor<i32>, tensor<3x5xf32>
  }
  func.return %0#1 : tensor<3x5xf32>
}

func.func private @body(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
  func.return %arg0 : tensor<3x5xf32>
}

// -----

func.func public @main(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.call @outer(%arg0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

func.func private @outer(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{'mpmd.call' op calls @inner from @outer, a private function with a topology; only entry (public) functions may call}}
  %0 = mpmd.call @inner(%arg0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

func.func private @inner(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
  func.return %arg0 : tensor<3x5xf32>
}

// -----

// A call in a function without a topology (reached through func.call) is
// fine.
func.func public @main(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = func.call @helper(%arg0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

func.func private @helper(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = mpmd.call @inner(%arg0) {call_counter = 3 : ui32} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

func.func private @inner(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
  func.return %arg0 : tensor<3x5xf32>
}

// -----

func.func @bad_counter(%arg0: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{'mpmd.call' op call_counter must be a ui32 integer, e.g. {call_counter = 0 : ui32}, got 'i64'}}
  %0 = mpmd.call @id(%arg0) {call_counter = 1} : (tensor<i32>) -> tensor<i32>
  func.return %0 : tensor<i32>
}

func.func private @id(%arg0: tensor<i32>) -> tensor<i32> {
  func.return %arg0 : tensor<i32>
}

// -----

func.func @call_result_type(%arg0: tensor<i32>) -> tensor<f32> {
  // expected-error @+1 {{'mpmd.call' op result 0 has type 'tensor<f32>' but callee result 0 requires 'tensor<i32>'}}
  %0 = mpmd.call @id(%arg0) : (tensor<i32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

func.func private @id(%arg0: tensor<i32>) -> tensor<i32> {
  func.return %arg0 : tensor<i32>
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func private @host_argument_attribute(%arg0: !m1 {mhlo.memory_kind = "pinned_host"}) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on argument 0 of @host_argument_attribute) puts in pinned host memory; a transfer reads the memory kind from the type only (as in Shardy:MPMD): drop the attribute and give the kind in the type, e.g. !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, memory_kind="pinned_host">}}
  %0 = mpmd.transfer %arg0 : (!m1) -> !m2
  func.return %0 : !m2
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func private @host_fragment_result(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0:3 = mpmd.fragment<mesh="m1", origin=[]> (%arg0)
      {res_attrs = [{mhlo.memory_kind = "pinned_host"}, {mhlo.memory_kind = "device"}, {mhlo.memory_kind = "unpinned_host"}]}
      (%x: tensor<4x8xf32>) {
    mpmd.return %x, %x, %x : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  } : (!m1) -> (!m1, !m1, !m1)
  // The device and unpinned host results move freely: Shardy:MPMD refuses
  // pinned host memory only.
  %1 = mpmd.transfer %0#1 : (!m1) -> !m2
  %2 = mpmd.transfer %0#2 : (!m1) -> !m2
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on res_attrs of result 0 of the mpmd.fragment producing it) puts in pinned host memory}}
  %3 = mpmd.transfer %0#0 : (!m1) -> !m2
  func.return %3 : !m2
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func @host_fragment_call_result(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p(%arg0)
      {res_attrs = [{mhlo.memory_kind = "pinned_host"}]} : (!m1) -> !m1
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on res_attrs of result 0 of the mpmd.fragment_call producing it) puts in pinned host memory}}
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  func.return %1 : !m2
}

func.func private @p(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  func.return %arg0 : tensor<4x8xf32>
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func @host_call_result(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.call @body(%arg0) {res_attrs = [{mhlo.memory_kind = "pinned_host"}]} : (!m1) -> !m1
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on res_attrs of result 0 of the mpmd.call producing it) puts in pinned host memory}}
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  func.return %1 : !m2
}

func.func private @body(%arg0: !m1) -> !m1 {
  func.return %arg0 : !m1
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func @host_loop_result(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32, res_attrs = [{mhlo.memory_kind = "pinned_host"}]} (%x: !m1, %index: tensor<ui32>) {
    mpmd.return %x : !m1
  } : !m1
  // expected-error @+1 {{'mpmd.transfer' op moves a value that an 'mhlo.memory_kind' attribute (on res_attrs of result 0 of the mpmd.for producing it) puts in pinned host memory}}
  %1 = mpmd.transfer %0 : (!m1) -> !m2
  func.return %1 : !m2
}

// -----

!m1 = !mpmd.mesh_tensor<"m1", tensor<4x8xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4x8xf32>>

func.func private @host_transfer_attribute(%arg0: !m1) -> !m2
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.transfer' op has 'mhlo.memory_kind = "pinned_host"'; a transfer takes its destination memory kind from the result type only (as in Shardy:MPMD): drop the attribute and give the kind in the result type, e.g. !mpmd.mesh_tensor<"m2", tensor<4x8xf32>, memory_kind="pinned_host">}}
  %0 = mpmd.transfer {mhlo.memory_kind = "pinned_host"} %arg0 : (!m1) -> !m2
  func.return %0 : !m2
}

// -----

// expected-error @+1 {{unknown memory kind "qwerty"; expected one of "device", "pinned_host", "unpinned_host"}}
func.func @unknown_kind(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, memory_kind = "qwerty">) {
  func.return
}
