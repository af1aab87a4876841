// Every sharding of an exported program names a declared sdy.mesh, as
// Shardy:MPMD's dialects resolve them: @mesh when the meshes are alike,
// one symbol per shape otherwise.
// RUN: mpmd-opt %s -split-input-file -mpmd-declare-sdy-meshes -verify-diagnostics | FileCheck %s

// Alike meshes: one @mesh, declared once; the front end's declaration that
// nothing names any more goes.
// CHECK-LABEL: module @alike
// CHECK-NEXT: sdy.mesh @mesh = <["x"=2]>
// CHECK-NOT: sdy.mesh
// CHECK: func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>)
// CHECK-SAME: -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
// CHECK: func.func private @p0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
module @alike {
  sdy.mesh @mpmd_mesh_0 = <["x"=2]>
  func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>)
      -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
    %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0(%arg0) : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
    %1 = mpmd.transfer %0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
    func.return %1 : !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
  }
  func.func private @p0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.mesh = "m1"} {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// Meshes of two shapes: @mesh for the first, @mesh_m2 for the second; the
// types of m2's tensors, its program's boundary and a sharding constraint
// inside it name @mesh_m2.
// CHECK-LABEL: module @two_shapes
// CHECK-DAG: sdy.mesh @mesh = <["x"=2]>
// CHECK-DAG: sdy.mesh @mesh_m2 = <["x"=2, "y"=2]>
// CHECK: func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>)
// CHECK-SAME: -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh_m2, [{"y"}]>>
// CHECK: mpmd.transfer {{.*}} -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh_m2, [{"x"}]>>
// CHECK: func.func private @p1(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh_m2, [{"x"}]>})
// CHECK-SAME: -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh_m2, [{"y"}]>})
// CHECK-NEXT: sdy.sharding_constraint %arg0 <@mesh_m2, [{"y"}]>
module @two_shapes {
  func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>)
      -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2, "y"=2]>>>} {
    %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
    %1 = mpmd.fragment_call<mesh="m2", origin=["g"]> @p1(%0) : (!mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>
    func.return %1 : !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"y"}]>>
  }
  func.func private @p1(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) attributes {mesh_shape = #sdy.mesh<["x"=2, "y"=2]>, mpmd.mesh = "m2"} {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y"}]> : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// JAX declared @mesh with the second mesh's shape (a constraint inside a
// named computation of m2): m2 keeps @mesh, m1 gets a symbol of its own.
// CHECK-LABEL: module @taken
// CHECK-DAG: sdy.mesh @mesh = <["x"=2, "y"=2]>
// CHECK-DAG: sdy.mesh @mesh_m1 = <["x"=2]>
// CHECK: func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh_m1, [{"x"}]>>)
module @taken {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>)
      -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2, "y"=2]>>>} {
    %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
    func.return %0 : !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
  }
}

// -----

// A program function on a mesh the topology lacks.
module @unknown_mesh {
  func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  }
  // expected-error @+1 {{runs on mesh "m9", which is not in the topology}}
  func.func private @p0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {mpmd.mesh = "m9"} {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// Two entry functions whose topologies give one mesh two shapes.
module @two_shapes_of_one_mesh {
  func.func @a(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  }
  // expected-error @+1 {{mesh "m1" has different shapes in two entry functions' topologies; export them separately}}
  func.func @b(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=4]>>>} {
    func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  }
}
