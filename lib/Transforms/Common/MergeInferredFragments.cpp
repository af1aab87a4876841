//===- MergeInferredFragments.cpp - Absorb inferred fragments -------------===//
//
// Mesh inference leaves one small fragment (empty origin) per nameless op and
// mesh. Each one joins a neighbour on its mesh, but only in ways that add no
// dependency between fragments, so that merging never constrains (or
// contradicts) a pipeline schedule applied later:
//   - into its producer P (the latest fragment defining one of its operands)
//     when its other operands are P's operands or function arguments: P
//     needs nothing new, and the inferred fragment's users already depended
//     on P;
//   - else into its only consumer C, a user fragment, when every use of its
//     results is in C: C already depended on everything the inferred
//     fragment reads (not into another inferred fragment: a chain of them,
//     such as a gradient accumulated over the microbatches, would collapse
//     into one fragment at its end that keeps every input alive until then);
//   - a fragment without operands (constants) is copied into each of its
//     consumers instead.
// Anything else stays a fragment of its own. Rounds repeat until nothing
// merges.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_MERGEINFERREDFRAGMENTSPASS
#include "mpmd/Transforms/Common/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

bool hasShardings(FragmentOp op) {
  return op.getInShardingsAttr() || op.getOutShardingsAttr();
}

class FragmentMerger {
public:
  explicit FragmentMerger(Block &block) : block(block) {}

  /// One round over the inferred fragments; true if anything merged.
  bool round() {
    // Positions instead of isBeforeInBlock: every merge inserts an op, which
    // would make the block renumber itself on each query.
    renumber();
    SmallVector<FragmentOp> inferred;
    for (auto fragment : block.getOps<FragmentOp>())
      if (!fragment.isUserFragment() && !hasShardings(fragment))
        inferred.push_back(fragment);
    llvm::DenseSet<Operation *> erased;
    bool changed = false;
    for (FragmentOp fragment : inferred) {
      if (erased.contains(fragment))
        continue;
      if (fragment.getNumOperands() == 0 &&
          succeeded(copyIntoConsumers(fragment, erased))) {
        changed = true;
        continue;
      }
      if (FragmentOp producer = hoistTarget(fragment)) {
        erased.insert(producer);
        erased.insert(fragment);
        merge(producer, fragment, producer);
        changed = true;
        continue;
      }
      if (FragmentOp consumer = sinkTarget(fragment)) {
        erased.insert(consumer);
        erased.insert(fragment);
        merge(fragment, consumer, consumer);
        changed = true;
      }
    }
    return changed;
  }

  /// After scheduling: each inferred fragment joins the previous fragment
  /// of its mesh if its operands are ready there, else the next one if
  /// nothing reads its results before it. True if anything merged.
  bool neighbourRound() {
    renumber();
    bool changed = false;
    llvm::StringMap<FragmentOp> previousOnMesh;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment || hasShardings(fragment))
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp previous = previousOnMesh.lookup(mesh);
      if (previous && !fragment.isUserFragment() &&
          readyAt(fragment, previous)) {
        previousOnMesh[mesh] = merge(previous, fragment, previous);
        changed = true;
        continue;
      }
      previousOnMesh[mesh] = fragment;
    }
    llvm::StringMap<FragmentOp> nextOnMesh;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment || hasShardings(fragment))
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp next = nextOnMesh.lookup(mesh);
      if (next && !fragment.isUserFragment() && unreadBefore(fragment, next)) {
        nextOnMesh[mesh] = merge(fragment, next, next);
        changed = true;
        continue;
      }
      nextOnMesh[mesh] = fragment;
    }
    return changed;
  }

private:
  void renumber() {
    position.clear();
    int64_t next = 0;
    for (Operation &op : block)
      position[&op] = next++;
  }

  int64_t positionOf(Value value) {
    if (Operation *def = value.getDefiningOp())
      return position.lookup(block.findAncestorOpInBlock(*def));
    return -1;
  }

  bool readyAt(FragmentOp fragment, FragmentOp earlier) {
    int64_t at = position.lookup(earlier);
    return llvm::all_of(fragment.getOperands(), [&](Value operand) {
      return operand.getDefiningOp() == earlier || positionOf(operand) < at;
    });
  }

  bool unreadBefore(FragmentOp fragment, FragmentOp later) {
    int64_t at = position.lookup(later);
    return llvm::all_of(fragment->getUsers(), [&](Operation *user) {
      return position.lookup(block.findAncestorOpInBlock(*user)) >= at;
    });
  }

  FragmentOp merge(FragmentOp first, FragmentOp second, FragmentOp anchor) {
    int64_t at = position.lookup(anchor);
    position.erase(first);
    position.erase(second);
    FragmentOp merged = mergeFragments(first, second, anchor);
    position[merged] = at;
    return merged;
  }

  /// The fragments of `fragment`'s mesh reading its results, if every user
  /// is one of them.
  std::optional<llvm::SetVector<FragmentOp>> consumers(FragmentOp fragment) {
    llvm::SetVector<FragmentOp> result;
    for (Operation *user : fragment->getUsers()) {
      auto consumer = dyn_cast<FragmentOp>(block.findAncestorOpInBlock(*user));
      if (!consumer || consumer == fragment ||
          consumer.getMeshName() != fragment.getMeshName() ||
          hasShardings(consumer))
        return std::nullopt;
      result.insert(consumer);
    }
    return result;
  }

  FragmentOp hoistTarget(FragmentOp fragment) {
    FragmentOp producer;
    for (Value operand : fragment.getOperands()) {
      auto def = operand.getDefiningOp<FragmentOp>();
      if (def && def.getMeshName() == fragment.getMeshName() &&
          (!producer || position.lookup(producer) < position.lookup(def)))
        producer = def;
    }
    if (!producer || hasShardings(producer))
      return {};
    for (Value operand : fragment.getOperands())
      if (operand.getDefiningOp() != producer &&
          !isa<BlockArgument>(operand) &&
          !llvm::is_contained(producer.getOperands(), operand))
        return {};
    return producer;
  }

  /// The only consumer, when it is a user fragment. Never another inferred
  /// fragment: along a chain of them (a gradient accumulated over the
  /// microbatches) each would sink into the next, and the last would hold
  /// every microbatch's inputs until the end. Export places such chains
  /// once the order is final.
  FragmentOp sinkTarget(FragmentOp fragment) {
    std::optional<llvm::SetVector<FragmentOp>> users = consumers(fragment);
    if (!users || users->size() != 1)
      return {};
    FragmentOp consumer = users->front();
    if (!consumer.isUserFragment())
      return {};
    return consumer;
  }

  LogicalResult copyIntoConsumers(FragmentOp fragment,
                                  llvm::DenseSet<Operation *> &erased) {
    std::optional<llvm::SetVector<FragmentOp>> users = consumers(fragment);
    if (!users || users->empty())
      return failure();
    for (FragmentOp consumer : *users) {
      OpBuilder builder(consumer);
      auto copy = cast<FragmentOp>(builder.clone(*fragment));
      for (auto [result, copied] :
           llvm::zip(fragment.getResults(), copy.getResults()))
        result.replaceUsesWithIf(copied, [&](OpOperand &use) {
          return block.findAncestorOpInBlock(*use.getOwner()) == consumer;
        });
      erased.insert(consumer);
      position[copy] = position.lookup(consumer);
      merge(copy, consumer, consumer);
    }
    erased.insert(fragment);
    fragment.erase();
    return success();
  }

  Block &block;
  llvm::DenseMap<Operation *, int64_t> position;
};

struct MergeInferredFragmentsPass
    : public EntryFunctionPass<MergeInferredFragmentsPass,
                               mlir::mpmd::impl::MergeInferredFragmentsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunction(func::FuncOp func) {
    FragmentMerger merger(func.getBody().front());
    while (merger.round()) {
    }
    if (scheduled)
      while (merger.neighbourRound()) {
      }
    return success();
  }
};

} // namespace
