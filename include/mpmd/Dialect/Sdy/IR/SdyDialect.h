//===- SdyDialect.h - Shardy compat dialect ---------------------*- C++ -*-===//

#ifndef MPMD_DIALECT_SDY_IR_SDYDIALECT_H
#define MPMD_DIALECT_SDY_IR_SDYDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Sdy/IR/SdyAttrs.h.inc"

#define GET_OP_CLASSES
#include "mpmd/Dialect/Sdy/IR/SdyOps.h.inc"

#endif // MPMD_DIALECT_SDY_IR_SDYDIALECT_H
