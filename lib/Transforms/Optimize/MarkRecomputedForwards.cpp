//===- MarkRecomputedForwards.cpp - Find forwards jax.checkpoint recomputes ===//
//
// Under `jax.checkpoint` around a named computation, autodiff runs the
// computation twice: the forward, whose residuals it drops, and a copy in
// the backward pass that recomputes them for the backward. Both copies are
// forward fragments with the same origins, mesh, loop and call counter. The
// second is marked `mpmd.remat`, as mpmd-remat-fragments marks the copies it
// makes, so that:
// - mpmd-schedule runs it right before the backward that reads it rather
//   than among the forwards, where it would keep alive the very residuals
//   the user chose to recompute (and turn 1F1B into GPipe on that mesh);
// - its key differs from the forward's (`block0[r]#3`), so explicit tables
//   and merge rules name the forward without ambiguity.
//
// A copy is a recompute only if backward fragments of its mesh and call
// counter read it and nothing but backward fragments and other recomputes
// do (through transfers): a named computation applied twice in the forward
// (a shared layer) feeds forward code and is left alone. Inferred fragments
// reading it also leave it alone: the rule errs towards today's order.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/IR/Builders.h"

#include <set>
#include <tuple>

namespace mlir::mpmd {
#define GEN_PASS_DEF_MARKRECOMPUTEDFORWARDSPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// True if every reader of `fragment`'s results, looking through
/// transfers, is a backward (or weight-gradient) user fragment or a
/// fragment in `recomputes`.
bool onlyBackwardsRead(FragmentOp fragment,
                       const llvm::SmallPtrSetImpl<Operation *> &recomputes) {
  SmallVector<Operation *> work(fragment->getUsers().begin(),
                                fragment->getUsers().end());
  while (!work.empty()) {
    Operation *user = work.pop_back_val();
    if (auto transfer = dyn_cast<TransferOp>(user)) {
      work.append(transfer->getUsers().begin(), transfer->getUsers().end());
      continue;
    }
    if (recomputes.contains(user))
      continue;
    auto reader = dyn_cast<FragmentOp>(user);
    if (!reader || !reader.isUserFragment())
      return false;
    FragmentKind kind = getFragmentInfo(reader).kind;
    if (kind != FragmentKind::kBackward &&
        kind != FragmentKind::kWeightGradient)
      return false;
  }
  return true;
}

struct MarkRecomputedForwardsPass
    : public EntryFunctionPass<
          MarkRecomputedForwardsPass,
          mlir::mpmd::impl::MarkRecomputedForwardsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp, ArrayRef<func::FuncOp> entries) {
    for (func::FuncOp func : entries) {
      // Forwards with an earlier twin (same mesh, loop, label, counter).
      std::set<std::tuple<std::string, std::string, std::string, uint64_t>>
          seen;
      SmallVector<FragmentOp> twins;
      for (auto fragment : func.getBody().getOps<FragmentOp>()) {
        if (!fragment.isUserFragment() || fragment->hasAttr(kRematAttrName))
          continue;
        FragmentInfo info = getFragmentInfo(fragment);
        if (info.kind != FragmentKind::kForward)
          continue;
        if (!seen.emplace(info.mesh, info.loop, info.label(),
                          info.callCounter.value_or(~uint64_t(0)))
                 .second)
          twins.push_back(fragment);
      }
      // Latest first: a recompute may feed a later one (jax.checkpoint
      // around several named computations), which must be known first.
      llvm::SmallPtrSet<Operation *, 16> recomputes;
      for (FragmentOp twin : llvm::reverse(twins))
        if (!backwardReaders(twin, getFragmentInfo(twin)).empty() &&
            onlyBackwardsRead(twin, recomputes))
          recomputes.insert(twin);
      Builder builder(func.getContext());
      for (Operation *recompute : recomputes)
        recompute->setAttr(kRematAttrName, builder.getUnitAttr());
    }
    return success();
  }
};

} // namespace
