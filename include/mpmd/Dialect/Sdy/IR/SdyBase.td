//===- SdyBase.td - Shardy compat dialect ------------------*- tablegen -*-===//
//
// A subset of OpenXLA Shardy's `sdy` dialect: meshes and tensor shardings in
// Shardy's textual syntax. Everything else of `sdy` is kept opaque.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_SDY_IR_SDYBASE_TD
#define MPMD_DIALECT_SDY_IR_SDYBASE_TD

include "mlir/IR/DialectBase.td"

def Sdy_Dialect : Dialect {
  let name = "sdy";
  let cppNamespace = "::mlir::sdy";
  let summary = "Compat subset of the Shardy sharding dialect";
  let description = [{
    Models Shardy's mesh and sharding attributes and the `sdy.mesh` op with
    Shardy's exact textual syntax. Any other `sdy` op, attribute or type is
    accepted and printed back verbatim, so modules produced by JAX round-trip.
  }];
  let useDefaultAttributePrinterParser = 0;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
  private:
    void registerAttributes();
  }];
}

#endif // MPMD_DIALECT_SDY_IR_SDYBASE_TD
