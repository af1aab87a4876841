//===- FoldConstantIndices.cpp - Static slices at unrolled indices --------===//
//
// Once loops are unrolled, each iteration's index is a constant, and so is
// the arithmetic JAX wraps around it (`xs[i]` converts i, adds the length
// when it is negative, clamps). This pass evaluates that scalar integer
// arithmetic and turns a dynamic_slice whose starts are all known into the
// static slice it is, with dynamic_slice's clamping applied. Every iteration
// then reads its microbatch with one static slice, and the ops the index
// arithmetic would have cost every later pass (and every program) are gone.
//
// Only rank-0 integer and i1 tensors are evaluated, with the wrap-around of
// their bit width; floats and larger tensors are left to XLA.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

namespace mlir::mpmd {
#define GEN_PASS_DEF_FOLDCONSTANTINDICESPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// `to`, made in place of `from`, belongs to `from`'s loop iteration.
void copyLoopIteration(Operation *from, Operation *to) {
  if (Attribute iteration = from->getAttr(kLoopIterationAttrName))
    to->setAttr(kLoopIterationAttrName, iteration);
}

/// A rank-0 integer (or i1) tensor type, the only kind evaluated here.
IntegerType scalarIntegerType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != 0)
    return {};
  return dyn_cast<IntegerType>(tensor.getElementType());
}

/// The value of a scalar integer constant, with its type's signedness.
struct Scalar {
  APInt value;
  bool isUnsigned;

  /// The value widened to 64 bits as its signedness reads it.
  int64_t asInt64() const {
    return isUnsigned ? static_cast<int64_t>(value.getZExtValue())
                      : value.getSExtValue();
  }
};

std::optional<Scalar> scalarOf(Value value) {
  auto constant = value.getDefiningOp<stablehlo::ConstantOp>();
  if (!constant)
    return std::nullopt;
  IntegerType type = scalarIntegerType(value.getType());
  auto elements = dyn_cast<DenseIntElementsAttr>(constant.getValue());
  if (!type || !elements || elements.getType() != value.getType())
    return std::nullopt;
  // i1 is a predicate: unsigned, so true reads as 1.
  return Scalar{elements.getSplatValue<APInt>(),
                type.isUnsigned() || type.getWidth() == 1};
}

/// The operands of `op` as scalars, if every one is a known constant.
std::optional<SmallVector<Scalar>> scalarOperands(Operation *op) {
  SmallVector<Scalar> scalars;
  for (Value operand : op->getOperands()) {
    std::optional<Scalar> scalar = scalarOf(operand);
    if (!scalar)
      return std::nullopt;
    scalars.push_back(*scalar);
  }
  return scalars;
}

bool compare(stablehlo::ComparisonDirection direction, const Scalar &lhs,
             const Scalar &rhs, bool isUnsigned) {
  const APInt &a = lhs.value, &b = rhs.value;
  switch (direction) {
  case stablehlo::ComparisonDirection::EQ:
    return a == b;
  case stablehlo::ComparisonDirection::NE:
    return a != b;
  case stablehlo::ComparisonDirection::GE:
    return isUnsigned ? a.uge(b) : a.sge(b);
  case stablehlo::ComparisonDirection::GT:
    return isUnsigned ? a.ugt(b) : a.sgt(b);
  case stablehlo::ComparisonDirection::LE:
    return isUnsigned ? a.ule(b) : a.sle(b);
  case stablehlo::ComparisonDirection::LT:
    return isUnsigned ? a.ult(b) : a.slt(b);
  }
  return false;
}

/// The value `op` computes from constant scalar operands, if it is one of
/// the ops index arithmetic uses.
std::optional<APInt> evaluate(Operation *op, ArrayRef<Scalar> args,
                              IntegerType resultType) {
  unsigned width = resultType.getWidth();
  bool isUnsigned = resultType.isUnsigned() || width == 1;
  StringRef name = op->getName().getStringRef();
  if (auto cmp = dyn_cast<stablehlo::CompareOp>(op)) {
    bool asUnsigned = args[0].isUnsigned;
    if (auto type = cmp.getCompareTypeAttr()) {
      if (type.getValue() == stablehlo::ComparisonType::UNSIGNED)
        asUnsigned = true;
      else if (type.getValue() == stablehlo::ComparisonType::SIGNED)
        asUnsigned = false;
      else
        return std::nullopt;
    }
    return APInt(width, compare(cmp.getComparisonDirection().getValue(), args[0],
                                args[1], asUnsigned));
  }
  if (name == "stablehlo.select")
    return args[0].value.isZero() ? args[2].value : args[1].value;
  if (name == "stablehlo.convert") {
    return isUnsigned || args[0].isUnsigned
               ? args[0].value.zextOrTrunc(width)
               : args[0].value.sextOrTrunc(width);
  }
  if (name == "stablehlo.clamp") {
    // clamp(min, operand, max)
    const APInt &lo = args[0].value, &x = args[1].value, &hi = args[2].value;
    APInt atLeast = (isUnsigned ? x.ult(lo) : x.slt(lo)) ? lo : x;
    return (isUnsigned ? atLeast.ugt(hi) : atLeast.sgt(hi)) ? hi : atLeast;
  }
  if (args.size() == 1) {
    const APInt &a = args[0].value;
    if (name == "stablehlo.negate")
      return -a;
    if (name == "stablehlo.not")
      return ~a;
    return std::nullopt;
  }
  if (args.size() != 2)
    return std::nullopt;
  const APInt &a = args[0].value, &b = args[1].value;
  bool less = isUnsigned ? a.ult(b) : a.slt(b);
  if (name == "stablehlo.add")
    return a + b;
  if (name == "stablehlo.subtract")
    return a - b;
  if (name == "stablehlo.multiply")
    return a * b;
  if (name == "stablehlo.and")
    return a & b;
  if (name == "stablehlo.or")
    return a | b;
  if (name == "stablehlo.xor")
    return a ^ b;
  if (name == "stablehlo.maximum")
    return less ? b : a;
  if (name == "stablehlo.minimum")
    return less ? a : b;
  return std::nullopt;
}

/// Replaces `op` (one scalar integer result, constant operands) by a
/// constant. True if it did.
bool foldScalar(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      op->getNumOperands() == 0 || isa<stablehlo::ConstantOp>(op))
    return false;
  IntegerType resultType = scalarIntegerType(op->getResult(0).getType());
  if (!resultType)
    return false;
  std::optional<SmallVector<Scalar>> args = scalarOperands(op);
  if (!args)
    return false;
  std::optional<APInt> value = evaluate(op, *args, resultType);
  if (!value)
    return false;
  OpBuilder builder(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto constant = stablehlo::ConstantOp::create(
      builder, op->getLoc(), type, DenseElementsAttr::get(type, *value));
  copyLoopIteration(op, constant);
  op->getResult(0).replaceAllUsesWith(constant.getResult());
  return true;
}

/// `dynamic_slice(x, starts...)` with every start known becomes a static
/// slice; starts are clamped into [0, dim - size] as dynamic_slice does.
bool foldDynamicSlice(Operation *op) {
  auto dynamicSlice = dyn_cast<stablehlo::DynamicSliceOp>(op);
  if (!dynamicSlice)
    return false;
  auto operandType =
      dyn_cast<RankedTensorType>(dynamicSlice.getOperand().getType());
  ArrayRef<int64_t> sizes = dynamicSlice.getSliceSizes();
  // The verifier checked the counts against a ranked operand.
  if (!operandType || !operandType.hasStaticShape())
    return false;
  SmallVector<int64_t> starts, limits;
  for (auto [dim, start] : llvm::enumerate(dynamicSlice.getStartIndices())) {
    std::optional<Scalar> scalar = scalarOf(start);
    if (!scalar)
      return false;
    int64_t size = sizes[dim];
    int64_t extent = operandType.getDimSize(dim);
    if (size < 0 || size > extent)
      return false;
    int64_t first = std::clamp<int64_t>(scalar->asInt64(), 0, extent - size);
    starts.push_back(first);
    limits.push_back(first + size);
  }
  OpBuilder builder(op);
  auto slice = stablehlo::SliceOp::create(
      builder, op->getLoc(), op->getResult(0).getType(), op->getOperand(0),
      builder.getDenseI64ArrayAttr(starts), builder.getDenseI64ArrayAttr(limits),
      builder.getDenseI64ArrayAttr(SmallVector<int64_t>(starts.size(), 1)));
  copyLoopIteration(op, slice);
  op->getResult(0).replaceAllUsesWith(slice.getResult());
  return true;
}

struct FoldConstantIndicesPass
    : public EntryFunctionPass<FoldConstantIndicesPass, mlir::mpmd::impl::FoldConstantIndicesPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp entry) {
    // Operands come before their users in a block, so one walk in order
    // sees each op after what it reads has folded.
    SmallVector<Operation *> folded;
    entry.walk([&](Operation *op) {
      if (foldScalar(op) || foldDynamicSlice(op))
        folded.push_back(op);
    });
    // What folded, and the constants only they read, go.
    for (Operation *op : llvm::reverse(folded)) {
      llvm::SetVector<Operation *> inputs;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          inputs.insert(def);
      op->erase();
      for (Operation *def : inputs)
        if (isa<stablehlo::ConstantOp>(def) && def->use_empty())
          def->erase();
    }
    return success();
  }
};

} // namespace
