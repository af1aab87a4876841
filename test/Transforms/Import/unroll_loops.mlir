// RUN: mpmd-opt %s -mpmd-unroll-loops -split-input-file | FileCheck %s
// RUN: mpmd-opt %s -split-input-file --mpmd-import="assignment=f=m1" | FileCheck %s --check-prefix=IMPORT

!t = tensor<4xf32>

// Each iteration's named computation carries the iteration as its call
// counter; the index becomes a constant of its iteration; values flow from
// one copy to the next.
// CHECK-LABEL: func.func @for_loop
// CHECK: %[[I0:.*]] = stablehlo.constant {mpmd.loop_iteration = 0 : ui32} dense<0> : tensor<ui32>
// CHECK: %[[A:.*]] = mpmd.named_computation<"f"> (%arg0) {call_counter = 0 : ui32}
// CHECK: stablehlo.constant {mpmd.loop_iteration = 1 : ui32} dense<1> : tensor<ui32>
// CHECK: %[[B:.*]] = mpmd.named_computation<"f"> (%[[A]]) {call_counter = 1 : ui32}
// CHECK: stablehlo.constant {mpmd.loop_iteration = 2 : ui32} dense<2> : tensor<ui32>
// CHECK: %[[C:.*]] = mpmd.named_computation<"f"> (%[[B]]) {call_counter = 2 : ui32}
// CHECK-NOT: mpmd.for
// CHECK: return %[[C]]
// IMPORT-LABEL: func.func @for_loop
// IMPORT-COUNT-3: mpmd.fragment<mesh="m1", origin=["f"]>
func.func @for_loop(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.for (%arg0) {iterations = 3 : ui32, unroll_factor = 3 : ui32} (%x: !t, %index: tensor<ui32>) {
    %1 = mpmd.named_computation<"f"> (%x) (%y: !t) {
      %2 = stablehlo.add %y, %y : !t
      mpmd.return %2 : !t
    } : (!t) -> !t
    mpmd.return %1 : !t
  } : !t
  func.return %0 : !t
}

// -----

!t = tensor<4xf32>

// mpmd.call of a loop body, one call per microbatch.
// CHECK-LABEL: func.func @calls
// CHECK: mpmd.named_computation<"f"> (%arg0) {call_counter = 0 : ui32}
// CHECK: mpmd.named_computation<"f"> (%{{.*}}) {call_counter = 1 : ui32}
// CHECK-NOT: mpmd.call
// CHECK-NOT: func.func private @body
// IMPORT-LABEL: func.func @calls
// IMPORT: {call_counter = 0 : ui32}
// IMPORT: {call_counter = 1 : ui32}
func.func @calls(%arg0: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>>} {
  %0 = mpmd.call @body(%arg0) {call_counter = 0 : ui32} : (!t) -> !t
  %1 = mpmd.call @body(%0) {call_counter = 1 : ui32} : (!t) -> !t
  func.return %1 : !t
}
func.func private @body(%arg0: !t) -> !t {
  %0 = mpmd.named_computation<"f"> (%arg0) (%y: !t) {
    %1 = stablehlo.multiply %y, %y : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  func.return %0 : !t
}
