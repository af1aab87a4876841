//===- FragmentUtils.cpp - Helpers shared by passes on fragments ----------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::mpmd;

std::string Origin::str() const {
  if (!transposeCount)
    return name;
  return name + "(" + std::to_string(transposeCount) + ")";
}

std::string FragmentInfo::label() const {
  std::string text;
  for (auto [index, origin] : llvm::enumerate(origins))
    text += (index ? "+" : "") + origin.str();
  if (kind == FragmentKind::kWeightGradient)
    text += "[w]";
  if (recompute)
    text += "[r]";
  return text;
}

std::string FragmentInfo::key() const {
  std::string text = label();
  if (callCounter)
    text += "#" + std::to_string(*callCounter);
  return text;
}

FragmentInfo mlir::mpmd::getFragmentInfo(FragmentOp fragment) {
  FragmentInfo info;
  bool forward = false, backward = false;
  for (Attribute attr : fragment.getOrigin()) {
    auto origin = cast<UserOriginAttr>(attr);
    int64_t count = origin.getTransposeCount();
    (count ? backward : forward) = true;
    info.origins.push_back({origin.getUserName().getValue().str(), count});
  }
  info.kind = forward && backward
                  ? FragmentKind::kMixed
                  : (backward ? FragmentKind::kBackward : FragmentKind::kForward);
  if (fragment->hasAttr(kWeightGradientAttrName))
    info.kind = FragmentKind::kWeightGradient;
  info.recompute = info.kind == FragmentKind::kForward &&
                   fragment->hasAttr(kRematAttrName);
  if (IntegerAttr stage = fragment.getStageIdAttr())
    info.stage = stage.getInt();
  if (auto counter = fragment->getAttrOfType<IntegerAttr>(
          MpmdDialect::kCallCounterAttrName))
    info.callCounter = counter.getValue().getZExtValue();
  info.mesh = fragment.getMeshName().str();
  if (auto loop = fragment->getAttrOfType<StringAttr>(kLoopAttrName))
    info.loop = loop.getValue().str();
  if (auto schedule =
          fragment->getAttrOfType<StringAttr>(kLoopScheduleAttrName))
    info.loopSchedule = schedule.getValue().str();
  return info;
}

bool mlir::mpmd::isExplicitLoopSchedule(StringRef schedule) {
  return schedule == "explicit" || schedule.starts_with("explicit:");
}

SmallVector<FragmentInfo>
mlir::mpmd::listUserFragments(ArrayRef<func::FuncOp> entries) {
  SmallVector<FragmentInfo> infos;
  for (func::FuncOp func : entries)
    for (auto fragment : func.getBody().getOps<FragmentOp>())
      if (fragment.isUserFragment()) {
        FragmentInfo info = getFragmentInfo(fragment);
        if (!info.recompute)
          infos.push_back(std::move(info));
      }
  return infos;
}

std::optional<uint64_t> mlir::mpmd::loopIterationOf(Operation *op) {
  for (StringRef name : {MpmdDialect::kCallCounterAttrName.data(),
                         kLoopIterationAttrName.data()})
    if (auto counter = op->getAttrOfType<IntegerAttr>(name))
      return counter.getValue().getZExtValue();
  return std::nullopt;
}

FragmentOp mlir::mpmd::mergeFragments(FragmentOp first, FragmentOp second,
                                      FragmentOp anchor) {
  OpBuilder builder(anchor);
  llvm::SetVector<Value> operands;
  operands.insert(first.getOperands().begin(), first.getOperands().end());
  for (Value operand : second.getOperands())
    if (operand.getDefiningOp() != first)
      operands.insert(operand);

  SmallVector<Attribute> origins(first.getOrigin().begin(),
                                 first.getOrigin().end());
  for (Attribute origin : second.getOrigin())
    if (!llvm::is_contained(origins, origin))
      origins.push_back(origin);
  IntegerAttr stage =
      first.getStageIdAttr() ? first.getStageIdAttr() : second.getStageIdAttr();

  SmallVector<Type> resultTypes(first.getResultTypes());
  resultTypes.append(second.getResultTypes().begin(),
                     second.getResultTypes().end());
  auto merged = FragmentOp::create(
      builder, anchor.getLoc(), resultTypes, operands.getArrayRef(),
      builder.getArrayAttr(origins), first.getMeshNameAttr(), stage,
      /*in_shardings=*/nullptr, /*out_shardings=*/nullptr);
  for (FragmentOp part : {first, second})
    for (NamedAttribute attr : part->getDiscardableAttrs())
      if (!merged->hasAttr(attr.getName()))
        merged->setAttr(attr.getName(), attr.getValue());

  Block *body = builder.createBlock(&merged.getRegion());
  llvm::DenseMap<Value, unsigned> operandIndex;
  for (auto [index, operand] : llvm::enumerate(operands)) {
    operandIndex[operand] = index;
    body->addArgument(getFragmentBodyType(operand.getType()),
                      operand.getLoc());
  }
  auto argFor = [&](Value operand) -> Value {
    return body->getArgument(operandIndex.lookup(operand));
  };

  Block &firstBody = first.getRegion().front();
  Block &secondBody = second.getRegion().front();
  Operation *firstReturn = firstBody.getTerminator();
  Operation *secondReturn = secondBody.getTerminator();
  for (auto [arg, operand] :
       llvm::zip(firstBody.getArguments(), first.getOperands()))
    arg.replaceAllUsesWith(argFor(operand));
  for (auto [arg, operand] :
       llvm::zip(secondBody.getArguments(), second.getOperands())) {
    if (auto result = dyn_cast<OpResult>(operand);
        result && result.getOwner() == first)
      arg.replaceAllUsesWith(firstReturn->getOperand(result.getResultNumber()));
    else
      arg.replaceAllUsesWith(argFor(operand));
  }
  SmallVector<Value> returned(firstReturn->getOperands());
  returned.append(secondReturn->getOperands().begin(),
                  secondReturn->getOperands().end());
  firstReturn->erase();
  secondReturn->erase();
  body->getOperations().splice(body->end(), firstBody.getOperations());
  body->getOperations().splice(body->end(), secondBody.getOperations());
  OpBuilder atEnd = OpBuilder::atBlockEnd(body);
  ReturnOp::create(atEnd, anchor.getLoc(), returned);

  unsigned numFirst = first.getNumResults();
  for (auto [index, result] : llvm::enumerate(first.getResults()))
    result.replaceAllUsesWith(merged.getResult(index));
  for (auto [index, result] : llvm::enumerate(second.getResults()))
    result.replaceAllUsesWith(merged.getResult(numFirst + index));
  second.erase();
  first.erase();
  return merged;
}

SmallVector<FragmentOp>
mlir::mpmd::backwardReaders(FragmentOp forward, const FragmentInfo &info) {
  SmallVector<FragmentOp> readers;
  for (Operation *user : forward->getUsers()) {
    auto fragment = dyn_cast<FragmentOp>(user);
    if (!fragment || llvm::is_contained(readers, fragment))
      continue;
    FragmentInfo other = getFragmentInfo(fragment);
    if (other.mesh != info.mesh || other.callCounter != info.callCounter ||
        (other.kind != FragmentKind::kBackward &&
         other.kind != FragmentKind::kWeightGradient))
      continue;
    readers.push_back(fragment);
  }
  llvm::sort(readers, [](FragmentOp a, FragmentOp b) {
    return a->isBeforeInBlock(b);
  });
  return readers;
}

bool mlir::mpmd::otherWorkBetween(Operation *from, Operation *to,
                                  const FragmentInfo &info) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (auto fragment = dyn_cast<FragmentOp>(op);
        fragment && fragment.isUserFragment() &&
        fragment.getMeshName() == info.mesh) {
      std::optional<uint64_t> counter = getFragmentInfo(fragment).callCounter;
      if (counter && counter != info.callCounter)
        return true;
    }
  return false;
}

FragmentOp mlir::mpmd::previousUserFragmentOnMesh(Operation *op,
                                                  StringRef mesh) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (auto fragment = dyn_cast<FragmentOp>(prev);
        fragment && fragment.isUserFragment() &&
        fragment.getMeshName() == mesh)
      return fragment;
  return nullptr;
}
