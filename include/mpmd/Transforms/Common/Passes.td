//===- Passes.td - Passes shared by the pipelines ----------*- tablegen -*-===//
//
// Passes that more than one phase runs: import and export both clean up the
// MPMD program and merge inferred fragments.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_COMMON_PASSES_TD
#define MPMD_TRANSFORMS_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def MergeInferredFragmentsPass : Pass<"mpmd-merge-inferred-fragments", "ModuleOp"> {
  let summary = "Merges inferred fragments into neighbouring fragments of their mesh";
  let description = [{
    An inferred fragment joins its producer on the same mesh when it reads
    nothing else the producer does not already read, else its only consumer
    on the same mesh; constants are copied into each consumer. These merges
    add no dependency between fragments (so they never constrain a pipeline
    schedule) and never need a transfer; merged fragments keep every origin.

    With `scheduled=true` (run by export, once the order is final), an
    inferred fragment also joins the previous fragment of its mesh when its
    operands are ready by then, or the next one when nothing reads it
    before: each mesh runs its fragments one after another in this order
    anyway, so such merges change no mesh's sequence; they only make fewer,
    larger programs. In an unrolled loop it prefers a fragment of its
    iteration that reads it or that it reads. Outside loops, work joins
    only work of the same named computations (those whose results it
    reads), so equal blocks on several meshes keep equal programs; work
    reading none goes with its readers, copied per group when small.
  }];
  let options = [
    Option<"scheduled", "scheduled", "bool", /*default=*/"false",
           "The op order is final: also merge with the neighbours of the mesh">,
  ];
}

def CleanupPass : Pass<"mpmd-cleanup", "ModuleOp"> {
  let summary = "Canonicalizes the MPMD program, not the fragment bodies";
  let description = [{
    What the pipelines need of `canonicalize`, at a fraction of its cost on
    unrolled programs: at the top level of entry functions, fragments drop
    unused results (and the body ops that computed only them) and unused
    arguments, transfers, assigns and unassigns fold, and dead ops go. The
    ops inside fragment bodies are not rewritten: XLA optimizes each
    program.
  }];
}

#endif // MPMD_TRANSFORMS_COMMON_PASSES_TD
