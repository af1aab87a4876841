//===- MergeFragments.cpp - Fuse fragments by rules -----------------------===//
//
// Two fragments A (earlier) and B (later) of one mesh become one program at
// B's position. Ops between them that read A (directly or not) move after B
// first; if B itself depends on one of those, fusing would create a cycle
// and the rule is rejected with the op in between named.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>

#include <set>

namespace mlir::mpmd {
#define GEN_PASS_DEF_MERGEFRAGMENTSPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// Fuses `first` and `second` (first earlier) at `second`'s position.
FailureOr<FragmentOp> fuse(FragmentOp first, FragmentOp second,
                           StringRef why) {
  Block *block = first->getBlock();
  // Ops strictly between the two that depend on `first`.
  llvm::SetVector<Operation *> dependents;
  llvm::SmallPtrSet<Operation *, 16> tainted = {first};
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode()) {
    bool reads = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (tainted.contains(block->findAncestorOpInBlock(*def)))
            reads = true;
    });
    if (reads) {
      tainted.insert(op);
      dependents.insert(op);
    }
  }
  for (Value operand : second.getOperands())
    if (Operation *def = operand.getDefiningOp())
      if (dependents.contains(def)) {
        FragmentInfo a = getFragmentInfo(first), b = getFragmentInfo(second);
        return second.emitOpError()
               << "cannot be merged with '" << a.key() << "' (" << why
               << "): it reads a value that depends on '" << a.key()
               << "' through " << def->getName()
               << " between them, so the merged program would depend on "
                  "itself";
      }
  Operation *insertAfter = second;
  for (Operation *op : dependents) {
    op->moveAfter(insertAfter);
    insertAfter = op;
  }
  return mergeFragments(first, second, second);
}

struct MergeFragmentsPass
    : public EntryFunctionPass<MergeFragmentsPass, mlir::mpmd::impl::MergeFragmentsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    std::vector<MergeRule> all(rules.begin(), rules.end());
    if (provider) {
      std::string error;
      std::optional<std::vector<MergeRule>> more =
          provider(listUserFragments(entries), error);
      if (!more)
        return module.emitError() << "the merge rules could not be evaluated: "
                                  << error;
      llvm::append_range(all, *more);
    }
    for (func::FuncOp func : entries) {
      std::set<std::pair<std::string, std::string>> matched;
      for (const MergeRule &rule : all)
        if (failed(applyRule(func, rule, matched)))
          return failure();
      for (const MergeRule &rule : all)
        if (!matched.count({rule.first, rule.second}))
          func.emitWarning() << "merge rule '" << rule.first << ":"
                             << rule.second
                             << "' matches no pair of fragments";
      if (mergeLastStage && failed(fuseLastStage(func)))
        return failure();
    }
    return success();
  }

  /// Fragments labelled `a` and `b` with the same mesh, loop (of its own
  /// schedule; the same named computations may run in several loops, each
  /// numbering its microbatches from 0) and call counter.
  LogicalResult
  applyRule(func::FuncOp func, const MergeRule &rule,
            std::set<std::pair<std::string, std::string>> &matched) {
    StringRef a = rule.first, b = rule.second;
    std::map<std::tuple<std::string, std::string, uint64_t>, FragmentOp>
        firsts, seconds;
    for (auto fragment : func.getBody().getOps<FragmentOp>()) {
      FragmentInfo info = getFragmentInfo(fragment);
      auto key =
          std::make_tuple(info.mesh, info.loop, info.callCounter.value_or(0));
      if (info.label() == a)
        firsts[key] = fragment;
      else if (info.label() == b)
        seconds[key] = fragment;
    }
    std::string why = ("rule " + a + ":" + b).str();
    for (auto &[key, x] : firsts) {
      auto it = seconds.find(key);
      if (it == seconds.end())
        continue;
      FragmentOp y = it->second;
      matched.insert({rule.first, rule.second});
      bool xFirst = x->isBeforeInBlock(y);
      if (failed(fuse(xFirst ? x : y, xFirst ? y : x, why)))
        return failure();
    }
    return success();
  }

  /// On the last mesh of the pipeline (holding the highest stage, or the
  /// last mesh of the topology), each microbatch's fragments become one.
  LogicalResult fuseLastStage(func::FuncOp func) {
    auto topology =
        func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    StringRef lastMesh = topology.getMeshNames().back();
    int64_t highest = -1;
    for (auto fragment : func.getBody().getOps<FragmentOp>())
      if (IntegerAttr stage = fragment.getStageIdAttr();
          stage && stage.getInt() > highest) {
        highest = stage.getInt();
        lastMesh = fragment.getMeshName();
      }
    // Per loop and microbatch (loops with schedules of their own number
    // their microbatches each from 0).
    std::map<std::pair<std::string, uint64_t>, SmallVector<FragmentOp>>
        byCounter;
    for (auto fragment : func.getBody().getOps<FragmentOp>())
      if (fragment.isUserFragment() && fragment.getMeshName() == lastMesh) {
        FragmentInfo info = getFragmentInfo(fragment);
        byCounter[{info.loop, info.callCounter.value_or(0)}].push_back(
            fragment);
      }
    for (auto &[counter, fragments] : byCounter) {
      FragmentOp merged = fragments.front();
      for (FragmentOp next : llvm::drop_begin(fragments)) {
        FailureOr<FragmentOp> result =
            fuse(merged, next, "merge-last-stage");
        if (failed(result))
          return failure();
        merged = *result;
      }
    }
    return success();
  }

  /// Computes more rules from the fragments; set by C++ callers.
  MergeRuleProvider provider;
};

} // namespace

std::unique_ptr<Pass>
mlir::mpmd::createMergeFragmentsPass(MergeFragmentsPassOptions options,
                                     MergeRuleProvider provider) {
  auto pass = std::make_unique<MergeFragmentsPass>(std::move(options));
  pass->provider = std::move(provider);
  return pass;
}
