//===- RematFragments.cpp - Recompute forward fragments in the backward ---===//
//
// A forward fragment F's results that its backward fragments read (the
// residuals autodiff keeps: activations and intermediates) stay alive from F
// until the backward runs; in a pipeline, microbatches' worth of them pile up
// on the early stages. Rematerialization trades that memory for compute: a
// copy of F runs right before the first backward fragment that reads it, the
// backwards read the copy, and F keeps only the results other ops read (the
// activation for the next stage). What must stay alive instead are F's
// operands, usually one activation and the parameters.
//
// Runs after the schedule, so the copy sits where the backward runs. With
// `merge`, the copy is fused into that backward fragment: one program
// recomputes and differentiates; so is a forward jax.checkpoint already
// recomputes (mpmd-mark-recomputed-forwards) when that backward is its
// only reader. F's unused results are dropped by
// mpmd-cleanup (export runs it first).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_REMATFRAGMENTSPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct RematFragmentsPass
    : public EntryFunctionPass<RematFragmentsPass,
                               mlir::mpmd::impl::RematFragmentsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp, ArrayRef<func::FuncOp> entries) {
    for (func::FuncOp func : entries) {
      SmallVector<FragmentOp> forwards, recomputes;
      for (auto fragment : func.getBody().getOps<FragmentOp>()) {
        if (!fragment.isUserFragment())
          continue;
        FragmentInfo info = getFragmentInfo(fragment);
        // What jax.checkpoint recomputes already runs before its user.
        if (info.recompute)
          recomputes.push_back(fragment);
        else if (info.kind == FragmentKind::kForward)
          forwards.push_back(fragment);
      }
      for (FragmentOp forward : forwards)
        remat(forward);
      if (merge)
        for (FragmentOp recompute : recomputes)
          mergeIntoOnlyReader(recompute);
    }
    return success();
  }

  /// With `merge`, a jax.checkpoint recompute read by one backward
  /// fragment only (of its mesh and call counter) is fused into it, as the
  /// copies above are. One read by others too (the next recompute of a
  /// chain) stays apart.
  void mergeIntoOnlyReader(FragmentOp recompute) {
    SmallVector<FragmentOp> readers =
        backwardReaders(recompute, getFragmentInfo(recompute));
    if (readers.size() != 1 ||
        llvm::any_of(recompute->getUsers(), [&](Operation *user) {
          return user != readers.front().getOperation();
        }))
      return;
    mergeFragments(recompute, readers.front(), readers.front());
  }

  void remat(FragmentOp forward) {
    FragmentInfo info = getFragmentInfo(forward);
    SmallVector<FragmentOp> readers = backwardReaders(forward, info);
    if (readers.empty() || !otherWorkBetween(forward, readers.front(), info))
      return;
    FragmentOp first = readers.front();
    OpBuilder builder(first);
    auto copy = cast<FragmentOp>(builder.clone(*forward.getOperation()));
    copy->setAttr(kRematAttrName, builder.getUnitAttr());
    for (FragmentOp reader : readers)
      for (auto [original, recomputed] :
           llvm::zip(forward.getResults(), copy.getResults()))
        original.replaceUsesWithIf(recomputed, [&](OpOperand &use) {
          return use.getOwner() == reader.getOperation();
        });
    if (merge)
      mergeFragments(copy, first, first);
  }
};

} // namespace
