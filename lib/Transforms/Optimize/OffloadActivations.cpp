//===- OffloadActivations.cpp - Residuals wait in host memory -------------===//
//
// The other answer to the memory remat saves: a forward fragment's results
// that its backward reads (the residuals) leave device memory while other
// microbatches run on the mesh, and come back just before they are needed.
// After the forward, each residual is moved to the mesh's pinned host memory
// (an intra-mesh `mpmd.transfer` into a `memory_kind="pinned_host"` type),
// and moved back for the backwards that read it, which read the copy. The
// move back is written right before the first of them; export
// (mpmd-place-host-reloads) issues it one user fragment of the mesh
// earlier, so the copy overlaps that fragment's compute. No compute is
// repeated; the cost is two copies over the host link, which the runtime
// issues asynchronously.
//
// Only residuals that would otherwise stay alive across other work are
// moved: another microbatch's fragment runs on the mesh between the forward
// and its backward (as for remat), at least one user fragment of the mesh
// runs while the residual is away, and nothing else reads the residual
// after the point where it comes back. Runs after the schedule and remat (a
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

struct OffloadActivationsPass
    : public EntryFunctionPass<OffloadActivationsPass,
                               mlir::mpmd::impl::OffloadActivationsPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp,
                                    ArrayRef<func::FuncOp> entries) {
    llvm::StringSet<> wanted(llvm::from_range, names);
    // A name no fragment comes from is a typo, not a request that happens
    // to find nothing to move.
    if (!wanted.empty()) {
      llvm::StringSet<> known;
      for (const FragmentInfo &info : listUserFragments(entries))
        for (const Origin &origin : info.origins)
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
    // Export (mpmd-place-host-reloads) brings a residual back before the
    // user fragment of the mesh that precedes the first reader (after the
    // forward: otherWorkBetween found one). When that fragment follows the
    // forward directly, the residual would be back before the mesh ran
    // anything without it.
    FragmentOp first = readers.front();
    FragmentOp reloadPoint = previousUserFragmentOnMesh(first, info.mesh);
    assert(reloadPoint && forward->isBeforeInBlock(reloadPoint));
    if (previousUserFragmentOnMesh(reloadPoint, info.mesh) == forward)
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
      builder.setInsertionPoint(first);
      auto toDevice =
          TransferOp::create(builder, forward.getLoc(), type, toHost);
      result.replaceUsesWithIf(toDevice, [&](OpOperand &use) {
        return isReader(use.getOwner());
      });
    }
  }
};

} // namespace
