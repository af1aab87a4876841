//===- SdyDialect.cpp - Shardy compat dialect -----------------------------===//
//
// Attribute parsing dispatches on the text: forms this subset models (mesh,
// sharding, sharding_per_value) are parsed structurally; anything else of
// `sdy` becomes a VerbatimAttr holding its text, so that it prints back
// byte-identical. Unknown `sdy` ops are allowed and stay generic; the
// modelled ones are in SdyOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sdy;

#include "mpmd/Dialect/Sdy/IR/SdyDialect.cpp.inc"

void SdyDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "mpmd/Dialect/Sdy/IR/SdyOps.cpp.inc"
      >();
  allowUnknownOperations();
}

