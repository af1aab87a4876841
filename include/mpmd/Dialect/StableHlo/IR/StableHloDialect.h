//===- StableHloDialect.h - StableHLO compat dialect ------------*- C++ -*-===//
//
// The `stablehlo` compat dialect: the common StableHLO ops in upstream's
// pretty syntax, and every other `stablehlo` op, attribute or type carried
// through opaquely. Op semantics for the passes live in OpCatalog.h.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_STABLEHLODIALECT_H
#define MPMD_DIALECT_STABLEHLO_IR_STABLEHLODIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h.inc"
#include "mpmd/Dialect/StableHlo/IR/StableHloEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloTypes.h.inc"

namespace mlir::stablehlo {

/// True for the (unmodelled) `#stablehlo.result_accuracy<...>` attribute.
bool isResultAccuracyAttr(Attribute attr);

namespace detail {
// Shared assembly and verification of the elementwise ops (StableHloOps.cpp).
ParseResult parseSameTypeOp(OpAsmParser &parser, OperationState &result);
void printSameTypeOp(OpAsmPrinter &printer, Operation *op);
LogicalResult verifyElementwise(Operation *op, bool sameElementType);
} // namespace detail

} // namespace mlir::stablehlo

#define GET_OP_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloOps.h.inc"

#endif // MPMD_DIALECT_STABLEHLO_IR_STABLEHLODIALECT_H
