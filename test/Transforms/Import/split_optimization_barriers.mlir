// RUN: mpmd-opt %s -mpmd-split-optimization-barriers | FileCheck %s
// RUN: mpmd-opt %s -mpmd-split-optimization-barriers -mpmd-infer-meshes | FileCheck %s --check-prefix=INFER

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
!m2 = !mpmd.mesh_tensor<"m2", tensor<4xf32>>

// What jax.checkpoint leaves around a named computation: the cotangent from
// m2 and a residual from m1 in one barrier, both going to m1. Split, each
// barrier goes where its result is used and the cotangent crosses to m1
// without infer-transfers, as a direct edge would; the barrier inside the
// fragment stays whole.
// CHECK-LABEL: func.func @checkpointed
// CHECK: %[[R:.*]] = mpmd.unassign %arg0
// CHECK: %[[G:.*]] = mpmd.unassign %{{.*}} : (!mpmd.mesh_tensor<"m2"
// CHECK-NEXT: %[[B0:.*]] = stablehlo.optimization_barrier %[[R]] : tensor<4xf32>
// CHECK-NEXT: %[[B1:.*]] = stablehlo.optimization_barrier %[[G]] : tensor<4xf32>
// CHECK-NEXT: mpmd.assign %[[B0]]
// CHECK-NEXT: mpmd.assign %[[B1]]
// CHECK: stablehlo.optimization_barrier %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>

// INFER-LABEL: func.func @checkpointed
// INFER: %[[CT:.*]] = mpmd.fragment<mesh="m2", origin=["g"]>
// INFER: %[[MOVED:.*]] = mpmd.transfer %[[CT]] : (!mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// INFER-NEXT: mpmd.fragment<mesh="m1", origin=[]> (%[[MOVED]])
// INFER-NEXT: stablehlo.optimization_barrier
// INFER-NOT: mpmd.fragment<mesh="m2", origin=[]>
func.func @checkpointed(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m2", origin=["g"]> () () {
    %c = stablehlo.constant dense<1.0> : !t
    mpmd.return %c : !t
  } : () -> !m2
  %1 = mpmd.unassign %arg0 : (!m1) -> !t
  %2 = mpmd.unassign %0 : (!m2) -> !t
  %3:2 = "stablehlo.optimization_barrier"(%1, %2) : (!t, !t) -> (!t, !t)
  %4 = mpmd.assign %3#0 : (!t) -> !m1
  %5 = mpmd.assign %3#1 : (!t) -> !m1
  %6 = mpmd.fragment<mesh="m1", origin=["f"(1)]> (%4, %5) (%x: !t, %y: !t) {
    %7:2 = "stablehlo.optimization_barrier"(%x, %y) : (!t, !t) -> (!t, !t)
    %8 = stablehlo.multiply %7#0, %7#1 : !t
    mpmd.return %8 : !t
  } : (!m1, !m1) -> !m1
  func.return %6 : !m1
}
