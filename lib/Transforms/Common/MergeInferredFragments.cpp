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
// In a function whose loops mpmd-unroll-loops unrolled, fragments of
// different loop iterations (call counters, and the `mpmd.loop_iteration`
// of inferred ones) never merge, nor do those of an iteration with those
// outside the loop: each microbatch of a stage then
// gets the same inferred work, so all share one program. The first
// iteration's accumulation does not absorb the loop's initial zeros, and the
// last one's does not absorb the update after the loop: a constant used by
// one iteration only stays apart (export merges it with the code before the
// loop), and code after the loop becomes a program of its own. Once the
// order is final, an inferred fragment of an iteration joins the first user
// fragment of its iteration and mesh where its operands are ready, rather
// than its neighbour, which differs between a schedule's phases.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>

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
  FragmentMerger(Block &block, bool iterationsKnown)
      : block(block), iterationsKnown(iterationsKnown) {}

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
    bool changed = iterationsKnown && iterationRound();
    llvm::StringMap<FragmentOp> previousOnMesh;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment || hasShardings(fragment))
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp previous = previousOnMesh.lookup(mesh);
      if (previous && !fragment.isUserFragment() &&
          sameIteration(fragment, previous) && readyAt(fragment, previous)) {
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
      if (next && !fragment.isUserFragment() &&
          sameIteration(fragment, next) && unreadBefore(fragment, next)) {
        nextOnMesh[mesh] = merge(fragment, next, next);
        changed = true;
        continue;
      }
      nextOnMesh[mesh] = fragment;
    }
    return changed;
  }

private:
  /// After scheduling, in an unrolled loop: each inferred fragment of an
  /// iteration joins the first user fragment of that iteration on its mesh
  /// where its operands are ready (and before which nothing reads it).
  /// Chosen by data, not by what happens to be next to it, the target is
  /// the same for every iteration whatever phase of the schedule (warm-up,
  /// steady state, cool-down) places it in.
  bool iterationRound() {
    std::map<std::pair<std::string, uint64_t>, SmallVector<FragmentOp>>
        userFragments;
    SmallVector<FragmentOp> inferred;
    for (auto fragment : block.getOps<FragmentOp>()) {
      std::optional<uint64_t> iteration = loopIterationOf(fragment);
      if (!iteration || hasShardings(fragment))
        continue;
      if (fragment.isUserFragment())
        userFragments[{fragment.getMeshName().str(), *iteration}].push_back(
            fragment);
      else
        inferred.push_back(fragment);
    }
    bool changed = false;
    for (FragmentOp fragment : inferred) {
      auto found = userFragments.find(
          {fragment.getMeshName().str(), *loopIterationOf(fragment)});
      if (found == userFragments.end())
        continue;
      for (FragmentOp &target : found->second) {
        if (position.lookup(target) < position.lookup(fragment)) {
          if (!readyAt(fragment, target))
            continue;
          target = merge(target, fragment, target);
        } else {
          if (!unreadBefore(fragment, target))
            break; // a later target is read from even more
          target = merge(fragment, target, target);
        }
        changed = true;
        break;
      }
    }
    return changed;
  }

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
    if (!producer || hasShardings(producer) ||
        !sameIteration(fragment, producer))
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
    if (!consumer.isUserFragment() || !sameIteration(fragment, consumer))
      return {};
    return consumer;
  }

  /// Copies a constant into its consumers, except into those of one other
  /// loop iteration than its own when that iteration is its only other user
  /// (a loop's initial value: copied, it would make the first iteration's
  /// program unlike the others'). Erases it when no consumer is left.
  LogicalResult copyIntoConsumers(FragmentOp fragment,
                                  llvm::DenseSet<Operation *> &erased) {
    std::optional<llvm::SetVector<FragmentOp>> users = consumers(fragment);
    if (!users || users->empty())
      return failure();
    std::optional<uint64_t> own = loopIterationOf(fragment);
    std::set<std::optional<uint64_t>> others;
    for (FragmentOp consumer : *users)
      if (loopIterationOf(consumer) != own)
        others.insert(loopIterationOf(consumer));
    if (!iterationsKnown)
      others.clear();
    if (others.size() == 1)
      users->remove_if(
          [&](FragmentOp consumer) { return !sameIteration(consumer, fragment); });
    if (users->empty())
      return failure();
    bool keep = others.size() == 1;
    for (FragmentOp consumer : *users) {
      OpBuilder builder(consumer);
      auto copy = cast<FragmentOp>(builder.clone(*fragment));
      // The merged fragment is the consumer's iteration.
      copy->removeAttr(kLoopIterationAttrName);
      for (auto [result, copied] :
           llvm::zip(fragment.getResults(), copy.getResults()))
        result.replaceUsesWithIf(copied, [&](OpOperand &use) {
          return block.findAncestorOpInBlock(*use.getOwner()) == consumer;
        });
      erased.insert(consumer);
      position[copy] = position.lookup(consumer);
      merge(copy, consumer, consumer);
    }
    if (keep)
      return success();
    erased.insert(fragment);
    fragment.erase();
    return success();
  }

  /// Whether fragments of loop iterations are labelled (the function went
  /// through mpmd-unroll-loops): only then is an unlabelled fragment known
  /// to be outside the loops. Otherwise iterations are not kept apart.
  bool sameIteration(FragmentOp a, FragmentOp b) const {
    return !iterationsKnown || loopIterationOf(a) == loopIterationOf(b);
  }

  Block &block;
  bool iterationsKnown;
  llvm::DenseMap<Operation *, int64_t> position;
};

struct MergeInferredFragmentsPass
    : public EntryFunctionPass<MergeInferredFragmentsPass,
                               mlir::mpmd::impl::MergeInferredFragmentsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunction(func::FuncOp func) {
    FragmentMerger merger(func.getBody().front(),
                          func->hasAttr(kLoopIterationsKnownAttrName));
    while (merger.round()) {
    }
    if (scheduled) {
      while (merger.neighbourRound()) {
      }
      // The order is final: iterations need no telling apart any more.
      for (auto fragment : func.getBody().getOps<FragmentOp>())
        fragment->removeAttr(kLoopIterationAttrName);
      func->removeAttr(kLoopIterationsKnownAttrName);
    }
    return success();
  }
};

} // namespace
