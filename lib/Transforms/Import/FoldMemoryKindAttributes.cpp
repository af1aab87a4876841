//===- FoldMemoryKindAttributes.cpp - mhlo.memory_kind into the types -----===//
//
// `%arg0: !mpmd.mesh_tensor<"m1", T> {mhlo.memory_kind = "pinned_host"}`
// becomes `%arg0: !mpmd.mesh_tensor<"m1", T, memory_kind="pinned_host">`;
// likewise for results, where a transfer moves the returned value into the
// memory kind the result asks for when its producer puts it elsewhere.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_FOLDMEMORYKINDATTRIBUTESPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kMemoryKindAttrName = "mhlo.memory_kind";

/// `type` with the memory kind `attr` names; an error (via `emitError`,
/// naming `what`) when `attr` is not a known memory kind or `type` already
/// has another one. "device" is what a type without a memory kind means: it
/// leaves such a type as it is.
FailureOr<MeshTensorType>
foldInto(MeshTensorType type, Attribute attr, const Twine &what,
         function_ref<InFlightDiagnostic()> emitError) {
  auto kind = dyn_cast<StringAttr>(attr);
  if (!kind)
    return emitError() << what << " has 'mhlo.memory_kind = " << attr
                       << "'; a memory kind is a string, e.g. "
                          "\"pinned_host\"";
  StringAttr current = type.getMemoryKind();
  if (!current && kind.getValue() == "device")
    return type;
  if (current && current != kind)
    return emitError() << what << " has memory kind \"" << current.getValue()
                       << "\" in its type but 'mhlo.memory_kind = \""
                       << kind.getValue()
                       << "\"'; give one memory kind (the type is enough)";
  MeshTensorType folded = MeshTensorType::getChecked(
      [&] { return emitError() << what << ": "; }, type.getContext(),
      type.getMeshName(), type.getGlobalTensorType(), type.getSharding(),
      kind);
  if (!folded)
    return failure();
  return folded;
}

struct FoldMemoryKindAttributesPass
    : public EntryFunctionPass<
          FoldMemoryKindAttributesPass,
          mlir::mpmd::impl::FoldMemoryKindAttributesPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    auto emitError = [&] { return func.emitError(); };
    auto name = StringAttr::get(func.getContext(), kMemoryKindAttrName);
    Block &body = func.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      unsigned index = arg.getArgNumber();
      Attribute attr = func.getArgAttr(index, name);
      auto type = dyn_cast<MeshTensorType>(arg.getType());
      if (!attr || !type)
        continue;
      FailureOr<MeshTensorType> folded =
          foldInto(type, attr,
                   "argument " + Twine(index) + " of @" + func.getSymName(),
                   emitError);
      if (failed(folded))
        return failure();
      // Its users read it where it is: a transfer moves it, a fragment
      // reads it from that memory.
      arg.setType(*folded);
      func.removeArgAttr(index, name);
    }
    // Each result keeps its declared type, with the attribute's memory kind
    // if it has one; the returned value moves there if it is elsewhere (an
    // argument returned as it is may just have changed memory kind).
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder builder(returnOp);
    for (OpOperand &operand : returnOp->getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      auto wanted = dyn_cast<MeshTensorType>(func.getResultTypes()[index]);
      if (!wanted)
        continue;
      if (Attribute attr = func.getResultAttr(index, name)) {
        FailureOr<MeshTensorType> folded =
            foldInto(wanted, attr,
                     "result " + Twine(index) + " of @" + func.getSymName(),
                     emitError);
        if (failed(folded))
          return failure();
        wanted = *folded;
        func.removeResultAttr(index, name);
      }
      if (operand.get().getType() != wanted &&
          isa<MeshTensorType>(operand.get().getType()))
        operand.set(TransferOp::create(builder, returnOp.getLoc(), wanted,
                                       operand.get()));
    }
    func.setFunctionType(FunctionType::get(func.getContext(),
                                           body.getArgumentTypes(),
                                           returnOp.getOperandTypes()));
    return success();
  }
};

} // namespace
