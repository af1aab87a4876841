//===- AssemblyFormat.cpp - Custom directives of the StableHLO ops --------===//
//
// Each directive prints the bytes upstream StableHLO's printer writes for its
// piece of an op and parses them back. Type lists are checked against the
// operand count here because the generated parser resolves the operands with
// whatever types a directive returns.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/AssemblyFormat.h"

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::stablehlo;

/// Parses `(T0, ...) -> R` whose inputs fill `operands` and whose single
/// result is `result`.
static ParseResult parseFunctionalTypeInto(OpAsmParser &parser,
                                           FunctionType function,
                                           SMLoc loc,
                                           ArrayRef<Type *> operands,
                                           Type &result) {
  if (function.getNumResults() != 1)
    return parser.emitError(loc, "expected a single result type");
  if (function.getNumInputs() != operands.size())
    return parser.emitError(loc)
           << "number of operands and types do not match: got "
           << operands.size() << " operands and " << function.getNumInputs()
           << " types";
  for (auto [operand, type] : llvm::zip_equal(operands, function.getInputs()))
    *operand = type;
  result = function.getResult(0);
  return success();
}

//===----------------------------------------------------------------------===//
// SameOperandsAndResultType
//===----------------------------------------------------------------------===//

ParseResult
mlir::stablehlo::detail::parseSameOperandsAndResultType(OpAsmParser &parser,
                                                        ArrayRef<Type *> types) {
  SMLoc loc = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type))
    return failure();
  if (auto function = dyn_cast<FunctionType>(type))
    return parseFunctionalTypeInto(parser, function, loc, types.drop_back(),
                                   *types.back());
  // A bare type is the type of every operand and of the result.
  for (Type *slot : types)
    *slot = type;
  return success();
}

void mlir::stablehlo::detail::printSameOperandsAndResultType(
    OpAsmPrinter &printer, ArrayRef<Type> types) {
  Type result = types.back();
  ArrayRef<Type> operands = types.drop_back();
  if (llvm::all_equal(types))
    printer << result;
  else
    printer.printFunctionalType(operands, ArrayRef<Type>(result));
}

//===----------------------------------------------------------------------===//
// SelectOpType
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseSelectOpType(OpAsmParser &parser,
                                               Type &pred, Type &onTrue,
                                               Type &onFalse, Type &result) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<Type, 2> types;
  if (parser.parseTypeList(types))
    return failure();
  if (types.size() == 2) {
    pred = types[0];
    onTrue = onFalse = result = types[1];
    return success();
  }
  auto function =
      types.size() == 1 ? dyn_cast<FunctionType>(types[0]) : FunctionType();
  if (!function)
    return parser.emitError(loc, "expected `predicate type, value type` or a "
                                 "functional type");
  return parseFunctionalTypeInto(parser, function, loc,
                                 {&pred, &onTrue, &onFalse}, result);
}

void mlir::stablehlo::printSelectOpType(OpAsmPrinter &printer, Operation *op,
                                        Type pred, Type onTrue, Type onFalse,
                                        Type result) {
  if (onTrue == result && onFalse == result)
    printer << pred << ", " << result;
  else
    printer.printFunctionalType(op);
}

//===----------------------------------------------------------------------===//
// VariadicOperandWithAttribute
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseVariadicOperandWithAttribute(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands) {
  // Operands each followed by a comma, up to the attribute's keyword.
  while (true) {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult parsed = parser.parseOptionalOperand(operand);
    if (!parsed.has_value())
      return success();
    if (failed(*parsed) || parser.parseComma())
      return failure();
    operands.push_back(operand);
  }
}

void mlir::stablehlo::printVariadicOperandWithAttribute(OpAsmPrinter &printer,
                                                        Operation *,
                                                        OperandRange operands) {
  llvm::interleave(
      operands, printer, [&](Value operand) { printer << operand << ','; },
      " ");
}

//===----------------------------------------------------------------------===//
// SliceRanges
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parseSliceRanges(OpAsmParser &parser,
                                              DenseI64ArrayAttr &starts,
                                              DenseI64ArrayAttr &limits,
                                              DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> startValues, limitValues, strideValues;
  auto parseRange = [&]() -> ParseResult {
    if (parser.parseInteger(startValues.emplace_back()) ||
        parser.parseColon() || parser.parseInteger(limitValues.emplace_back()))
      return failure();
    // The stride is optional and 1 when left out.
    strideValues.push_back(1);
    if (succeeded(parser.parseOptionalColon()))
      return parser.parseInteger(strideValues.back());
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRange))
    return failure();
  Builder &builder = parser.getBuilder();
  starts = builder.getDenseI64ArrayAttr(startValues);
  limits = builder.getDenseI64ArrayAttr(limitValues);
  strides = builder.getDenseI64ArrayAttr(strideValues);
  return success();
}

void mlir::stablehlo::printSliceRanges(OpAsmPrinter &printer, Operation *,
                                       DenseI64ArrayAttr starts,
                                       DenseI64ArrayAttr limits,
                                       DenseI64ArrayAttr strides) {
  printer << '[';
  if (starts.size() == limits.size() && starts.size() == strides.size()) {
    llvm::interleaveComma(llvm::seq<int64_t>(0, starts.size()), printer,
                          [&](int64_t d) {
                            printer << starts[d] << ':' << limits[d];
                            if (strides[d] != 1)
                              printer << ':' << strides[d];
                          });
  } else {
    // Not parseable, but printing invalid IR must not crash.
    printer << "start_indices: " << starts.asArrayRef()
            << ", limit_indices: " << limits.asArrayRef()
            << ", strides: " << strides.asArrayRef();
  }
  printer << ']';
}

//===----------------------------------------------------------------------===//
// DotDimensionNumbers
//===----------------------------------------------------------------------===//

static ParseResult parseDimList(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &dims) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        return parser.parseInteger(dims.emplace_back());
      });
}

/// `= [l0, ...] x [r0, ...]`
static ParseResult parseDimPair(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &lhs,
                                SmallVectorImpl<int64_t> &rhs) {
  return failure(parser.parseEqual() || parseDimList(parser, lhs) ||
                 parser.parseKeyword("x") || parseDimList(parser, rhs));
}

static void printDimPair(OpAsmPrinter &printer, ArrayRef<int64_t> lhs,
                         ArrayRef<int64_t> rhs) {
  printer << " = [";
  llvm::interleaveComma(lhs, printer);
  printer << "] x [";
  llvm::interleaveComma(rhs, printer);
  printer << ']';
}

ParseResult
mlir::stablehlo::parseDotDimensionNumbers(OpAsmParser &parser,
                                          DotDimensionNumbersAttr &dims) {
  SmallVector<int64_t> lhsBatching, rhsBatching, lhsContracting,
      rhsContracting;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalComma()))
    return parser.emitError(loc, "expected `contracting_dims = [...] x [...]`");
  if (succeeded(parser.parseOptionalKeyword("batching_dims")) &&
      (parseDimPair(parser, lhsBatching, rhsBatching) || parser.parseComma()))
    return failure();
  if (parser.parseKeyword("contracting_dims") ||
      parseDimPair(parser, lhsContracting, rhsContracting))
    return failure();
  dims = DotDimensionNumbersAttr::get(parser.getContext(), lhsBatching,
                                      rhsBatching, lhsContracting,
                                      rhsContracting);
  return success();
}

void mlir::stablehlo::printDotDimensionNumbers(OpAsmPrinter &printer,
                                               Operation *,
                                               DotDimensionNumbersAttr dims) {
  if (!dims.getLhsBatchingDimensions().empty() ||
      !dims.getRhsBatchingDimensions().empty()) {
    printer << ", batching_dims";
    printDimPair(printer, dims.getLhsBatchingDimensions(),
                 dims.getRhsBatchingDimensions());
  }
  printer << ", contracting_dims";
  printDimPair(printer, dims.getLhsContractingDimensions(),
               dims.getRhsContractingDimensions());
}

//===----------------------------------------------------------------------===//
// PrecisionConfigAndAlgorithm
//===----------------------------------------------------------------------===//

ParseResult mlir::stablehlo::parsePrecisionConfigAndAlgorithm(
    OpAsmParser &parser, ArrayAttr &precisions, DotAlgorithmAttr &algorithm) {
  if (failed(parser.parseOptionalComma()))
    return success();
  if (succeeded(parser.parseOptionalKeyword("precision"))) {
    SmallVector<Attribute, 2> values;
    auto parsePrecision = [&]() -> ParseResult {
      values.push_back(PrecisionAttr::parse(parser, Type()));
      return success(values.back() != nullptr);
    };
    if (parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       parsePrecision))
      return failure();
    precisions = parser.getBuilder().getArrayAttr(values);
    if (failed(parser.parseOptionalComma()))
      return success();
  }
  if (parser.parseKeyword("algorithm") || parser.parseEqual())
    return failure();
  algorithm = dyn_cast_if_present<DotAlgorithmAttr>(
      DotAlgorithmAttr::parse(parser, Type()));
  return success(algorithm != nullptr);
}

void mlir::stablehlo::printPrecisionConfigAndAlgorithm(
    OpAsmPrinter &printer, Operation *, ArrayAttr precisions,
    DotAlgorithmAttr algorithm) {
  if (precisions) {
    printer << ", precision = [";
    llvm::interleaveComma(precisions, printer, [&](Attribute precision) {
      printer << stringifyPrecision(cast<PrecisionAttr>(precision).getValue());
    });
    printer << ']';
  }
  if (algorithm) {
    printer << ", algorithm = ";
    algorithm.print(printer);
  }
}
