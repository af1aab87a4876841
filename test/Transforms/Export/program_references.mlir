// A program module carries the functions its ops refer to (a composite's
// decomposition, and what that calls), not only the program's own body.
// RUN: mpmd-opt %s -mpmd-outline-fragments -mpmd-print-execution-plan -o /dev/null | FileCheck %s

// CHECK: "module": "\"builtin.module\"() ({
// CHECK-SAME: \"stablehlo.composite\"(%{{[a-z0-9]*}}) <{decomposition = @my.double, name = \"my.double\"}>
// CHECK-SAME: sym_name = \"my.double\", sym_visibility = \"private\"
// CHECK-SAME: \"func.call\"(%{{[a-z0-9]*}}) <{callee = @helper}>
// CHECK-SAME: sym_name = \"helper\", sym_visibility = \"private\"
// CHECK-NOT: unused

!t = tensor<4xf32>
!m1 = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @main(%arg0: !m1) -> !m1
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: !t) {
    %1 = "stablehlo.composite"(%x) <{decomposition = @my.double, name = "my.double"}> : (!t) -> !t
    mpmd.return %1 : !t
  } : (!m1) -> !m1
  func.return %0 : !m1
}
func.func private @my.double(%arg0: !t) -> !t {
  %0 = func.call @helper(%arg0) : (!t) -> !t
  return %0 : !t
}
func.func private @helper(%arg0: !t) -> !t {
  %0 = stablehlo.add %arg0, %arg0 : !t
  return %0 : !t
}
func.func private @unused(%arg0: !t) -> !t {
  return %arg0 : !t
}
