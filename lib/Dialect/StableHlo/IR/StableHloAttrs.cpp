//===- StableHloAttrs.cpp - StableHLO compat attributes -------------------===//
//
// Attribute parsing dispatches on the mnemonic: the attributes this dialect
// models are parsed structurally; any other `#stablehlo...` text, and text of
// a modelled mnemonic that does not parse completely, becomes an OpaqueAttr
// holding the text, so that generic IR from JAX always prints back
// byte-identical. The modelled attributes print the same text as upstream
// StableHLO, which is what JAX emits.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::stablehlo;

#include "mpmd/Dialect/StableHlo/IR/StableHloEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/StableHlo/IR/StableHloAttrs.cpp.inc"

void StableHloDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpmd/Dialect/StableHlo/IR/StableHloAttrs.cpp.inc"
      >();
}

/// Parses a modelled attribute, or returns null (having reported nothing) if
/// `spec` is not one or does not parse completely.
static Attribute parseModelledAttr(DialectAsmParser &parser, Type type,
                                   StringRef spec) {
  // A rejected spec is not an error: it is kept verbatim instead. Silence
  // the structured parsers so that their diagnostics never reach the user.
  ScopedDiagnosticHandler silence(parser.getContext(),
                                  [](Diagnostic &) { return success(); });
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult parsed =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (!parsed.has_value() || failed(*parsed) || !attr)
    return {};
  // Trailing text inside the spec would be lost by the structured form.
  if (parser.getCurrentLocation().getPointer() < spec.end())
    return {};
  return attr;
}

// The parser resets its lexer past the attribute body after this hook
// returns, so whatever the structured attempt consumed does not matter.
Attribute StableHloDialect::parseAttribute(DialectAsmParser &parser,
                                           Type type) const {
  StringRef spec = parser.getFullSymbolSpec();
  if (Attribute attr = parseModelledAttr(parser, type, spec))
    return attr;
  return stablehlo::OpaqueAttr::get(getContext(), spec);
}

void StableHloDialect::printAttribute(Attribute attr,
                                      DialectAsmPrinter &printer) const {
  // Modelled attributes print `<mnemonic>` followed by their body.
  if (succeeded(generatedAttributePrinter(attr, printer)))
    return;
  if (auto opaque = dyn_cast<stablehlo::OpaqueAttr>(attr))
    printer.getStream() << opaque.getSpec();
}

bool mlir::stablehlo::isResultAccuracyAttr(Attribute attr) {
  auto opaque = dyn_cast_if_present<stablehlo::OpaqueAttr>(attr);
  return opaque && opaque.getSpec().starts_with("result_accuracy<");
}

//===----------------------------------------------------------------------===//
// Enum attributes: ` VALUE`
//===----------------------------------------------------------------------===//

/// Parses one enum keyword with `symbolize`, naming `what` on failure.
template <typename EnumT, typename SymbolizeFn>
static FailureOr<EnumT> parseEnumKeyword(AsmParser &parser, StringRef what,
                                         SymbolizeFn symbolize) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc) << "unknown " << what << " '" << keyword
                                 << "'";
  return *value;
}

Attribute ComparisonDirectionAttr::parse(AsmParser &parser, Type) {
  FailureOr<ComparisonDirection> value =
      parseEnumKeyword<ComparisonDirection>(
          parser, "comparison direction", [](StringRef text) {
            return symbolizeComparisonDirection(text);
          });
  if (failed(value))
    return {};
  return get(parser.getContext(), *value);
}

void ComparisonDirectionAttr::print(AsmPrinter &printer) const {
  printer << ' ' << stringifyComparisonDirection(getValue());
}

Attribute ComparisonTypeAttr::parse(AsmParser &parser, Type) {
  FailureOr<ComparisonType> value = parseEnumKeyword<ComparisonType>(
      parser, "comparison type",
      [](StringRef text) { return symbolizeComparisonType(text); });
  if (failed(value))
    return {};
  return get(parser.getContext(), *value);
}

void ComparisonTypeAttr::print(AsmPrinter &printer) const {
  printer << ' ' << stringifyComparisonType(getValue());
}

Attribute PrecisionAttr::parse(AsmParser &parser, Type) {
  FailureOr<Precision> value =
      parseEnumKeyword<Precision>(parser, "precision", [](StringRef text) {
        return symbolizePrecision(text);
      });
  if (failed(value))
    return {};
  return get(parser.getContext(), *value);
}

void PrecisionAttr::print(AsmPrinter &printer) const {
  printer << ' ' << stringifyPrecision(getValue());
}

//===----------------------------------------------------------------------===//
// DotDimensionNumbersAttr: `<lhs_batching_dimensions = [0], ...>`
//===----------------------------------------------------------------------===//

namespace {
constexpr llvm::StringLiteral kDotFieldNames[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions",
    "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
} // namespace

Attribute DotDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> fields[4];
  bool seen[4] = {false, false, false, false};
  auto parseField = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    const auto *it = llvm::find(kDotFieldNames, key);
    if (it == std::end(kDotFieldNames))
      return parser.emitError(loc) << "unknown dot dimension field '" << key
                                   << "'";
    size_t index = it - std::begin(kDotFieldNames);
    if (seen[index])
      return parser.emitError(loc) << "duplicate field '" << key << "'";
    seen[index] = true;
    return failure(parser.parseEqual() ||
                   parser.parseCommaSeparatedList(
                       AsmParser::Delimiter::Square, [&]() -> ParseResult {
                         return parser.parseInteger(
                             fields[index].emplace_back());
                       }));
  };
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalGreater())) {
    if (parser.parseCommaSeparatedList(parseField) || parser.parseGreater())
      return {};
  }
  return get(parser.getContext(), fields[0], fields[1], fields[2], fields[3]);
}

void DotDimensionNumbersAttr::print(AsmPrinter &printer) const {
  ArrayRef<int64_t> fields[] = {
      getLhsBatchingDimensions(), getRhsBatchingDimensions(),
      getLhsContractingDimensions(), getRhsContractingDimensions()};
  printer << '<';
  bool first = true;
  for (auto [name, values] : llvm::zip_equal(kDotFieldNames, fields)) {
    // Empty lists are left out, as upstream prints them.
    if (values.empty())
      continue;
    if (!first)
      printer << ", ";
    first = false;
    printer << name << " = [";
    llvm::interleaveComma(values, printer);
    printer << ']';
  }
  printer << '>';
}
