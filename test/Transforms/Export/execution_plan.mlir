// The whole path: import, export, and the plan the runtime executes.
// RUN: mpmd-opt %s --mpmd-import="assignment=layer1=m1:1,layer2=m2:2" --mpmd-export --mpmd-print-execution-plan -o /dev/null | FileCheck %s
// RUN: not mpmd-opt %s --mpmd-print-execution-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTEXPORTED

// NOTEXPORTED: error: argument 0 is not a mesh tensor; run the import pipeline first

// CHECK: "function": "main",
// CHECK: "inputs": [
// CHECK: "dtype": "f32",
// CHECK-NEXT: "mesh": "m1",
// CHECK: "meshes": [
// CHECK: "name": "m1"
// CHECK: "name": "m2"
// CHECK: "outputs": [
// CHECK: "value": 3
// CHECK: "value": 5
// CHECK: "programs": {
// CHECK-NEXT: "p0_stage1_fwd": {
// CHECK-NEXT: "buffer_donors": [],
// CHECK-NEXT: "donated_args": [],
// CHECK-NEXT: "in_shardings": [
// CHECK-NEXT: null
// CHECK-NEXT: ],
// CHECK-NEXT: "mesh": "m1",
// CHECK-NEXT: "module": "\"builtin.module\"() ({\n  \"func.func\"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>), sym_name = \"main\"}>
// CHECK: "num_calls": 1
// CHECK-NEXT: "out_shardings": [
// CHECK-NEXT: null,
// CHECK-NEXT: null
// CHECK-NEXT: ]
// CHECK: "p1_stage2_fwd": {
// CHECK-NEXT: "buffer_donors": [],
// CHECK-NEXT: "donated_args": [
// CHECK-NEXT: 0
// CHECK: "steps": [
// CHECK: "op": "call",
// CHECK-NEXT: "origins": [
// CHECK-NEXT: [
// CHECK-NEXT: "layer1",
// CHECK-NEXT: 0
// CHECK-NEXT: ]
// CHECK: "program": "p0_stage1_fwd",
// CHECK: "free": [
// CHECK-NEXT: 2
// CHECK: "from": "m1",
// CHECK: "op": "transfer",
// CHECK: "to": "m2",
// CHECK: "program": "p1_stage2_fwd",
// CHECK: "topology": "#mpmd.topology<<\"m1\" : <[\"x\"=2]>>, <\"m2\" : <[\"x\"=2]>>>"

!t = tensor<4xf32>
func.func @main(%arg0: !t, %arg1: !t) -> (!t, !t)
  attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %1 = mpmd.named_computation<"layer1"> (%arg0, %arg1) (%arg2: !t, %arg3: !t) {
    %10 = stablehlo.add %arg2, %arg2 : !t
    mpmd.return %10 : !t
  } : (!t, !t) -> !t
  %2 = mpmd.named_computation<"layer2"> (%1) (%arg2: !t) {
    %10 = stablehlo.add %arg2, %arg2 : !t
    mpmd.return %10 : !t
  } : (!t) -> !t
  %3 = stablehlo.multiply %1, %1 : !t
  %4 = stablehlo.divide %2, %2 : !t
  func.return %3, %4  : !t, !t
}
