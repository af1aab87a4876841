// Tokens where Shardy:MPMD takes them (fragment operands and results) must
// match their block arguments and returned values; where it does not
// (mpmd.fragment_call, mpmd.transfer, mpmd.call: mesh tensors or tensors
// only) the verifier says what the op takes.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

func.func @token_operand_tensor_argument(%arg0: !stablehlo.token) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op block argument 0 has type 'tensor<4xf32>' but global type of operand 0 requires '!stablehlo.token'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!stablehlo.token) -> !m
  func.return %0 : !m
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

func.func @tensor_returned_as_token(%arg0: !m) -> !stablehlo.token
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op returned value 0 has type 'tensor<4xf32>' but global type of result 0 requires '!stablehlo.token'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m) -> !stablehlo.token
  func.return %0 : !stablehlo.token
}

// -----

func.func @token_sharding_rank(%arg0: !stablehlo.token) -> !stablehlo.token
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op in_shardings 0 has rank 1 but the value has rank 0}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"], in_shardings=[<@mesh, [{"x"}]>]> (%arg0) (%t: !stablehlo.token) {
    mpmd.return %t : !stablehlo.token
  } : (!stablehlo.token) -> !stablehlo.token
  func.return %0 : !stablehlo.token
}

// -----

func.func @other_type(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op operand #0 must be variadic of mesh tensor or !stablehlo.token, but got 'tensor<4xf32>'}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fragment_call_token(%arg0: !stablehlo.token)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error-re @+1 {{'mpmd.fragment_call' op operand #0 must be variadic of {{.*}}, but got '!stablehlo.token'}}
  mpmd.fragment_call<mesh="m1", origin=["f"]> @p(%arg0) : (!stablehlo.token) -> ()
  func.return
}

func.func private @p(%arg0: !stablehlo.token) {
  func.return
}

// -----

func.func @transfer_token(%arg0: !stablehlo.token) -> !stablehlo.token
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error-re @+1 {{'mpmd.transfer' op operand #0 must be {{.*}}, but got '!stablehlo.token'}}
  %0 = mpmd.transfer %arg0 : (!stablehlo.token) -> !stablehlo.token
  func.return %0 : !stablehlo.token
}

// -----

func.func @call_token(%arg0: !stablehlo.token) -> !stablehlo.token {
  // expected-error @+1 {{'mpmd.call' op operand #0 must be variadic of tensor or mesh tensor, but got '!stablehlo.token'}}
  %0 = mpmd.call @id(%arg0) : (!stablehlo.token) -> !stablehlo.token
  func.return %0 : !stablehlo.token
}

func.func private @id(%arg0: !stablehlo.token) -> !stablehlo.token {
  func.return %arg0 : !stablehlo.token
}
