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
#include "mpmd/Dialect/StableHlo/IR/AssemblyFormat.h"

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
// Shared verifier of the elementwise ops (StableHloOps.cpp).
LogicalResult verifyElementwise(Operation *op, bool sameElementType);
} // namespace detail

// Marker traits that carry op semantics from ODS to the op catalog
// (OpCatalog.h); they verify nothing.
namespace trait {
/// Each result element depends only on the operand elements at the same
/// index (see OpInfo::isElementwise). Not MLIR's OpTrait::Elementwise, whose
/// verifier rejects the scalar predicate of select.
template <typename ConcreteType>
class Elementwise : public OpTrait::TraitBase<ConcreteType, Elementwise> {};

/// Cheap enough to clone into every mesh that uses the result instead of
/// transferring it.
template <typename ConcreteType>
class CheapToClone : public OpTrait::TraitBase<ConcreteType, CheapToClone> {
};
} // namespace trait

} // namespace mlir::stablehlo

#define GET_OP_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloOps.h.inc"

#endif // MPMD_DIALECT_STABLEHLO_IR_STABLEHLODIALECT_H
