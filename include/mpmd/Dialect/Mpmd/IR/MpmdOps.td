//===- MpmdOps.td - mpmd operations ------------------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_MPMD_IR_MPMDOPS_TD
#define MPMD_DIALECT_MPMD_IR_MPMDOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mpmd/Dialect/Mpmd/IR/MpmdAttrs.td"
include "mpmd/Dialect/Mpmd/IR/MpmdTypes.td"
include "mpmd/Dialect/Sdy/IR/SdyAttrs.td"

class Mpmd_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mpmd_Dialect, mnemonic, traits>;

def Mpmd_OriginArray
    : TypedArrayAttrBase<Mpmd_UserOrigin, "array of user origins">;

// `!stablehlo.token` (an opaque type of the stablehlo compat dialect).
def Mpmd_Token : Type<CPred<"::mlir::stablehlo::isTokenType($_self)">,
                      "!stablehlo.token">;

// What Shardy:MPMD's fragments take and return.
def Mpmd_MeshTensorOrToken : AnyTypeOf<[Mpmd_MeshTensorType, Mpmd_Token],
                                       "mesh tensor or !stablehlo.token">;

// What Shardy:MPMD's mpmd.call takes and returns: no tokens.
def Mpmd_LocalOrMeshTensor : AnyTypeOf<[AnyTensor, Mpmd_MeshTensorType],
                                       "tensor or mesh tensor">;

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

def Mpmd_ReturnOp : Mpmd_Op<"return", [Pure, Terminator,
    ParentOneOf<["NamedComputationOp", "FragmentOp", "ForOp"]>]> {
  let summary = "Terminates the region of a named computation, fragment or loop";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
  let builders = [OpBuilder<(ins), [{ }]>];
}

//===----------------------------------------------------------------------===//
// NamedComputationOp and NamedTensorOp
//===----------------------------------------------------------------------===//

def Mpmd_NamedComputationOp : Mpmd_Op<"named_computation", [
    SingleBlockImplicitTerminator<"ReturnOp">, RecursiveMemoryEffects,
    RecursivelySpeculatable, IsolatedFromAbove]> {
  let summary = "A named computation of the user's program";
  let description = [{
    Groups a computation under a name and a transpose count (0 for the
    forward computation, n for the n-th autodiff transpose). Import turns it
    into a fragment on the mesh the name is assigned to.

    ```mlir
    %1 = mpmd.named_computation<"layer1"(1)> (%a) (%x: tensor<4xf32>) {
      ...
      mpmd.return %y : tensor<4xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$tensors, Mpmd_UserOrigin:$origin);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::StringRef getName() { return getOrigin().getUserName().getValue(); }
    int64_t getTransposeCount() { return getOrigin().getTransposeCount(); }
  }];
}

def Mpmd_NamedTensorOp : Mpmd_Op<"named_tensor",
    [Pure, SameOperandsAndResultType]> {
  let summary = "Names a tensor so that it can be assigned to a mesh";
  let arguments = (ins AnyRankedTensor:$tensor, StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$tensor `name` `` `=` `` $name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// FragmentOp
//===----------------------------------------------------------------------===//

def Mpmd_FragmentOp : Mpmd_Op<"fragment", [
    SingleBlockImplicitTerminator<"ReturnOp">, RecursiveMemoryEffects,
    RecursivelySpeculatable, IsolatedFromAbove]> {
  let summary = "An SPMD program on one mesh";
  let description = [{
    Operands and results are mesh tensors of the fragment's mesh, or
    `!stablehlo.token`s (as in Shardy:MPMD); block arguments and returned
    values are their global tensor types (a token stays a token). The origin
    lists the named computations the fragment came from (empty for a
    fragment created by mesh inference); `stage` is set only on user
    fragments.

    ```mlir
    %0 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0)
        {call_counter = 0 : ui32} (%arg1: tensor<4xf32>) {
      mpmd.return %arg1 : tensor<4xf32>
    } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    ```
  }];
  let arguments = (ins
    Variadic<Mpmd_MeshTensorOrToken>:$inputs,
    Mpmd_OriginArray:$origin,
    StrAttr:$mesh_name,
    OptionalAttr<I64Attr>:$stage_id,
    OptionalAttr<Sdy_TensorShardingPerValue>:$in_shardings,
    OptionalAttr<Sdy_TensorShardingPerValue>:$out_shardings);
  let results = (outs Variadic<Mpmd_MeshTensorOrToken>:$results);
  let regions = (region SizedRegion<1>:$region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// True if the fragment came from at least one user named computation.
    bool isUserFragment() { return !getOrigin().empty(); }
  }];
}

//===----------------------------------------------------------------------===//
// FragmentCallOp
//===----------------------------------------------------------------------===//

def Mpmd_FragmentCallOp : Mpmd_Op<"fragment_call", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Calls the function that holds an exported fragment's program";
  let description = [{
    ```mlir
    %1 = mpmd.fragment_call<mesh="m1", origin=["f"(1), "g"]> @p0_stage1_fwd(%0)
        : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    ```
    The callee takes and returns the global tensor types.
  }];
  let arguments = (ins
    Variadic<Mpmd_MeshTensorType>:$tensors,
    Mpmd_OriginArray:$origin,
    StrAttr:$mesh_name,
    FlatSymbolRefAttr:$callee);
  let results = (outs Variadic<Mpmd_MeshTensorType>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// TransferOp, AssignOp, UnassignOp
//===----------------------------------------------------------------------===//

def Mpmd_TransferOp : Mpmd_Op<"transfer", [Pure]> {
  let summary = "Moves a tensor to another mesh (or reshards it within one)";
  let description = [{
    `%1 = mpmd.transfer %0 : (!mpmd.mesh_tensor<"m1", T>) ->
    !mpmd.mesh_tensor<"m2", T>`. Memory kinds are part of the types: a
    transfer may move a tensor between memory kinds, on one mesh or across
    meshes. As in Shardy:MPMD, pinned host memory given by an
    `mhlo.memory_kind` attribute instead is rejected: on the transfer, or on
    what produces the value it moves (a function argument, the `res_attrs` of
    a fragment, fragment_call, call or loop). Other memory
    kinds as attributes are accepted; import folds those of entry function
    arguments and results into the types (mpmd-fold-memory-kind-attributes).
  }];
  let arguments = (ins Mpmd_MeshTensorType:$tensor);
  let results = (outs Mpmd_MeshTensorType:$result);
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    bool isIntraMesh() {
      return getTensor().getType().getMeshName() ==
             getResult().getType().getMeshName();
    }
    /// A move back from host memory to device memory on one mesh: the
    /// second half of an offload, placed by mpmd-place-host-reloads.
    bool isHostReload() {
      return isIntraMesh() && getTensor().getType().isOnHost() &&
             !getResult().getType().isOnHost();
    }
  }];
}

def Mpmd_AssignOp : Mpmd_Op<"assign", [Pure]> {
  let summary = "Puts a local tensor on a mesh, replicated";
  let arguments = (ins AnyRankedTensor:$tensor, OptionalAttr<StrAttr>:$origin);
  let results = (outs Mpmd_MeshTensorType:$result);
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mpmd_UnassignOp : Mpmd_Op<"unassign", [Pure]> {
  let summary = "Takes a tensor off its mesh, back to a local tensor";
  let arguments = (ins Mpmd_MeshTensorType:$tensor, OptionalAttr<StrAttr>:$origin);
  let results = (outs AnyRankedTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$tensor,
                   CArg<"::mlir::StringAttr", "{}">:$origin), [{
      build($_builder, $_state,
            ::llvm::cast<MeshTensorType>(tensor.getType()).getGlobalTensorType(),
            tensor, origin);
    }]>
  ];
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// CallOp and ForOp
//===----------------------------------------------------------------------===//

def Mpmd_CallOp : Mpmd_Op<"call", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Calls a function, e.g. a loop body, that may be called many times";
  let description = [{
    `%r = mpmd.call @body(%x) {call_counter = 0 : ui32} : (T) -> T`. The call
    sits directly in a func.func or an mpmd.for; within mpmd functions (those
    with a topology) only the public entry function may call. An optional
    `call_counter` (ui32) numbers the calls of one body. Operands and
    results are tensors or mesh tensors, as in Shardy:MPMD: no tokens.
  }];
  let arguments = (ins Variadic<Mpmd_LocalOrMeshTensor>:$tensors,
                       FlatSymbolRefAttr:$callee);
  let results = (outs Variadic<Mpmd_LocalOrMeshTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $tensors `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mpmd_ForOp : Mpmd_Op<"for", [
    SingleBlockImplicitTerminator<"ReturnOp">, RecursiveMemoryEffects,
    RecursivelySpeculatable, OpAsmOpInterface]> {
  let summary = "A loop with a fixed number of iterations";
  let description = [{
    The body receives the carried values and, last, the iteration index
    (`tensor<ui32>`). An optional unroll factor must divide the iteration
    count.

    ```mlir
    %0 = mpmd.for (%a) {iterations = 4 : ui32, unroll_factor = 2 : ui32}
        (%x: tensor<4xf32>, %index: tensor<ui32>) {
      mpmd.return %x : tensor<4xf32>
    } : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$tensors, UI32Attr:$iterations,
                       OptionalAttr<UI32Attr>:$unroll_factor);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::BlockArgument getIndexArg() {
      return getRegion().front().getArguments().back();
    }
    void getAsmBlockArgumentNames(::mlir::Region &region,
                                  ::mlir::OpAsmSetValueNameFn setNameFn) {
      if (!region.empty() && region.front().getNumArguments() > 0)
        setNameFn(getIndexArg(), "index");
    }
  }];
}

//===----------------------------------------------------------------------===//
// BroadcastOp and ReduceOp
//===----------------------------------------------------------------------===//

def Mpmd_BroadcastOp : Mpmd_Op<"broadcast", [Pure, SameOperandsAndResultType]> {
  let summary = "Makes a value usable on any mesh that needs it";
  let arguments = (ins AnyRankedTensor:$tensor);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $tensor `:` type($tensor)";
  let hasFolder = 1;
}

def Mpmd_ReduceOp : Mpmd_Op<"reduce", [Pure, SameOperandsAndResultType]> {
  let summary = "Reduces values that live on several meshes";
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors,
                       Mpmd_Reduction:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `` $reduction attr-dict $tensors `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ReductionType getReductionType() { return getReduction().getReductionType(); }
  }];
}

#endif // MPMD_DIALECT_MPMD_IR_MPMDOPS_TD
