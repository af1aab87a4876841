//===- MpmdTypes.td - mpmd types ---------------------------*- tablegen -*-===//

#ifndef MPMD_DIALECT_MPMD_IR_MPMDTYPES_TD
#define MPMD_DIALECT_MPMD_IR_MPMDTYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mpmd/Dialect/Mpmd/IR/MpmdBase.td"
include "mpmd/Dialect/Sdy/IR/SdyAttrs.td"

def Mpmd_MeshTensorType : TypeDef<Mpmd_Dialect, "MeshTensor"> {
  let mnemonic = "mesh_tensor";
  let summary = "A global tensor living on a named mesh";
  let description = [{
    `!mpmd.mesh_tensor<"m1", tensor<4x8xf32>>`, optionally with
    a `sharding=` (an sdy tensor sharding without its `#sdy.sharding`
    prefix) and a `memory_kind=` ("device", "pinned_host", "unpinned_host").
    Without a sharding the tensor is replicated within the mesh.
  }];
  let parameters = (ins
    StringRefParameter<"mesh name">:$mesh_name,
    "::mlir::RankedTensorType":$ranked_tensor_type,
    OptionalParameter<"::mlir::sdy::TensorShardingAttr">:$sharding,
    OptionalParameter<"::mlir::StringAttr">:$memory_kind);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilder<(ins "::llvm::StringRef":$meshName,
                     "::mlir::RankedTensorType":$type), [{
      return $_get($_ctxt, meshName, type, ::mlir::sdy::TensorShardingAttr(),
                   ::mlir::StringAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The global (unsharded) tensor type: what fragment bodies compute on.
    ::mlir::RankedTensorType getGlobalTensorType() const {
      return getRankedTensorType();
    }
    /// The per-device shape under the sharding on `mesh` (the global type
    /// when replicated). Fails if a dimension is not divisible.
    ::mlir::FailureOr<::mlir::RankedTensorType>
    getLocalTensorType(::mlir::sdy::MeshAttr mesh) const;
    /// The same tensor on another mesh, without sharding or memory kind.
    MeshTensorType withMesh(::llvm::StringRef meshName) const;
    bool isOnHost() const {
      return getMemoryKind() && getMemoryKind().getValue() != "device";
    }
  }];
}

#endif // MPMD_DIALECT_MPMD_IR_MPMDTYPES_TD
