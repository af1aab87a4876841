//===- MpmdBase.td - The mpmd dialect ----------------------*- tablegen -*-===//
//
// The IR of MPMD programs: meshes and their topology, mesh tensors, fragments
// (SPMD programs on one mesh), transfers between meshes, and the ops that a
// labelled single-device program carries before import. The textual syntax
// follows Shardy:MPMD.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_MPMD_IR_MPMDBASE_TD
#define MPMD_DIALECT_MPMD_IR_MPMDBASE_TD

include "mlir/IR/DialectBase.td"

def Mpmd_Dialect : Dialect {
  let name = "mpmd";
  let cppNamespace = "::mlir::mpmd";
  let summary = "Multiple-program multiple-data programs over named meshes";
  let dependentDialects = ["::mlir::sdy::SdyDialect", "::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    /// Name of the function attribute that holds the #mpmd.topology.
    static constexpr ::llvm::StringLiteral kTopologyAttrName = "topology";
    /// Discardable attribute on fragments: the microbatch of the fragment.
    static constexpr ::llvm::StringLiteral kCallCounterAttrName = "call_counter";
    /// Discardable attribute on fragment_call: constants passed after the
    /// operands (export lifts small constants that differ between fragments
    /// of one program, e.g. a microbatch index, into arguments).
    static constexpr ::llvm::StringLiteral kConstantArgsAttrName =
        "mpmd.constant_args";
    /// Discardable attribute on a function made by
    /// mpmd-specialize-constant-args: the program it calls with the
    /// constants of its own `mpmd.constant_args`.
    static constexpr ::llvm::StringLiteral kSpecializesAttrName =
        "mpmd.specializes";
    /// Attribute of the entry function where the program names its meshes'
    /// devices (IFRT IR, read by mpmd-import-ifrt): mesh name -> the
    /// logical device ids, row-major over its axes. The plan gives them.
    static constexpr ::llvm::StringLiteral kMeshDevicesAttrName =
        "mpmd.mesh_devices";
  private:
    void registerAttributes();
    void registerTypes();
  }];
}

#endif // MPMD_DIALECT_MPMD_IR_MPMDBASE_TD
