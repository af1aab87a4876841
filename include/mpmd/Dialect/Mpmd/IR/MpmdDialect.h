//===- MpmdDialect.h - The mpmd dialect -------------------------*- C++ -*-===//

#ifndef MPMD_DIALECT_MPMD_IR_MPMDDIALECT_H
#define MPMD_DIALECT_MPMD_IR_MPMDDIALECT_H

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/Dialect/StableHlo/IR/Token.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h.inc"
#include "mpmd/Dialect/Mpmd/IR/MpmdEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdTypes.h.inc"

#define GET_OP_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdOps.h.inc"

namespace mlir::mpmd {

/// The topology of the function enclosing `op` (its `topology` attribute),
/// or null if there is none.
TopologyAttr getEnclosingTopology(Operation *op);

/// Checks that `meshName` names a mesh of the topology enclosing `op` (if
/// any); emits an error on `op` naming the known meshes otherwise.
LogicalResult verifyMeshInTopology(Operation *op, StringRef meshName,
                                   StringRef what);

/// The type a fragment body sees for a fragment operand or result of type
/// `type`: the global tensor type of a mesh tensor; a `!stablehlo.token`
/// (which lives on no mesh) stays itself.
Type getFragmentBodyType(Type type);

} // namespace mlir::mpmd

#endif // MPMD_DIALECT_MPMD_IR_MPMDDIALECT_H
