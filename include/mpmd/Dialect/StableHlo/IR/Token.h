//===- Token.h - The !stablehlo.token type ----------------------*- C++ -*-===//
//
// `!stablehlo.token` orders side effects. This dialect keeps every stablehlo
// type as opaque text (StableHloBase.td), so a token is the opaque type
// whose text is `token`. A light header: the mpmd dialect and the passes
// ask about tokens without pulling in the StableHLO ops.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_TOKEN_H
#define MPMD_DIALECT_STABLEHLO_IR_TOKEN_H

#include "mlir/IR/Types.h"

namespace mlir {
class MLIRContext;
namespace stablehlo {

/// Whether `type` is `!stablehlo.token`.
bool isTokenType(Type type);

/// `!stablehlo.token` (the stablehlo dialect must be loaded in `context`).
Type getTokenType(MLIRContext *context);

} // namespace stablehlo
} // namespace mlir

#endif // MPMD_DIALECT_STABLEHLO_IR_TOKEN_H
