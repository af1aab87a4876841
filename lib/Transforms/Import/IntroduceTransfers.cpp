//===- IntroduceTransfers.cpp - Direct cross-mesh edges become transfers --===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_INTRODUCETRANSFERSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct IntroduceTransfersPass
    : public EntryFunctionPass<IntroduceTransfersPass, mlir::mpmd::impl::IntroduceTransfersPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    SmallVector<AssignOp> assigns;
    func.walk([&](AssignOp op) { assigns.push_back(op); });
    // One transfer per value and destination: a value read by several
    // fragments of another mesh (an activation read by the forward and
    // the backward of the next stage) moves once.
    llvm::DenseMap<std::pair<Value, Type>, TransferOp> transfers;
    for (AssignOp assign : assigns) {
      auto unassign = assign.getTensor().getDefiningOp<UnassignOp>();
      // Only values coming straight out of a named computation or a named
      // tensor (an assign the user asked for): inputs and nameless values
      // are left to mesh inference.
      if (!unassign)
        continue;
      Operation *producer = unassign.getTensor().getDefiningOp();
      if (!producer || !isa<FragmentOp, AssignOp>(producer))
        continue;
      Value source = unassign.getTensor();
      Value replacement = source;
      if (source.getType() != assign.getType()) {
        TransferOp &transfer = transfers[{source, assign.getType()}];
        // Assigns are visited in order: an earlier transfer in the same
        // block dominates this use.
        if (!transfer || transfer->getBlock() != assign->getBlock()) {
          OpBuilder builder(assign);
          transfer = TransferOp::create(builder, assign.getLoc(),
                                        assign.getType(), source);
        }
        replacement = transfer;
      }
      assign.replaceAllUsesWith(replacement);
      assign.erase();
      if (unassign.use_empty())
        unassign.erase();
    }
    return success();
  }
};

} // namespace
