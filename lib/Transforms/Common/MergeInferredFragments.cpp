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
// order is final, an inferred fragment of an iteration joins a user
// fragment of its iteration and mesh that reads it or that it reads (else
// the first one where its operands are ready), rather than its neighbour,
// which differs between a schedule's phases.
//
// Outside the loops of such a function, once the order is final, inferred
// work joins only work of the same named computations (those whose results
// it reads, through inferred work and transfers): the update after the loop
// of a block's weights stays apart from the embedding's on the same mesh,
// so that it is the same program as the other meshes' blocks' updates.
// Work reading no named computation (a step counter) takes the group of
// its readers, and is copied into each when several groups read it and it
// is small and free of side effects.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
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
    if (changed)
      renumber();
    if (iterationsKnown && groupSharedWork())
      renumber();
    llvm::StringMap<FragmentOp> previousOnMesh;
    // Outside the loops, the latest inferred fragment of each mesh and
    // group: work of one group joins it across the other groups' work
    // between them when its operands are ready there.
    std::map<std::pair<StringRef, Group>, FragmentOp> previousInGroup;
    auto record = [&](FragmentOp fragment) {
      previousOnMesh[fragment.getMeshName()] = fragment;
      if (afterOrBeforeLoops(fragment))
        previousInGroup[{fragment.getMeshName(), groupOf(fragment)}] =
            fragment;
    };
    auto join = [&](FragmentOp target, FragmentOp fragment) {
      for (auto it = previousInGroup.begin(); it != previousInGroup.end();)
        it = it->second == target ? previousInGroup.erase(it) : std::next(it);
      record(merge(target, fragment, target));
      changed = true;
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment || hasShardings(fragment))
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp previous = previousOnMesh.lookup(mesh);
      if (previous && !fragment.isUserFragment() &&
          sameIteration(fragment, previous) && readyAt(fragment, previous) &&
          sameGroup(fragment, previous)) {
        join(previous, fragment);
        continue;
      }
      if (afterOrBeforeLoops(fragment) && !groupOf(fragment).empty()) {
        auto found = previousInGroup.find({mesh, groupOf(fragment)});
        if (found != previousInGroup.end() &&
            readyAt(fragment, found->second)) {
          join(found->second, fragment);
          continue;
        }
      }
      record(fragment);
    }
    llvm::StringMap<FragmentOp> nextOnMesh;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment || hasShardings(fragment))
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp next = nextOnMesh.lookup(mesh);
      if (next && !fragment.isUserFragment() &&
          sameIteration(fragment, next) && unreadBefore(fragment, next) &&
          sameGroup(fragment, next)) {
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
    auto targetsOf = [&](FragmentOp fragment) -> SmallVector<FragmentOp> * {
      auto found = userFragments.find(
          {fragment.getMeshName().str(), *loopIterationOf(fragment)});
      return found == userFragments.end() ? nullptr : &found->second;
    };
    // First the fragments that feed or are fed by a user fragment, until
    // none is left: one joining its consumer can make the inferred work it
    // read from a neighbour of that consumer's data too.
    bool changed = false;
    for (bool merged = true; merged;) {
      merged = false;
      for (FragmentOp &fragment : inferred) {
        SmallVector<FragmentOp> *targets = fragment ? targetsOf(fragment)
                                                    : nullptr;
        FragmentOp *target =
            targets ? connectedTarget(fragment, *targets) : nullptr;
        if (!target)
          continue;
        *target = joinInOrder(fragment, *target);
        fragment = nullptr;
        merged = changed = true;
      }
    }
    // Then the rest: the first user fragment of the iteration where it is
    // ready.
    for (FragmentOp fragment : inferred) {
      SmallVector<FragmentOp> *targets = fragment ? targetsOf(fragment)
                                                  : nullptr;
      if (!targets)
        continue;
      for (FragmentOp &target : *targets) {
        bool before = position.lookup(target) < position.lookup(fragment);
        if (before && !readyAt(fragment, target))
          continue;
        if (!before && !unreadBefore(fragment, target))
          break; // a later target is read from even more
        target = joinInOrder(fragment, target);
        changed = true;
        break;
      }
    }
    return changed;
  }

  /// The first of `targets` that reads `fragment`'s results or produces its
  /// operands and that it can join (operands ready there, or nothing reading
  /// it before). Work joins the fragments it feeds or is fed by before an
  /// unrelated neighbour: the prologue of a loss (its targets' one-hot) then
  /// goes with the head, and the last block, left alone, stays the same
  /// program as the blocks of the other meshes.
  FragmentOp *connectedTarget(FragmentOp fragment,
                              SmallVectorImpl<FragmentOp> &targets) {
    llvm::SmallPtrSet<Operation *, 4> producers;
    for (Value operand : fragment.getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.insert(block.findAncestorOpInBlock(*def));
    llvm::SmallPtrSet<Operation *, 4> consumers;
    for (Operation *user : fragment->getUsers())
      consumers.insert(block.findAncestorOpInBlock(*user));
    for (FragmentOp &target : targets) {
      bool before = position.lookup(target) < position.lookup(fragment);
      if (before ? producers.contains(target) && readyAt(fragment, target)
                 : consumers.contains(target) &&
                       unreadBefore(fragment, target))
        return &target;
    }
    return nullptr;
  }

  /// `fragment` merged into `target`, at `target`'s place (the earlier
  /// one's operands first).
  FragmentOp joinInOrder(FragmentOp fragment, FragmentOp target) {
    return position.lookup(target) < position.lookup(fragment)
               ? merge(target, fragment, target)
               : merge(fragment, target, target);
  }

  /// Whether `fragment` is inferred work before or after the loops of an
  /// unrolled function (in none of its iterations).
  bool afterOrBeforeLoops(FragmentOp fragment) const {
    return iterationsKnown && !fragment.isUserFragment() &&
           !loopIterationOf(fragment);
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
    std::optional<Group> merged;
    if (groups.count(first) || groups.count(second)) {
      merged = groupOf(first);
      const Group &other = groupOf(second);
      merged->insert(other.begin(), other.end());
      groups.erase(first);
      groups.erase(second);
    }
    FragmentOp result = mergeFragments(first, second, anchor);
    position[result] = at;
    if (merged)
      groups[result] = std::move(*merged);
    return result;
  }

  /// The named computations whose results reach `op` through unnamed work
  /// only: a user fragment's own names; for anything else, those of what
  /// it reads (through transfers and inferred fragments).
  using Group = std::set<StringRef>;
  const Group &groupOf(Operation *op) {
    auto found = groups.find(op);
    if (found != groups.end())
      return found->second;
    Group group;
    auto fragment = dyn_cast<FragmentOp>(op);
    if (fragment && fragment.isUserFragment()) {
      for (Attribute origin : fragment.getOrigin())
        group.insert(cast<UserOriginAttr>(origin).getUserName().getValue());
    } else {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp()) {
          const Group &read = groupOf(block.findAncestorOpInBlock(*def));
          group.insert(read.begin(), read.end());
        }
    }
    return groups[op] = std::move(group);
  }

  /// Outside the loops, gives inferred work that reads no named
  /// computation's results (a step counter's bias corrections) the group
  /// of its readers: of their only group, or, computed from small values
  /// and read by several groups, copied once per group (joined to one of
  /// them, it would tie the others' work to it). Returns whether anything
  /// was copied.
  bool groupSharedWork() {
    constexpr int64_t kSmallOperandElements = 1024;
    bool copied = false;
    SmallVector<FragmentOp> candidates;
    for (Operation &op : block) {
      // In program order, so that groupOf finds every operand's group known
      // (no recursion along chains).
      const Group &group = groupOf(&op);
      auto fragment = dyn_cast<FragmentOp>(op);
      if (fragment && group.empty() && afterOrBeforeLoops(fragment) &&
          !hasShardings(fragment))
        candidates.push_back(fragment);
    }
    // Readers first: their groups are known when their producers are met.
    for (FragmentOp fragment : llvm::reverse(candidates)) {
      // Readers by group; those of none (results of the function, work
      // of no group) keep the fragment itself.
      std::map<Group, SmallVector<Operation *>> readers;
      bool ungroupedReaders = false;
      for (Operation *user : fragment->getUsers()) {
        Operation *reader = block.findAncestorOpInBlock(*user);
        const Group &group = groupOf(reader);
        if (group.empty() || !isa<FragmentOp>(reader))
          ungroupedReaders = true;
        else
          readers[group].push_back(reader);
      }
      if (readers.size() == 1 && !ungroupedReaders) {
        groups[fragment] = readers.begin()->first;
        continue;
      }
      if (readers.size() + ungroupedReaders < 2 || !copyable(fragment) ||
          llvm::any_of(fragment.getOperandTypes(), [](Type type) {
            auto tensor = dyn_cast<MeshTensorType>(type);
            return !tensor || !tensor.getRankedTensorType().hasStaticShape() ||
                   tensor.getRankedTensorType().getNumElements() >
                       kSmallOperandElements;
          }))
        continue;
      OpBuilder builder(fragment);
      for (auto &[group, users] : readers) {
        Operation *copy = builder.clone(*fragment);
        groups[copy] = group;
        for (auto [result, copiedResult] :
             llvm::zip(fragment->getResults(), copy->getResults()))
          result.replaceUsesWithIf(copiedResult, [&](OpOperand &use) {
            return llvm::is_contained(
                users, block.findAncestorOpInBlock(*use.getOwner()));
          });
      }
      if (!ungroupedReaders) {
        groups.erase(fragment);
        fragment.erase();
      }
      copied = true;
    }
    return copied;
  }

  /// Whether computing `fragment` twice is the same as computing it once:
  /// every op in it free of memory effects (not a side-effecting custom
  /// call, not a stateful random number).
  static bool copyable(FragmentOp fragment) {
    return !fragment->walk([&](Operation *op) {
                       return op == fragment ||
                                      op->hasTrait<OpTrait::IsTerminator>() ||
                                      isMemoryEffectFree(op)
                                  ? WalkResult::advance()
                                  : WalkResult::interrupt();
                     })
                .wasInterrupted();
  }

  /// Whether inferred `fragment` may join its neighbour `target` outside
  /// the loops of an unrolled function: not when each holds work of other
  /// named computations. The update after the loop of one block's weights
  /// then stays apart from that of the embedding beside it on the same
  /// mesh, so equal blocks on other meshes share its program; work reading
  /// none (a step counter) goes anywhere, work reading several (a global
  /// norm) joins any of them. Without loops (nothing to share a program
  /// across microbatches either) the update joins the last backward as
  /// before.
  bool sameGroup(FragmentOp fragment, FragmentOp target) {
    if (!iterationsKnown || loopIterationOf(fragment) ||
        loopIterationOf(target))
      return true;
    Group a = groupOf(fragment); // a copy: groupOf may grow the map
    const Group &b = groupOf(target);
    return std::includes(a.begin(), a.end(), b.begin(), b.end()) ||
           std::includes(b.begin(), b.end(), a.begin(), a.end());
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
  // groupOf's answers; merge keeps them for the fragments it makes.
  llvm::DenseMap<Operation *, Group> groups;
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
