//===- PlaceHostReloads.cpp - Values come back from host just in time -----===//
//
// A value kept in host memory on a mesh comes back to device memory by an
// intra-mesh transfer (host memory kind -> device). Where that transfer
// sits decides how long the value is on the device again: written right
// after the value left, it saves nothing. This pass places each reload for
// each of its users: right before the last user fragment of the mesh that
// precedes the user, so the copy overlaps that fragment's compute, or right
// before the user when no such fragment follows the value's definition.
// Users with the same position share one reload.
//
// Runs on the final order (after the schedule and the export merges) and
// before mpmd-issue-transfers-early, which leaves these transfers alone.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_PLACEHOSTRELOADSPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct PlaceHostReloadsPass
    : public EntryFunctionPass<PlaceHostReloadsPass,
                               mlir::mpmd::impl::PlaceHostReloadsPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    Block &body = func.getBody().front();
    SmallVector<TransferOp> reloads;
    for (auto transfer : body.getOps<TransferOp>())
      if (transfer.isHostReload())
        reloads.push_back(transfer);
    for (TransferOp reload : reloads)
      place(reload, body);
    return success();
  }

  void place(TransferOp reload, Block &body) {
    Value source = reload.getTensor();
    Operation *def = source.getDefiningOp();
    if (def && def->getBlock() != &body)
      return; // made in a nested region: leave it
    StringRef mesh = reload.getType().getMeshName();
    // Position -> the uses that read the copy made there, in block order.
    llvm::MapVector<Operation *, SmallVector<OpOperand *>> groups;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : reload->getUses())
      uses.push_back(&use);
    for (OpOperand *use : uses) {
      Operation *user = body.findAncestorOpInBlock(*use->getOwner());
      if (!user)
        return; // read outside the body (cannot happen in an entry function)
      Operation *position = user;
      if (FragmentOp before = previousUserFragmentOnMesh(user, mesh);
          before && (!def || def->isBeforeInBlock(before)))
        position = before;
      groups[position].push_back(use);
    }
    OpBuilder builder(reload);
    for (auto &[position, group] : groups) {
      builder.setInsertionPoint(position);
      Operation *copy = builder.clone(*reload.getOperation());
      for (OpOperand *use : group)
        use->set(copy->getResult(0));
    }
    reload.erase();
  }
};

} // namespace
