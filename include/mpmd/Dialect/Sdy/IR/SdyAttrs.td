//===- SdyAttrs.td - Shardy compat attributes --------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_SDY_IR_SDYATTRS_TD
#define MPMD_DIALECT_SDY_IR_SDYATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mpmd/Dialect/Sdy/IR/SdyBase.td"

class Sdy_Attr<string name, string attrMnemonic>
    : AttrDef<Sdy_Dialect, name> {
  let mnemonic = attrMnemonic;
  let hasCustomAssemblyFormat = 1;
}

def Sdy_MeshAxis : Sdy_Attr<"MeshAxis", "mesh_axis"> {
  let summary = "A named mesh axis with a size: `\"x\"=4`";
  let parameters = (ins StringRefParameter<"axis name">:$name,
                        "int64_t":$size);
  let genVerifyDecl = 1;
}

def Sdy_Mesh : Sdy_Attr<"Mesh", "mesh"> {
  let summary = "A device mesh: `<[\"x\"=2, \"y\"=4], device_ids=[...]>`";
  let parameters = (ins
    OptionalArrayRefParameter<"MeshAxisAttr", "axes">:$axes,
    OptionalArrayRefParameter<"int64_t", "explicit device ids">:$device_ids);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of devices of the mesh: the product of its axis sizes.
    int64_t getTotalSize() const;
    /// The axis named `name`, or null.
    MeshAxisAttr getAxis(::llvm::StringRef name) const;
    /// Size of the axis named `name`, or -1 if the mesh has no such axis.
    int64_t getAxisSize(::llvm::StringRef name) const;
    bool hasAxis(::llvm::StringRef name) const { return getAxis(name) != nullptr; }
    /// Names of the axes in mesh order.
    ::llvm::SmallVector<::llvm::StringRef> getAxisNames() const;
  }];
}

def Sdy_SubAxisInfo : Sdy_Attr<"SubAxisInfo", "sub_axis_info"> {
  let summary = "A sub-axis of a mesh axis: `(pre_size)size`";
  let parameters = (ins "int64_t":$pre_size, "int64_t":$size);
}

def Sdy_AxisRef : Sdy_Attr<"AxisRef", "axis_ref"> {
  let summary = "A reference to a mesh axis or sub-axis: `\"x\"` or `\"x\":(1)2`";
  let parameters = (ins StringRefParameter<"axis name">:$name,
                        OptionalParameter<"SubAxisInfoAttr">:$sub_axis_info);
}

def Sdy_DimensionSharding : Sdy_Attr<"DimensionSharding", "dimension_sharding"> {
  let summary = "How one tensor dimension is sharded: `{\"x\", \"y\", ?}p1`";
  let parameters = (ins
    OptionalArrayRefParameter<"AxisRefAttr", "axes">:$axes,
    "bool":$is_closed,
    OptionalParameter<"std::optional<int64_t>">:$priority);
  let extraClassDeclaration = [{
    bool isOpen() const { return !getIsClosed(); }
    bool isReplicated() const { return getAxes().empty(); }
  }];
}

def Sdy_TensorSharding : Sdy_Attr<"TensorSharding", "sharding"> {
  let summary = "A tensor sharding: `<@mesh, [{\"x\"}, {}], replicated={\"y\"}>`";
  let parameters = (ins
    "::mlir::Attribute":$mesh_or_ref,
    OptionalArrayRefParameter<"DimensionShardingAttr", "per-dimension shardings">:$dim_shardings,
    OptionalArrayRefParameter<"AxisRefAttr", "replicated axes">:$replicated_axes,
    OptionalArrayRefParameter<"AxisRefAttr", "unreduced axes">:$unreduced_axes);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getDimShardings().size(); }
    /// The referenced mesh symbol name, or empty for an inline mesh.
    ::llvm::StringRef getMeshName() const;
    /// The inline mesh, or null when the sharding refers to a symbol.
    MeshAttr getInlineMesh() const;
    /// Resolves the mesh: the inline one or the `sdy.mesh` symbol visible
    /// from `from` (looked up in the nearest symbol table). Null if missing.
    MeshAttr getMesh(::mlir::Operation *from) const;
    /// Axis names sharding dimension `dim`, major to minor.
    ::llvm::SmallVector<::llvm::StringRef> getShardingAxes(int64_t dim) const;
    /// True if no dimension is sharded along any axis.
    bool isFullyReplicated() const;
    /// A fully open or closed, replicated sharding of the given rank.
    static TensorShardingAttr getReplicated(::mlir::MLIRContext *ctx,
                                            ::mlir::Attribute meshOrRef,
                                            int64_t rank, bool isClosed);
  }];
}

def Sdy_TensorShardingPerValue
    : Sdy_Attr<"TensorShardingPerValue", "sharding_per_value"> {
  let summary = "One tensor sharding per value: `<[<@mesh, [{\"x\"}]>, ...]>`";
  let parameters = (ins
    OptionalArrayRefParameter<"TensorShardingAttr", "shardings">:$shardings);
}

// The axes a manual_computation makes manual: `{"a", "b"}`, in generic form
// `#sdy<manual_axes{"a", "b"}>`.
def Sdy_ManualAxes : Sdy_Attr<"ManualAxes", "manual_axes"> {
  let summary = "Mesh axes that are manual in a manual_computation";
  let parameters = (ins
    OptionalArrayRefParameter<"::mlir::StringAttr", "axis names">:$value);
}

// Any `sdy` attribute that this subset does not model, kept as its text.
def Sdy_Verbatim : Sdy_Attr<"Verbatim", "verbatim"> {
  let summary = "An sdy attribute not modelled here, printed back verbatim";
  let parameters = (ins StringRefParameter<"the attribute text">:$spec);
}

#endif // MPMD_DIALECT_SDY_IR_SDYATTRS_TD
