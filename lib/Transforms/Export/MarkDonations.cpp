//===- MarkDonations.cpp - Mark program arguments the callee may reuse ----===//
//
// A value dies at a call when nothing after the call reads it. If that holds
// at every call of a program for one argument, the program may reuse that
// argument's buffer: XLA then writes a result in place (`tf.aliasing_output`)
// or at least frees the buffer early (`jax.buffer_donor`). Function
// arguments belong to the caller and are never donated.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Import/ImportUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_MARKDONATIONSPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kShardingAttrName = "sdy.sharding";

struct MarkDonationsPass
    : public mlir::mpmd::impl::MarkDonationsPassBase<MarkDonationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
    if (failed(entries))
      return signalPassFailure();
    SymbolTableCollection symbols;
    // Per program: which arguments die at every one of its calls.
    llvm::DenseMap<Operation *, llvm::BitVector> donatable;
    for (func::FuncOp entry : *entries) {
      Block &block = entry.getBody().front();
      llvm::DenseMap<Operation *, unsigned> position;
      for (auto [index, op] : llvm::enumerate(block))
        position[&op] = index;
      for (auto call : block.getOps<FragmentCallOp>()) {
        auto callee =
            symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
        llvm::BitVector dies(call.getNumOperands());
        for (auto [index, operand] : llvm::enumerate(call.getOperands()))
          dies[index] = diesAt(operand, call, position);
        auto [it, inserted] = donatable.try_emplace(callee, dies);
        if (!inserted)
          it->second &= dies;
      }
    }
    for (auto &[op, dies] : donatable) {
      auto callee = cast<func::FuncOp>(op);
      Builder builder(callee);
      llvm::BitVector aliased(callee.getNumResults());
      for (unsigned arg : dies.set_bits()) {
        Type type = callee.getArgumentTypes()[arg];
        // A buffer is reused in place only for a result of the same type laid
        // out the same way on the mesh.
        Attribute layout = callee.getArgAttr(arg, kShardingAttrName);
        std::optional<unsigned> result;
        for (auto [index, resultType] :
             llvm::enumerate(callee.getResultTypes()))
          if (!aliased[index] && resultType == type &&
              callee.getResultAttr(index, kShardingAttrName) == layout) {
            result = index;
            break;
          }
        if (result) {
          aliased.set(*result);
          callee.setArgAttr(arg, "tf.aliasing_output",
                            builder.getI32IntegerAttr(*result));
        } else {
          callee.setArgAttr(arg, "jax.buffer_donor", builder.getBoolAttr(true));
        }
      }
    }
  }

  /// True if `value` is read by `call` once and by nothing after it.
  static bool diesAt(Value value, FragmentCallOp call,
                     const llvm::DenseMap<Operation *, unsigned> &position) {
    if (isa<BlockArgument>(value))
      return false;
    unsigned at = position.lookup(call);
    unsigned readsHere = 0;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == call.getOperation()) {
        ++readsHere;
        continue;
      }
      if (position.lookup(user) > at || isa<func::ReturnOp>(user))
        return false;
    }
    return readsHere == 1;
  }
};

} // namespace
