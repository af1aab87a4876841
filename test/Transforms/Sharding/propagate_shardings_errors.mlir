// RUN: mpmd-opt %s -mpmd-propagate-shardings -split-input-file -verify-diagnostics

// expected-error @+1 {{argument 0 of @missing_axis is sharded along axis "data", which mesh "m2" does not have (its axes: "model"=2)}}
func.func @missing_axis(%arg0: !mpmd.mesh_tensor<"m2", tensor<8xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>})
    -> !mpmd.mesh_tensor<"m2", tensor<8xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["data"=2]>>, <"m2" : <["model"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m2", tensor<8xf32>>
}

// -----

// expected-error @+1 {{argument 0 of @not_divisible: dimension 1 (size 6) is not divisible by 4, the number of shards along "x" on mesh "m1"}}
func.func @not_divisible(%arg0: !mpmd.mesh_tensor<"m1", tensor<8x6xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<8x6xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=4]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<8x6xf32>>
}

// -----

// expected-error @+1 {{result 0 of @result_rank has rank 1 but its sharding #sdy.sharding<@mesh, [{"x"}, {}]> has 2 dimensions}}
func.func @result_rank(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>>)
    -> (!mpmd.mesh_tensor<"m1", tensor<8xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    attributes {topology = #mpmd.topology<<"m1" : <["x"=4]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<8xf32>>
}

// -----

// The referenced sdy.mesh is the mesh the user sharded for; its axis sizes
// must be those of the mesh the value lives on.
sdy.mesh @traced = <["x"=4]>
// expected-error @+1 {{argument 0 of @size_mismatch is sharded along axis "x" of @traced (size 4), but on mesh "m1" that axis has size 2}}
func.func @size_mismatch(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>> {sdy.sharding = #sdy.sharding<@traced, [{"x"}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<8xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<8xf32>>
}

// -----

// A type that already carries a sharding and a different user sharding.
// expected-error @+1 {{argument 0 of @conflict is given two different shardings; keep one}}
func.func @conflict(%arg0: !mpmd.mesh_tensor<"m1", tensor<8x8xf32>, sharding=<@mesh, [{"x"}, {}]>> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<8x8xf32>, sharding=<@mesh, [{"x"}, {}]>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<8x8xf32>, sharding=<@mesh, [{"x"}, {}]>>
}

// -----

// A constraint traced for another mesh's shape, placed on "m2" whose axis
// "data" is smaller.
sdy.mesh @mesh = <["data"=4]>
func.func @constraint_mesh(%arg0: !mpmd.mesh_tensor<"m2", tensor<8xf32>>)
    -> !mpmd.mesh_tensor<"m2", tensor<8xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["data"=4]>>, <"m2" : <["data"=2]>>>} {
  %0 = mpmd.fragment<mesh="m2", origin=["f"]> (%arg0) (%a: tensor<8xf32>) {
    // expected-error @+1 {{'sdy.sharding_constraint' op result 0 is sharded along axis "data" of @mesh (size 4), but on mesh "m2" that axis has size 2}}
    %1 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{"data"}]>}> : (tensor<8xf32>) -> tensor<8xf32>
    mpmd.return %1 : tensor<8xf32>
  } : (!mpmd.mesh_tensor<"m2", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<8xf32>>
  func.return %0 : !mpmd.mesh_tensor<"m2", tensor<8xf32>>
}

// -----

// expected-error @+1 {{not supported yet: sub-axis of "x" in the sharding of argument 0 of @sub_axis; shard along whole axes}}
func.func @sub_axis(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>})
    -> !mpmd.mesh_tensor<"m1", tensor<8xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=4]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<8xf32>>
}
