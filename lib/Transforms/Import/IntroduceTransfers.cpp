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
#include "mpmd/Transforms/Common/FragmentUtils.h"
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
    transfers.clear();
    for (AssignOp assign : assigns) {
      if (succeeded(sumOnReadersMesh(assign)))
        continue;
      // Only values coming straight out of a named computation or a named
      // tensor (an assign the user asked for): inputs and nameless values
      // are left to mesh inference.
      Value source = namedSource(assign.getTensor());
      if (!source)
        continue;
      Operation *unassign = assign.getTensor().getDefiningOp();
      assign.replaceAllUsesWith(transferOf(source, assign.getType(), assign));
      assign.erase();
      if (unassign->use_empty())
        unassign->erase();
    }
    return success();
  }

  /// `source` as `type` (on another mesh, say), for a use at `user`: one
  /// transfer per value and destination, so that a value read by several
  /// fragments of another mesh (an activation read by the forward and the
  /// backward of the next stage) moves once.
  Value transferOf(Value source, Type type, Operation *user) {
    if (source.getType() == type)
      return source;
    TransferOp &transfer = transfers[{source, type}];
    // Users are visited in order: an earlier transfer in the same block
    // dominates this use.
    if (!transfer || transfer->getBlock() != user->getBlock()) {
      OpBuilder builder(user);
      transfer = TransferOp::create(builder, user->getLoc(), type, source);
    }
    return transfer;
  }

  /// `assign(a + b + ...)` of values straight out of named ops becomes a
  /// fragment on the assign's mesh (no origin: merged into a neighbour
  /// later) adding the terms, each moved there by a transfer. Fails (and
  /// changes nothing) for other assigns.
  LogicalResult sumOnReadersMesh(AssignOp assign) {
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
      operands.push_back(
          type.getMeshName() == target.getMeshName()
              ? source
              : transferOf(source, type.withMesh(target.getMeshName()),
                           assign));
    }
    // Plain on the mesh; the assign's own type (a sharding, a memory kind)
    // is reached by a move within the mesh below.
    Type resultType = target.withMesh(target.getMeshName());
    auto fragment = FragmentOp::create(
        builder, root->getLoc(), TypeRange{resultType}, operands,
        builder.getArrayAttr({}),
        builder.getStringAttr(target.getMeshName()), IntegerAttr(),
        /*in_shardings=*/nullptr, /*out_shardings=*/nullptr);
    Block *body = builder.createBlock(&fragment.getRegion());
    IRMapping mapping;
    for (Value term : uniqueTerms)
      mapping.map(term, body->addArgument(term.getType(), term.getLoc()));
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    for (Operation *add : adds)
      inner.clone(*add, mapping)->removeAttr(kLoopIterationAttrName);
    if (Attribute iteration = root->getAttr(kLoopIterationAttrName))
      fragment->setAttr(kLoopIterationAttrName, iteration);
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

  llvm::DenseMap<std::pair<Value, Type>, TransferOp> transfers;
};

} // namespace
