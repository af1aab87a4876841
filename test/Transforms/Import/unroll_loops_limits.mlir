// Programs that unrolling or inlining would blow up are errors, not an
// exhausted machine (found by mpmd-fuzz).
// RUN: mpmd-opt %s -mpmd-unroll-loops -split-input-file -verify-diagnostics

!t = tensor<4xf32>
func.func @huge(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{not supported yet: unrolling 4294967295 iterations (at most 65536)}}
  %0 = mpmd.for (%arg0) {iterations = 4294967295 : ui32, unroll_factor = 1 : ui32} (%x: !t, %index: tensor<ui32>) {
    %1 = stablehlo.add %x, %x : !t
    mpmd.return %1 : !t
  } : !t
  func.return %0 : !t
}

// -----

// 60000 iterations of 100 ops each: within the iteration limit, past the
// size limit.
!t = tensor<4xf32>
func.func @wide(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  // expected-error @+1 {{not supported yet: unrolling 60000 iterations would make the program larger than 5000000 ops}}
  %0 = mpmd.for (%arg0) {iterations = 60000 : ui32, unroll_factor = 1 : ui32} (%x: !t, %index: tensor<ui32>) {
    %a0 = stablehlo.add %x, %x : !t
    %a1 = stablehlo.add %x, %x : !t
    %a2 = stablehlo.add %x, %x : !t
    %a3 = stablehlo.add %x, %x : !t
    %a4 = stablehlo.add %x, %x : !t
    %a5 = stablehlo.add %x, %x : !t
    %a6 = stablehlo.add %x, %x : !t
    %a7 = stablehlo.add %x, %x : !t
    %a8 = stablehlo.add %x, %x : !t
    %a9 = stablehlo.add %x, %x : !t
    %a10 = stablehlo.add %x, %x : !t
    %a11 = stablehlo.add %x, %x : !t
    %a12 = stablehlo.add %x, %x : !t
    %a13 = stablehlo.add %x, %x : !t
    %a14 = stablehlo.add %x, %x : !t
    %a15 = stablehlo.add %x, %x : !t
    %a16 = stablehlo.add %x, %x : !t
    %a17 = stablehlo.add %x, %x : !t
    %a18 = stablehlo.add %x, %x : !t
    %a19 = stablehlo.add %x, %x : !t
    %a20 = stablehlo.add %x, %x : !t
    %a21 = stablehlo.add %x, %x : !t
    %a22 = stablehlo.add %x, %x : !t
    %a23 = stablehlo.add %x, %x : !t
    %a24 = stablehlo.add %x, %x : !t
    %a25 = stablehlo.add %x, %x : !t
    %a26 = stablehlo.add %x, %x : !t
    %a27 = stablehlo.add %x, %x : !t
    %a28 = stablehlo.add %x, %x : !t
    %a29 = stablehlo.add %x, %x : !t
    %a30 = stablehlo.add %x, %x : !t
    %a31 = stablehlo.add %x, %x : !t
    %a32 = stablehlo.add %x, %x : !t
    %a33 = stablehlo.add %x, %x : !t
    %a34 = stablehlo.add %x, %x : !t
    %a35 = stablehlo.add %x, %x : !t
    %a36 = stablehlo.add %x, %x : !t
    %a37 = stablehlo.add %x, %x : !t
    %a38 = stablehlo.add %x, %x : !t
    %a39 = stablehlo.add %x, %x : !t
    %a40 = stablehlo.add %x, %x : !t
    %a41 = stablehlo.add %x, %x : !t
    %a42 = stablehlo.add %x, %x : !t
    %a43 = stablehlo.add %x, %x : !t
    %a44 = stablehlo.add %x, %x : !t
    %a45 = stablehlo.add %x, %x : !t
    %a46 = stablehlo.add %x, %x : !t
    %a47 = stablehlo.add %x, %x : !t
    %a48 = stablehlo.add %x, %x : !t
    %a49 = stablehlo.add %x, %x : !t
    %a50 = stablehlo.add %x, %x : !t
    %a51 = stablehlo.add %x, %x : !t
    %a52 = stablehlo.add %x, %x : !t
    %a53 = stablehlo.add %x, %x : !t
    %a54 = stablehlo.add %x, %x : !t
    %a55 = stablehlo.add %x, %x : !t
    %a56 = stablehlo.add %x, %x : !t
    %a57 = stablehlo.add %x, %x : !t
    %a58 = stablehlo.add %x, %x : !t
    %a59 = stablehlo.add %x, %x : !t
    %a60 = stablehlo.add %x, %x : !t
    %a61 = stablehlo.add %x, %x : !t
    %a62 = stablehlo.add %x, %x : !t
    %a63 = stablehlo.add %x, %x : !t
    %a64 = stablehlo.add %x, %x : !t
    %a65 = stablehlo.add %x, %x : !t
    %a66 = stablehlo.add %x, %x : !t
    %a67 = stablehlo.add %x, %x : !t
    %a68 = stablehlo.add %x, %x : !t
    %a69 = stablehlo.add %x, %x : !t
    %a70 = stablehlo.add %x, %x : !t
    %a71 = stablehlo.add %x, %x : !t
    %a72 = stablehlo.add %x, %x : !t
    %a73 = stablehlo.add %x, %x : !t
    %a74 = stablehlo.add %x, %x : !t
    %a75 = stablehlo.add %x, %x : !t
    %a76 = stablehlo.add %x, %x : !t
    %a77 = stablehlo.add %x, %x : !t
    %a78 = stablehlo.add %x, %x : !t
    %a79 = stablehlo.add %x, %x : !t
    %a80 = stablehlo.add %x, %x : !t
    %a81 = stablehlo.add %x, %x : !t
    %a82 = stablehlo.add %x, %x : !t
    %a83 = stablehlo.add %x, %x : !t
    %a84 = stablehlo.add %x, %x : !t
    %a85 = stablehlo.add %x, %x : !t
    %a86 = stablehlo.add %x, %x : !t
    %a87 = stablehlo.add %x, %x : !t
    %a88 = stablehlo.add %x, %x : !t
    %a89 = stablehlo.add %x, %x : !t
    %a90 = stablehlo.add %x, %x : !t
    %a91 = stablehlo.add %x, %x : !t
    %a92 = stablehlo.add %x, %x : !t
    %a93 = stablehlo.add %x, %x : !t
    %a94 = stablehlo.add %x, %x : !t
    %a95 = stablehlo.add %x, %x : !t
    %a96 = stablehlo.add %x, %x : !t
    %a97 = stablehlo.add %x, %x : !t
    %a98 = stablehlo.add %x, %x : !t
    %a99 = stablehlo.add %x, %x : !t
    mpmd.return %a99 : !t
  } : !t
  func.return %0 : !t
}

// -----

// A loop body calling itself through mpmd.call.
!t = tensor<4xf32>
func.func @main(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.call @body(%arg0) : (!t) -> !t
  func.return %0 : !t
}
func.func private @body(%arg0: !t) -> !t {
  // expected-error @+1 {{calls @body recursively (@body is reached from it)}}
  %0 = mpmd.call @body(%arg0) : (!t) -> !t
  func.return %0 : !t
}
