//===- Passes.td - Import passes ---------------------------*- tablegen -*-===//
//
// Import turns a labelled single-device program into one where every
// computation lives in a fragment on a mesh (docs/architecture.md, sections
// "Import" and "Mesh inference").
// The passes run in this order in the `mpmd-import` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_IMPORT_PASSES_TD
#define MPMD_TRANSFORMS_IMPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def UnrollLoopsPass : Pass<"mpmd-unroll-loops", "ModuleOp"> {
  let summary = "Unrolls mpmd.for loops and inlines mpmd.call, iterations becoming call counters";
  let description = [{
    Microbatched programs written with `mpmd.for` (or `mpmd.call` of a loop
    body with a `call_counter` attribute) become straight-line code: each
    iteration's (or call's) named computations and fragments carry the
    iteration as their `call_counter`, which pipeline schedules order. The
    loop index becomes a `tensor<ui32>` constant.
  }];
  let dependentDialects = ["::mlir::stablehlo::StableHloDialect"];
}

def FoldConstantIndicesPass : Pass<"mpmd-fold-constant-indices", "ModuleOp"> {
  let summary = "Evaluates index arithmetic on constants; dynamic slices at known starts become static slices";
  let description = [{
    After unrolling, a loop index is a constant, and so is the scalar
    integer arithmetic JAX wraps around it (conversion, negative-index
    wrap-around, clamping). This pass evaluates rank-0 integer `add`,
    `subtract`, `multiply`, `and`, `or`, `xor`, `maximum`, `minimum`,
    `negate`, `not`, `convert`, `compare`, `select` and `clamp` of
    constants, and rewrites `stablehlo.dynamic_slice` whose start indices
    are all constants into `stablehlo.slice` (starts clamped as
    dynamic_slice clamps them): `xs[i]` becomes one static slice per
    iteration.
  }];
  let dependentDialects = ["::mlir::stablehlo::StableHloDialect"];
}

def InlineCallsPass : Pass<"mpmd-inline-calls", "ModuleOp"> {
  let summary = "Inlines func.call ops of functions that carry a topology";
  let description = [{
    JAX lowers library helpers and nested jits to `func.call`. Inlining them
    into the MPMD entry function lets named computations and mesh inference
    see every op. Callees left without callers are erased.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def MapNamedOpsToMeshesPass : Pass<"mpmd-map-named-ops", "ModuleOp"> {
  let summary = "Turns named computations into fragments and named tensors into assign/unassign";
  let description = [{
    Each `mpmd.named_computation` whose name is in the assignment becomes an
    `mpmd.fragment` on the assigned mesh (with its origin and, if given, its
    stage), fed by `mpmd.assign` and read through `mpmd.unassign`. A named
    tensor in the assignment becomes an assign/unassign pair; one that is not
    is dropped and left to mesh inference.

    Entries: `NAME=MESH` or `NAME=MESH:STAGE`. Names the option leaves out
    take their entry from the module's `mpmd.assignment` (what
    mpmd-auto-assign chose), if any.
  }];
  let options = [
    ListOption<"assignment", "assignment", "::mlir::mpmd::NamedAssignment",
               "NAME=MESH or NAME=MESH:STAGE entries">,
  ];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect"];
}

def AutoAssignPass : Pass<"mpmd-auto-assign", "ModuleOp"> {
  let summary = "Assigns named computations to stages, one per mesh, balancing their cost";
  let description = [{
    Reads each top-level named computation's cost per microbatch from its
    body (FLOPs of its forward and its backward, parameter, activation and
    output bytes), then splits them, in program order, into one contiguous
    run per mesh of `meshes` (stage s on the s-th mesh), minimizing the
    busiest stage's FLOPs (ties: fewer bytes sent between stages), under
    `memory-limit` bytes per stage (parameters plus the activations of the
    microbatches the schedule keeps in flight: all for `schedule=gpipe`,
    `stages - s` otherwise). Names in `assignment` keep their mesh. The
    choice goes on the module as `mpmd.assignment` = {name = "mesh:stage"},
    which mpmd-map-named-ops reads for names its option leaves out.
  }];
  let options = [
    ListOption<"meshes", "meshes", "std::string",
               "The meshes, one stage each, in pipeline order">,
    ListOption<"assignment", "assignment", "::mlir::mpmd::NamedAssignment",
               "NAME=MESH entries that stay where they are">,
    Option<"memoryLimit", "memory-limit", "int64_t", "0",
           "Bytes per stage (0: no limit)">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "gpipe keeps every microbatch in flight; others stages - s">,
  ];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect"];
}

def MapInputsOutputsToMeshesPass : Pass<"mpmd-map-io-to-meshes", "ModuleOp"> {
  let summary = "Puts assigned function arguments and results on their meshes";
  let description = [{
    Entries: `INDEX=MESH` or `INDEX=MESH:MEMORY_KIND`. Unassigned arguments and
    results are left to mesh inference.
  }];
  let options = [
    ListOption<"inputAssignment", "input-assignment",
               "::mlir::mpmd::IndexedAssignment",
               "INDEX=MESH[:MEMORY_KIND] entries for function arguments">,
    ListOption<"outputAssignment", "output-assignment",
               "::mlir::mpmd::IndexedAssignment",
               "INDEX=MESH[:MEMORY_KIND] entries for function results">,
  ];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect"];
}

def IntroduceTransfersPass : Pass<"mpmd-introduce-transfers", "ModuleOp"> {
  let summary = "Turns direct fragment-to-fragment edges across meshes into transfers";
  let description = [{
    `mpmd.assign(mpmd.unassign(%fragment_result))` moves a value straight from
    one named computation to another: on the same mesh it is the value
    itself, on another mesh an `mpmd.transfer`. No other transfer is created
    here.
  }];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect"];
}

def SplitOptimizationBarriersPass
    : Pass<"mpmd-split-optimization-barriers", "ModuleOp"> {
  let summary = "Splits nameless optimization barriers into one per operand";
  let description = [{
    `jax.checkpoint` around named computations puts the recomputation's
    inputs and the incoming cotangent into one `stablehlo.optimization_barrier`
    outside every named computation; its operands come from several meshes
    and its results go to others. One barrier per operand lets each value
    go its own way (mesh inference then places each barrier with its users,
    moving its operand there like `mpmd.broadcast`). Across programs the
    barrier's grouping means nothing: XLA cannot merge computations of two
    programs, and within each program every barrier still hides its operand
    from CSE. Barriers inside named computations are left alone.
  }];
}

def InferMeshesPass : Pass<"mpmd-infer-meshes", "ModuleOp"> {
  let summary = "Places every nameless op on the meshes that use it";
  let description = [{
    Mesh inference (docs/architecture.md#mesh-inference). Each nameless op is cloned, as an
    inferred fragment (no origin), into every mesh of its use set. When the
    use set is not inside the src set a transfer is needed: created when
    `infer-transfers` is set, an error naming the op, its use set and src set
    otherwise. Unassigned function arguments and results get the mesh their
    uses or sources imply. A single-operand `stablehlo.optimization_barrier`
    is an identity: like `mpmd.broadcast` it runs where its result is used
    and its operand is moved there, with or without `infer-transfers`.
  }];
  let options = [
    Option<"inferTransfers", "infer-transfers", "bool", /*default=*/"false",
           "Create the transfers that inference needs instead of failing">,
    Option<"inferCrossMeshReductions", "infer-cross-mesh-reductions", "bool",
           /*default=*/"false",
           "Turn a reduction of values from several meshes into mpmd.reduce">,
  ];
  // Reductions are materialized as stablehlo ops.
  let dependentDialects = ["::mlir::mpmd::MpmdDialect",
                           "::mlir::stablehlo::StableHloDialect"];
}

def FoldMemoryKindAttributesPass
    : Pass<"mpmd-fold-memory-kind-attributes", "ModuleOp"> {
  let summary = "Moves the mhlo.memory_kind attributes of entry function arguments and results into their mesh tensor types";
  let description = [{
    JAX and Shardy:MPMD may give a memory kind as an `mhlo.memory_kind`
    attribute of an argument or result; the passes after import and the
    runtime read it from the mesh tensor type only. Once arguments and
    results are mesh tensors (after mesh inference), each attribute becomes
    the type's memory kind and is dropped. An attribute that agrees with the
    type's memory kind just goes; one that contradicts it is an error. A
    result whose producer puts it elsewhere is moved there by an intra-mesh
    `mpmd.transfer`. Values that are not mesh tensors (tokens) keep their
    attributes.
  }];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect"];
}

def VerifyImportPass : Pass<"mpmd-verify-import", "ModuleOp"> {
  let summary = "Checks that import placed every op in a fragment";
}

def ImportIfrtPass : Pass<"mpmd-import-ifrt", "ModuleOp"> {
  let summary = "Rewrites an IFRT IR program as an exported MPMD module";
  let description = [{
    The one place where IFRT IR meets the execution plan. The main function
    (the `func.func` with `ifrt.function`) becomes an exported MPMD `main`:
    each device list its calls run on is a mesh (named by the calls'
    `ifrt.mesh_name`, its axes those of the atom programs' `sdy.mesh`), each
    `!ifrt.array` a mesh tensor whose sharding is the sharding parameter
    said over those axes, each `ifrt.Call` an `mpmd.fragment_call` of its
    atom program (hoisted out of its nested module; `io_aliases` and
    `donated_input_indices` become the program's donations), each array an
    `ifrt.CopyArrays` or `ifrt.Reshard` moves an `mpmd.transfer`. Control
    dependencies are dropped: the plan runs the ops in program order. The
    devices of each mesh are kept in `mpmd.mesh_devices` on `main` (the plan
    gives them). With `available-devices`, a device outside that list is an
    error on the op that names it. IFRT ops, attributes and shardings
    outside the supported set are "not supported yet" errors naming them.
  }];
  let options = [
    ListOption<"availableDevices", "available-devices", "int64_t",
               "The ids of the devices the program may use (unchecked when "
               "empty)">,
  ];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect",
                           "::mlir::sdy::SdyDialect"];
}

#endif // MPMD_TRANSFORMS_IMPORT_PASSES_TD
