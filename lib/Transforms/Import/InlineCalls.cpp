//===- InlineCalls.cpp - Inline func.call into MPMD entry functions -------===//
//
// JAX lowers nested jits and library helpers (`relu`, `_where`, ...) to
// `func.call`. Import works on the entry function's ops, so calls are
// inlined first, in the entry functions and in the loop bodies they call
// with `mpmd.call`; private callees left unused are erased.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_INLINECALLSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr int kMaxInlineDepth = 64;

LogicalResult inlineCall(func::CallOp call, SymbolTableCollection &symbols,
                         GrowthBudget &budget) {
  FailureOr<func::FuncOp> callee =
      lookupInlinableCallee(call, call.getCalleeAttr(), symbols);
  if (failed(callee) ||
      failed(budget.spend(countOps(callee->getBody().front()), call,
                          "inlining @" + callee->getSymName().str())))
    return failure();
  OpBuilder builder(call);
  // A call made inside a microbatch (labelled by mpmd-unroll-loops) labels
  // what it inlines.
  auto counter =
      call->getAttrOfType<IntegerAttr>(MpmdDialect::kCallCounterAttrName);
  call.replaceAllUsesWith(cloneBlockBody(
      callee->getBody().front(), call.getOperands(), builder,
      [&](Operation *copy) {
        if (counter)
          labelWithCounter(copy, counter);
      }));
  call.erase();
  return success();
}

struct InlineCallsPass
    : public EntryFunctionPass<InlineCallsPass, mlir::mpmd::impl::InlineCallsPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTableCollection symbols;
    llvm::SmallPtrSet<Operation *, 8> inlinedCallees;
    // The entry functions and the loop bodies they call with mpmd.call
    // (inlined in them first, so that unrolling copies flat bodies).
    SmallVector<func::FuncOp> roots(entries.begin(), entries.end());
    llvm::SmallPtrSet<Operation *, 8> seen;
    for (size_t next = 0; next < roots.size(); ++next)
      roots[next].walk([&](CallOp call) {
        auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal() && seen.insert(callee).second)
          roots.push_back(callee);
      });
    if (failed(checkNoRecursion(roots, symbols)))
      return failure();
    GrowthBudget budget;
    for (func::FuncOp entry : roots) {
      // Inlined bodies may hold calls themselves: repeat (bounded, and
      // recursion was ruled out above).
      for (int depth = 0;; ++depth) {
        SmallVector<func::CallOp> calls;
        entry.walk([&](func::CallOp call) { calls.push_back(call); });
        if (calls.empty())
          break;
        if (depth == kMaxInlineDepth) {
          calls.front().emitOpError()
              << "calls are nested more than " << kMaxInlineDepth
              << " deep; mpmd cannot inline them";
          return failure();
        }
        for (func::CallOp call : calls) {
          if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  call, call.getCalleeAttr()))
            inlinedCallees.insert(callee);
          if (failed(inlineCall(call, symbols, budget)))
            return failure();
        }
      }
    }
    eraseUnusedPrivateFunctions(inlinedCallees, module);
    return success();
  }
};

} // namespace
