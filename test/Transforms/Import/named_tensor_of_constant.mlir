// Named tensors of constants: each constant is made on its named tensor's
// mesh, and the function returns it from there (the assign of a nameless
// value is rewritten before the unassign that reads it is).
// RUN: mpmd-opt %s --mpmd-import="assignment=name1=mesh1,name2=mesh2" | FileCheck %s

// CHECK-LABEL: func.func @main() -> (!mpmd.mesh_tensor<"mesh1", tensor<3x5xf32>>, !mpmd.mesh_tensor<"mesh2", tensor<5x7xf32>>)
// CHECK: %[[A:.*]] = mpmd.fragment<mesh="mesh1", origin=[]> () ()
// CHECK-NEXT: stablehlo.constant dense<1.000000e+00>
// CHECK: %[[B:.*]] = mpmd.fragment<mesh="mesh2", origin=[]> () ()
// CHECK-NEXT: stablehlo.constant dense<2.000000e+00>
// CHECK: return %[[A]], %[[B]]
func.func @main() -> (tensor<3x5xf32>, tensor<5x7xf32>)
    attributes {topology = #mpmd.topology<<"mesh1" : <["x"=2]>>, <"mesh2" : <["x"=2]>>>} {
  %c = stablehlo.constant dense<1.0> : tensor<3x5xf32>
  %c2 = stablehlo.constant dense<2.0> : tensor<5x7xf32>
  %0 = mpmd.named_tensor %c name="name1" : tensor<3x5xf32>
  %1 = mpmd.named_tensor %c2 name="name2" : tensor<5x7xf32>
  func.return %0, %1 : tensor<3x5xf32>, tensor<5x7xf32>
}
