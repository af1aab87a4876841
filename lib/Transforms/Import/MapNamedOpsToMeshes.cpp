//===- MapNamedOpsToMeshes.cpp - Named computations become fragments ------===//
//
//   %r = mpmd.named_computation<"f"(1)> (%x) ...
// with f -> m1 (stage 0) becomes
//   %a = mpmd.assign {origin = "f"} %x : (T) -> !mpmd.mesh_tensor<"m1", T>
//   %f = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0> (%a) ...
//   %r = mpmd.unassign {origin = "f"} %f : (...) -> T
//
// Named computations nested in another are inlined into it when assigned to
// the same mesh (or not at all); other placements are not supported yet.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/AutoAssign.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_MAPNAMEDOPSTOMESHESPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// Replaces `op` by the ops of its body; its results by the returned values.
void inlineNamedComputation(NamedComputationOp op) {
  Block &body = op.getRegion().front();
  Operation *terminator = body.getTerminator();
  for (auto [arg, operand] : llvm::zip(body.getArguments(), op.getOperands()))
    arg.replaceAllUsesWith(operand);
  op->replaceAllUsesWith(terminator->getOperands());
  terminator->erase();
  op->getBlock()->getOperations().splice(op->getIterator(),
                                         body.getOperations());
  op.erase();
}

struct MapNamedOpsToMeshesPass
    : public EntryFunctionPass<MapNamedOpsToMeshesPass, mlir::mpmd::impl::MapNamedOpsToMeshesPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SmallVector<NamedAssignment> named(assignment.begin(), assignment.end());
    if (auto chosen =
            module->getAttrOfType<DictionaryAttr>(kAutoAssignmentAttrName)) {
      llvm::StringSet<> given;
      for (const NamedAssignment &entry : assignment)
        given.insert(entry.name);
      for (NamedAttribute entry : chosen) {
        auto text = dyn_cast<StringAttr>(entry.getValue());
        std::string error;
        std::optional<NamedAssignment> parsedEntry =
            text ? NamedAssignment::parse(
                       (entry.getName().getValue() + "=" + text.getValue())
                           .str(),
                       error)
                 : std::nullopt;
        if (!parsedEntry)
          return module.emitError()
                 << kAutoAssignmentAttrName << " entry '"
                 << entry.getName().getValue()
                 << "' must be a string \"MESH:STAGE\"";
        if (!given.contains(parsedEntry->name))
          named.push_back(*parsedEntry);
      }
      module->removeAttr(kAutoAssignmentAttrName);
    }
    FailureOr<llvm::StringMap<MeshAssignment>> parsed = collectMeshAssignment(
        named, [&] { return module.emitError(); });
    if (failed(parsed))
      return failure();
    assignments = std::move(*parsed);

    if (failed(rejectUnsupportedPlacements(module)))
      return failure();
    for (func::FuncOp func : entries) {
      auto topology =
          func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
      for (auto &entry : assignments)
        if (failed(checkMeshExists(
                topology, entry.second.mesh, [&] { return func.emitError(); },
                "assignment of '" + entry.first() + "'")))
          return failure();
      if (failed(mapFunction(func)))
        return failure();
    }
    for (auto &entry : assignments)
      if (!usedNames.contains(entry.first()))
        module.emitWarning()
            << "assignment entry '" << entry.first()
            << "' matches no named_computation or named_tensor";
    return success();
  }

  /// Named ops the entry functions do not reach directly (loop bodies,
  /// functions called through mpmd.call) are placed by later work.
  LogicalResult rejectUnsupportedPlacements(ModuleOp module) {
    WalkResult result = module.walk([&](Operation *op) {
      if (!isa<NamedComputationOp, NamedTensorOp>(op))
        return WalkResult::advance();
      if (op->getParentOfType<ForOp>()) {
        op->emitOpError() << "is inside mpmd.for, which must be unrolled first: "
                             "run mpmd-unroll-loops (mpmd-import does)";
        return WalkResult::interrupt();
      }
      auto func = op->getParentOfType<func::FuncOp>();
      if (func && !func->hasAttr(MpmdDialect::kTopologyAttrName)) {
        op->emitOpError()
            << "is in @" << func.getSymName()
            << ", which has no topology (e.g. a body called by mpmd.call); "
               "inline its calls first: run mpmd-unroll-loops (mpmd-import does)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  const MeshAssignment *lookup(StringRef name) {
    auto it = assignments.find(name);
    if (it == assignments.end())
      return nullptr;
    usedNames.insert(name);
    return &it->second;
  }

  LogicalResult mapFunction(func::FuncOp func) {
    // Outermost named computations first; nested ones are inlined into
    // their parent's body before it becomes a fragment.
    SmallVector<NamedComputationOp> topLevel;
    for (auto op : func.getBody().getOps<NamedComputationOp>())
      topLevel.push_back(op);
    for (NamedComputationOp op : topLevel)
      if (failed(mapNamedComputation(op)))
        return failure();
    SmallVector<NamedTensorOp> tensors;
    func.walk([&](NamedTensorOp op) { tensors.push_back(op); });
    for (NamedTensorOp op : tensors)
      if (failed(mapNamedTensor(op)))
        return failure();
    // Anything named left elsewhere (e.g. under another region op) is not
    // placed by this pass.
    WalkResult left = func.walk([&](NamedComputationOp op) {
      op.emitOpError() << "not supported yet: a named_computation nested in '"
                       << op->getParentOp()->getName()
                       << "'; move it to the top level of @"
                       << func.getSymName();
      return WalkResult::interrupt();
    });
    return failure(left.wasInterrupted());
  }

  LogicalResult flattenNested(NamedComputationOp op, StringRef mesh) {
    SmallVector<NamedComputationOp> nested;
    op.getRegion().walk([&](NamedComputationOp inner) {
      nested.push_back(inner);
    });
    // Innermost first, so that each inlined body is already flat.
    for (NamedComputationOp inner : llvm::reverse(nested)) {
      const MeshAssignment *innerAssignment = lookup(inner.getName());
      if (innerAssignment && innerAssignment->mesh != mesh)
        return inner.emitOpError()
               << "not supported yet: named_computation '" << inner.getName()
               << "' is assigned to mesh \"" << innerAssignment->mesh
               << "\" but is nested in '" << op.getName()
               << "', which is on mesh \"" << mesh
               << "\"; assign both to one mesh or un-nest them";
      inlineNamedComputation(inner);
    }
    return success();
  }

  LogicalResult mapNamedComputation(NamedComputationOp op) {
    const MeshAssignment *target = lookup(op.getName());
    if (!target)
      return op.emitOpError()
             << "named_computation '" << op.getName()
             << "' has no mesh: add it to the assignment, e.g. "
             << "assignment=" << op.getName() << "=MESH";
    if (!target->memoryKind.empty())
      return op.emitOpError()
             << "named_computation '" << op.getName() << "' is assigned \""
             << target->mesh << "#" << target->memoryKind
             << "\": a memory kind says where a value lives, so only "
                "named_tensor takes one; assign '"
             << op.getName() << "' to \"" << target->mesh << "\"";
    if (failed(flattenNested(op, target->mesh)))
      return failure();
    for (Type type : llvm::concat<Type>(op.getOperandTypes(),
                                        op.getResultTypes()))
      if (!isa<RankedTensorType>(type) && !stablehlo::isTokenType(type))
        return op.emitOpError()
               << "not supported yet: named_computation '" << op.getName()
               << "' takes or returns " << type
               << "; only ranked tensors (and !stablehlo.token) can be "
                  "placed on meshes";

    OpBuilder builder(op);
    MLIRContext *ctx = op.getContext();
    StringAttr origin = builder.getStringAttr(op.getName());
    // Tensors go on the mesh; a token is a fragment operand or result as it
    // is (fragments take tokens, as in Shardy:MPMD), without assign or
    // unassign.
    auto meshType = [&](Type type) -> Type {
      if (auto tensorType = dyn_cast<RankedTensorType>(type))
        return MeshTensorType::get(ctx, target->mesh, tensorType);
      return type;
    };
    SmallVector<Value> inputs;
    for (Value operand : op.getOperands()) {
      if (stablehlo::isTokenType(operand.getType())) {
        inputs.push_back(operand);
        continue;
      }
      inputs.push_back(AssignOp::create(builder, op.getLoc(),
                                        meshType(operand.getType()), operand,
                                        origin));
    }
    SmallVector<Type> resultTypes =
        llvm::to_vector(llvm::map_range(op.getResultTypes(), meshType));
    IntegerAttr stage;
    if (target->stage)
      stage = builder.getI64IntegerAttr(*target->stage);
    auto fragment = FragmentOp::create(
        builder, op.getLoc(), resultTypes, inputs,
        builder.getArrayAttr({op.getOrigin()}),
        builder.getStringAttr(target->mesh), stage,
        /*in_shardings=*/nullptr, /*out_shardings=*/nullptr);
    // Discardable attributes (the call counter of a microbatch) carry over.
    for (NamedAttribute attr : op->getDiscardableAttrs())
      fragment->setAttr(attr.getName(), attr.getValue());
    fragment.getRegion().takeBody(op.getRegion());
    SmallVector<Value> results;
    for (Value result : fragment.getResults())
      results.push_back(stablehlo::isTokenType(result.getType())
                            ? result
                            : UnassignOp::create(builder, op.getLoc(), result,
                                                 origin));
    op->replaceAllUsesWith(results);
    op.erase();
    return success();
  }

  LogicalResult mapNamedTensor(NamedTensorOp op) {
    const MeshAssignment *target = lookup(op.getName());
    Value replacement = op.getTensor();
    if (target) {
      if (op->getParentOfType<FragmentOp>())
        return op.emitOpError()
               << "not supported yet: named_tensor '" << op.getName()
               << "' inside a named computation is assigned a mesh; name it "
                  "outside the computation instead";
      OpBuilder builder(op);
      StringAttr origin = builder.getStringAttr(op.getName());
      auto deviceType =
          MeshTensorType::get(op.getContext(), target->mesh, op.getType());
      Value placed = AssignOp::create(builder, op.getLoc(), deviceType,
                                      op.getTensor(), origin);
      if (!target->memoryKind.empty()) {
        // Kept in that memory of the mesh, and moved back to the device
        // for its users (export issues each move back just before the
        // user: mpmd-place-host-reloads).
        auto keptType = MeshTensorType::get(
            op.getContext(), target->mesh, op.getType(),
            sdy::TensorShardingAttr(),
            builder.getStringAttr(target->memoryKind));
        Value kept =
            TransferOp::create(builder, op.getLoc(), keptType, placed);
        placed = TransferOp::create(builder, op.getLoc(), deviceType, kept);
      }
      replacement = UnassignOp::create(builder, op.getLoc(), placed, origin);
    }
    op.replaceAllUsesWith(replacement);
    op.erase();
    return success();
  }

  llvm::StringMap<MeshAssignment> assignments;
  llvm::StringSet<> usedNames;
};

} // namespace
