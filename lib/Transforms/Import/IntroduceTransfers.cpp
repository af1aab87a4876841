//===- IntroduceTransfers.cpp - Direct cross-mesh edges become transfers --===//
//
// A value of a named op read by a named op of another mesh moves by a
// transfer. So does each term of a sum of such values that only a named op
// reads (the gradients of a value fanned out to several stages, which JAX
// adds outside any named computation): the sum is computed on the reader's
// mesh, as Shardy:MPMD's import does.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_INTRODUCETRANSFERSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// The mesh tensor a value straight out of a named op is read from: the
/// operand of an unassign of a fragment or assign result.
Value namedSource(Value value) {
  auto unassign = value.getDefiningOp<UnassignOp>();
  if (!unassign)
    return {};
  Operation *producer = unassign.getTensor().getDefiningOp();
  if (!producer || !isa<FragmentOp, AssignOp>(producer))
    return {};
  return unassign.getTensor();
}

/// Whether `add` is a stablehlo.add, read once, of values straight out of
/// named ops or of such adds; collects those adds (operands before users)
/// and the named values.
bool isSumOfNamedValues(Operation *add, SmallVectorImpl<Operation *> &adds,
                        SmallVectorImpl<Value> &terms) {
  if (add->getName().getStringRef() != "stablehlo.add" ||
      add->getNumOperands() != 2 || add->getNumResults() != 1 ||
      !add->hasOneUse())
    return false;
  for (Value operand : add->getOperands()) {
    if (namedSource(operand)) {
      terms.push_back(operand);
      continue;
    }
    Operation *inner = operand.getDefiningOp();
    if (!inner || !isSumOfNamedValues(inner, adds, terms))
      return false;
  }
  adds.push_back(add);
  return true;
}

struct IntroduceTransfersPass
    : public EntryFunctionPass<IntroduceTransfersPass, mlir::mpmd::impl::IntroduceTransfersPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    SmallVector<AssignOp> assigns;
    func.walk([&](AssignOp op) { assigns.push_back(op); });
    // One transfer per value and destination: a value read by several
    // fragments of another mesh (an activation read by the forward and
    // the backward of the next stage) moves once.
    llvm::DenseMap<std::pair<Value, Type>, TransferOp> transfers;
    for (AssignOp assign : assigns) {
      if (succeeded(sumOnReadersMesh(assign, transfers)))
        continue;
      auto unassign = assign.getTensor().getDefiningOp<UnassignOp>();
      // Only values coming straight out of a named computation or a named
      // tensor (an assign the user asked for): inputs and nameless values
      // are left to mesh inference.
      if (!unassign)
        continue;
      Operation *producer = unassign.getTensor().getDefiningOp();
      if (!producer || !isa<FragmentOp, AssignOp>(producer))
        continue;
      Value source = unassign.getTensor();
      Value replacement = source;
      if (source.getType() != assign.getType()) {
        TransferOp &transfer = transfers[{source, assign.getType()}];
        // Assigns are visited in order: an earlier transfer in the same
        // block dominates this use.
        if (!transfer || transfer->getBlock() != assign->getBlock()) {
          OpBuilder builder(assign);
          transfer = TransferOp::create(builder, assign.getLoc(),
                                        assign.getType(), source);
        }
        replacement = transfer;
      }
      assign.replaceAllUsesWith(replacement);
      assign.erase();
      if (unassign.use_empty())
        unassign.erase();
    }
    return success();
  }

  /// `assign(a + b + ...)` of values straight out of named ops becomes a
  /// fragment on the assign's mesh (no origin: merged into a neighbour
  /// later) adding the terms, each moved there by a transfer. Fails (and
  /// changes nothing) for other assigns.
  LogicalResult
  sumOnReadersMesh(AssignOp assign,
                   llvm::DenseMap<std::pair<Value, Type>, TransferOp> &moved) {
    Operation *root = assign.getTensor().getDefiningOp();
    SmallVector<Operation *> adds;
    SmallVector<Value> terms;
    if (!root || !isSumOfNamedValues(root, adds, terms))
      return failure();
    auto target = cast<MeshTensorType>(assign.getType());
    OpBuilder builder(assign);
    SmallVector<Value> operands;
    SmallVector<Value> uniqueTerms;
    for (Value term : terms) {
      if (llvm::is_contained(uniqueTerms, term))
        continue;
      uniqueTerms.push_back(term);
      Value source = namedSource(term);
      auto type = cast<MeshTensorType>(source.getType());
      if (type.getMeshName() == target.getMeshName()) {
        operands.push_back(source);
        continue;
      }
      Type movedType = type.withMesh(target.getMeshName());
      TransferOp &transfer = moved[{source, movedType}];
      if (!transfer || transfer->getBlock() != assign->getBlock())
        transfer = TransferOp::create(builder, assign.getLoc(), movedType,
                                      source);
      operands.push_back(transfer);
    }
    auto fragment = FragmentOp::create(
        builder, root->getLoc(), TypeRange{target.withMesh(target.getMeshName())},
        operands, builder.getArrayAttr({}),
        builder.getStringAttr(target.getMeshName()), IntegerAttr(),
        /*in_shardings=*/nullptr, /*out_shardings=*/nullptr);
    Block *body = builder.createBlock(&fragment.getRegion());
    IRMapping mapping;
    for (Value term : uniqueTerms)
      mapping.map(term, body->addArgument(term.getType(), term.getLoc()));
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    for (Operation *add : adds)
      inner.clone(*add, mapping);
    ReturnOp::create(inner, root->getLoc(),
                     mapping.lookup(root->getResult(0)));
    Value result = fragment.getResult(0);
    if (result.getType() != assign.getType()) {
      builder.setInsertionPointAfter(fragment);
      result = TransferOp::create(builder, assign.getLoc(), assign.getType(),
                                  result);
    }
    assign.replaceAllUsesWith(result);
    assign.erase();
    for (Operation *add : llvm::reverse(adds))
      if (add->use_empty())
        add->erase();
    for (Value term : uniqueTerms)
      if (Operation *unassign = term.getDefiningOp(); unassign &&
                                                      unassign->use_empty())
        unassign->erase();
    return success();
  }
};

} // namespace
