//===- InlineCalls.cpp - Inline func.call into MPMD entry functions -------===//
//
// JAX lowers nested jits and library helpers (`relu`, `_where`, ...) to
// `func.call`. Import works on the entry function's ops, so calls are
// inlined first; private callees left unused are erased.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_INLINECALLSPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr int kMaxInlineDepth = 64;

LogicalResult inlineCall(func::CallOp call, SymbolTableCollection &symbols) {
  auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError() << "calls @" << call.getCallee()
                              << ", which is not a func.func of this module";
  if (callee.isExternal())
    return call.emitOpError()
           << "not supported yet: calling the declaration @"
           << call.getCallee() << " (it has no body to place on a mesh)";
  if (!callee.getBody().hasOneBlock())
    return call.emitOpError()
           << "not supported yet: inlining @" << call.getCallee()
           << ", whose body has several blocks";
  IRMapping mapping;
  Block &body = callee.getBody().front();
  mapping.map(body.getArguments(), call.getOperands());
  OpBuilder builder(call);
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  Operation *terminator = body.getTerminator();
  for (auto [result, returned] :
       llvm::zip(call.getResults(), terminator->getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
  call.erase();
  return success();
}

struct InlineCallsPass
    : public mlir::mpmd::impl::InlineCallsPassBase<InlineCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
    if (failed(entries))
      return signalPassFailure();
    SymbolTableCollection symbols;
    llvm::SmallPtrSet<Operation *, 8> inlinedCallees;
    for (func::FuncOp entry : *entries) {
      // Inlined bodies may hold calls themselves: repeat, bounded, so that
      // recursion is reported instead of looping forever.
      for (int depth = 0;; ++depth) {
        SmallVector<func::CallOp> calls;
        entry.walk([&](func::CallOp call) { calls.push_back(call); });
        if (calls.empty())
          break;
        if (depth == kMaxInlineDepth) {
          calls.front().emitOpError()
              << "calls are nested more than " << kMaxInlineDepth
              << " deep (recursion?); mpmd cannot inline them";
          return signalPassFailure();
        }
        for (func::CallOp call : calls) {
          if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  call, call.getCalleeAttr()))
            inlinedCallees.insert(callee);
          if (failed(inlineCall(call, symbols)))
            return signalPassFailure();
        }
      }
    }
    // Callees may call each other: erase until nothing more goes away.
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *callee : llvm::to_vector(inlinedCallees)) {
        auto func = cast<func::FuncOp>(callee);
        if (func.isPrivate() && SymbolTable::symbolKnownUseEmpty(func, module)) {
          inlinedCallees.erase(callee);
          func.erase();
          erased = true;
        }
      }
    }
  }
};

} // namespace
