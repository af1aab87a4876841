//===- SdyOps.td - Shardy compat ops -----------------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_SDY_IR_SDYOPS_TD
#define MPMD_DIALECT_SDY_IR_SDYOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mpmd/Dialect/Sdy/IR/SdyAttrs.td"

def Sdy_MeshOp : Op<Sdy_Dialect, "mesh", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "Declares a named mesh: `sdy.mesh @mesh = <[\"x\"=2]>`";
  let arguments = (ins SymbolNameAttr:$sym_name, Sdy_Mesh:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
  // An empty name would print as `@<<INVALID EMPTY SYMBOL>>`.
  let hasVerifier = 1;
}

class Sdy_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sdy_Dialect, mnemonic, traits>;

// The ops below have Shardy's syntax and properties. They declare no memory
// effects beyond their bodies', so passes keep them as they kept them when
// they were unknown ops.

def Sdy_ReturnOp : Sdy_Op<"return", [Pure, Terminator, ReturnLike]> {
  let summary = "Terminator of sdy regions: `sdy.return %a : T`";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
}

def Sdy_ShardingConstraintOp : Sdy_Op<"sharding_constraint",
    [SameOperandsAndResultType]> {
  let summary = "Constrains the sharding of a tensor";
  let description = [{
    `%1 = sdy.sharding_constraint %0 <@mesh, DIMS> : tensor<8x8xf32>`, the
    sharding without its `#sdy.sharding` prefix (DIMS as in `#sdy.sharding`).
  }];
  let arguments = (ins AnyTensor:$input, Sdy_TensorSharding:$sharding);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Sdy_ShardingGroupOp : Sdy_Op<"sharding_group"> {
  let summary = "Puts a tensor in a group whose members share a sharding";
  let description = [{
    `sdy.sharding_group %0 group_id=3 : tensor<8x8xf32>`
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$group_id);
  let assemblyFormat = [{
    $input `group_id` `` `=` `` $group_id attr-dict `:` type($input)
  }];
}

def Sdy_DataFlowEdgeOp : Sdy_Op<"data_flow_edge",
    [SameOperandsAndResultType]> {
  let summary = "Marks the edge into a data-flow op's result or argument";
  let description = [{
    `%1 = sdy.data_flow_edge %0 sharding=<@mesh, DIMS> : T`, the sharding
    optional and without its `#sdy.sharding` prefix.
  }];
  let arguments = (ins AnyShaped:$input,
                       OptionalAttr<Sdy_TensorSharding>:$sharding);
  let results = (outs AnyShaped:$result);
  let assemblyFormat = [{
    $input (`sharding` `` `=` `` $sharding^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Sdy_ManualComputationOp : Sdy_Op<"manual_computation",
    [RecursiveMemoryEffects]> {
  let summary = "A body that is manual (per device) along some mesh axes";
  let description = [{
    `%r = sdy.manual_computation(%x) in_shardings=[<@mesh, DIMS>]
    out_shardings=[<@mesh, DIMS>] manual_axes={"a"} (%arg1: tensor<4x8xf32>)
    { ... sdy.return %arg1 : tensor<4x8xf32> } : (tensor<8x8xf32>) ->
    tensor<8x8xf32>`, the shardings without their prefix. The body takes and returns the local (per-device) parts of the operands
    and results.
  }];
  let arguments = (ins Variadic<AnyType>:$tensors,
                       Sdy_TensorShardingPerValue:$in_shardings,
                       Sdy_TensorShardingPerValue:$out_shardings,
                       Sdy_ManualAxes:$manual_axes);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // MPMD_DIALECT_SDY_IR_SDYOPS_TD
