//===- MarkReservedMemory.cpp - Bytes live on a mesh around each program -===//
//
// XLA optimizes a program (rematerialization, scheduling for overlap) within
// the device memory it believes it has. In an MPMD step, other values of
// the mesh are alive while a program runs: parameters, activations kept for
// later backwards, accumulators. This pass walks the program order once and
// records, on each fragment (or, after outlining, on each program: the
// largest over its calls), `reserved_hbm_bytes`: the bytes per device of the mesh's live
// values that the fragment does not itself read (those XLA counts already),
// as Shardy:MPMD's export does.
//
// Live values: the function's arguments on the mesh (for the whole step,
// unless the caller donated them: then until their last use), and every
// fragment result and transfer arriving on the mesh, from where it is made
// to its last use (returned values to the end). Values in host memory do
// not count.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_MARKRESERVEDMEMORYPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

class LiveBytes {
public:
  LiveBytes(func::FuncOp entry, TopologyAttr topology)
      : entry(entry), topology(topology) {}

  LogicalResult run(SymbolTableCollection &symbols) {
    Block &block = entry.getBody().front();
    llvm::DenseMap<Value, Operation *> lastUse;
    for (Operation &op : block)
      for (Value operand : op.getOperands())
        lastUse[operand] = &op;
    for (BlockArgument arg : block.getArguments()) {
      FailureOr<int64_t> size = bytes(arg, entry);
      if (failed(size))
        return failure();
      live[meshOf(arg)] += *size;
    }
    for (Operation &op : block) {
      if (!isa<FragmentOp, FragmentCallOp, TransferOp>(op))
        continue;
      if (isa<FragmentOp, FragmentCallOp>(op)) {
        StringRef mesh = isa<FragmentOp>(op)
                             ? cast<FragmentOp>(op).getMeshName()
                             : cast<FragmentCallOp>(op).getMeshName();
        int64_t reserved = live.lookup(mesh);
        llvm::DenseSet<Value> read;
        for (Value operand : op.getOperands())
          if (read.insert(operand).second && meshOf(operand) == mesh)
            reserved -= *bytes(operand, &op);
        reserved = std::max<int64_t>(reserved, 0);
        Builder builder(op.getContext());
        IntegerAttr attr = builder.getI64IntegerAttr(reserved);
        if (auto call = dyn_cast<FragmentCallOp>(op)) {
          // On the program (the largest over its calls), as Shardy's
          // fragment_calls leave it.
          if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  call, call.getCalleeAttr())) {
            auto known = callee->getAttrOfType<IntegerAttr>(kReservedHbmBytesAttrName);
            if (!known || known.getInt() < reserved)
              callee->setAttr(kReservedHbmBytesAttrName, attr);
          }
        } else {
          op.setAttr(kReservedHbmBytesAttrName, attr);
        }
      }
      llvm::DenseSet<Value> freed;
      for (Value operand : op.getOperands())
        if (lastUse.lookup(operand) == &op && freeable(operand) &&
            freed.insert(operand).second)
          live[meshOf(operand)] -= *bytes(operand, &op);
      for (Value result : op.getResults()) {
        FailureOr<int64_t> size = bytes(result, &op);
        if (failed(size))
          return failure();
        if (!result.use_empty())
          live[meshOf(result)] += *size;
      }
    }
    return success();
  }

private:
  static StringRef meshOf(Value value) {
    if (auto type = dyn_cast<MeshTensorType>(value.getType()))
      return type.getMeshName();
    return {};
  }

  /// Function arguments stay alive for the whole call unless donated.
  bool freeable(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      return true;
    unsigned index = arg.getArgNumber();
    return entry.getArgAttr(index, "tf.aliasing_output") ||
           entry.getArgAttr(index, "jax.buffer_donor");
  }

  /// Bytes per device of `value` on its mesh (0 in host memory or for
  /// non-tensors). A dimension split unevenly counts its largest shard, as
  /// XLA pads it. An error on `op` for an axis the mesh lacks.
  FailureOr<int64_t> bytes(Value value, Operation *op) const {
    auto type = dyn_cast<MeshTensorType>(value.getType());
    if (!type || type.isOnHost())
      return 0;
    sdy::MeshAttr mesh = topology.getMesh(type.getMeshName());
    RankedTensorType global = type.getRankedTensorType();
    if (!mesh || !global.hasStaticShape())
      return op->emitOpError()
             << "has a value on mesh \"" << type.getMeshName() << "\" ("
             << type << ") whose bytes per device are unknown: "
             << (mesh ? "its shape is dynamic" : "the topology lacks the mesh");
    SmallVector<int64_t> shape(global.getShape());
    if (sdy::TensorShardingAttr sharding = type.getSharding()) {
      for (auto [dim, dimSharding] :
           llvm::enumerate(sharding.getDimShardings())) {
        int64_t parts = 1;
        for (sdy::AxisRefAttr axis : dimSharding.getAxes()) {
          int64_t size = axis.getSubAxisInfo()
                             ? axis.getSubAxisInfo().getSize()
                             : mesh.getAxisSize(axis.getName());
          if (size <= 0)
            return op->emitOpError()
                   << "has a value sharded over axis \"" << axis.getName()
                   << "\", which mesh \"" << type.getMeshName()
                   << "\" does not have";
          parts *= size;
        }
        shape[dim] = (shape[dim] + parts - 1) / parts;
      }
    }
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    return tensorBytes(elements, global.getElementType());
  }

  func::FuncOp entry;
  TopologyAttr topology;
  llvm::StringMap<int64_t> live;
};

struct MarkReservedMemoryPass
    : public EntryFunctionPass<MarkReservedMemoryPass,
                               mlir::mpmd::impl::MarkReservedMemoryPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTableCollection symbols;
    for (func::FuncOp entry : entries) {
      auto topology =
          entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
      if (!topology)
        continue;
      LiveBytes liveBytes(entry, topology);
      if (failed(liveBytes.run(symbols)))
        return failure();
    }
    return success();
  }
};

} // namespace
