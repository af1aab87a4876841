//===- MpmdAttrs.td - mpmd attributes ----------------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_MPMD_IR_MPMDATTRS_TD
#define MPMD_DIALECT_MPMD_IR_MPMDATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mpmd/Dialect/Mpmd/IR/MpmdBase.td"
include "mpmd/Dialect/Sdy/IR/SdyAttrs.td"

class Mpmd_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Mpmd_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Mpmd_NamedMesh : Mpmd_Attr<"NamedMesh", "named_mesh"> {
  let summary = "A mesh with its name: `<\"m1\" : <[\"x\"=2]>>`";
  let parameters = (ins StringRefParameter<"mesh name">:$name,
                        AttrParameter<"::mlir::sdy::MeshAttr", "mesh">:$mesh);
  let assemblyFormat = "`<` $name `:` $mesh `>`";
}

def Mpmd_Topology : Mpmd_Attr<"Topology", "topology"> {
  let summary = "The named meshes of an MPMD program";
  let description = [{
    Set as the `topology` attribute of the main function, e.g.
    `#mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>`.
  }];
  let parameters = (ins ArrayRefParameter<"NamedMeshAttr", "meshes">:$meshes);
  let assemblyFormat = "`<` $meshes `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The mesh named `name`, or null.
    ::mlir::sdy::MeshAttr getMesh(::llvm::StringRef name) const;
    bool hasMesh(::llvm::StringRef name) const { return getMesh(name) != nullptr; }
    /// Mesh names in topology order.
    ::llvm::SmallVector<::llvm::StringRef> getMeshNames() const;
  }];
}

def Mpmd_UserOrigin : Mpmd_Attr<"UserOrigin", "user_origin"> {
  let summary = "A named computation and its transpose count: `\"f\"(1)`";
  let description = [{
    Printed in short form inside fragments (`origin=["f", "g"(1)]`); a
    transpose count of 0 (the forward computation) is not printed.
  }];
  let parameters = (ins "::mlir::StringAttr":$userName,
                        "int64_t":$transposeCount);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// `"name"` or `"name"(k)`, without the surrounding `<>`.
    void printShort(::mlir::AsmPrinter &printer) const;
    static UserOriginAttr parseShort(::mlir::AsmParser &parser);
  }];
}

def Mpmd_Origin : Mpmd_Attr<"Origin", "origin"> {
  let summary = "Why a value was assigned to a mesh: `#mpmd.origin<\"label\">`";
  let parameters = (ins StringRefParameter<"origin label">:$origin_label);
  let assemblyFormat = "`<` $origin_label `>`";
}

def Mpmd_MeshWithOrigins : Mpmd_Attr<"MeshWithOrigins", "mesh_with_origins"> {
  let summary = "A mesh name and the origins that put a value there";
  let description = [{
    Used by mesh inference: `"m1"` or `"m1"["layer1", "transfer"]`.
  }];
  let parameters = (ins StringRefParameter<"mesh name">:$mesh_name,
                        OptionalArrayRefParameter<"OriginAttr", "origins">:$origins);
  let hasCustomAssemblyFormat = 1;
}

def Mpmd_MeshesWithOrigins : Mpmd_Attr<"MeshesWithOrigins", "meshes_with_origins"> {
  let summary = "A set of meshes with origins: `#mpmd.meshes_with_origins<\"m1\", \"m2\"[\"f\"]>`";
  let parameters = (ins
    OptionalArrayRefParameter<"MeshWithOriginsAttr", "meshes">:$value);
  let hasCustomAssemblyFormat = 1;
}

def Mpmd_ReductionType : I32EnumAttr<"ReductionType", "cross-mesh reduction kind", [
    I32EnumAttrCase<"kNone", 0, "none">,
    I32EnumAttrCase<"kAdd", 1, "add">,
    I32EnumAttrCase<"kMax", 2, "max">,
    I32EnumAttrCase<"kMin", 3, "min">,
    I32EnumAttrCase<"kMul", 4, "mul">,
    I32EnumAttrCase<"kOr", 5, "or">,
    I32EnumAttrCase<"kAnd", 6, "and">]> {
  let cppNamespace = "::mlir::mpmd";
  let genSpecializedAttr = 0;
}

// What crosses the boundary between the compiler and its clients (the
// Python stages, the execution plan) is spelled once, here: C++ uses the
// enums, pass options and the plan use the strings, Python binds the enums.

def Mpmd_ScheduleKind : I32EnumAttr<"ScheduleKind", "a pipeline schedule the compiler applies", [
    I32EnumAttrCase<"kNone", 0, "none">,
    I32EnumAttrCase<"kGPipe", 1, "gpipe">,
    I32EnumAttrCase<"k1F1B", 2, "1f1b">,
    I32EnumAttrCase<"kInterleaved1F1B", 3, "interleaved-1f1b">,
    I32EnumAttrCase<"kZeroBubbleH1", 4, "zero-bubble-h1">,
    // The order of every mesh is given (a table or a comparator evaluated by
    // the client, or the entry function's mpmd.schedule attribute).
    I32EnumAttrCase<"kExplicit", 5, "explicit">]> {
  let cppNamespace = "::mlir::mpmd";
  let genSpecializedAttr = 0;
}

def Mpmd_FragmentKind : I32EnumAttr<"FragmentKind", "what a user fragment computes", [
    // Every origin is a forward computation (transpose count 0).
    I32EnumAttrCase<"kForward", 0, "forward">,
    // Every origin is a transpose.
    I32EnumAttrCase<"kBackward", 1, "backward">,
    // Both, e.g. a merged forward and backward.
    I32EnumAttrCase<"kMixed", 2, "mixed">,
    // The weight-gradient part of a split backward (mpmd.weight_gradient).
    I32EnumAttrCase<"kWeightGradient", 3, "weight_gradient">]> {
  let cppNamespace = "::mlir::mpmd";
  let genSpecializedAttr = 0;
}

def Mpmd_Reduction : Mpmd_Attr<"Reduction", "reduction"> {
  let summary = "A reduction kind: `#mpmd.reduction<add>`";
  let parameters = (ins EnumParameter<Mpmd_ReductionType>:$reduction_type);
  let assemblyFormat = "`<` $reduction_type `>`";
}

#endif // MPMD_DIALECT_MPMD_IR_MPMDATTRS_TD
