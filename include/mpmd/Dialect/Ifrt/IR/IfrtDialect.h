//===- IfrtDialect.h - IFRT IR subset ---------------------------*- C++ -*-===//

#ifndef MPMD_DIALECT_IFRT_IR_IFRTDIALECT_H
#define MPMD_DIALECT_IFRT_IR_IFRTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtTypes.h.inc"

#define GET_OP_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtOps.h.inc"

#endif // MPMD_DIALECT_IFRT_IR_IFRTDIALECT_H
