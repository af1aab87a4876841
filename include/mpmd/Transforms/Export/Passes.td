//===- Passes.td - Export passes ---------------------------*- tablegen -*-===//
//
// Export turns a program of fragments into what the runtime consumes: one
// function per distinct SPMD program, called by mpmd.fragment_call, with
// donation marked, plus an execution plan (docs/architecture.md#export).
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_EXPORT_PASSES_TD
#define MPMD_TRANSFORMS_EXPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def SinkTokensIntoFragmentsPass
    : Pass<"mpmd-sink-create-token-into-fragments", "ModuleOp"> {
  let summary = "Gives each fragment its own tokens: token operands become a stablehlo.create_token inside, token results go";
  let description = [{
    Fragments may take and return `!stablehlo.token`s (as in Shardy:MPMD),
    but a program the runtime runs exchanges tensors only. As Shardy:MPMD's
    pass of the same name does, each token operand of a fragment is replaced
    inside it by a fresh `stablehlo.create_token` (so side effects are
    ordered within each program, not across programs), and token results,
    which nothing reads any more, are dropped. A token result that something
    other than a fragment reads (the function's return, say) is "not
    supported yet". Runs first in `mpmd-export`.
  }];
  let dependentDialects = ["::mlir::stablehlo::StableHloDialect"];
}

def OutlineFragmentsPass : Pass<"mpmd-outline-fragments", "ModuleOp"> {
  let summary = "Moves each fragment's program into a function called by mpmd.fragment_call";
  let description = [{
    Fragments with the same mesh and the same body (e.g. one stage's forward
    for every microbatch) share one private function. Names read like
    `p0_stage1_fwd_calls0to1`: program index, stage (or first origin name),
    fwd / bwd / fwd_bwd / inferred, and the call counters it serves.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def IssueTransfersEarlyPass : Pass<"mpmd-issue-transfers-early", "ModuleOp"> {
  let summary = "Moves each transfer right after the op that makes its value";
  let description = [{
    The runtime issues steps in program order and each device runs what it
    is given in order, so a transfer placed after other work of its source
    mesh may wait behind that work while the target mesh idles. Each
    `mpmd.transfer` in an entry function moves right after the definition
    of its operand (after the transfers of that op's results already moved,
    keeping their order; to the start of the body, in order, for function
    arguments).
    The order of everything else is unchanged.
  }];
}

def PlaceHostReloadsPass : Pass<"mpmd-place-host-reloads", "ModuleOp"> {
  let summary = "Brings values back from host memory one fragment before use";
  let description = [{
    A value kept in host memory on a mesh (an offloaded activation, a named
    tensor assigned "m1#pinned_host", an argument in pinned host memory)
    comes back to device memory by an intra-mesh `mpmd.transfer`. Each such
    reload in an entry function is issued for each of its users right
    before the last user fragment of the mesh that precedes that user (so
    the copy overlaps that fragment), or right before the user when no such
    fragment follows the value's definition. Users that get the same
    position share one reload; users far apart get their own, so the value
    is not back on the device in between. Runs on the final order, before
    mpmd-issue-transfers-early (which leaves these transfers where they
    are).
  }];
}

def MarkDonationsPass : Pass<"mpmd-mark-donations", "ModuleOp"> {
  let summary = "Marks program arguments whose buffers can be reused";
  let description = [{
    An argument of a program is donated when, at every call of it, the value
    passed dies at that call (not used later, not returned, and not a
    function argument unless the caller donated it: `tf.aliasing_output` or
    `jax.buffer_donor` on the argument, as `jax.jit`'s `donate_argnums`
    marks it). Donated arguments get `jax.buffer_donor = true`, or
    `tf.aliasing_output = N` when a result of the same type can reuse the
    buffer.
  }];
}

def MarkReservedMemoryPass
    : Pass<"mpmd-mark-fragment-reserved-memory", "ModuleOp"> {
  let summary = "Marks each fragment and program with the bytes other live values take on its mesh";
  let description = [{
    Walks the entry function in program order, keeping the bytes per device
    of the values alive on each mesh: function arguments (for the whole
    step unless donated), fragment and transfer results from where they
    are made to their last use; values in host memory do not count. Each
    fragment and fragment_call gets `reserved_hbm_bytes`: the live bytes
    of its mesh minus those of its own operands (XLA counts those). Each
    program called gets the largest of its calls' figures, which the
    runtime gives XLA's compile where a backend option takes it, so that
    XLA's memory-bound optimizations leave that much of the device free.
    Shardy:MPMD's pass of the same name.
  }];
}

def SpecializeConstantArgsPass
    : Pass<"mpmd-specialize-constant-args", "ModuleOp"> {
  let summary = "Gives each call with constant arguments a function that passes them";
  let description = [{
    Outlining shares one program between fragments that differ only in small
    constants (a microbatch's index into the stacked batch): the program
    takes them as trailing arguments, and each call lists its values in
    `mpmd.constant_args`. Shardy:MPMD's dialect requires a fragment_call to
    pass every argument of its callee, so each distinct (program, constants)
    pair gets a private function of its own, `@<program>.c<k>`, that takes
    the call's operands, makes the constants and calls the program. It
    carries `mpmd.specializes = @<program>` and the constants
    (`mpmd.constant_args`): the execution plan still compiles the shared
    program once and passes the constants. Runs last in `mpmd-export`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::stablehlo::StableHloDialect"];
}

def DeclareSdyMeshesPass : Pass<"mpmd-declare-sdy-meshes", "ModuleOp"> {
  let summary = "Declares the sdy.mesh each sharding of the exported program names";
  let description = [{
    Shardings inside the compiler name their mesh by the mesh tensor's mesh
    or the fragment's, not by a declared symbol. Shardy:MPMD's dialects
    resolve every `#sdy.sharding<@name, ...>` against a module-level
    `sdy.mesh @name`. Each distinct mesh shape of the topology gets one
    symbol: `@mesh` for the first (all of them when the meshes are alike,
    as Shardy writes it), `@mesh_<mesh name>` for other shapes, reusing a
    declaration of the same shape already there. Mesh tensor types in the
    entry functions, and every sharding of a program function (its
    boundary, constraints and manual computations inside), then name the
    symbol of their mesh; declarations nothing refers to any more are
    dropped. Runs last in `mpmd-export`.
  }];
}

def LowerToIfrtPass : Pass<"mpmd-lower-to-ifrt", "ModuleOp"> {
  let summary = "Lowers an exported MPMD program to IFRT IR";
  let description = [{
    IFRT IR is what Shardy:MPMD hands to Pathways and to XLA's IFRT IR
    runtime. The entry function becomes an `ifrt.function` over
    `!ifrt.array<tensor<...>, #ifrt.sharding_param<...>, [device ids]>`s
    (meshes get consecutive device ids in topology order, from 0); each
    `mpmd.fragment_call` becomes an `ifrt.Call @<program>::@main` on its
    mesh's devices (with `ifrt.mesh_name`, `io_aliases` and
    `donated_input_indices` from the program's `tf.aliasing_output` and
    `jax.buffer_donor`, and a control dependency on the previous call on
    those devices, which keeps each mesh's schedule); each `mpmd.transfer`
    becomes an `ifrt.CopyArrays` (the layout stays, the devices or memory
    kind change) or an `ifrt.Reshard` (the layout changes), consecutive
    ones between the same devices merged into one op. Donated entry
    arguments get `ifrt.donated`. Each called program moves into a private
    nested `module @<program>` as its public `@main`, with the functions
    and `sdy.mesh` declarations it refers to. The IFRT dialect is not
    registered here: its ops, types and attributes are built by name and
    print in the form jaxlib's IFRT dialect parses. Runs on what
    `mpmd-export` leaves (an entry function of fragment_calls and
    transfers); anything else left there is an error.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PrintExecutionPlanPass : Pass<"mpmd-print-execution-plan", "ModuleOp"> {
  let summary = "Prints the execution plan of an exported program as JSON";
  let description = [{
    The plan the runtime executes: meshes, inputs, outputs, the programs
    (each as a standalone StableHLO module), and the steps in order (calls
    and transfers, with donations and the values that die at each step).
  }];
}

#endif // MPMD_TRANSFORMS_EXPORT_PASSES_TD
