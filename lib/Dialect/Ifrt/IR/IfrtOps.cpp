//===- IfrtOps.cpp - IFRT IR subset: ops ----------------------------------===//
//
// The verifiers check what running the program relies on: a call's arrays
// match its callee's signature and lie on its devices, its aliases and
// donations name real inputs and outputs, a copy keeps each array's
// sharding, a reshard keeps its shape.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::ifrt;

namespace {

/// `[0, 1]` in `on devices [0, 1]`.
ParseResult parseDeviceList(OpAsmParser &parser, DevicesAttr &devices) {
  devices = dyn_cast_or_null<DevicesAttr>(DevicesAttr::parse(parser, Type()));
  return success(static_cast<bool>(devices));
}

void printDeviceList(OpAsmPrinter &printer, Operation *, DevicesAttr devices) {
  devices.print(printer);
}

/// Names results as jaxlib does: `%outputs:2, %control_output`.
void nameResults(ValueRange outputs, Value control,
                 OpAsmSetValueNameFn setNameFn) {
  if (!outputs.empty())
    setNameFn(outputs.front(), "outputs");
  setNameFn(control, "control_output");
}

} // namespace

#define GET_OP_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

void CallOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameResults(getOutputs(), getControlOutput(), setNameFn);
}

LogicalResult CallOp::verify() {
  ArrayRef<int64_t> devices = getDevices().getIds();
  auto onDevices = [&](ArrayType type, StringRef what,
                       size_t index) -> LogicalResult {
    for (int64_t id : type.getDevices())
      if (!llvm::is_contained(devices, id))
        return emitOpError() << what << " " << index << " is on device " << id
                             << ", which is not one of the call's devices";
    return success();
  };
  for (auto [index, input] : llvm::enumerate(getInputs()))
    if (failed(onDevices(cast<ArrayType>(input.getType()), "input", index)))
      return failure();
  for (auto [index, output] : llvm::enumerate(getOutputs()))
    if (failed(onDevices(cast<ArrayType>(output.getType()), "output", index)))
      return failure();

  int64_t numInputs = getInputs().size(), numOutputs = getOutputs().size();
  llvm::SmallSet<int64_t, 4> aliasedInputs, aliasedOutputs;
  for (Attribute pair : getIoAliases()) {
    ArrayRef<int32_t> alias = cast<DenseI32ArrayAttr>(pair).asArrayRef();
    if (alias.size() != 2)
      return emitOpError() << "io_aliases holds pairs [input, output], got "
                           << pair;
    if (alias[0] < 0 || alias[0] >= numInputs || alias[1] < 0 ||
        alias[1] >= numOutputs)
      return emitOpError() << "io_aliases pair [" << alias[0] << ", "
                           << alias[1] << "] is out of range (" << numInputs
                           << " inputs, " << numOutputs << " outputs)";
    if (!aliasedInputs.insert(alias[0]).second ||
        !aliasedOutputs.insert(alias[1]).second)
      return emitOpError() << "io_aliases names input " << alias[0]
                           << " or output " << alias[1] << " twice";
    if (getInputs()[alias[0]].getType() != getOutputs()[alias[1]].getType())
      return emitOpError() << "io_aliases pairs input " << alias[0]
                           << " with output " << alias[1]
                           << " of another array type";
  }
  llvm::SmallSet<int64_t, 4> donated;
  for (int32_t index : getDonatedInputIndices()) {
    if (index < 0 || index >= numInputs || !donated.insert(index).second)
      return emitOpError() << "donated input " << index
                           << " is out of range or listed twice ("
                           << numInputs << " inputs)";
    if (aliasedInputs.contains(index))
      return emitOpError() << "input " << index
                           << " is both aliased and donated";
  }
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
      getOperation(), getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls " << getCalleeAttr()
                         << ", which is not a func.func of this module";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getInputs().size() ||
      type.getNumResults() != getOutputs().size())
    return emitOpError() << "calls " << getCalleeAttr() << ", which takes "
                         << type.getNumInputs() << " arguments and returns "
                         << type.getNumResults() << " results, with "
                         << getInputs().size() << " inputs and "
                         << getOutputs().size() << " outputs";
  // Each array's global tensor is the callee's at its position.
  auto check = [&](TypeRange expected, ValueRange arrays, StringRef what,
                   StringRef verb) -> LogicalResult {
    for (auto [index, pair] : llvm::enumerate(llvm::zip(expected, arrays))) {
      auto [tensor, array] = pair;
      RankedTensorType shape = cast<ArrayType>(array.getType()).getShape();
      if (tensor != shape)
        return emitOpError() << what << " " << index << " is an array of "
                             << shape << ", but " << getCalleeAttr() << " "
                             << verb << " " << tensor;
    }
    return success();
  };
  if (failed(check(type.getInputs(), getInputs(), "input", "takes")))
    return failure();
  if (failed(check(type.getResults(), getOutputs(), "output", "returns")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// CopyArraysOp, ReshardOp
//===----------------------------------------------------------------------===//

namespace {

/// What both moves check: one output per input, of the same global shape.
LogicalResult verifyMove(Operation *op, ValueRange inputs,
                         ValueRange outputs) {
  if (inputs.empty() || inputs.size() != outputs.size())
    return op->emitOpError() << "moves arrays one to one: got "
                             << inputs.size() << " inputs and "
                             << outputs.size() << " outputs";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(inputs, outputs))) {
    auto from = cast<ArrayType>(std::get<0>(pair).getType());
    auto to = cast<ArrayType>(std::get<1>(pair).getType());
    if (from.getShape() != to.getShape())
      return op->emitOpError() << "moves input " << index << " of "
                               << from.getShape() << " to an array of "
                               << to.getShape();
  }
  return success();
}

} // namespace

void CopyArraysOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameResults(getOutputs(), getControlOutput(), setNameFn);
}

LogicalResult CopyArraysOp::verify() {
  if (failed(verifyMove(getOperation(), getInputs(), getOutputs())))
    return failure();
  auto first = cast<ArrayType>(getInputs().front().getType());
  auto firstOut = cast<ArrayType>(getOutputs().front().getType());
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getInputs(), getOutputs()))) {
    auto from = cast<ArrayType>(std::get<0>(pair).getType());
    auto to = cast<ArrayType>(std::get<1>(pair).getType());
    if (from.getSharding() != to.getSharding())
      return emitOpError() << "copies input " << index << " from sharding "
                           << from.getSharding() << " to "
                           << to.getSharding()
                           << "; a copy keeps the layout (ifrt.Reshard "
                              "changes it)";
    if (from.getDevices() != first.getDevices() ||
        from.getMemoryKind() != first.getMemoryKind() ||
        to.getDevices() != firstOut.getDevices() ||
        to.getMemoryKind() != firstOut.getMemoryKind())
      return emitOpError() << "copies arrays between several device lists "
                              "or memories (array "
                           << index
                           << "); one copy moves arrays from one device list "
                              "and memory to one other";
  }
  if (first.getDevices().size() != firstOut.getDevices().size())
    return emitOpError() << "copies arrays from " << first.getDevices().size()
                         << " devices to " << firstOut.getDevices().size();
  return success();
}

void ReshardOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameResults(getOutputs(), getControlOutput(), setNameFn);
}

LogicalResult ReshardOp::verify() {
  return verifyMove(getOperation(), getInputs(), getOutputs());
}
