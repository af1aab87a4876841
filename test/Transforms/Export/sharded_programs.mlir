// Export of sharded programs: the boundary layouts become `sdy.sharding`
// attributes of each program function, fragments differing only by layout
// are distinct programs, and each program module declares its mesh as
// @mesh, which every sharding inside names.
// RUN: mpmd-opt %s -mpmd-outline-fragments -mpmd-mark-donations | FileCheck %s
// RUN: mpmd-opt %s -mpmd-outline-fragments -mpmd-print-execution-plan -o /dev/null | FileCheck %s --check-prefix=PLAN

!t = tensor<8x4xf32>
!xs = !mpmd.mesh_tensor<"m1", tensor<8x4xf32>, sharding=<@mesh, [{"x"}, {}]>>
!ys = !mpmd.mesh_tensor<"m1", tensor<8x4xf32>, sharding=<@mesh, [{}, {"x"}]>>

// CHECK-LABEL: func.func @main
// CHECK-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @p0_f_fwd(%arg0)
// CHECK-NEXT: mpmd.fragment_call<mesh="m1", origin=["f"]> @p1_f_fwd(%arg1)
// CHECK: func.func private @p0_f_fwd(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK-SAME: -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK: func.func private @p1_f_fwd(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
sdy.mesh @traced = <["x"=2]>
func.func @main(%arg0: !xs, %arg1: !ys) -> (!xs, !ys)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%a: !t) {
    %1 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@traced, [{"x"}, {}]>}> : (!t) -> !t
    mpmd.return %1 : !t
  } : (!xs) -> !xs
  %2 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg1) (%a: !t) {
    %3 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@traced, [{"x"}, {}]>}> : (!t) -> !t
    mpmd.return %3 : !t
  } : (!ys) -> !ys
  func.return %0, %2 : !xs, !ys
}

// PLAN: "p0_f_fwd": {
// PLAN: "in_shardings": [
// PLAN-NEXT: [
// PLAN-NEXT: [
// PLAN-NEXT: "x"
// PLAN-NEXT: ],
// PLAN-NEXT: []
// PLAN: "module": "\"builtin.module\"() ({\n  \"sdy.mesh\"() <{mesh = #sdy.mesh<[\"x\"=2]>, sym_name = \"mesh\"}>
// PLAN-SAME: \"sdy.sharding_constraint\"(%arg0) <{sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}>
// PLAN: "out_shardings": [
// PLAN-NEXT: [
// PLAN-NEXT: [
// PLAN-NEXT: "x"
