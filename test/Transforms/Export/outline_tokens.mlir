// mpmd.fragment_call takes and returns mesh tensors only (as Shardy:MPMD's),
// so a fragment still holding a token cannot be outlined; mpmd-export gives
// fragments their own tokens first (sink_tokens_into_fragments.mlir).
// RUN: mpmd-opt %s -verify-diagnostics -mpmd-outline-fragments

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>

func.func @main(%arg0: !stablehlo.token, %arg1: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op takes or returns a !stablehlo.token, which a program called by mpmd.fragment_call cannot; run mpmd-sink-create-token-into-fragments first (mpmd-export does)}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0, %arg1) (%t: !stablehlo.token, %x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!stablehlo.token, !m) -> !m
  func.return %0 : !m
}
