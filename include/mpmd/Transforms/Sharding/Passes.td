//===- Passes.td - Sharding passes -------------------------*- tablegen -*-===//
//
// The sharding phase runs between optimize and export (docs/architecture.md#sharding):
// it decides how every value that crosses a program boundary is laid out on
// its mesh, and writes the result into the mesh tensor types.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_SHARDING_PASSES_TD
#define MPMD_TRANSFORMS_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def PropagateShardingsPass : Pass<"mpmd-propagate-shardings", "ModuleOp"> {
  let summary = "Propagates shardings over the MPMD program and writes them into mesh tensor types";
  let description = [{
    Fixed points: the `sdy.sharding` attributes of the entry function's
    arguments and results (what the user gave: committed arrays,
    `in_shardings`, `out_shardings`), shardings already written in mesh
    tensor types, and inside fragments `sdy.sharding_constraint`,
    `sdy.manual_computation` and ops carrying `sdy.sharding`. A sharding
    names axes; they are resolved on the mesh the value lives on, and an
    axis that mesh lacks, a size that differs from the referenced
    `sdy.mesh`, or a dimension the axes do not divide is an error on the op
    or function at fault.

    Propagation fills the open dimensions of the other values until nothing
    changes: across fragment boundaries (operand <-> block argument,
    returned value <-> result), across transfers (an axis the target mesh
    has with the same size keeps its place; others are dropped and the
    transfer reshards), and through the ops of fragment bodies by a small
    set of dimension rules (elementwise ops, broadcast_in_dim, transpose,
    reshape, dot_general, reduce, concatenate, slice, select, convert,
    sharding constraints). Ops without a rule stop propagation; XLA's own
    propagation decides the inside of every program at compile time from
    the boundary shardings written here. A dimension takes the axes of the
    first fixed member of its group, else of the first sharded one, and is
    never changed once set, so the result does not depend on how often the
    sweeps run.

    Mesh tensors keep no `sharding=` when replicated. An entry result whose
    value is laid out differently from the user's sharding is resharded by an
    `mpmd.transfer` within the mesh. A program with no sharding anywhere is
    left unchanged.
  }];
  let dependentDialects = ["::mlir::mpmd::MpmdDialect",
                           "::mlir::sdy::SdyDialect"];
}

#endif // MPMD_TRANSFORMS_SHARDING_PASSES_TD
