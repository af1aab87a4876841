//===- IntroduceTransfers.cpp - Direct cross-mesh edges become transfers --===//

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
    : public mlir::mpmd::impl::IntroduceTransfersPassBase<
          IntroduceTransfersPass> {
  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> entries =
        getEntryFunctions(getOperation());
    if (failed(entries))
      return signalPassFailure();
    for (func::FuncOp func : *entries) {
      SmallVector<AssignOp> assigns;
      func.walk([&](AssignOp op) { assigns.push_back(op); });
      for (AssignOp assign : assigns) {
        auto unassign = assign.getTensor().getDefiningOp<UnassignOp>();
        // Only values coming straight out of a named computation: inputs and
        // nameless values are left to mesh inference.
        if (!unassign || !unassign.getTensor().getDefiningOp<FragmentOp>())
          continue;
        Value source = unassign.getTensor();
        Value replacement = source;
        if (source.getType() != assign.getType()) {
          OpBuilder builder(assign);
          replacement = TransferOp::create(builder, assign.getLoc(),
                                           assign.getType(), source);
        }
        assign.replaceAllUsesWith(replacement);
        assign.erase();
        if (unassign.use_empty())
          unassign.erase();
      }
    }
  }
};

} // namespace
