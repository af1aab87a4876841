//===- MergeInferredFragments.cpp - Absorb inferred fragments -------------===//
//
// Mesh inference leaves one small fragment (empty origin) per nameless op and
// mesh. Each joins a neighbour on its mesh:
//   - the closest earlier fragment of the mesh, if every operand of the
//     inferred fragment is available at that point (the merged fragment sits
//     where the earlier one was);
//   - else the closest later fragment of the mesh, if every user of its
//     results comes at or after that fragment (the merged fragment sits
//     where the later one was).
// Fragments only move values of their own mesh, so merging never adds a
// transfer, and placing the merged fragment at one of the two positions
// keeps every def before its uses, hence no cycle. Sweeps repeat until
// nothing merges.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"


namespace mlir::mpmd {
#define GEN_PASS_DEF_MERGEINFERREDFRAGMENTSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

class FragmentMerger {
public:
  explicit FragmentMerger(Block &block) : block(block) {
    int64_t index = 0;
    for (Operation &op : block)
      position[&op] = index++;
  }

  /// One forward and one backward sweep; true if anything merged.
  bool sweep() {
    bool changed = false;
    llvm::StringMap<FragmentOp> lastOnMesh;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment)
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp previous = lastOnMesh.lookup(mesh);
      if (previous && !fragment.isUserFragment() && canHoist(fragment, previous)) {
        lastOnMesh[mesh] = merge(previous, fragment, /*atFirst=*/true);
        changed = true;
        continue;
      }
      lastOnMesh[mesh] = fragment;
    }
    llvm::StringMap<FragmentOp> nextOnMesh;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment)
        continue;
      StringRef mesh = fragment.getMeshName();
      FragmentOp next = nextOnMesh.lookup(mesh);
      if (next && !fragment.isUserFragment() && canSink(fragment, next)) {
        nextOnMesh[mesh] = merge(fragment, next, /*atFirst=*/false);
        changed = true;
        continue;
      }
      nextOnMesh[mesh] = fragment;
    }
    return changed;
  }

private:
  int64_t positionOf(Value value) {
    if (Operation *def = value.getDefiningOp())
      return position.lookup(block.findAncestorOpInBlock(*def));
    return -1;
  }

  static bool hasShardings(FragmentOp op) {
    return op.getInShardingsAttr() || op.getOutShardingsAttr();
  }

  /// `later` can move up to `earlier`: its operands exist there already.
  bool canHoist(FragmentOp later, FragmentOp earlier) {
    if (hasShardings(later) || hasShardings(earlier))
      return false;
    int64_t target = position.lookup(earlier);
    for (Value operand : later.getOperands())
      if (operand.getDefiningOp() != earlier && positionOf(operand) >= target)
        return false;
    return true;
  }

  /// `earlier` can move down to `later`: nothing uses its results before.
  bool canSink(FragmentOp earlier, FragmentOp later) {
    if (hasShardings(later) || hasShardings(earlier))
      return false;
    int64_t target = position.lookup(later);
    for (Value result : earlier.getResults())
      for (Operation *user : result.getUsers())
        if (position.lookup(block.findAncestorOpInBlock(*user)) < target)
          return false;
    return true;
  }

  FragmentOp merge(FragmentOp first, FragmentOp second, bool atFirst) {
    FragmentOp anchor = atFirst ? first : second;
    int64_t anchorPosition = position.lookup(anchor);
    position.erase(first);
    position.erase(second);
    FragmentOp merged = mergeFragments(first, second, anchor);
    position[merged] = anchorPosition;
    return merged;
  }

  Block &block;
  llvm::DenseMap<Operation *, int64_t> position;
};

struct MergeInferredFragmentsPass
    : public mlir::mpmd::impl::MergeInferredFragmentsPassBase<
          MergeInferredFragmentsPass> {
  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> entries =
        getEntryFunctions(getOperation());
    if (failed(entries))
      return signalPassFailure();
    for (func::FuncOp func : *entries) {
      FragmentMerger merger(func.getBody().front());
      while (merger.sweep()) {
      }
    }
  }
};

} // namespace
