//===- OutlineFragments.cpp - Fragments become calls of program functions -===//
//
// Each fragment becomes `mpmd.fragment_call @program(...)`; its body moves to
// `func.func private @program` taking and returning the global tensor types.
// Fragments with the same body (ignoring locations) on the same mesh with
// the same boundary layouts share one program: every microbatch of a stage
// calls the same function, so the runtime compiles it once. Bodies may
// differ in the values of small constants (a microbatch's index into the
// stacked batch, say) or in where a static slice starts (`xs[i]` with a
// Python int): those become trailing arguments of the program (the slice a
// dynamic_slice), and each call passes its values in `mpmd.constant_args`.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <limits>
#include <set>
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_OUTLINEFRAGMENTSPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kShardingAttrName = "sdy.sharding";

/// A cheap summary of a program (mesh, signature, op names) that equal
/// programs share; candidates with the same summary are compared op by op.
llvm::hash_code programSummary(FragmentOp fragment) {
  llvm::hash_code key = llvm::hash_combine(
      fragment.getMeshName(),
      llvm::hash_combine_range(fragment.getOperandTypes().begin(),
                               fragment.getOperandTypes().end()));
  fragment.getRegion().walk([&](Operation *op) {
    key = llvm::hash_combine(key, op->getName().getAsOpaquePointer());
  });
  return key;
}

/// Constants of at most this many elements may differ between the
/// fragments of one program: they become arguments of the program.
constexpr int64_t kMaxLiftedElements = 16;

/// A static slice whose start may become program arguments: unit strides
/// (it is then a dynamic_slice with constant start indices).
bool isLiftableSlice(Operation &op) {
  auto slice = dyn_cast<stablehlo::SliceOp>(op);
  return slice && llvm::all_of(slice.getStrides(),
                               [](int64_t stride) { return stride == 1; });
}

/// Whether `a` and `b` (same name, operands and result types) differ only in
/// where a liftable slice starts (starts that fit an i32).
bool sameSliceButStart(Operation &a, Operation &b) {
  if (!isLiftableSlice(a) || !isLiftableSlice(b))
    return false;
  auto sliceA = cast<stablehlo::SliceOp>(a), sliceB = cast<stablehlo::SliceOp>(b);
  for (auto [startA, limitA, startB, limitB] :
       llvm::zip(sliceA.getStartIndices(), sliceA.getLimitIndices(),
                 sliceB.getStartIndices(), sliceB.getLimitIndices()))
    if (limitA - startA != limitB - startB ||
        std::max(startA, startB) > std::numeric_limits<int32_t>::max())
      return false;
  return true;
}

/// A constant that may become a program argument: a small integer or
/// floating-point tensor.
bool isLiftable(Operation &op) {
  if (op.getName().getStringRef() != "stablehlo.constant" ||
      op.getNumResults() != 1 || op.getNumOperands() != 0)
    return false;
  auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  return type && type.hasStaticShape() &&
         type.getNumElements() <= kMaxLiftedElements &&
         isa<IntegerType, FloatType>(type.getElementType()) &&
         isa_and_nonnull<DenseElementsAttr>(op.getAttr("value"));
}

/// Whether regions `a` and `b` compute the same thing up to the values of
/// liftable constants, mapping `a`'s values to `b`'s. The positions (in walk
/// order of `a`) of constants whose values differ are added to `differ`.
bool sameUpToConstants(Region &a, Region &b, IRMapping &mapping,
                       unsigned &position, std::set<unsigned> &differ) {
  if (a.getBlocks().size() != b.getBlocks().size())
    return false;
  for (auto [blockA, blockB] : llvm::zip(a, b)) {
    if (blockA.getArgumentTypes() != blockB.getArgumentTypes() ||
        blockA.getOperations().size() != blockB.getOperations().size())
      return false;
    mapping.map(blockA.getArguments(), blockB.getArguments());
    for (auto [opA, opB] : llvm::zip(blockA, blockB)) {
      unsigned here = position++;
      if (opA.getName() != opB.getName() ||
          opA.getNumOperands() != opB.getNumOperands() ||
          opA.getResultTypes() != opB.getResultTypes() ||
          opA.getNumRegions() != opB.getNumRegions())
        return false;
      for (auto [x, y] : llvm::zip(opA.getOperands(), opB.getOperands()))
        if (mapping.lookupOrNull(x) != y)
          return false;
      bool sameAttributes =
          opA.getRawDictionaryAttrs() == opB.getRawDictionaryAttrs() &&
          opA.getName().compareOpProperties(opA.getPropertiesStorage(),
                                            opB.getPropertiesStorage());
      if (!sameAttributes) {
        if (!(isLiftable(opA) && isLiftable(opB)) &&
            !sameSliceButStart(opA, opB))
          return false;
        differ.insert(here);
      }
      mapping.map(opA.getResults(), opB.getResults());
      for (auto [regionA, regionB] :
           llvm::zip(opA.getRegions(), opB.getRegions()))
        if (!sameUpToConstants(regionA, regionB, mapping, position, differ))
          return false;
    }
  }
  return true;
}

/// Same mesh, same boundary layouts (the mesh tensor types carry the
/// shardings) and the same body up to the values of small constants (whose
/// positions are added to `differ`).
bool sameProgram(FragmentOp a, FragmentOp b, std::set<unsigned> &differ) {
  if (a.getMeshName() != b.getMeshName() ||
      a.getOperandTypes() != b.getOperandTypes() ||
      a.getResultTypes() != b.getResultTypes())
    return false;
  IRMapping mapping;
  unsigned position = 0;
  std::set<unsigned> found;
  if (!sameUpToConstants(a.getRegion(), b.getRegion(), mapping, position,
                         found))
    return false;
  differ.insert(found.begin(), found.end());
  return true;
}

/// The ops of `fragment`'s body in walk order (the order of
/// `sameUpToConstants` positions).
SmallVector<Operation *> opsInOrder(FragmentOp fragment) {
  SmallVector<Operation *> ops;
  std::function<void(Region &)> visit = [&](Region &region) {
    for (Block &block : region)
      for (Operation &op : block) {
        ops.push_back(&op);
        for (Region &nested : op.getRegions())
          visit(nested);
      }
  };
  visit(fragment.getRegion());
  return ops;
}

/// `fwd` when every origin is a forward computation, `bwd` when none is,
/// `fwd_bwd` for a mix, `inferred` for fragments made by mesh inference.
StringRef programKind(ArrayAttr origins) {
  bool forward = false, backward = false;
  for (Attribute attr : origins) {
    if (cast<UserOriginAttr>(attr).getTransposeCount() == 0)
      forward = true;
    else
      backward = true;
  }
  if (forward && backward)
    return "fwd_bwd";
  if (forward)
    return "fwd";
  if (backward)
    return "bwd";
  return "inferred";
}

std::string sanitize(StringRef name) {
  std::string result;
  for (char c : name)
    result.push_back(llvm::isAlnum(c) ? c : '_');
  return result;
}

struct Program {
  SmallVector<FragmentOp> fragments;
  std::string name;
  /// Positions of the constants that become arguments (they differ between
  /// the fragments).
  std::set<unsigned> lifted;
};

std::string programName(unsigned index, const Program &program) {
  FragmentOp first = program.fragments.front();
  std::string name = "p" + std::to_string(index) + "_";
  if (IntegerAttr stage = first.getStageIdAttr())
    name += "stage" + std::to_string(stage.getInt()) + "_";
  else if (!first.getOrigin().empty())
    name += sanitize(cast<UserOriginAttr>(first.getOrigin()[0])
                         .getUserName()
                         .getValue()) +
            "_";
  name += programKind(first.getOrigin()).str();
  std::optional<uint64_t> low, high;
  for (FragmentOp fragment : program.fragments) {
    auto counter = fragment->getAttrOfType<IntegerAttr>(
        MpmdDialect::kCallCounterAttrName);
    if (!counter)
      continue;
    uint64_t value = counter.getValue().getZExtValue();
    low = low ? std::min(*low, value) : value;
    high = high ? std::max(*high, value) : value;
  }
  if (low)
    name += "_calls" + std::to_string(*low) + "to" + std::to_string(*high);
  return name;
}

struct OutlineFragmentsPass
    : public EntryFunctionPass<OutlineFragmentsPass, mlir::mpmd::impl::OutlineFragmentsPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTable symbols(module);
    for (func::FuncOp func : entries) {
      llvm::DenseMap<llvm::hash_code, SmallVector<unsigned>> candidates;
      SmallVector<Program> programs;
      for (auto fragment : func.getBody().getOps<FragmentOp>()) {
        // mpmd.fragment_call takes and returns mesh tensors only.
        if (llvm::any_of(fragment->getOperandTypes(),
                         stablehlo::isTokenType) ||
            llvm::any_of(fragment->getResultTypes(), stablehlo::isTokenType))
          return fragment.emitOpError()
                 << "takes or returns a !stablehlo.token, which a program "
                    "called by mpmd.fragment_call cannot; run "
                    "mpmd-sink-create-token-into-fragments first (mpmd-export "
                    "does)";
        SmallVector<unsigned> &sameSummary =
            candidates[programSummary(fragment)];
        auto match = llvm::find_if(sameSummary, [&](unsigned index) {
          return sameProgram(programs[index].fragments.front(), fragment,
                             programs[index].lifted);
        });
        if (match != sameSummary.end()) {
          programs[*match].fragments.push_back(fragment);
          continue;
        }
        sameSummary.push_back(programs.size());
        programs.emplace_back().fragments.push_back(fragment);
      }
      // Programs follow the entry function in execution order.
      Operation *insertAfter = func;
      for (auto [index, program] : llvm::enumerate(programs))
        insertAfter =
            outline(func, insertAfter, symbols, programName(index, program),
                    program);
    }
    return success();
  }

  func::FuncOp outline(func::FuncOp entry, Operation *insertAfter,
                       SymbolTable &symbols, StringRef name, Program &program) {
    FragmentOp first = program.fragments.front();
    MLIRContext *ctx = entry.getContext();
    // Each fragment's values of the lifted constants (a slice's start: one
    // i32 scalar per dimension, what JAX passes without x64), before bodies
    // move.
    auto indexType = RankedTensorType::get({}, IntegerType::get(ctx, 32));
    SmallVector<ArrayAttr> constantArgs;
    for (FragmentOp fragment : program.fragments) {
      if (program.lifted.empty())
        break;
      SmallVector<Operation *> ops = opsInOrder(fragment);
      SmallVector<Attribute> values;
      for (unsigned position : program.lifted) {
        if (auto slice = dyn_cast<stablehlo::SliceOp>(ops[position])) {
          for (int64_t start : slice.getStartIndices())
            values.push_back(DenseElementsAttr::get(
                indexType, APInt(32, static_cast<uint64_t>(start))));
          continue;
        }
        values.push_back(ops[position]->getAttr("value"));
      }
      constantArgs.push_back(ArrayAttr::get(ctx, values));
    }
    // In the program, the lifted constants are trailing arguments; a lifted
    // slice becomes a dynamic_slice starting at its arguments.
    Block &body = first.getRegion().front();
    if (!program.lifted.empty()) {
      SmallVector<Operation *> ops = opsInOrder(first);
      for (unsigned position : program.lifted) {
        Operation *op = ops[position];
        if (auto slice = dyn_cast<stablehlo::SliceOp>(op)) {
          SmallVector<Value> operands{slice.getOperand()};
          SmallVector<int64_t> sizes;
          for (auto [start, limit] :
               llvm::zip(slice.getStartIndices(), slice.getLimitIndices())) {
            operands.push_back(body.addArgument(indexType, op->getLoc()));
            sizes.push_back(limit - start);
          }
          OpBuilder at(op);
          auto dynamic = stablehlo::DynamicSliceOp::create(
              at, op->getLoc(), slice.getResult().getType(), operands.front(),
              ValueRange(operands).drop_front(),
              at.getDenseI64ArrayAttr(sizes));
          slice.getResult().replaceAllUsesWith(dynamic.getResult());
          slice->erase();
          continue;
        }
        BlockArgument arg =
            body.addArgument(op->getResult(0).getType(), op->getLoc());
        op->getResult(0).replaceAllUsesWith(arg);
        op->erase();
      }
    }
    auto type = FunctionType::get(
        ctx, body.getArgumentTypes(),
        body.getTerminator()->getOperandTypes());
    OpBuilder builder(entry);
    builder.setInsertionPointAfter(insertAfter);
    auto callee = func::FuncOp::create(builder, first.getLoc(), name, type);
    callee.setPrivate();
    auto topology =
        entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    if (sdy::MeshAttr mesh = topology.getMesh(first.getMeshName()))
      callee->setAttr("mesh_shape", mesh);
    callee->setAttr("mpmd.mesh", builder.getStringAttr(first.getMeshName()));
    // The boundary layouts, as JAX and XLA's Shardy read them on a function.
    for (auto [index, type] : llvm::enumerate(first.getOperandTypes()))
      if (auto sharding = cast<MeshTensorType>(type).getSharding())
        callee.setArgAttr(index, kShardingAttrName, sharding);
    for (auto [index, type] : llvm::enumerate(first.getResultTypes()))
      if (auto sharding = cast<MeshTensorType>(type).getSharding())
        callee.setResultAttr(index, kShardingAttrName, sharding);
    // Moving the first body keeps it; `mpmd.return` becomes `func.return`.
    callee.getBody().takeBody(first.getRegion());
    Block &calleeBody = callee.getBody().front();
    Operation *terminator = calleeBody.getTerminator();
    OpBuilder atEnd(terminator);
    func::ReturnOp::create(atEnd, terminator->getLoc(),
                           terminator->getOperands());
    terminator->erase();
    // Renamed on collision with an existing symbol; stays where it is.
    symbols.insert(callee, callee->getIterator());

    for (auto [index, fragment] : llvm::enumerate(program.fragments)) {
      OpBuilder at(fragment);
      auto call = FragmentCallOp::create(
          at, fragment.getLoc(), fragment.getResultTypes(),
          fragment.getOperands(), fragment.getOrigin(),
          fragment.getMeshNameAttr(), FlatSymbolRefAttr::get(callee));
      for (NamedAttribute attr : fragment->getDiscardableAttrs())
        call->setAttr(attr.getName(), attr.getValue());
      if (IntegerAttr stage = fragment.getStageIdAttr())
        call->setAttr("mpmd.stage", stage);
      if (!constantArgs.empty())
        call->setAttr(MpmdDialect::kConstantArgsAttrName,
                      constantArgs[index]);
      fragment.replaceAllUsesWith(call.getResults());
      fragment.erase();
    }
    return callee;
  }
};

} // namespace
