// Verifier and parser diagnostics of custom_call, while,
// optimization_barrier and create_token.

// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

func.func @custom_call_api_version(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op api_version 7 is not a known custom call API version (0-4)}}
  %0 = stablehlo.custom_call @k(%a) {api_version = 7 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @custom_call_dictionary_config(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op takes a dictionary backend_config only with api_version = 4 (typed FFI)}}
  %0 = stablehlo.custom_call @k(%a) {backend_config = {x = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @custom_call_layouts(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op has 2 operand_layouts for 1 operands}}
  %0 = stablehlo.custom_call @k(%a) {operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @custom_call_callee(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op called_computations must hold symbol references, got "f"}}
  %0 = stablehlo.custom_call @k(%a) {called_computations = ["f"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @custom_call_no_target(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected valid '@'-identifier for symbol name}}
  %0 = stablehlo.custom_call "k"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @while_cond_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.while' op requires the cond region to return a single tensor<i1>}}
  %0 = stablehlo.while(%v = %a) : tensor<4xf32>
  cond {
    stablehlo.return %v : tensor<4xf32>
  } do {
    stablehlo.return %v : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @while_body_type(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.while' op requires the body region to return the operand types}}
  %0 = stablehlo.while(%v = %a) : tensor<4xf32>
  cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %b : tensor<4xi32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @while_generic_arguments(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.while' op requires the cond region to take the operand types as arguments, but it takes 0 arguments}}
  %0 = "stablehlo.while"(%a) ({
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }, {
  ^bb0(%v: tensor<4xf32>):
    stablehlo.return %v : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @while_missing_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected ':'}}
  %0 = stablehlo.while(%v = %a) cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %v : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @barrier_types(%a: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{'stablehlo.optimization_barrier' op requires the results to have the operand types}}
  %0 = "stablehlo.optimization_barrier"(%a) : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @token_type() -> tensor<f32> {
  // expected-error @+1 {{'stablehlo.create_token' op requires a !stablehlo.token result, but got 'tensor<f32>'}}
  %0 = stablehlo.create_token : tensor<f32>
  return %0 : tensor<f32>
}
