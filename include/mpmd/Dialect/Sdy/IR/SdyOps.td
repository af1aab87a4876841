//===- SdyOps.td - Shardy compat ops -----------------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_SDY_IR_SDYOPS_TD
#define MPMD_DIALECT_SDY_IR_SDYOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mpmd/Dialect/Sdy/IR/SdyAttrs.td"

def Sdy_MeshOp : Op<Sdy_Dialect, "mesh", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "Declares a named mesh: `sdy.mesh @mesh = <[\"x\"=2]>`";
  let arguments = (ins SymbolNameAttr:$sym_name, Sdy_Mesh:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
}

#endif // MPMD_DIALECT_SDY_IR_SDYOPS_TD
