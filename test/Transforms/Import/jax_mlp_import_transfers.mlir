// The labelled MLP of jax_mlp_import.mlir with the targets y on m1 while
// layer3 (and so the loss) is on m3: y, a function argument, moves to m3
// (arguments go to the meshes that use them, with or without
// infer-transfers, as in Shardy:MPMD). When the loss is wanted on m1, the
// nameless `h - y` computed from layer3's output on m3 needs a transfer:
// without infer-transfers import refuses and says so; with it the missing
// transfer is added and every op still ends up in a fragment.

// RUN: mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2 input-assignment=7=m1" | FileCheck %s
// RUN: not mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2 output-assignment=0=m1" 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: Mesh assignment is not possible for op as it is used in {"m1", "m3"} but it can only be placed on {"m3"}: 'stablehlo.subtract' needs a transfer that mesh inference may not add
// ERR-SAME: Set infer-transfers=true
// ERR: "stablehlo.subtract"(%2#0, %arg7)

// RUN: mpmd-opt %S/Inputs/labelled_mlp_train_step.generic.mlir --mpmd-import="assignment=layer1=m1:0,layer2=m2:1,layer3=m3:2 input-assignment=7=m1 infer-transfers=true" > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: grep -E '^    [^ ]' %t.mlir | FileCheck %s --check-prefix=TOP --implicit-check-not=stablehlo. --implicit-check-not=mpmd.named_ --implicit-check-not=mpmd.assign --implicit-check-not=mpmd.unassign

// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %arg6: !mpmd.mesh_tensor<"m1", tensor<8x16xf32>>, %arg7: !mpmd.mesh_tensor<"m1", tensor<8x4xf32>>)
// CHECK-DAG: mpmd.transfer %arg7 : (!mpmd.mesh_tensor<"m1", tensor<8x4xf32>>) -> !mpmd.mesh_tensor<"m3", tensor<8x4xf32>>
// CHECK-DAG: mpmd.fragment<mesh="m3", origin=["layer3"], stage=2>

// TOP-DAG: mpmd.fragment<mesh="m1", origin=["layer1"], stage=0>
// TOP-DAG: mpmd.fragment<mesh="m2", origin=["layer2"], stage=1>
// TOP-DAG: mpmd.fragment<mesh="m3", origin=["layer3"], stage=2>
// TOP-DAG: mpmd.fragment<mesh="m3", origin=["layer3"(1)], stage=2>
// TOP-DAG: mpmd.fragment<mesh="m2", origin=["layer2"(1)], stage=1>
// TOP-DAG: mpmd.fragment<mesh="m1", origin=["layer1"(1)], stage=0>
// TOP: return
