//===- StableHloDialect.cpp - StableHLO compat dialect --------------------===//
//
// Dialect registration and types. Types are all opaque: `!stablehlo.token`
// and any other `stablehlo` type is kept as its text. Unknown `stablehlo` ops
// are allowed and stay generic. Attributes: StableHloAttrs.cpp.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Dialect/StableHlo/IR/Token.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::stablehlo;

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloTypes.cpp.inc"

void StableHloDialect::initialize() {
  registerAttributes();
  addTypes<stablehlo::OpaqueType>();
  addOperations<
#define GET_OP_LIST
#include "mpmd/Dialect/StableHlo/IR/StableHloOps.cpp.inc"
      >();
  allowUnknownOperations();
}

Operation *StableHloDialect::materializeConstant(OpBuilder &builder,
                                                 Attribute value, Type type,
                                                 Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type StableHloDialect::parseType(DialectAsmParser &parser) const {
  return stablehlo::OpaqueType::get(getContext(), parser.getFullSymbolSpec());
}

void StableHloDialect::printType(Type type, DialectAsmPrinter &printer) const {
  printer.getStream() << cast<stablehlo::OpaqueType>(type).getSpec();
}

bool mlir::stablehlo::isTokenType(Type type) {
  auto opaque = dyn_cast<stablehlo::OpaqueType>(type);
  return opaque && opaque.getSpec() == "token";
}

Type mlir::stablehlo::getTokenType(MLIRContext *context) {
  return stablehlo::OpaqueType::get(context, "token");
}
