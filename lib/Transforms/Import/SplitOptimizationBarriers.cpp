//===- SplitOptimizationBarriers.cpp - One nameless barrier per operand ---===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_SPLITOPTIMIZATIONBARRIERSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kBarrier = "stablehlo.optimization_barrier";

struct SplitOptimizationBarriersPass
    : public EntryFunctionPass<
          SplitOptimizationBarriersPass,
          mlir::mpmd::impl::SplitOptimizationBarriersPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    for (Operation &op :
         llvm::make_early_inc_range(func.getBody().front())) {
      if (op.getName().getStringRef() != kBarrier ||
          op.getNumOperands() < 2 ||
          op.getNumOperands() != op.getNumResults())
        continue;
      OpBuilder builder(&op);
      for (auto [operand, result] :
           llvm::zip(op.getOperands(), op.getResults())) {
        OperationState state(op.getLoc(), op.getName());
        state.addOperands(operand);
        state.addTypes(result.getType());
        state.addAttributes(op.getAttrs());
        result.replaceAllUsesWith(builder.create(state)->getResult(0));
      }
      op.erase();
    }
    return success();
  }
};

} // namespace
