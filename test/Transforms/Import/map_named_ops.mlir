// RUN: mpmd-opt %s -mpmd-map-named-ops="assignment=f=m1:0,g=m2,w=m2" -split-input-file -verify-diagnostics | FileCheck %s

!t = tensor<4xf32>
// CHECK-LABEL: func.func @main
func.func @main(%arg0: !t) -> (!t, !t)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // CHECK-NEXT: %[[A:.*]] = mpmd.assign {origin = "f"} %arg0 : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  // CHECK-NEXT: %[[F:.*]] = mpmd.fragment<mesh="m1", origin=["f"], stage=0> (%[[A]]) (%[[X:.*]]: tensor<4xf32>) {
  // CHECK-NEXT:   %[[S:.*]] = stablehlo.add %[[X]], %[[X]]
  // CHECK-NEXT:   mpmd.return %[[S]]
  // CHECK-NEXT: } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  // CHECK-NEXT: %[[U:.*]] = mpmd.unassign {origin = "f"} %[[F]]
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: !t) {
    %1 = stablehlo.add %x, %x : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  // The transpose count and the call counter survive; g has no stage.
  // CHECK: mpmd.fragment<mesh="m2", origin=["g"(1)]> (%{{.*}}) {call_counter = 2 : ui32} (
  %2 = mpmd.named_computation<"g"(1)> (%0) {call_counter = 2 : ui32} (%x: !t) {
    // A nested named computation without an assignment is inlined.
    // CHECK-NOT: named_computation
    // CHECK: stablehlo.multiply
    %3 = mpmd.named_computation<"inner"> (%x) (%y: !t) {
      %4 = stablehlo.multiply %y, %y : !t
      mpmd.return %4 : !t
    } : (!t) -> !t
    mpmd.return %3 : !t
  } : (!t) -> !t
  // An assigned named tensor is put on its mesh and read back; an
  // unassigned one just disappears.
  // CHECK: %[[WA:.*]] = mpmd.assign {origin = "w"} %{{.*}} : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  // CHECK-NEXT: %[[WU:.*]] = mpmd.unassign {origin = "w"} %[[WA]]
  %5 = mpmd.named_tensor %2 name="w" : !t
  %6 = mpmd.named_tensor %arg0 name="free" : !t
  // CHECK: return %[[WU]], %arg0
  func.return %5, %6 : !t, !t
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  // expected-error @+1 {{named_computation 'h' has no mesh: add it to the assignment, e.g. assignment=h=MESH}}
  %0 = mpmd.named_computation<"h"> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.named_computation<"f"> (%arg0) (%x: tensor<4xf32>) {
    // expected-error @+1 {{not supported yet: named_computation 'g' is assigned to mesh "m2" but is nested in 'f', which is on mesh "m1"}}
    %1 = mpmd.named_computation<"g"> (%x) (%y: tensor<4xf32>) {
      mpmd.return %y : tensor<4xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    mpmd.return %1 : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.for (%arg0) {iterations = 2 : ui32} (%x: tensor<4xf32>, %index: tensor<ui32>) {
    // expected-error @+1 {{is inside mpmd.for, which must be unrolled first: run mpmd-unroll-loops (mpmd-import does)}}
    %1 = mpmd.named_computation<"f"> (%x) (%y: tensor<4xf32>) {
      mpmd.return %y : tensor<4xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    mpmd.return %1 : tensor<4xf32>
  } : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.call @body(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @body(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is in @body, which has no topology}}
  %1 = mpmd.named_computation<"f"> (%arg0) (%y: tensor<4xf32>) {
    mpmd.return %y : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
