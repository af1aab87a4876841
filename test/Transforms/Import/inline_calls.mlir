// RUN: mpmd-opt %s -mpmd-inline-calls -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[A:.*]] = stablehlo.add %arg0, %arg0
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[A]], %arg0
// CHECK-NEXT: %[[N:.*]] = mpmd.named_computation<"f"> (%[[M]]) (%[[X:.*]]: tensor<4xf32>) {
// CHECK-NEXT: %[[T:.*]] = stablehlo.tanh %[[X]]
// CHECK-NEXT: mpmd.return %[[T]]
// CHECK: return %[[N]]
// CHECK-NOT: func.func private @helper
// CHECK-NOT: func.func private @inner
// CHECK: func.func private @unrelated
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = func.call @helper(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mpmd.named_computation<"f"> (%0) (%x: tensor<4xf32>) {
    %2 = func.call @inner(%x) : (tensor<4xf32>) -> tensor<4xf32>
    mpmd.return %2 : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func private @helper(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func private @inner(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @unrelated(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  func.return %arg0 : tensor<4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{not supported yet: calling the declaration @ext}}
  %0 = func.call @ext(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @ext(tensor<4xf32>) -> tensor<4xf32>

// -----

// A body ending in something else than func.return (MLIR verifies only
// func.return against the signature) is not inlined (a mpmd-fuzz finding).
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'func.call' op calls @odd, whose body does not end in func.return; it cannot be inlined}}
  %0 = func.call @odd(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @odd(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  "test.not_a_return"(%arg0) : (tensor<4xf32>) -> ()
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = func.call @loop(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @loop(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls @loop recursively (@loop is reached from it); mpmd cannot inline or unroll recursive calls}}
  %0 = func.call @loop(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{no func.func has a 'topology' attribute}}
module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    func.return %arg0 : tensor<4xf32>
  }
}

// -----

module {
  // expected-error @+1 {{'topology' attribute of @main must be an #mpmd.topology}}
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {topology = "m1"} {
    func.return %arg0 : tensor<4xf32>
  }
}
