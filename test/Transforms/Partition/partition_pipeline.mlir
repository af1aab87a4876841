// The mpmd-partition pipeline: import, optimize, sharding and export in one,
// with the options of mpmd-import and mpmd-optimize under their own names.
// Its program and plan are those of the four pipelines run one after the
// other.
// RUN: mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true schedule=1f1b" > %t.partition
// RUN: mpmd-opt %s --mpmd-import="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true" --mpmd-optimize="schedule=1f1b" --mpmd-sharding --mpmd-export > %t.phases
// RUN: diff %t.partition %t.phases
// RUN: FileCheck %s < %t.partition
// RUN: mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true schedule=1f1b" --mpmd-print-execution-plan -o /dev/null > %t.partition.plan
// RUN: mpmd-opt %s --mpmd-import="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true" --mpmd-optimize="schedule=1f1b" --mpmd-sharding --mpmd-export --mpmd-print-execution-plan -o /dev/null > %t.phases.plan
// RUN: diff %t.partition.plan %t.phases.plan
// RUN: FileCheck %s --check-prefix=PLAN < %t.partition.plan
// The optimize options reach their passes: zero-bubble-h1 splits the
// backwards, merge-last-stage fuses the last stage's forward and backward.
// RUN: mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true schedule=zero-bubble-h1" > %t.zb.partition
// RUN: mpmd-opt %s --mpmd-import="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true" --mpmd-optimize="schedule=zero-bubble-h1" --mpmd-sharding --mpmd-export > %t.zb.phases
// RUN: diff %t.zb.partition %t.zb.phases
// RUN: FileCheck %s --check-prefix=ZB < %t.zb.partition
// RUN: mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 infer-transfers=true merge-last-stage=true" | FileCheck %s --check-prefix=MERGED
// Option errors are those of the phases' pipelines.
// RUN: not mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 no-such-option=true" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mpmd-opt %s --mpmd-partition="assignment=layer1=m1:0,layer2=m2:1 schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=BADKIND
// RUN: not mpmd-opt %s --mpmd-partition="assignment=layer1" 2>&1 | FileCheck %s --check-prefix=BADASSIGN

// 1F1B over two meshes and two microbatches: m1 runs F0 F1 B0 B1, m2 runs
// F0 B0 F1 B1; one program per distinct fragment, shared by the
// microbatches.
// CHECK-LABEL: func.func @main
// CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"]> @[[F1:.*]](%arg0, %arg1) {call_counter = 0 : ui32
// CHECK: mpmd.transfer
// CHECK: mpmd.fragment_call<mesh="m2", origin=["layer2"]> @[[F2:.*]](%{{.*}}, %arg2) {call_counter = 0 : ui32
// CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"]> @[[F1]](%arg0, %arg1) {call_counter = 1 : ui32
// CHECK: mpmd.fragment_call<mesh="m2", origin=["layer2"(1)]> @{{.*}} {call_counter = 0 : ui32
// CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"(1)]> @[[B1:.*]](%{{.*}}) {call_counter = 0 : ui32
// CHECK: mpmd.fragment_call<mesh="m2", origin=["layer2"]> @[[F2]](%{{.*}}, %arg2) {call_counter = 1 : ui32
// CHECK: mpmd.fragment_call<mesh="m2", origin=["layer2"(1)]> @{{.*}} {call_counter = 1 : ui32
// CHECK: mpmd.fragment_call<mesh="m1", origin=["layer1"(1)]> @[[B1]](%{{.*}}) {call_counter = 1 : ui32
// CHECK-NOT: mpmd.fragment<
// CHECK: func.func private @[[F1]]

// The plan is versioned and lists the calls in the same order.
// PLAN: "steps": [
// PLAN: "program": "p0_stage0_fwd_calls0to1"
// PLAN: "op": "transfer"
// PLAN: "program": "p1_stage1_fwd_calls0to1"
// PLAN: "program": "p0_stage0_fwd_calls0to1"
// PLAN: "program": "p2_stage1_bwd_calls0to0"
// PLAN: "program": "p3_stage0_bwd_calls0to1"
// PLAN: "program": "p1_stage1_fwd_calls0to1"
// PLAN: "program": "p4_stage1_bwd_calls1to1"
// PLAN: "program": "p3_stage0_bwd_calls0to1"
// PLAN: "topology":
// PLAN-NEXT: "version": 1
// PLAN-NEXT: }

// ZB: mpmd.fragment_call<mesh="m2", origin=["layer2"(1)]> {{.*}}mpmd.weight_gradient
// MERGED: mpmd.fragment_call<mesh="m2", origin=["layer2", "layer2"(1)]>
// UNKNOWN: no such option no-such-option
// BADKIND: for the --schedule option: unknown value 'zigzag'; expected none, gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1 or explicit
// BADASSIGN: for the --assignment option: invalid assignment entry 'layer1': expected NAME=MESH or NAME=MESH:STAGE

!t = tensor<4xf32>
func.func @main(%x: !t, %w1: !t, %w2: !t) -> (!t, !t)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %grads:2 = mpmd.for (%w1, %w2) {iterations = 2 : ui32, unroll_factor = 2 : ui32} (%g1: !t, %g2: !t, %index: tensor<ui32>) {
    %h = mpmd.named_computation<"layer1"> (%x, %w1) (%a: !t, %w: !t) {
      %0 = stablehlo.multiply %a, %w : !t
      mpmd.return %0 : !t
    } : (!t, !t) -> !t
    %y = mpmd.named_computation<"layer2"> (%h, %w2) (%a: !t, %w: !t) {
      %0 = stablehlo.multiply %a, %w : !t
      mpmd.return %0 : !t
    } : (!t, !t) -> !t
    %d2:2 = mpmd.named_computation<"layer2"(1)> (%y, %h, %w2) (%dy: !t, %a: !t, %w: !t) {
      %0 = stablehlo.multiply %dy, %w : !t
      %1 = stablehlo.multiply %dy, %a : !t
      mpmd.return %0, %1 : !t, !t
    } : (!t, !t, !t) -> (!t, !t)
    %d1 = mpmd.named_computation<"layer1"(1)> (%d2#0, %x) (%dh: !t, %a: !t) {
      %0 = stablehlo.multiply %dh, %a : !t
      mpmd.return %0 : !t
    } : (!t, !t) -> !t
    %n1 = stablehlo.add %g1, %d1 : !t
    %n2 = stablehlo.add %g2, %d2#1 : !t
    mpmd.return %n1, %n2 : !t, !t
  } : !t, !t
  func.return %grads#0, %grads#1 : !t, !t
}
