//===- Cleanup.cpp - Canonicalize the MPMD program, not the bodies --------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_CLEANUPPASS
#include "mpmd/Transforms/Common/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct CleanupPass : public EntryFunctionPass<CleanupPass, mlir::mpmd::impl::CleanupPassBase> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    FragmentOp::getCanonicalizationPatterns(set, ctx);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  LogicalResult runOnEntryFunction(func::FuncOp entry) {
    GreedyRewriteConfig config;
    // Only the entry functions' own ops (and ops patterns create there);
    // folders of the mpmd ops apply to them too.
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    SmallVector<Operation *> ops;
    for (Operation &op : entry.getBody().front())
      ops.push_back(&op);
    (void)applyOpPatternsGreedily(ops, patterns, config);
    return success();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
