//===- Passes.td - Optimize passes: schedules and merges ---*- tablegen -*-===//
//
// Pipelining (docs/architecture.md#optimize): a schedule orders the fragments of each
// mesh; merges fuse fragments into one program.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_OPTIMIZE_PASSES_TD
#define MPMD_TRANSFORMS_OPTIMIZE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SchedulePass : Pass<"mpmd-schedule", "ModuleOp"> {
  let summary = "Orders the fragments of each mesh by a pipeline schedule";
  let description = [{
    A schedule is extra ordering edges between the user fragments of one mesh
    (a fragment is identified by its origins, stage, call counter = the
    microbatch, and mesh), added to the data dependencies, followed by a
    topological sort. Built-ins order the fragments that have a call
    counter (the microbatches of the pipelined loop); the others keep their
    data order. Built-ins: `gpipe`, `1f1b`, `interleaved-1f1b`
    (several stages per mesh), `zero-bubble-h1` (after mpmd-split-backward:
    weight gradients fill the bubbles of 1F1B). `explicit` takes the order of every mesh from
    the entry function's `mpmd.schedule` attribute: a dictionary from mesh
    name to an array of fragment keys such as `"layer1(1)#3"`. A schedule
    that contradicts the data flow is an error naming the cycle.

    A loop with a schedule of its own (`mpmd.loop_schedule` on `mpmd.for`
    or `mpmd.call`, carried to its fragments by mpmd-unroll-loops with
    `mpmd.loop` naming the loop) is ordered by that schedule, over the
    meshes it uses; the option orders the fragments of no such loop. A mesh
    that runs several loops runs them one after another, in program order.
  }];
  let options = [
    Option<"schedule", "schedule", "::mlir::mpmd::ScheduleKind",
           /*default=*/"::mlir::mpmd::ScheduleKind::kNone",
           "none, gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1 or explicit">,
    ListOption<"order", "order", "::mlir::mpmd::MeshOrder",
               "For explicit: MESH=KEY|KEY|... per mesh (instead of the "
               "mpmd.schedule attribute)">,
  ];
}

def MergeFragmentsPass : Pass<"mpmd-merge-fragments", "ModuleOp"> {
  let summary = "Fuses fragments by rules, e.g. forward and backward of the last stage";
  let description = [{
    `rules` lists pairs `A:B` of fragment labels (origins without the call
    counter, e.g. `layer3:layer3(1)`): the fragments labelled A and B with the
    same call counter on the same mesh become one program, placed where the
    later one runs. `merge-last-stage` fuses, on the last mesh of the
    pipeline, all fragments of each microbatch. A merge that would create a
    cycle is an error naming the op in between.
  }];
  let options = [
    ListOption<"rules", "rules", "::mlir::mpmd::MergeRule",
               "A:B pairs of fragment labels">,
    Option<"mergeLastStage", "merge-last-stage", "bool", /*default=*/"false",
           "Fuse each microbatch's fragments on the last mesh">,
  ];
}

def SplitBackwardPass : Pass<"mpmd-split-backward", "ModuleOp"> {
  let summary = "Splits backward fragments into input-gradient and weight-gradient parts";
  let description = [{
    For zero-bubble schedules: each backward fragment (all origins with a
    transpose count >= 1) becomes two fragments on its mesh. The first keeps
    what the previous stage waits for (results moved to other meshes, the
    input gradients) and everything they need; the second (marked
    `mpmd.weight_gradient`) computes the remaining results (weight
    gradients) from the first one's values. A fragment whose results all
    leave the mesh, or none do, is left whole.

    With `zero-bubble-loops-only`, only the backward fragments of loops
    whose own schedule (`mpmd.loop_schedule`) is zero-bubble-h1 are split:
    what the pipeline does when no schedule of the function needs the
    split.
  }];
  let options = [
    Option<"zeroBubbleLoopsOnly", "zero-bubble-loops-only", "bool",
           /*default=*/"false",
           "Split only the backward fragments of zero-bubble-h1 loops">,
  ];
}

def MarkRecomputedForwardsPass
    : Pass<"mpmd-mark-recomputed-forwards", "ModuleOp"> {
  let summary = "Marks the forwards jax.checkpoint recomputes for their "
                "backward";
  let description = [{
    Under `jax.checkpoint` around a named computation, the computation runs
    twice: as a forward, and again for its backward. Of two forward
    fragments with the same origins, mesh, loop and call counter, the later
    is marked `mpmd.remat` when backward fragments of its mesh and call
    counter read it and nothing but backward fragments and other such
    recomputes do (through transfers). mpmd-schedule runs a marked fragment
    right before the first backward that reads it, and its key and label
    end in `[r]` (`block0[r]#3`). Runs first in mpmd-optimize.
  }];
}

def RematFragmentsPass : Pass<"mpmd-remat-fragments", "ModuleOp"> {
  let summary = "Recomputes forward fragments right before their backward";
  let description = [{
    Activation rematerialization (Shardy's `mpmd_fragment_remat`): for each
    forward fragment whose results backward fragments of the same mesh and
    call counter read, with fragments of other call counters running on the
    mesh in between,
    a copy (marked `mpmd.remat`) is placed right before the first of those
    backward fragments, and they read the copy. The forward keeps only the
    results others read; the residuals no longer live across the schedule.
    With `merge` (Shardy's `mpmd_merge_remat_fragments`), the copy is fused
    into that backward fragment. Runs after the schedule.
  }];
  let options = [
    Option<"merge", "merge", "bool", /*default=*/"false",
           "Fuse each copy into the backward fragment it feeds">,
  ];
}

def OffloadActivationsPass : Pass<"mpmd-offload-activations", "ModuleOp"> {
  let summary = "Keeps forward residuals in host memory until their backward";
  let description = [{
    Activation offloading: each result of a forward fragment that backward
    fragments of the same mesh and call counter read, with fragments of
    other call counters running on the mesh in between, is moved to the
    mesh's pinned host memory right after the forward (an intra-mesh
    `mpmd.transfer` to a `memory_kind="pinned_host"` type) and back to
    device memory right before the last user fragment of the mesh that
    precedes the first of those backwards (inferred fragments do not count:
    export merges them into a neighbour); the backwards read what came back. A
    result that another op reads after that point is left on the device, as
    is one that would come back right after it left (that fragment follows
    the forward).
    `names` limits this to forwards of those named computations (a name no
    fragment comes from is an error); without it every forward qualifies.
    Runs after the schedule and remat.
  }];
  let options = [
    ListOption<"names", "names", "std::string",
               "Named computations whose forwards are offloaded (all when "
               "empty)">,
  ];
}

#endif // MPMD_TRANSFORMS_OPTIMIZE_PASSES_TD
