//===- IfrtOps.td - IFRT IR subset -------------------------*- tablegen -*-===//
//
// The part of XLA's IFRT IR dialect that Shardy:MPMD's lowering and
// mpmd-lower-to-ifrt emit, written here from its public definition so that
// the compiler reads IFRT IR without linking XLA: the array and control
// types, the sharding parameter and device list attributes, and the ops that
// call atom programs and move arrays. Text is IFRT's own, in both printed
// forms (what jaxlib prints, and generic). IFRT ops outside this set do not
// parse (pretty form) or stay unregistered (generic form), and
// mpmd-import-ifrt refuses them by name.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_IFRT_IR_IFRTOPS_TD
#define MPMD_DIALECT_IFRT_IR_IFRTOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

def Ifrt_Dialect : Dialect {
  let name = "ifrt";
  let cppNamespace = "::mlir::ifrt";
  let summary = "A subset of XLA's IFRT IR: arrays on device lists, calls of "
                "atom programs, copies between device lists";
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
    /// The attribute marking the entry function of an IFRT IR program.
    static constexpr ::llvm::StringLiteral kFunctionAttrName = "ifrt.function";
    /// The mesh name Shardy's lowering and ours leave on calls.
    static constexpr ::llvm::StringLiteral kMeshNameAttrName = "ifrt.mesh_name";
  }];
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Ifrt_ShardingParamAttr : AttrDef<Ifrt_Dialect, "ShardingParam"> {
  let mnemonic = "sharding_param";
  let summary = "How an array is cut into shards over its devices";
  let description = [{
    `#ifrt.sharding_param<2x1 to [1, 0] on 2x2>`: `dim_shards` (shards per
    tensor dimension, major to minor) laid over a logical mesh of
    `axis_sizes` whose axes are listed minor to major in `permutation`;
    devices the dimensions do not use hold replicas. `unreduced [..]`
    names mesh axes holding partial sums.
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"int64_t">:$dim_shards,
    ArrayRefParameter<"int64_t">:$permutation,
    ArrayRefParameter<"int64_t">:$axis_sizes,
    OptionalArrayRefParameter<"int64_t">:$unreduced_axes);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of devices: the product of the axis sizes.
    int64_t getNumDevices() const;
    /// For each logical device (a position in the array's device list),
    /// the index of its tile among [dim_shards..., replicas], row-major.
    ::llvm::SmallVector<int64_t> getTileOfDevice() const;
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

def Ifrt_DevicesAttr : AttrDef<Ifrt_Dialect, "Devices"> {
  let mnemonic = "devices";
  let summary = "A list of device ids: `#ifrt<devices[0, 1]>`";
  let parameters = (ins ArrayRefParameter<"int64_t">:$ids);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Ifrt_ArrayType : TypeDef<Ifrt_Dialect, "Array"> {
  let mnemonic = "array";
  let summary = "A global tensor sharded over a list of devices";
  let description = [{
    `!ifrt.array<tensor<8x4xf32>, #ifrt.sharding_param<2x1 to [0] on 2>,
    [0, 1], memory_kind = "pinned_host">`: the global tensor, its sharding,
    the devices (ids) it lives on, and optionally the memory it is in.
  }];
  let parameters = (ins
    "::mlir::RankedTensorType":$shape,
    "::mlir::Attribute":$sharding,
    ArrayRefParameter<"int64_t">:$devices,
    OptionalParameter<"::mlir::StringAttr">:$memory_kind,
    OptionalParameter<"::mlir::Attribute">:$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The sharding as a sharding parameter, or null where it is another
    /// (unspecified) sharding.
    ShardingParamAttr getShardingParam() const {
      return ::llvm::dyn_cast<ShardingParamAttr>(getSharding());
    }
  }];
}

def Ifrt_ControlType : TypeDef<Ifrt_Dialect, "Control"> {
  let mnemonic = "control";
  let summary = "A control dependency: the op producing it has run";
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class Ifrt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ifrt_Dialect, mnemonic,
         !listconcat(traits, [AttrSizedOperandSegments,
             DeclareOpInterfaceMethods<OpAsmOpInterface,
                                       ["getAsmResultNames"]>])>;

def Ifrt_IoAliasesAttr : TypedArrayAttrBase<DenseI32ArrayAttr,
    "pairs [input, output] whose buffers may be shared">;

def Ifrt_CallOp : Ifrt_Op<"Call",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs an atom program on a list of devices";
  let description = [{
    ```
    %outputs:2, %control_output = ifrt.Call @atom::@main(%a, %b)
        after %c on devices [0, 1] {io_aliases = [array<i32: 0, 0>]}
        : (!ifrt.array<...>, !ifrt.array<...>) -> (...)
    ```
    The callee is a `func.func` (in its own nested module) over the global
    tensors of the arrays; `devices` is where it runs, the arrays being on
    some of them. `io_aliases` pairs an input with the output that may reuse
    its buffer, `donated_input_indices` lists inputs given up to the call.
    The control output is ready when the call has run; `after` waits for
    other ops' control outputs.
  }];
  let arguments = (ins
    Variadic<Ifrt_ArrayType>:$inputs,
    Variadic<Ifrt_ControlType>:$control_inputs,
    SymbolRefAttr:$callee,
    Ifrt_DevicesAttr:$devices,
    DefaultValuedAttr<Ifrt_IoAliasesAttr, "{}">:$io_aliases,
    DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$donated_input_indices);
  let results = (outs
    Variadic<Ifrt_ArrayType>:$outputs,
    Ifrt_ControlType:$control_output);
  let assemblyFormat = [{
    $callee `(` $inputs `)` oilist(`after` $control_inputs)
    `on` `devices` custom<DeviceList>($devices) attr-dict `:`
    functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
}

class Ifrt_MoveOp<string mnemonic> : Ifrt_Op<mnemonic> {
  let results = (outs
    Variadic<Ifrt_ArrayType>:$outputs,
    Ifrt_ControlType:$control_output);
  let assemblyFormat = [{
    `(` $inputs `)` oilist(`after` $control_inputs) attr-dict `:`
    functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
}

def Ifrt_CopyArraysOp : Ifrt_MoveOp<"CopyArrays"> {
  let summary = "Copies arrays to other devices or memories, keeping their "
                "sharding";
  let arguments = (ins
    Variadic<Ifrt_ArrayType>:$inputs,
    Variadic<Ifrt_ControlType>:$control_inputs,
    DefaultValuedAttr<BoolAttr, "false">:$donated,
    DefaultValuedAttr<BoolAttr, "false">:$reuse);
}

def Ifrt_ReshardOp : Ifrt_MoveOp<"Reshard"> {
  let summary = "Moves arrays to another sharding, devices or memory";
  let arguments = (ins
    Variadic<Ifrt_ArrayType>:$inputs,
    Variadic<Ifrt_ControlType>:$control_inputs,
    DefaultValuedAttr<BoolAttr, "false">:$donated);
}

#endif // MPMD_DIALECT_IFRT_IR_IFRTOPS_TD
