//===- MpmdCanonicalize.cpp - Canonicalization patterns of mpmd ops -------===//
//
// Fragment cleanups that later passes rely on: results nobody uses and block
// arguments the body never reads are dropped (with their shardings), so that
// fragments only move the data they need.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// Keeps the entries of `shardings` whose bit in `erase` is unset.
sdy::TensorShardingPerValueAttr
filterShardings(sdy::TensorShardingPerValueAttr shardings,
                const llvm::BitVector &erase) {
  if (!shardings)
    return {};
  SmallVector<sdy::TensorShardingAttr> kept;
  for (auto [index, sharding] : llvm::enumerate(shardings.getShardings()))
    if (!erase.test(index))
      kept.push_back(sharding);
  return sdy::TensorShardingPerValueAttr::get(shardings.getContext(), kept);
}

struct RemoveUnusedFragmentResults : OpRewritePattern<FragmentOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FragmentOp op,
                                PatternRewriter &rewriter) const override {
    llvm::BitVector unused(op.getNumResults());
    for (OpResult result : op->getResults())
      if (result.use_empty())
        unused.set(result.getResultNumber());
    if (unused.none())
      return failure();

    Block &body = op.getRegion().front();
    Operation *terminator = body.getTerminator();
    rewriter.modifyOpInPlace(terminator,
                             [&] { terminator->eraseOperands(unused); });
    // What computed only the dropped results goes now, so that the block
    // arguments it read are seen unused at once.
    for (Operation *inner = terminator->getPrevNode(); inner;) {
      Operation *previous = inner->getPrevNode();
      if (isOpTriviallyDead(inner))
        rewriter.eraseOp(inner);
      inner = previous;
    }
    SmallVector<Type> resultTypes;
    for (OpResult result : op->getResults())
      if (!unused.test(result.getResultNumber()))
        resultTypes.push_back(result.getType());

    auto newOp = FragmentOp::create(rewriter, op.getLoc(), resultTypes,
                                    op.getInputs(), op->getAttrs());
    if (op.getOutShardingsAttr())
      newOp.setOutShardingsAttr(filterShardings(op.getOutShardingsAttr(), unused));
    rewriter.inlineRegionBefore(op.getRegion(), newOp.getRegion(),
                                newOp.getRegion().end());
    unsigned next = 0;
    for (OpResult result : op->getResults())
      if (!unused.test(result.getResultNumber()))
        rewriter.replaceAllUsesWith(result, newOp->getResult(next++));
    rewriter.eraseOp(op);
    return success();
  }
};

struct RemoveUnusedFragmentArguments : OpRewritePattern<FragmentOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FragmentOp op,
                                PatternRewriter &rewriter) const override {
    Block &block = op.getRegion().front();
    llvm::BitVector unused(block.getNumArguments());
    for (BlockArgument arg : block.getArguments())
      if (arg.use_empty())
        unused.set(arg.getArgNumber());
    if (unused.none())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      block.eraseArguments(unused);
      op->eraseOperands(unused);
      if (op.getInShardingsAttr())
        op.setInShardingsAttr(filterShardings(op.getInShardingsAttr(), unused));
    });
    return success();
  }
};

} // namespace

void FragmentOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<RemoveUnusedFragmentResults, RemoveUnusedFragmentArguments>(
      context);
}
