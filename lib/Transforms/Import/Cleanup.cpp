//===- Cleanup.cpp - Canonicalize the MPMD program, not the bodies --------===//

#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_CLEANUPPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct CleanupPass
    : public mlir::mpmd::impl::CleanupPassBase<CleanupPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    FragmentOp::getCanonicalizationPatterns(set, ctx);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> entries =
        getEntryFunctions(getOperation());
    if (failed(entries))
      return signalPassFailure();
    GreedyRewriteConfig config;
    // Only the entry functions' own ops (and ops patterns create there);
    // folders of the mpmd ops apply to them too.
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    for (func::FuncOp entry : *entries) {
      SmallVector<Operation *> ops;
      for (Operation &op : entry.getBody().front())
        ops.push_back(&op);
      (void)applyOpPatternsGreedily(ops, patterns, config);
    }
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
