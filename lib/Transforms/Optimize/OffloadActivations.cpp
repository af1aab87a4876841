//===- OffloadActivations.cpp - Residuals wait in host memory -------------===//
//
// The other answer to the memory remat saves: a forward fragment's results
// that its backward reads (the residuals) leave device memory while other
// microbatches run on the mesh, and come back just before they are needed.
// After the forward, each residual is moved to the mesh's pinned host memory
// (an intra-mesh `mpmd.transfer` into a `memory_kind="pinned_host"` type);
// one user fragment of the mesh before the first backward that reads it, it
// is moved back, so the copy overlaps that fragment's compute. The backwards
// read the copy. No compute is repeated; the cost is two copies over the
// host link, which the runtime issues asynchronously.
//
// Only residuals that would otherwise stay alive across other work are
// moved: another microbatch's fragment runs on the mesh between the forward
// and its backward (as for remat), at least one user fragment of the mesh
// runs while the residual is away, and nothing else reads the residual after the
// point where it comes back. Runs after the schedule and remat (a
// rematerialized forward leaves no residuals to offload).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Optimize/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_OFFLOADACTIVATIONSPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kHostMemoryKind = "pinned_host";

/// The last user fragment on `mesh` before `op` in its block: where a value
/// `op` reads is brought back, so that its copy overlaps that fragment.
/// Inferred fragments do not count: they are small, and export merges them
/// into a neighbour (possibly `op`).
Operation *previousFragmentOnMesh(Operation *op, StringRef mesh) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (auto fragment = dyn_cast<FragmentOp>(prev);
        fragment && fragment.isUserFragment() &&
        fragment.getMeshName() == mesh)
      return prev;
  return nullptr;
}

struct OffloadActivationsPass
    : public EntryFunctionPass<OffloadActivationsPass,
                               mlir::mpmd::impl::OffloadActivationsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    llvm::StringSet<> wanted(llvm::from_range, names);
    // A name no fragment comes from is a typo, not a request that happens
    // to find nothing to move.
    if (!wanted.empty()) {
      llvm::StringSet<> known;
      for (func::FuncOp func : entries)
        for (auto fragment : func.getBody().getOps<FragmentOp>())
          for (const Origin &origin : getFragmentInfo(fragment).origins)
            known.insert(origin.name);
      for (const std::string &name : names)
        if (!known.contains(name)) {
          SmallVector<StringRef> sorted;
          for (const auto &entry : known)
            sorted.push_back(entry.getKey());
          llvm::sort(sorted);
          func::FuncOp first = entries.front();
          InFlightDiagnostic diag =
              first.emitError()
              << "offload-activations names '" << name
              << "', which no fragment comes from";
          if (sorted.empty())
            diag << "; the program has no named computations";
          else
            diag << "; named computations here: "
                 << llvm::join(sorted, ", ");
          return diag;
        }
    }
    for (func::FuncOp func : entries) {
      SmallVector<FragmentOp> forwards;
      for (auto fragment : func.getBody().getOps<FragmentOp>())
        if (fragment.isUserFragment() && !fragment->hasAttr(kRematAttrName) &&
            selected(getFragmentInfo(fragment), wanted))
          forwards.push_back(fragment);
      for (FragmentOp forward : forwards)
        offload(forward);
    }
    (void)module;
    return success();
  }

  static bool selected(const FragmentInfo &info,
                       const llvm::StringSet<> &wanted) {
    if (info.kind != FragmentKind::kForward)
      return false;
    if (wanted.empty())
      return true;
    return llvm::any_of(info.origins, [&](const Origin &origin) {
      return wanted.contains(origin.name);
    });
  }

  void offload(FragmentOp forward) {
    FragmentInfo info = getFragmentInfo(forward);
    SmallVector<FragmentOp> readers = backwardReaders(forward, info);
    if (readers.empty() || !otherWorkBetween(forward, readers.front(), info))
      return;
    Operation *reloadPoint = previousFragmentOnMesh(readers.front(),
                                                    info.mesh);
    // otherWorkBetween found a fragment of the mesh after `forward`; when
    // that is the next one, the residual would be back before the mesh did
    // anything without it.
    assert(reloadPoint && forward->isBeforeInBlock(reloadPoint));
    if (previousFragmentOnMesh(reloadPoint, info.mesh) == forward)
      return;
    auto isReader = [&](Operation *op) {
      return llvm::is_contained(readers, op);
    };
    Operation *offloadAnchor = forward;
    for (OpResult result : forward->getResults()) {
      auto type = dyn_cast<MeshTensorType>(result.getType());
      if (!type || type.isOnHost())
        continue;
      bool readByBackward = false, readLate = false;
      for (Operation *user : result.getUsers()) {
        if (isReader(user))
          readByBackward = true;
        else if (!user->isBeforeInBlock(reloadPoint))
          readLate = true;
      }
      // Read late by someone else, the residual stays on the device anyway.
      if (!readByBackward || readLate)
        continue;
      auto hostType = MeshTensorType::get(
          type.getContext(), type.getMeshName(), type.getRankedTensorType(),
          type.getSharding(), StringAttr::get(type.getContext(),
                                              kHostMemoryKind));
      OpBuilder builder(forward->getContext());
      builder.setInsertionPointAfter(offloadAnchor);
      auto toHost =
          TransferOp::create(builder, forward.getLoc(), hostType, result);
      offloadAnchor = toHost;
      builder.setInsertionPoint(reloadPoint);
      auto toDevice =
          TransferOp::create(builder, forward.getLoc(), type, toHost);
      result.replaceUsesWithIf(toDevice, [&](OpOperand &use) {
        return isReader(use.getOwner());
      });
    }
  }
};

} // namespace
