// RUN: mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=0=m1,2=m2:pinned_host output-assignment=1=m2" | FileCheck %s
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=3=m1" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="output-assignment=2=m1" 2>&1 | FileCheck %s --check-prefix=OUTRANGE
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=0=m7" 2>&1 | FileCheck %s --check-prefix=BADMESH
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=a=m1" 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=0=m1,0=m2" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not mpmd-opt %s -mpmd-map-io-to-meshes="input-assignment=0=m1:hbm" 2>&1 | FileCheck %s --check-prefix=KIND

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>, %arg1: tensor<4xf32>, %arg2: !mpmd.mesh_tensor<"m2", tensor<4xf32>, memory_kind="pinned_host">)
// CHECK-SAME: -> (tensor<4xf32>, !mpmd.mesh_tensor<"m2", tensor<4xf32>>)
// CHECK-DAG: %[[U0:.*]] = mpmd.unassign %arg0
// CHECK-DAG: %[[U2:.*]] = mpmd.unassign %arg2
// CHECK: %[[S:.*]] = stablehlo.add %[[U0]], %arg1
// CHECK: %[[A:.*]] = mpmd.assign %[[U2]] : (tensor<4xf32>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
// CHECK: return %[[S]], %[[A]]

// RANGE: error: input-assignment index 3 is out of range: @main has 3 arguments
// OUTRANGE: error: output-assignment index 2 is out of range: @main has 2 results
// BADMESH: error: input-assignment of argument 0 names mesh "m7", which is not in the topology (meshes: "m1", "m2")
// ENTRY: for the --input-assignment option: invalid entry 'a=m1': expected INDEX=MESH or INDEX=MESH:MEMORY_KIND
// TWICE: error: input-assignment assigns index 0 twice (to "m1" and "m2")
// KIND: error: argument 0: unknown memory kind "hbm"

func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  func.return %0, %arg2 : tensor<4xf32>, tensor<4xf32>
}
