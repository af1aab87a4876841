// The sdy ops in Shardy's pretty syntax: sharding_constraint, sharding_group,
// data_flow_edge and manual_computation (with sdy.return). They print back
// the same, and through the generic form nothing is lost.

// RUN: mpmd-opt %s | FileCheck %s
// RUN: mpmd-opt %s -o %t.pretty.mlir
// RUN: mpmd-opt %t.pretty.mlir -o %t.pretty2.mlir
// RUN: diff %t.pretty.mlir %t.pretty2.mlir
// RUN: mpmd-opt --mlir-print-op-generic %s | mpmd-opt -o %t.via_generic.mlir
// RUN: diff %t.pretty.mlir %t.via_generic.mlir
// RUN: mpmd-opt --mlir-print-op-generic %s | FileCheck %s --check-prefix=GENERIC

sdy.mesh @grid = <["p"=4, "q"=2]>

// CHECK-LABEL: func.func @constraints(
func.func @constraints(%x: tensor<16x6xf32>) -> tensor<16x6xf32> {
  // CHECK: %0 = sdy.sharding_constraint %arg0 <@grid, [{"p"}, {}]> : tensor<16x6xf32>
  %0 = sdy.sharding_constraint %x <@grid, [{"p"}, {}]> : tensor<16x6xf32>
  // CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@grid, [{"p", ?}, {?}], replicated={"q"}> {mpmd.note = 2 : i64} : tensor<16x6xf32>
  %1 = sdy.sharding_constraint %0 <@grid, [{"p", ?}, {?}], replicated={"q"}> {mpmd.note = 2} : tensor<16x6xf32>
  // CHECK-NEXT: sdy.sharding_group %0 group_id=7 : tensor<16x6xf32>
  sdy.sharding_group %0 group_id=7 : tensor<16x6xf32>
  // CHECK-NEXT: sdy.sharding_group %1 group_id=0 {mpmd.note = 3 : i64} : tensor<16x6xf32>
  sdy.sharding_group %1 group_id=0 {mpmd.note = 3} : tensor<16x6xf32>
  func.return %1 : tensor<16x6xf32>
}

// GENERIC-LABEL: sym_name = "constraints"
// GENERIC: "sdy.sharding_constraint"(%{{.*}}) <{sharding = #sdy.sharding<@grid, [{"p"}, {}]>}> : (tensor<16x6xf32>) -> tensor<16x6xf32>
// GENERIC: "sdy.sharding_group"(%{{.*}}) <{group_id = 7 : i64}> : (tensor<16x6xf32>) -> ()

// CHECK-LABEL: func.func @edges(
func.func @edges(%x: tensor<16x6xf32>, %y: tensor<16x6xf32>) -> (tensor<16x6xf32>, tensor<16x6xf32>) {
  // CHECK: %0 = sdy.data_flow_edge %arg0 sharding=<@grid, [{"p"}, {"q"}]> : tensor<16x6xf32>
  %0 = sdy.data_flow_edge %x sharding=<@grid, [{"p"}, {"q"}]> : tensor<16x6xf32>
  // CHECK-NEXT: %1 = sdy.data_flow_edge %arg1 : tensor<16x6xf32>
  %1 = sdy.data_flow_edge %y : tensor<16x6xf32>
  func.return %0, %1 : tensor<16x6xf32>, tensor<16x6xf32>
}

// GENERIC-LABEL: sym_name = "edges"
// GENERIC: "sdy.data_flow_edge"(%{{.*}}) <{sharding = #sdy.sharding<@grid, [{"p"}, {"q"}]>}>
// GENERIC: "sdy.data_flow_edge"(%{{.*}}) : (tensor<16x6xf32>) -> tensor<16x6xf32>

// CHECK-LABEL: func.func @manual(
func.func @manual(%x: tensor<16x6xf32>, %y: tensor<6xf32>) -> (tensor<16x6xf32>, tensor<16x6xf32>) {
  // CHECK: %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@grid, [{"p"}, {}]>, <@grid, [{}]>] out_shardings=[<@grid, [{"p"}, {}]>, <@grid, [{"p"}, {}]>] manual_axes={"p"} (%arg2: tensor<4x6xf32>, %arg3: tensor<6xf32>) {
  // CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
  // CHECK-NEXT: %3 = stablehlo.add %arg2, %2 : tensor<4x6xf32>
  // CHECK-NEXT: sdy.return %3, %arg2 : tensor<4x6xf32>, tensor<4x6xf32>
  // CHECK-NEXT: } : (tensor<16x6xf32>, tensor<6xf32>) -> (tensor<16x6xf32>, tensor<16x6xf32>)
  %0:2 = sdy.manual_computation(%x, %y) in_shardings=[<@grid, [{"p"}, {}]>, <@grid, [{}]>] out_shardings=[<@grid, [{"p"}, {}]>, <@grid, [{"p"}, {}]>] manual_axes={"p"} (%lx: tensor<4x6xf32>, %ly: tensor<6xf32>) {
    %b = stablehlo.broadcast_in_dim %ly, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
    %s = stablehlo.add %lx, %b : tensor<4x6xf32>
    sdy.return %s, %lx : tensor<4x6xf32>, tensor<4x6xf32>
  } : (tensor<16x6xf32>, tensor<6xf32>) -> (tensor<16x6xf32>, tensor<16x6xf32>)
  // No operands, several manual axes, attributes after the body.
  // CHECK: %1 = sdy.manual_computation() in_shardings=[] out_shardings=[<@grid, [{"p", "q"}, {}]>] manual_axes={"p", "q"} () {
  // CHECK: sdy.return %{{.*}} : tensor<2x6xf32>
  // CHECK-NEXT: } {mpmd.note = "m"} : () -> tensor<16x6xf32>
  %1 = sdy.manual_computation() in_shardings=[] out_shardings=[<@grid, [{"p", "q"}, {}]>] manual_axes={"p", "q"} () {
    %c = stablehlo.constant dense<1.0> : tensor<2x6xf32>
    sdy.return %c : tensor<2x6xf32>
  } {mpmd.note = "m"} : () -> tensor<16x6xf32>
  // No manual axes at all.
  // CHECK: sdy.manual_computation(%arg0) in_shardings=[<@grid, [{}, {}]>] out_shardings=[] manual_axes={} (%arg2: tensor<16x6xf32>) {
  // CHECK-NEXT: sdy.return{{$}}
  // CHECK-NEXT: } : (tensor<16x6xf32>) -> ()
  sdy.manual_computation(%x) in_shardings=[<@grid, [{}, {}]>] out_shardings=[] manual_axes={} (%lx: tensor<16x6xf32>) {
    sdy.return
  } : (tensor<16x6xf32>) -> ()
  func.return %0#0, %1 : tensor<16x6xf32>, tensor<16x6xf32>
}

// GENERIC-LABEL: sym_name = "manual"
// GENERIC: "sdy.manual_computation"(%{{.*}}, %{{.*}}) <{in_shardings = #sdy.sharding_per_value<[<@grid, [{"p"}, {}]>, <@grid, [{}]>]>, manual_axes = #sdy<manual_axes{"p"}>, out_shardings = #sdy.sharding_per_value<[<@grid, [{"p"}, {}]>, <@grid, [{"p"}, {}]>]>}> ({
// GENERIC: "sdy.return"(%{{.*}}, %{{.*}}) : (tensor<4x6xf32>, tensor<4x6xf32>) -> ()
// GENERIC: manual_axes = #sdy<manual_axes{"p", "q"}>
// GENERIC: manual_axes = #sdy<manual_axes{}>
