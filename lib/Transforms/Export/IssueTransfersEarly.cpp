//===- IssueTransfersEarly.cpp - Transfers right after their producer -----===//
//
// The runtime dispatches the steps of the plan in program order, and a
// device runs what it is given in that order. A transfer written after more
// work of its source mesh (the schedule puts the next fragment of the mesh
// first) is issued only once that work is dispatched, so the target mesh may
// wait for it. Moving each transfer right after the op that makes its value
// issues it as early as the data allows; nothing else moves.
//
// Except a move from host memory back into device memory on one mesh (a
// reload of an offloaded activation, or of an argument kept on the host):
// issued early, it would bring the value back as soon as it left. Those stay
// where they were placed, one fragment before the value is needed.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_ISSUETRANSFERSEARLYPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct IssueTransfersEarlyPass
    : public EntryFunctionPass<IssueTransfersEarlyPass,
                               mlir::mpmd::impl::IssueTransfersEarlyPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp, ArrayRef<func::FuncOp> entries) {
    for (func::FuncOp func : entries) {
      Block &body = func.getBody().front();
      SmallVector<TransferOp> transfers(body.getOps<TransferOp>());
      // The op after which the next transfer of an op's results goes: the
      // op, then the last transfer of its results moved (their order kept).
      llvm::DenseMap<Operation *, Operation *> anchors;
      // Transfers of function arguments go first, in their order.
      Operation *argumentAnchor = nullptr;
      for (TransferOp transfer : transfers) {
        Value source = transfer.getTensor();
        if (transfer.isHostReload())
          continue;
        Operation *def = source.getDefiningOp();
        if (def && def->getBlock() != &body)
          continue; // defined in a nested region: leave it
        if (!def) {
          if (argumentAnchor)
            transfer->moveAfter(argumentAnchor);
          else
            transfer->moveBefore(&body, body.begin());
          argumentAnchor = transfer;
          continue;
        }
        auto [it, inserted] = anchors.try_emplace(def, def);
        transfer->moveAfter(it->second);
        it->second = transfer;
      }
    }
    return success();
  }
};

} // namespace
