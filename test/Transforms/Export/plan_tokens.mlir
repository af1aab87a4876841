// The execution plan passes tensors only: a token argument of the entry
// function is "not supported yet", said on the function. (A token result
// cannot get this far: only fragment calls and transfers produce values.)
// RUN: mpmd-opt %s -verify-diagnostics -mpmd-print-execution-plan -o /dev/null

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

// expected-error @+1 {{not supported yet: argument 0 of @token_argument is a !stablehlo.token; the runtime passes tensors only (tokens may pass between fragments, which export gives their own)}}
func.func @token_argument(%tok: !stablehlo.token, %x: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %x : !m
}
