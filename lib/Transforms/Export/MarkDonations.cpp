//===- MarkDonations.cpp - Mark program arguments the callee may reuse ----===//
//
// A value dies at a call when nothing after the call reads it. If that holds
// at every call of a program for one argument, the program may reuse that
// argument's buffer: XLA then writes a result in place (`tf.aliasing_output`)
// or at least frees the buffer early (`jax.buffer_donor`). Function
// arguments belong to the caller and are donated only where the caller said
// so (`jax.jit`'s `donate_argnums` marks them `tf.aliasing_output` or
// `jax.buffer_donor`).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"

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
    : public EntryFunctionPass<MarkDonationsPass, mlir::mpmd::impl::MarkDonationsPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTableCollection symbols;
    // Per program: which arguments die at every one of its calls, and which
    // of those the caller donated (they get the in-place results first:
    // parameters updated in place, as with `jax.jit`).
    llvm::DenseMap<Operation *, llvm::BitVector> donatable;
    llvm::DenseMap<Operation *, llvm::BitVector> fromCaller;
    for (func::FuncOp entry : entries) {
      Block &block = entry.getBody().front();
      llvm::DenseMap<Operation *, unsigned> position;
      for (auto [index, op] : llvm::enumerate(block))
        position[&op] = index;
      for (auto call : block.getOps<FragmentCallOp>()) {
        auto callee =
            symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
        llvm::BitVector dies(call.getNumOperands());
        llvm::BitVector callers(call.getNumOperands());
        for (auto [index, operand] : llvm::enumerate(call.getOperands())) {
          dies[index] = diesAt(operand, call, position);
          callers[index] = isa<BlockArgument>(operand);
        }
        auto [it, inserted] = donatable.try_emplace(callee, dies);
        if (!inserted)
          it->second &= dies;
        auto [jt, fresh] = fromCaller.try_emplace(callee, callers);
        if (!fresh)
          jt->second |= callers;
      }
    }
    for (auto &[op, dies] : donatable) {
      auto callee = cast<func::FuncOp>(op);
      Builder builder(callee);
      llvm::BitVector aliased(callee.getNumResults());
      llvm::BitVector first = dies;
      first &= fromCaller[op];
      llvm::BitVector rest = dies;
      rest.reset(first);
      SmallVector<unsigned> order(first.set_bits());
      llvm::append_range(order, rest.set_bits());
      for (unsigned arg : order) {
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
    return success();
  }

  /// True if `value` is read by `call` once and by nothing after it.
  static bool diesAt(Value value, FragmentCallOp call,
                     const llvm::DenseMap<Operation *, unsigned> &position) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func || (!func.getArgAttr(arg.getArgNumber(), "tf.aliasing_output") &&
                    !func.getArgAttr(arg.getArgNumber(), "jax.buffer_donor")))
        return false;
    }
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
