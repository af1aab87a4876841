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

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_UNROLLLOOPSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

IntegerAttr counterAttr(MLIRContext *ctx, uint64_t value) {
  return IntegerAttr::get(IntegerType::get(ctx, 32, IntegerType::Unsigned),
                          value);
}

/// Microbatches beyond this many are not a pipeline anyone runs; a loop
/// past it is reported before unrolling (each iteration costs at least a
/// constant and a labelled copy of the body).
constexpr uint32_t kMaxIterations = 4096;

LogicalResult unrollFor(ForOp loop, GrowthBudget &budget, unsigned &loops) {
  if (loop.getIterations() > kMaxIterations)
    return loop.emitOpError()
           << "not supported yet: unrolling " << loop.getIterations()
           << " iterations (at most " << kMaxIterations << ")";
  if (failed(budget.spend(
          uint64_t(loop.getIterations()) *
              (countOps(loop.getRegion().front()) + 1),
          loop, "unrolling " + std::to_string(loop.getIterations()) +
                    " iterations")))
    return failure();
  OpBuilder builder(loop);
  MLIRContext *ctx = loop.getContext();
  Block &body = loop.getRegion().front();
  auto indexType = cast<RankedTensorType>(loop.getIndexArg().getType());
  // A loop with a schedule of its own: its iterations' named computations
  // say which loop they are of and how it is ordered.
  auto schedule = loop->getAttrOfType<StringAttr>(kLoopScheduleAttrName);
  StringAttr loopName;
  if (schedule)
    loopName = StringAttr::get(ctx, "for" + std::to_string(loops++));
  SmallVector<Value> carried(loop.getOperands());
  for (uint32_t i = 0; i < loop.getIterations(); ++i) {
    // The index as a constant of the body's index type.
    OperationState state(loop.getLoc(), "stablehlo.constant");
    state.addAttribute("value", DenseElementsAttr::get(
                                    indexType, APInt(32, i, false)));
    state.addTypes(indexType);
    IntegerAttr counter = counterAttr(ctx, i);
    // The index belongs to its iteration (its constant is copied into the
    // iteration's fragments, not kept apart as if made before the loop).
    state.addAttribute(kLoopIterationAttrName, counter);
    SmallVector<Value> args = carried;
    args.push_back(builder.create(state)->getResult(0));
    carried = cloneBlockBody(body, args, builder, [&](Operation *copy) {
      labelWithCounter(copy, counter);
      if (schedule)
        labelWithLoop(copy, schedule, loopName);
    });
  }
  loop.replaceAllUsesWith(carried);
  loop.erase();
  return success();
}

LogicalResult inlineCall(CallOp call, SymbolTableCollection &symbols,
                         GrowthBudget &budget) {
  FailureOr<func::FuncOp> callee =
      lookupInlinableCallee(call, call.getCalleeAttr(), symbols);
  if (failed(callee) ||
      failed(budget.spend(countOps(callee->getBody().front()), call,
                          "inlining @" + callee->getSymName().str())))
    return failure();
  IntegerAttr counter;
  if (auto attr = call->getAttrOfType<IntegerAttr>(
          MpmdDialect::kCallCounterAttrName))
    counter = counterAttr(call.getContext(), attr.getValue().getZExtValue());
  // Calls with a schedule of their own (a Python loop of mpmd.call): one
  // loop per schedule.
  auto schedule = call->getAttrOfType<StringAttr>(kLoopScheduleAttrName);
  StringAttr loopName;
  if (schedule)
    loopName = StringAttr::get(call.getContext(),
                               "call:" + schedule.getValue().str());
  OpBuilder builder(call);
  SmallVector<Value> results = cloneBlockBody(
      callee->getBody().front(), call.getOperands(), builder,
      [&](Operation *copy) {
        if (counter)
          labelWithCounter(copy, counter);
        if (schedule)
          labelWithLoop(copy, schedule, loopName);
      });
  call.replaceAllUsesWith(results);
  call.erase();
  return success();
}

struct UnrollLoopsPass
    : public EntryFunctionPass<UnrollLoopsPass, mlir::mpmd::impl::UnrollLoopsPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTableCollection symbols;
    llvm::SmallPtrSet<Operation *, 4> callees;
    if (failed(checkNoRecursion(entries, symbols)))
      return failure();
    GrowthBudget budget;
    unsigned loops = 0;
    for (func::FuncOp entry : entries) {
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
          done = unrollFor(loop, budget, loops);
          // Iterations of mpmd.for are whole: everything of an iteration is
          // in its body, so unlabelled code is outside the loop. (Between
          // the calls of a Python loop of mpmd.call, the glue belongs to no
          // call: there merges keep their neighbours, as in Shardy:MPMD.)
          entry->setAttr(kLoopIterationsKnownAttrName,
                         UnitAttr::get(entry.getContext()));
        } else {
          auto call = cast<CallOp>(next);
          if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  call, call.getCalleeAttr()))
            callees.insert(callee);
          done = inlineCall(call, symbols, budget);
        }
        if (failed(done))
          return failure();
      }
    }
    eraseUnusedPrivateFunctions(callees, module);
    return success();
  }
};

} // namespace
