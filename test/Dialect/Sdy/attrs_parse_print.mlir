// Shardy's mesh and sharding syntax, printed back exactly as Shardy does.
// RUN: mpmd-opt %s | FileCheck %s
// RUN: mpmd-opt %s | mpmd-opt | FileCheck %s
// RUN: mpmd-opt %s -mlir-print-op-generic | mpmd-opt | FileCheck %s

// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK: sdy.mesh @with_ids = <["a"=2, "b"=2], device_ids=[0, 2, 1, 3]>
sdy.mesh @with_ids = <["a"=2, "b"=2], device_ids=[0, 2, 1, 3]>
// CHECK: sdy.mesh @empty = <[]>
sdy.mesh @empty = <[]>
// CHECK: sdy.mesh @maximal = <[], device_ids=[3]>
sdy.mesh @maximal = <[], device_ids=[3]>

// CHECK-LABEL: func.func @shardings
// CHECK-SAME: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}
// CHECK-SAME: %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}p1, {}p0]>}
// CHECK-SAME: %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}, {}], replicated={"x"}>}
// CHECK-SAME: %arg4: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"x"}, unreduced={"y"}>}
// CHECK-SAME: %arg5: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=4]>, [{"z"}]>}
// CHECK-SAME: %arg6: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}
func.func @shardings(
    %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
    %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>},
    %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}p1, {}p0]>},
    %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}, {}], replicated={"x"}>},
    %arg4: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"x"}, unreduced={"y"}>},
    %arg5: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=4]>, [{"z"}]>},
    %arg6: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>})
    // CHECK-SAME: attributes {mpmd.per_value = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>}
    attributes {mpmd.per_value = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>} {
  func.return
}

// Anything of sdy this subset does not model passes through verbatim,
// including the RFC's shorthand mesh and topology forms.
// CHECK-LABEL: func.func @verbatim
// CHECK-SAME: a = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>
// CHECK-SAME: b = #sdy.mesh<"x"=2>
// CHECK-SAME: c = #sdy.manual_axes<{"x"}>
// CHECK-SAME: d = #sdy<some  "verbatim"  text>
func.func @verbatim(%arg0: tensor<8xf32>) -> tensor<8xf32> attributes {
    a = #sdy.topology<<"m1": <"x"=2>>, <"m2": <"x"=2>>>,
    b = #sdy.mesh<"x"=2>,
    c = #sdy.manual_axes<{"x"}>,
    d = #sdy<some  "verbatim"  text>} {
  // The generic form parses into the modelled op, which prints pretty.
  // CHECK: sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> : tensor<8xf32>
  %0 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{"x"}]>}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
