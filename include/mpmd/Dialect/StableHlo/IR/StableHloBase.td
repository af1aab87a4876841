//===- StableHloBase.td - StableHLO compat dialect ---------*- tablegen -*-===//
//
// The common StableHLO ops in StableHLO's pretty syntax. Every other
// `stablehlo` op, attribute or type is accepted in generic form and printed
// back verbatim.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_STABLEHLOBASE_TD
#define MPMD_DIALECT_STABLEHLO_IR_STABLEHLOBASE_TD

include "mlir/IR/DialectBase.td"
include "mlir/IR/AttrTypeBase.td"

def StableHlo_Dialect : Dialect {
  let name = "stablehlo";
  let cppNamespace = "::mlir::stablehlo";
  let summary = "Compat subset of the StableHLO dialect";
  let description = [{
    Models the StableHLO ops that hand-written IR and the passes use most,
    with upstream's pretty syntax. Any other `stablehlo` op is an unknown op
    of this dialect and stays in generic form; any `#stablehlo...` attribute
    or `!stablehlo...` type that is not modelled is kept as its text. Op
    semantics the passes need live in the op catalog (OpCatalog.h).
  }];
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 0;
  let usePropertiesForAttributes = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;

  private:
    // Defined beside the attribute storage classes (StableHloAttrs.cpp).
    void registerAttributes();
  }];
}

// Any `stablehlo` attribute this dialect does not model, kept as the text
// between `#stablehlo` and the end of the attribute (e.g. `dot_algorithm<...>`
// is modelled, `result_accuracy<...>` or `<rng_algorithm PHILOX>` are not).
// The dialect's own printer writes the text back, so the attribute has no
// syntax of its own.
def StableHlo_OpaqueAttr : AttrDef<StableHlo_Dialect, "Opaque"> {
  let attrName = "stablehlo.opaque";
  let summary = "A stablehlo attribute kept as text and printed back verbatim";
  let parameters = (ins StringRefParameter<"the attribute text">:$spec);
}

// Any `stablehlo` type, e.g. `!stablehlo.token`, kept as its text.
def StableHlo_OpaqueType : TypeDef<StableHlo_Dialect, "Opaque"> {
  let typeName = "stablehlo.opaque";
  let summary = "A stablehlo type kept as text and printed back verbatim";
  let parameters = (ins StringRefParameter<"the type text">:$spec);
}

#endif // MPMD_DIALECT_STABLEHLO_IR_STABLEHLOBASE_TD
