//===- SplitBackward.cpp - Split backward fragments for zero bubble -------===//
//
// Zero-bubble schedules need the backward of a stage in two parts: B, whose
// results the previous stage waits for (the input gradients, which leave the
// mesh through transfers), and W, the weight gradients, which only this mesh
// reads later. B is the backward slice of the leaving results inside the
// body; W is every other op of the body. Values W reads from B's ops become
// extra results of B; constants are cloned instead, since a result would
// cost memory and save no work. B takes the original's place and W follows
// it directly, so every operand still dominates its users; the scheduler
// then moves W later.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_SPLITBACKWARDPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// True if a result of a backward fragment is something another stage waits
/// for: it leaves the mesh, or the backward of another stage on the same mesh
/// reads it (the turn of a V placement, or interleaved stages). Values read
/// by the weight-gradient part of an earlier split count as well, so that
/// running the pass twice leaves B fragments whole.
bool feedsInputGradient(Value result, FragmentOp producer) {
  return llvm::any_of(result.getUsers(), [&](Operation *user) {
    if (isa<TransferOp>(user))
      return true;
    auto fragment = dyn_cast<FragmentOp>(user);
    if (!fragment)
      return false;
    if (fragment->hasAttr(kWeightGradientAttrName))
      return true;
    return fragment.getStageIdAttr() && producer.getStageIdAttr() &&
           fragment.getStageIdAttr() != producer.getStageIdAttr() &&
           getFragmentInfo(fragment).kind == FragmentKind::kBackward;
  });
}

/// Splits `fragment` if it has both results that leave the mesh and results
/// that stay. Fragments that cannot be split are left whole with a warning.
void splitFragment(FragmentOp fragment) {
  Block &body = fragment.getRegion().front();
  Operation *terminator = body.getTerminator();
  unsigned numResults = fragment.getNumResults();
  SmallVector<bool> leaves(numResults);
  for (unsigned i = 0; i < numResults; ++i)
    leaves[i] = feedsInputGradient(fragment.getResult(i), fragment);
  if (llvm::all_of(leaves, [](bool b) { return b; }) ||
      llvm::none_of(leaves, [](bool b) { return b; }))
    return;

  FragmentInfo info = getFragmentInfo(fragment);
  // The extra results passing values from B to W would need shardings of
  // their own, which nothing here can choose.
  if (fragment.getInShardingsAttr() || fragment.getOutShardingsAttr()) {
    fragment.emitWarning()
        << "backward fragment '" << info.key()
        << "' is not split for zero-bubble schedules: it has in/out "
           "shardings, and the values passed between its parts would need "
           "shardings too";
    return;
  }

  // B: the leaving results and, walking the body backwards, every op they
  // depend on (operands of nested ops included: regions may read values of
  // the body directly).
  llvm::SmallPtrSet<Operation *, 16> inB;
  auto markDefinition = [&](Value value) {
    if (Operation *def = value.getDefiningOp())
      if (Operation *ancestor = body.findAncestorOpInBlock(*def))
        inB.insert(ancestor);
  };
  for (unsigned i = 0; i < numResults; ++i)
    if (leaves[i])
      markDefinition(terminator->getOperand(i));
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!inB.contains(&op))
      continue;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        markDefinition(operand);
    });
  }
  auto ownerIsIn = [&](OpOperand &use, bool wantB) {
    Operation *owner = body.findAncestorOpInBlock(*use.getOwner());
    if (!owner || owner == terminator)
      return false;
    return inB.contains(owner) == wantB;
  };
  auto definedInB = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && inB.contains(body.findAncestorOpInBlock(*def));
  };

  // What each part reads from outside itself, in order of first use. B only
  // reads block arguments; W reads block arguments, B's values, and clones
  // B's constants.
  llvm::SetVector<BlockArgument> bArgs;
  llvm::SetVector<Value> wInputs;
  llvm::SetVector<Operation *> wConstants;
  auto noteInput = [&](Value value, bool forB) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != &body)
        return;
      if (forB)
        bArgs.insert(arg);
      else
        wInputs.insert(arg);
      return;
    }
    if (forB || !definedInB(value))
      return;
    Operation *def = value.getDefiningOp();
    if (def->hasTrait<OpTrait::ConstantLike>() && def->getNumOperands() == 0 &&
        def->getNumRegions() == 0)
      wConstants.insert(def);
    else
      wInputs.insert(value);
  };
  for (Operation &op : body.without_terminator()) {
    bool forB = inB.contains(&op);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        noteInput(operand, forB);
    });
  }
  for (unsigned i = 0; i < numResults; ++i)
    noteInput(terminator->getOperand(i), leaves[i]);

  for (Value value : wInputs)
    if (!isa<BlockArgument>(value) && !isa<RankedTensorType>(value.getType()) &&
        !stablehlo::isTokenType(value.getType())) {
      fragment.emitWarning()
          << "backward fragment '" << info.key()
          << "' is not split for zero-bubble schedules: its weight-gradient "
             "part reads a value of type "
          << value.getType()
          << " from the input-gradient part, and only ranked tensors and "
             "tokens can be passed between fragments";
      return;
    }

  // B's results: the leaving results, then each value W reads from B that B
  // does not already return.
  MLIRContext *context = fragment.getContext();
  StringRef mesh = fragment.getMeshName();
  SmallVector<Value> bReturned;
  SmallVector<Type> bResultTypes;
  SmallVector<unsigned> originalToB(numResults, ~0u);
  for (unsigned i = 0; i < numResults; ++i)
    if (leaves[i]) {
      originalToB[i] = bReturned.size();
      bReturned.push_back(terminator->getOperand(i));
      bResultTypes.push_back(fragment.getResult(i).getType());
    }
  llvm::DenseMap<Value, unsigned> bResultOf;
  for (auto [index, value] : llvm::enumerate(bReturned))
    bResultOf.try_emplace(value, index);
  for (Value value : wInputs)
    if (!isa<BlockArgument>(value) && !bResultOf.count(value)) {
      bResultOf[value] = bReturned.size();
      bReturned.push_back(value);
      // A token passes between the parts as it is; a tensor as a mesh
      // tensor of the fragment's mesh.
      auto tensorType = dyn_cast<RankedTensorType>(value.getType());
      bResultTypes.push_back(
          tensorType ? Type(MeshTensorType::get(context, mesh, tensorType))
                     : value.getType());
    }

  SmallVector<Value> bOperands;
  for (BlockArgument arg : bArgs)
    bOperands.push_back(fragment.getOperand(arg.getArgNumber()));
  OpBuilder builder(fragment);
  Location loc = fragment.getLoc();
  auto b = FragmentOp::create(builder, loc, bResultTypes, bOperands,
                              fragment.getOrigin(), fragment.getMeshNameAttr(),
                              fragment.getStageIdAttr(),
                              /*in_shardings=*/nullptr,
                              /*out_shardings=*/nullptr);

  SmallVector<Value> wOperands;
  for (Value value : wInputs) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      wOperands.push_back(fragment.getOperand(arg.getArgNumber()));
    else
      wOperands.push_back(b.getResult(bResultOf.lookup(value)));
  }
  SmallVector<Type> wResultTypes;
  SmallVector<unsigned> originalToW(numResults, ~0u);
  for (unsigned i = 0; i < numResults; ++i)
    if (!leaves[i]) {
      originalToW[i] = wResultTypes.size();
      wResultTypes.push_back(fragment.getResult(i).getType());
    }
  builder.setInsertionPointAfter(b);
  auto w = FragmentOp::create(builder, loc, wResultTypes, wOperands,
                              fragment.getOrigin(), fragment.getMeshNameAttr(),
                              fragment.getStageIdAttr(),
                              /*in_shardings=*/nullptr,
                              /*out_shardings=*/nullptr);
  for (FragmentOp part : {b, w})
    for (NamedAttribute attr : fragment->getDiscardableAttrs())
      part->setAttr(attr.getName(), attr.getValue());
  w->setAttr(kWeightGradientAttrName, UnitAttr::get(context));

  Block *bBody = builder.createBlock(&b.getRegion());
  Block *wBody = builder.createBlock(&w.getRegion());
  // Rewire uses while every op is still in the old body, where the owner of
  // a use tells which part it goes to; the terminator is rebuilt below.
  IRMapping bMapping, wMapping;
  for (BlockArgument arg : bArgs) {
    BlockArgument newArg = bBody->addArgument(arg.getType(), arg.getLoc());
    bMapping.map(Value(arg), Value(newArg));
    arg.replaceUsesWithIf(newArg,
                          [&](OpOperand &use) { return ownerIsIn(use, true); });
  }
  for (Value value : wInputs) {
    BlockArgument newArg = wBody->addArgument(value.getType(), value.getLoc());
    wMapping.map(value, Value(newArg));
    value.replaceUsesWithIf(
        newArg, [&](OpOperand &use) { return ownerIsIn(use, false); });
  }
  builder.setInsertionPointToStart(wBody);
  for (Operation *constant : wConstants) {
    Operation *copy = builder.clone(*constant);
    for (auto [from, to] :
         llvm::zip(constant->getResults(), copy->getResults())) {
      wMapping.map(Value(from), Value(to));
      from.replaceUsesWithIf(
          to, [&](OpOperand &use) { return ownerIsIn(use, false); });
    }
  }

  SmallVector<Value> bResults, wResults;
  for (Value value : bReturned)
    bResults.push_back(bMapping.lookupOrDefault(value));
  for (unsigned i = 0; i < numResults; ++i)
    if (!leaves[i])
      wResults.push_back(wMapping.lookupOrDefault(terminator->getOperand(i)));

  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    op.moveBefore(inB.contains(&op) ? bBody : wBody,
                  inB.contains(&op) ? bBody->end() : wBody->end());
  builder.setInsertionPointToEnd(bBody);
  ReturnOp::create(builder, loc, bResults);
  builder.setInsertionPointToEnd(wBody);
  ReturnOp::create(builder, loc, wResults);

  for (unsigned i = 0; i < numResults; ++i)
    fragment.getResult(i).replaceAllUsesWith(
        leaves[i] ? b.getResult(originalToB[i]) : w.getResult(originalToW[i]));
  fragment.erase();
}

struct SplitBackwardPass
    : public EntryFunctionPass<SplitBackwardPass, mlir::mpmd::impl::SplitBackwardPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunction(func::FuncOp func) {
    // Collected first: splitting erases the fragment being visited.
    SmallVector<FragmentOp> backward;
    func.walk([&](FragmentOp fragment) {
      if (!fragment.isUserFragment())
        return;
      FragmentInfo info = getFragmentInfo(fragment);
      if (info.kind == FragmentKind::kBackward &&
          (!zeroBubbleLoopsOnly || info.loopSchedule == "zero-bubble-h1"))
        backward.push_back(fragment);
    });
    for (FragmentOp fragment : backward)
      splitFragment(fragment);
    return success();
  }
};

} // namespace
