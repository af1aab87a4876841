//===- AssemblyFormat.h - Custom directives of StableHLO ops ----*- C++ -*-===//
//
// The `custom<Name>(...)` directives of the ops' declarative assembly
// formats (StableHloOps.td): the pieces of upstream StableHLO's pretty syntax
// that ODS cannot express. ODS calls `parseName` and `printName`; each prints
// exactly what upstream prints and parses that text back.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_ASSEMBLYFORMAT_H
#define MPMD_DIALECT_STABLEHLO_IR_ASSEMBLYFORMAT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir::stablehlo {

class DotAlgorithmAttr;
class DotDimensionNumbersAttr;

namespace detail {
ParseResult parseSameOperandsAndResultType(OpAsmParser &parser,
                                           ArrayRef<Type *> types);
void printSameOperandsAndResultType(OpAsmPrinter &printer,
                                    ArrayRef<Type> types);
} // namespace detail

/// `T` when every operand has the result's type `T`, `(T0, T1) -> R`
/// otherwise. The arguments are the operand types, then the result type.
template <typename... TypesT>
ParseResult parseSameOperandsAndResultType(OpAsmParser &parser,
                                           TypesT &...types) {
  return detail::parseSameOperandsAndResultType(parser, {&types...});
}
template <typename... TypesT>
void printSameOperandsAndResultType(OpAsmPrinter &printer, Operation *,
                                    TypesT... types) {
  detail::printSameOperandsAndResultType(printer, {types...});
}

/// select: `P, T` when both branches have the result type `T`, the
/// functional type otherwise.
ParseResult parseSelectOpType(OpAsmParser &parser, Type &pred, Type &onTrue,
                              Type &onFalse, Type &result);
void printSelectOpType(OpAsmPrinter &printer, Operation *op, Type pred,
                       Type onTrue, Type onFalse, Type result);

/// concatenate, dynamic_slice: `%a, %b, `, each operand followed by a comma
/// and a space (the formats put `` before the keyword that follows); none
/// prints nothing. A lone comma (upstream's text for no operands) parses.
ParseResult parseVariadicOperandWithAttribute(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands);
void printVariadicOperandWithAttribute(OpAsmPrinter &printer, Operation *op,
                                       OperandRange operands);

/// slice: `[0:2, 1:3:2]`, `start:limit` per dimension with `:stride` unless
/// it is 1.
ParseResult parseSliceRanges(OpAsmParser &parser, DenseI64ArrayAttr &starts,
                             DenseI64ArrayAttr &limits,
                             DenseI64ArrayAttr &strides);
void printSliceRanges(OpAsmPrinter &printer, Operation *op,
                      DenseI64ArrayAttr starts, DenseI64ArrayAttr limits,
                      DenseI64ArrayAttr strides);

/// dot_general: `, batching_dims = [0] x [0], contracting_dims = [2] x [1]`,
/// the batching part only when there are batching dimensions.
ParseResult parseDotDimensionNumbers(OpAsmParser &parser,
                                     DotDimensionNumbersAttr &dims);
void printDotDimensionNumbers(OpAsmPrinter &printer, Operation *op,
                              DotDimensionNumbersAttr dims);

/// dot_general: `, precision = [DEFAULT, HIGH]` and `, algorithm = <...>`,
/// each when present.
ParseResult parsePrecisionConfigAndAlgorithm(OpAsmParser &parser,
                                             ArrayAttr &precisions,
                                             DotAlgorithmAttr &algorithm);
void printPrecisionConfigAndAlgorithm(OpAsmPrinter &printer, Operation *op,
                                      ArrayAttr precisions,
                                      DotAlgorithmAttr algorithm);

/// custom_call: the target as a symbol name, `@foo` or `@"a name"`.
ParseResult parseCustomCallTarget(OpAsmParser &parser, StringAttr &target);
void printCustomCallTarget(OpAsmPrinter &printer, Operation *op,
                           StringAttr target);

/// optimization_barrier: `T0, T1`, the operand types, which the results
/// share.
ParseResult parsePairwiseOpType(OpAsmParser &parser,
                                SmallVectorImpl<Type> &operands,
                                SmallVectorImpl<Type> &results);
void printPairwiseOpType(OpAsmPrinter &printer, Operation *op,
                         TypeRange operands, TypeRange results);

} // namespace mlir::stablehlo

#endif // MPMD_DIALECT_STABLEHLO_IR_ASSEMBLYFORMAT_H
