//===- EntryFunctionPass.h - Base of passes over entry functions -*- C++ -*-===//
//
// Most mpmd passes are module passes (they look up symbols and the
// topology) that work on the entry functions. This base does the part they
// share: find the entry functions (an error when there are none) and fail
// the pass when the work fails. A pass defines either
//
//   LogicalResult runOnEntryFunction(func::FuncOp func);  // each in turn
//
// or, when it has work before, after or across them,
//
//   LogicalResult runOnEntryFunctions(ModuleOp module,
//                                     ArrayRef<func::FuncOp> entries);
//
// and derives as `struct P : EntryFunctionPass<P, impl::PPassBase>`.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_TRANSFORMS_COMMON_ENTRYFUNCTIONPASS_H
#define MPMD_TRANSFORMS_COMMON_ENTRYFUNCTIONPASS_H

#include "mpmd/Transforms/Common/ModuleUtils.h"

namespace mlir::mpmd {

template <typename Derived, template <typename> class GeneratedBase>
class EntryFunctionPass : public GeneratedBase<Derived> {
public:
  using GeneratedBase<Derived>::GeneratedBase;

  /// Runs `runOnEntryFunction` on each entry function, stopping at the
  /// first failure. Passes that define their own hide this one.
  LogicalResult runOnEntryFunctions(ModuleOp, ArrayRef<func::FuncOp> entries) {
    for (func::FuncOp func : entries)
      if (failed(static_cast<Derived &>(*this).runOnEntryFunction(func)))
        return failure();
    return success();
  }

  void runOnOperation() final {
    ModuleOp module = this->getOperation();
    FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
    if (failed(entries) ||
        failed(static_cast<Derived &>(*this).runOnEntryFunctions(module,
                                                                 *entries)))
      this->signalPassFailure();
  }
};

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_COMMON_ENTRYFUNCTIONPASS_H
