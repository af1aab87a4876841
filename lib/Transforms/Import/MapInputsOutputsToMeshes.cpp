//===- MapInputsOutputsToMeshes.cpp - Assigned I/O become mesh tensors ----===//
//
// An assigned argument becomes a mesh tensor read through mpmd.unassign; an
// assigned result is produced through mpmd.assign. The function type follows.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_MAPINPUTSOUTPUTSTOMESHESPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

FailureOr<MeshTensorType> meshTypeFor(func::FuncOp func, Type type,
                                      const IoAssignment &io,
                                      const Twine &what) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked) {
    if (isa<MeshTensorType>(type))
      return func.emitError() << what << " is already on a mesh (" << type
                              << "); drop its assignment";
    return func.emitError() << "not supported yet: " << what << " has type "
                            << type << "; only ranked tensors go on meshes";
  }
  StringAttr memoryKind;
  if (!io.memoryKind.empty())
    memoryKind = StringAttr::get(func.getContext(), io.memoryKind);
  auto meshType = MeshTensorType::getChecked(
      [&] { return func.emitError() << what << ": "; }, func.getContext(),
      StringRef(io.mesh), ranked, sdy::TensorShardingAttr(), memoryKind);
  if (!meshType)
    return failure();
  return meshType;
}

struct MapInputsOutputsToMeshesPass
    : public EntryFunctionPass<MapInputsOutputsToMeshesPass, mlir::mpmd::impl::MapInputsOutputsToMeshesPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    auto emitError = [&] { return module.emitError(); };
    FailureOr<std::map<int64_t, IoAssignment>> inputs =
        collectIoAssignment(inputAssignment, "input-assignment", emitError);
    FailureOr<std::map<int64_t, IoAssignment>> outputs =
        collectIoAssignment(outputAssignment, "output-assignment", emitError);
    if (failed(inputs) || failed(outputs))
      return failure();
    for (func::FuncOp func : entries)
      if (failed(mapFunction(func, *inputs, *outputs)))
        return failure();
    return success();
  }

  LogicalResult mapFunction(func::FuncOp func,
                            const std::map<int64_t, IoAssignment> &inputs,
                            const std::map<int64_t, IoAssignment> &outputs) {
    auto topology =
        func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    Block &body = func.getBody().front();
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    int64_t numArgs = func.getNumArguments();
    int64_t numResults = func.getNumResults();
    for (auto &[index, io] : inputs) {
      if (index >= numArgs)
        return func.emitError()
               << "input-assignment index " << index << " is out of range: @"
               << func.getSymName() << " has " << numArgs << " arguments";
      if (failed(checkMeshExists(topology, io.mesh,
                                 [&] { return func.emitError(); },
                                 "input-assignment of argument " +
                                     Twine(index))))
        return failure();
    }
    for (auto &[index, io] : outputs) {
      if (index >= numResults)
        return func.emitError()
               << "output-assignment index " << index << " is out of range: @"
               << func.getSymName() << " has " << numResults << " results";
      if (failed(checkMeshExists(topology, io.mesh,
                                 [&] { return func.emitError(); },
                                 "output-assignment of result " +
                                     Twine(index))))
        return failure();
    }

    OpBuilder builder = OpBuilder::atBlockBegin(&body);
    for (auto &[index, io] : inputs) {
      BlockArgument arg = body.getArgument(index);
      FailureOr<MeshTensorType> type = meshTypeFor(
          func, arg.getType(), io, "argument " + Twine(index));
      if (failed(type))
        return failure();
      arg.setType(*type);
      auto unassign = UnassignOp::create(builder, func.getLoc(), arg);
      arg.replaceAllUsesExcept(unassign, unassign);
    }
    builder.setInsertionPoint(returnOp);
    for (auto &[index, io] : outputs) {
      Value returned = returnOp.getOperand(index);
      FailureOr<MeshTensorType> type = meshTypeFor(
          func, returned.getType(), io, "result " + Twine(index));
      if (failed(type))
        return failure();
      returnOp.setOperand(
          index, AssignOp::create(builder, returnOp.getLoc(), *type, returned,
                                  StringAttr()));
    }
    func.setFunctionType(FunctionType::get(func.getContext(),
                                           body.getArgumentTypes(),
                                           returnOp.getOperandTypes()));
    return success();
  }
};

} // namespace
