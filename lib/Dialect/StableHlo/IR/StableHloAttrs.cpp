//===- StableHloAttrs.cpp - StableHLO compat attributes -------------------===//
//
// Attribute parsing dispatches on the mnemonic: the attributes this dialect
// models are parsed structurally; any other `#stablehlo...` text, and text of
// a modelled mnemonic that does not parse completely, becomes an OpaqueAttr
// holding the text, so that generic IR from JAX always prints back
// byte-identical. The modelled attributes print the same text as upstream
// StableHLO, which is what JAX emits. The struct-like ones are declarative
// (StableHloAttrs.td); the enum attributes are written here so that their
// errors name what was expected.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
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
