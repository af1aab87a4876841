//===- UnrollLoops.cpp - Loops and calls become call counters -------------===//
//
// An `mpmd.for` with N iterations becomes N copies of its body; copy i reads
// the previous copy's returned values and the index as a constant, and every
// named computation or fragment in it gets `call_counter = i`. An
// `mpmd.call` with a `call_counter` is inlined the same way (its callee is
// erased when nothing else calls it). Nested loops keep the innermost
// counter.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_UNROLLLOOPSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// Clones `body` (without its terminator) before `builder`'s point with
/// `mapping`; labels what it clones with `counter` when given. Returns the
/// values the terminator returned.
SmallVector<Value> cloneBody(Block &body, IRMapping &mapping,
                             OpBuilder &builder,
                             std::optional<IntegerAttr> counter) {
  for (Operation &op : body.without_terminator()) {
    Operation *copy = builder.clone(op, mapping);
    if (!counter)
      continue;
    copy->walk([&](Operation *nested) {
      if (isa<NamedComputationOp, FragmentOp>(nested) &&
          !nested->hasAttr(MpmdDialect::kCallCounterAttrName))
        nested->setAttr(MpmdDialect::kCallCounterAttrName, *counter);
    });
  }
  return llvm::to_vector(llvm::map_range(
      body.getTerminator()->getOperands(),
      [&](Value value) { return mapping.lookupOrDefault(value); }));
}

IntegerAttr counterAttr(MLIRContext *ctx, uint64_t value) {
  return IntegerAttr::get(IntegerType::get(ctx, 32, IntegerType::Unsigned),
                          value);
}

LogicalResult unrollFor(ForOp loop) {
  OpBuilder builder(loop);
  MLIRContext *ctx = loop.getContext();
  Block &body = loop.getRegion().front();
  auto indexType = cast<RankedTensorType>(loop.getIndexArg().getType());
  SmallVector<Value> carried(loop.getOperands());
  for (uint32_t i = 0; i < loop.getIterations(); ++i) {
    IRMapping mapping;
    for (auto [arg, value] :
         llvm::zip(body.getArguments().drop_back(), carried))
      mapping.map(arg, value);
    // The index as a constant of the body's index type.
    OperationState state(loop.getLoc(), "stablehlo.constant");
    state.addAttribute("value", DenseElementsAttr::get(
                                    indexType, APInt(32, i, false)));
    state.addTypes(indexType);
    mapping.map(loop.getIndexArg(), builder.create(state)->getResult(0));
    carried = cloneBody(body, mapping, builder, counterAttr(ctx, i));
  }
  loop.replaceAllUsesWith(carried);
  loop.erase();
  return success();
}

LogicalResult inlineCall(CallOp call, SymbolTableCollection &symbols) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return call.emitOpError()
           << "calls @" << call.getCallee()
           << ", which is not a func.func with a single-block body here";
  std::optional<IntegerAttr> counter;
  if (auto attr = call->getAttrOfType<IntegerAttr>(
          MpmdDialect::kCallCounterAttrName))
    counter = counterAttr(call.getContext(), attr.getValue().getZExtValue());
  OpBuilder builder(call);
  IRMapping mapping;
  mapping.map(callee.getBody().front().getArguments(), call.getOperands());
  SmallVector<Value> results =
      cloneBody(callee.getBody().front(), mapping, builder, counter);
  call.replaceAllUsesWith(results);
  call.erase();
  return success();
}

struct UnrollLoopsPass
    : public mlir::mpmd::impl::UnrollLoopsPassBase<UnrollLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
    if (failed(entries))
      return signalPassFailure();
    SymbolTableCollection symbols;
    llvm::SmallPtrSet<Operation *, 4> callees;
    for (func::FuncOp entry : *entries) {
      // Outermost first: an unrolled body may hold more loops and calls.
      while (true) {
        Operation *next = nullptr;
        entry.walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (isa<ForOp, CallOp>(op)) {
            next = op;
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
        if (!next)
          break;
        LogicalResult done = success();
        if (auto loop = dyn_cast<ForOp>(next)) {
          done = unrollFor(loop);
        } else {
          auto call = cast<CallOp>(next);
          if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  call, call.getCalleeAttr()))
            callees.insert(callee);
          done = inlineCall(call, symbols);
        }
        if (failed(done))
          return signalPassFailure();
      }
    }
    for (Operation *op : callees)
      if (cast<func::FuncOp>(op).isPrivate() &&
          SymbolTable::symbolKnownUseEmpty(op, module))
        op->erase();
  }
};

} // namespace
