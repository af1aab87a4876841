// Shardy:MPMD's pipeline names run our pipelines, with Shardy's spelling
// of the assignment; the results equal those of our names.
// RUN: mpmd-opt %s -mpmd-import-pipeline="name-to-mesh-assignment=layer1@m1/0,layer2@m2/1" -mpmd-optimize-pipeline=schedule=1f1b -mpmd-export-pipeline > %t.shardy
// RUN: mpmd-opt %s -mpmd-import="assignment=layer1=m1:0,layer2=m2:1" -mpmd-optimize=schedule=1f1b -mpmd-export > %t.ours
// RUN: diff %t.shardy %t.ours
// RUN: FileCheck %s < %t.shardy
// RUN: not mpmd-opt %s -mpmd-import-pipeline="name-to-mesh-assignment=layer1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: mpmd-opt %s -mpmd-import-pipeline="name-to-mesh-assignment=layer1@m1,layer2@m2 merge-after-scheduling=true" | FileCheck %s --check-prefix=IMPORT

// CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"]>
// CHECK: mpmd.transfer
// CHECK: mpmd.fragment_call<mesh="m2", origin=["layer2"]>
// BAD: for the --name-to-mesh-assignment option: invalid entry 'layer1': expected NAME@MESH or NAME@MESH/STAGE
// IMPORT: mpmd.fragment<mesh="m2", origin=["layer2"]>

!t = tensor<4xf32>
func.func @main(%x: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.named_computation<"layer1"> (%x) (%a: !t) {
    %1 = stablehlo.add %a, %a : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  %2 = mpmd.named_computation<"layer2"> (%0) (%a: !t) {
    %3 = stablehlo.multiply %a, %a : !t
    mpmd.return %3 : !t
  } : (!t) -> !t
  func.return %2 : !t
}
