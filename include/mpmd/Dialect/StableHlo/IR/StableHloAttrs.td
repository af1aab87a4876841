//===- StableHloAttrs.td - StableHLO compat attributes -----*- tablegen -*-===//
//
// The attributes of the modelled ops. Their textual forms equal upstream
// StableHLO's so that generic text printed by JAX round-trips unchanged:
//   #stablehlo<comparison_direction GT>
//   #stablehlo<comparison_type FLOAT>
//   #stablehlo<precision DEFAULT>
//   #stablehlo.dot<lhs_batching_dimensions = [0], ...>
//   #stablehlo.dot_algorithm<lhs_precision_type = tf32, ...>
// Each class parses and prints only its body; the dialect hooks add the
// mnemonic and fall back to an OpaqueAttr for text these classes reject.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_STABLEHLOATTRS_TD
#define MPMD_DIALECT_STABLEHLO_IR_STABLEHLOATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mpmd/Dialect/StableHlo/IR/StableHloBase.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def StableHlo_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "which comparison a stablehlo.compare performs", [
      I32EnumAttrCase<"EQ", 0>, I32EnumAttrCase<"NE", 1>,
      I32EnumAttrCase<"GE", 2>, I32EnumAttrCase<"GT", 3>,
      I32EnumAttrCase<"LE", 4>, I32EnumAttrCase<"LT", 5>]> {
  let cppNamespace = "::mlir::stablehlo";
  let genSpecializedAttr = 0;
}

def StableHlo_ComparisonType : I32EnumAttr<"ComparisonType",
    "how stablehlo.compare interprets its operands", [
      I32EnumAttrCase<"NOTYPE", 0>, I32EnumAttrCase<"FLOAT", 1>,
      I32EnumAttrCase<"TOTALORDER", 2>, I32EnumAttrCase<"SIGNED", 3>,
      I32EnumAttrCase<"UNSIGNED", 4>]> {
  let cppNamespace = "::mlir::stablehlo";
  let genSpecializedAttr = 0;
}

def StableHlo_Precision : I32EnumAttr<"Precision",
    "the precision of one operand of a contraction", [
      I32EnumAttrCase<"DEFAULT", 0>, I32EnumAttrCase<"HIGH", 1>,
      I32EnumAttrCase<"HIGHEST", 2>]> {
  let cppNamespace = "::mlir::stablehlo";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class StableHlo_Attr<string name, string attrMnemonic>
    : AttrDef<StableHlo_Dialect, name> {
  let mnemonic = attrMnemonic;
  let hasCustomAssemblyFormat = 1;
}

// Enum attributes print as `<mnemonic> <VALUE>`, which MLIR writes in the
// bracketed form `#stablehlo<comparison_direction GT>`.
def StableHlo_ComparisonDirectionAttr
    : StableHlo_Attr<"ComparisonDirection", "comparison_direction"> {
  let summary = "Direction of a comparison";
  let parameters = (ins EnumParameter<StableHlo_ComparisonDirection>:$value);
}

def StableHlo_ComparisonTypeAttr
    : StableHlo_Attr<"ComparisonType", "comparison_type"> {
  let summary = "Operand interpretation of a comparison";
  let parameters = (ins EnumParameter<StableHlo_ComparisonType>:$value);
}

def StableHlo_PrecisionAttr : StableHlo_Attr<"Precision", "precision"> {
  let summary = "Precision of a contraction operand";
  let parameters = (ins EnumParameter<StableHlo_Precision>:$value);
}

def StableHlo_PrecisionConfigAttr
    : TypedArrayAttrBase<StableHlo_PrecisionAttr, "precision config">;

// `[d0, d1, ...]`; a struct leaves it out when empty.
def StableHlo_DimsParameter : OptionalArrayRefParameter<"int64_t"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> dims;
    if ($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square,
            [&] { return $_parser.parseInteger(dims.emplace_back()); }))
      return ::mlir::failure();
    return dims;
  }() }];
  let printer = [{ $_printer << '[' << $_self << ']' }];
}

def StableHlo_DotDimensionNumbersAttr
    : StableHlo_Attr<"DotDimensionNumbers", "dot"> {
  let summary = "Batching and contracting dimensions of a dot_general";
  let description = [{
    Printed with the empty lists left out, in the order lhs/rhs batching,
    lhs/rhs contracting; parsed with the fields in any order.
  }];
  let parameters = (ins
    StableHlo_DimsParameter:$lhs_batching_dimensions,
    StableHlo_DimsParameter:$rhs_batching_dimensions,
    StableHlo_DimsParameter:$lhs_contracting_dimensions,
    StableHlo_DimsParameter:$rhs_contracting_dimensions);
  let hasCustomAssemblyFormat = 0;
  let assemblyFormat = "`<` struct(params) `>`";
}

// A flag written `true` or `false`, as upstream prints it.
def StableHlo_BoolParameter : AttrParameter<"bool", "a flag"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(),
                              "expected 'true' or 'false'");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

// Every field is printed, in this order, and required when parsing (text
// lacking one could not print back the same).
def StableHlo_DotAlgorithmAttr
    : StableHlo_Attr<"DotAlgorithm", "dot_algorithm"> {
  let summary = "The algorithm a dot_general must use";
  let parameters = (ins
    "::mlir::Type":$lhs_precision_type,
    "::mlir::Type":$rhs_precision_type,
    "::mlir::Type":$accumulation_type,
    "int64_t":$lhs_component_count,
    "int64_t":$rhs_component_count,
    "int64_t":$num_primitive_operations,
    StableHlo_BoolParameter:$allow_imprecise_accumulation);
  let hasCustomAssemblyFormat = 0;
  let assemblyFormat = "`<` struct(params) `>`";
}

// `result_accuracy` of the transcendental unary ops is not modelled; it is an
// OpaqueAttr whose text starts with `result_accuracy<`.
def StableHlo_ResultAccuracyAttr : Attr<
    CPred<"::mlir::stablehlo::isResultAccuracyAttr($_self)">,
    "result accuracy (#stablehlo.result_accuracy<...>)"> {
  let storageType = "::mlir::stablehlo::OpaqueAttr";
  let returnType = "::mlir::stablehlo::OpaqueAttr";
  let convertFromStorage = "$_self";
  // From the attribute text, so that ODS can compare against a default.
  let constBuilderCall =
      "::mlir::stablehlo::OpaqueAttr::get($_builder.getContext(), $0)";
}

#endif // MPMD_DIALECT_STABLEHLO_IR_STABLEHLOATTRS_TD
