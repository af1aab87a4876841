//===- PropagateShardings.cpp - Shardings over the whole MPMD program -----===//
//
// Decides the layout of every value at a program boundary: entry arguments
// and results, fragment results, transfer results. What is ours and what is
// XLA's: the boundary layouts must be known before any program is compiled
// (the plan, the transfers between meshes and the runtime's placement of
// inputs all depend on them, and every process must derive the same ones),
// so they are propagated here, across fragments and transfers and through
// fragment bodies by the rules of ShardingRules.cpp. XLA then shards the
// inside of each program from these boundary layouts and the constraints
// in its body, with its own propagation and SPMD partitioner.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Sharding/Passes.h"
#include "mpmd/Transforms/Sharding/ShardingRules.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_PROPAGATESHARDINGSPASS
#include "mpmd/Transforms/Sharding/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kShardingAttrName = "sdy.sharding";
constexpr StringLiteral kMeshSymbol = "mesh";

/// The axes of each dimension of one value, major to minor. A fixed layout
/// comes from the user (or a constraint) and is never changed; the others
/// only ever gain axes in dimensions that have none.
struct Layout {
  SmallVector<SmallVector<StringRef, 2>> dims;
  bool fixed = false;

  bool isReplicated() const {
    return llvm::all_of(dims, [](const auto &axes) { return axes.empty(); });
  }
  bool sameAxes(const Layout &other) const { return dims == other.dims; }
  bool uses(StringRef axis) const {
    return llvm::any_of(
        dims, [&](const auto &axes) { return llvm::is_contained(axes, axis); });
  }
};

std::string formatAxes(sdy::MeshAttr mesh) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(mesh.getAxes(), os, [&](sdy::MeshAxisAttr axis) {
    os << "\"" << axis.getName() << "\"=" << axis.getSize();
  });
  return text.empty() ? "none" : text;
}

RankedTensorType globalType(Value value) {
  if (auto mesh = dyn_cast<MeshTensorType>(value.getType()))
    return mesh.getGlobalTensorType();
  return dyn_cast<RankedTensorType>(value.getType());
}

class Propagation {
public:
  Propagation(func::FuncOp entry, TopologyAttr topology)
      : entry(entry), topology(topology), ctx(entry.getContext()) {}

  LogicalResult run() {
    if (failed(collectSeeds()))
      return failure();
    if (!anySharded) {
      dropShardingAttrs();
      return success();
    }
    collectFactors();
    bool changed = true;
    while (changed) {
      changed = false;
      for (const ShardingFactor &factor : factors)
        changed |= apply(factor);
      for (const ShardingFactor &factor : llvm::reverse(factors))
        changed |= apply(factor);
    }
    return materialize();
  }

private:
  //===--------------------------------------------------------------------===//
  // Meshes and layouts
  //===--------------------------------------------------------------------===//

  StringRef meshNameOf(Value value) {
    if (auto type = dyn_cast<MeshTensorType>(value.getType()))
      return type.getMeshName();
    Operation *parent = value.getParentRegion()->getParentOp();
    while (parent && !isa<FragmentOp>(parent))
      parent = parent->getParentOp();
    return parent ? cast<FragmentOp>(parent).getMeshName() : StringRef();
  }

  sdy::MeshAttr meshOf(Value value) {
    StringRef name = meshNameOf(value);
    return name.empty() ? sdy::MeshAttr() : topology.getMesh(name);
  }

  Layout &layoutOf(Value value) {
    auto [it, inserted] = layouts.try_emplace(value);
    if (inserted)
      if (RankedTensorType type = globalType(value))
        it->second.dims.resize(type.getRank());
    return it->second;
  }

  /// The layout a user sharding describes for a value of `type` on mesh
  /// `meshName`, or an error naming `what`. The axes are resolved on that
  /// mesh; a referenced `sdy.mesh` symbol must agree on their sizes.
  FailureOr<Layout> toLayout(sdy::TensorShardingAttr sharding,
                             StringRef meshName, RankedTensorType type,
                             Operation *at, const Twine &what,
                             function_ref<InFlightDiagnostic()> emitError) {
    sdy::MeshAttr mesh = topology.getMesh(meshName);
    if (!mesh)
      return emitError() << what << " is on mesh \"" << meshName
                         << "\", which is not in the topology";
    if (sharding.getRank() != type.getRank())
      return emitError() << what << " has rank " << type.getRank()
                         << " but its sharding " << sharding << " has "
                         << sharding.getRank() << " dimensions";
    if (!sharding.getUnreducedAxes().empty())
      return emitError() << "not supported yet: unreduced axes in the sharding "
                            "of "
                         << what;
    sdy::MeshAttr named = sharding.getMesh(at);
    Layout layout;
    layout.fixed = true;
    for (auto [dim, dimSharding] :
         llvm::enumerate(sharding.getDimShardings())) {
      if (dimSharding.isOpen())
        layout.fixed = false;
      int64_t shards = 1;
      SmallVector<StringRef, 2> &axes = layout.dims.emplace_back();
      for (sdy::AxisRefAttr axis : dimSharding.getAxes()) {
        StringRef name = axis.getName();
        if (axis.getSubAxisInfo())
          return emitError() << "not supported yet: sub-axis of \"" << name
                             << "\" in the sharding of " << what
                             << "; shard along whole axes";
        int64_t size = mesh.getAxisSize(name);
        if (size < 0)
          return emitError()
                 << what << " is sharded along axis \"" << name
                 << "\", which mesh \"" << meshName
                 << "\" does not have (its axes: " << formatAxes(mesh)
                 << "); use an axis of that mesh or place the value on a "
                    "mesh that has \""
                 << name << "\"";
        if (named && named.getAxisSize(name) != size)
          return emitError()
                 << what << " is sharded along axis \"" << name << "\" of @"
                 << sharding.getMeshName() << " ("
                 << (named.hasAxis(name) ? "size " : "missing there")
                 << (named.hasAxis(name) ? std::to_string(named.getAxisSize(name))
                                         : std::string())
                 << "), but on mesh \"" << meshName << "\" that axis has size "
                 << size;
        if (llvm::is_contained(axes, name) || layout.uses(name))
          return emitError() << "the sharding of " << what << " uses axis \""
                             << name << "\" more than once";
        shards *= size;
        axes.push_back(name);
      }
      int64_t extent = type.getDimSize(dim);
      if (!ShapedType::isDynamic(extent) && extent % shards != 0)
        return emitError() << what << ": dimension " << dim << " (size "
                           << extent << ") is not divisible by " << shards
                           << ", the number of shards along "
                           << formatAxisList(axes) << " on mesh \"" << meshName
                           << "\"";
    }
    return layout;
  }

  static std::string formatAxisList(ArrayRef<StringRef> axes) {
    std::string text;
    for (auto [index, axis] : llvm::enumerate(axes))
      text += (index ? "x\"" : "\"") + axis.str() + "\"";
    return text;
  }

  /// Records a user or constraint layout for `value`.
  LogicalResult seed(Value value, const Layout &layout, bool fixed,
                     function_ref<InFlightDiagnostic()> emitError,
                     const Twine &what) {
    Layout &current = layoutOf(value);
    if (current.fixed && fixed && !current.sameAxes(layout))
      return emitError() << what
                         << " is given two different shardings; keep one";
    if (current.fixed)
      return success();
    if (!current.isReplicated() && !fixed)
      return success();
    current.dims = layout.dims;
    current.fixed = fixed && layout.fixed;
    anySharded |= !layout.isReplicated();
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Fixed points
  //===--------------------------------------------------------------------===//

  LogicalResult collectSeeds() {
    Block &block = entry.getBody().front();
    for (BlockArgument arg : block.getArguments()) {
      auto type = dyn_cast<MeshTensorType>(arg.getType());
      if (!type)
        continue;
      std::string what = ("argument " + Twine(arg.getArgNumber()) + " of @" +
                          entry.getSymName())
                             .str();
      auto emitError = [&] { return entry.emitError(); };
      if (failed(seedFromType(arg, what, emitError)))
        return failure();
      auto attr = entry.getArgAttrOfType<sdy::TensorShardingAttr>(
          arg.getArgNumber(), kShardingAttrName);
      if (attr && failed(seedFromAttr(arg, attr, entry, what, emitError)))
        return failure();
    }
    auto returnOp = cast<func::ReturnOp>(block.getTerminator());
    userResults.resize(returnOp.getNumOperands());
    for (OpOperand &operand : returnOp->getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      auto type = dyn_cast<MeshTensorType>(operand.get().getType());
      if (!type)
        continue;
      std::string what =
          ("result " + Twine(index) + " of @" + entry.getSymName()).str();
      auto emitError = [&] { return entry.emitError(); };
      auto attr =
          entry.getResultAttrOfType<sdy::TensorShardingAttr>(index,
                                                             kShardingAttrName);
      auto declared = cast<MeshTensorType>(entry.getResultTypes()[index]);
      sdy::TensorShardingAttr sharding = attr ? attr : declared.getSharding();
      if (!sharding)
        continue;
      FailureOr<Layout> layout =
          toLayout(sharding, type.getMeshName(), type.getGlobalTensorType(),
                   entry, what, emitError);
      if (failed(layout))
        return failure();
      anySharded |= !layout->isReplicated();
      userResults[index] = *layout;
      // The producer is asked to produce it that way, unless it has to be
      // laid out otherwise.
      if (failed(seed(operand.get(), *layout, /*fixed=*/false, emitError,
                      what)))
        return failure();
    }
    for (Operation &op : block) {
      if (isa<FragmentOp, TransferOp>(op))
        for (Value result : op.getResults())
          if (failed(seedFromType(result, "this result",
                                  [&] { return op.emitOpError(); })))
            return failure();
      if (auto fragment = dyn_cast<FragmentOp>(op))
        if (failed(seedBody(fragment)))
          return failure();
    }
    return success();
  }

  LogicalResult seedFromType(Value value, const Twine &what,
                             function_ref<InFlightDiagnostic()> emitError) {
    // Tokens (fragment results may be !stablehlo.token) have no layout.
    auto type = dyn_cast<MeshTensorType>(value.getType());
    if (!type || !type.getSharding())
      return success();
    FailureOr<Layout> layout =
        toLayout(type.getSharding(), type.getMeshName(),
                 type.getGlobalTensorType(), entry, what, emitError);
    if (failed(layout))
      return failure();
    return seed(value, *layout, /*fixed=*/true, emitError, what);
  }

  LogicalResult seedFromAttr(Value value, sdy::TensorShardingAttr attr,
                             Operation *at, const Twine &what,
                             function_ref<InFlightDiagnostic()> emitError) {
    auto type = cast<MeshTensorType>(value.getType());
    FailureOr<Layout> layout = toLayout(attr, type.getMeshName(),
                                        type.getGlobalTensorType(), at, what,
                                        emitError);
    if (failed(layout))
      return failure();
    return seed(value, *layout, /*fixed=*/true, emitError, what);
  }

  /// Constraints inside a fragment fix the layout of their results; the
  /// operands of a manual computation are asked for its in_shardings.
  LogicalResult seedBody(FragmentOp fragment) {
    StringRef meshName = fragment.getMeshName();
    WalkResult walk = fragment.getRegion().walk([&](Operation *op) {
      auto emitError = [op] { return op->emitOpError(); };
      auto seedValues = [&](ValueRange values,
                            ArrayRef<sdy::TensorShardingAttr> shardings,
                            bool fixed, StringRef which) -> LogicalResult {
        if (values.size() != shardings.size())
          return op->emitOpError()
                 << "has " << shardings.size() << " " << which
                 << " shardings for " << values.size() << " " << which << "s";
        for (auto [index, pair] :
             llvm::enumerate(llvm::zip(values, shardings))) {
          auto [value, sharding] = pair;
          auto type = dyn_cast<RankedTensorType>(value.getType());
          if (!type)
            continue;
          std::string what = (which + " " + Twine(index)).str();
          FailureOr<Layout> layout =
              toLayout(sharding, meshName, type, op, what, emitError);
          if (failed(layout) ||
              failed(seed(value, *layout, fixed, emitError, what)))
            return failure();
        }
        return success();
      };
      StringRef name = op->getName().getStringRef();
      if (name == "sdy.sharding_constraint") {
        auto sharding = op->getAttrOfType<sdy::TensorShardingAttr>("sharding");
        if (sharding && op->getNumResults() == 1 &&
            failed(seedValues(op->getResults(), {sharding}, true, "result")))
          return WalkResult::interrupt();
        return WalkResult::advance();
      }
      if (name == "sdy.manual_computation") {
        auto ins = op->getAttrOfType<sdy::TensorShardingPerValueAttr>(
            "in_shardings");
        auto outs = op->getAttrOfType<sdy::TensorShardingPerValueAttr>(
            "out_shardings");
        if ((ins && failed(seedValues(op->getOperands(), ins.getShardings(),
                                      false, "operand"))) ||
            (outs && failed(seedValues(op->getResults(), outs.getShardings(),
                                       true, "result"))))
          return WalkResult::interrupt();
        // The body is manual: its values are per-device pieces.
        return WalkResult::skip();
      }
      if (auto shardings = op->getAttrOfType<sdy::TensorShardingPerValueAttr>(
              kShardingAttrName))
        if (failed(seedValues(op->getResults(), shardings.getShardings(), true,
                              "result")))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  //===--------------------------------------------------------------------===//
  // Propagation
  //===--------------------------------------------------------------------===//

  /// Every factor of the program, in program order.
  void collectFactors() {
    Block &block = entry.getBody().front();
    auto identity = [&](Value a, Value b) {
      RankedTensorType type = globalType(a);
      if (!type || !globalType(b))
        return;
      for (int64_t dim = 0; dim < type.getRank(); ++dim)
        factors.push_back({{a, dim}, {b, dim}});
    };
    for (Operation &op : block) {
      if (auto transfer = dyn_cast<TransferOp>(op)) {
        identity(transfer.getTensor(), transfer.getResult());
        continue;
      }
      auto fragment = dyn_cast<FragmentOp>(op);
      if (!fragment)
        continue;
      Block &body = fragment.getRegion().front();
      for (auto [operand, arg] :
           llvm::zip(fragment.getOperands(), body.getArguments()))
        identity(operand, arg);
      for (Operation &inner : body.without_terminator())
        llvm::append_range(factors, getShardingFactors(&inner));
      for (auto [returned, result] :
           llvm::zip(body.getTerminator()->getOperands(),
                     fragment.getResults()))
        identity(returned, result);
    }
  }

  /// The axes of `from` that `to` can take at dimension `dim`: those its
  /// mesh has with the same size, that it uses nowhere else, as long as the
  /// dimension stays divisible.
  SmallVector<StringRef, 2> admissible(ArrayRef<StringRef> axes,
                                       sdy::MeshAttr fromMesh, DimRef to) {
    SmallVector<StringRef, 2> kept;
    sdy::MeshAttr toMesh = meshOf(to.value);
    RankedTensorType type = globalType(to.value);
    if (!toMesh || !fromMesh || !type)
      return kept;
    const Layout &layout = layoutOf(to.value);
    int64_t extent = type.getDimSize(to.dim);
    int64_t shards = 1;
    for (StringRef axis : axes) {
      int64_t size = toMesh.getAxisSize(axis);
      if (size < 0 || size != fromMesh.getAxisSize(axis) ||
          layout.uses(axis) || ShapedType::isDynamic(extent) ||
          extent % (shards * size) != 0)
        break;
      shards *= size;
      kept.push_back(axis);
    }
    return kept;
  }

  bool apply(const ShardingFactor &factor) {
    const DimRef *source = nullptr;
    for (const DimRef &member : factor) {
      const Layout &layout = layoutOf(member.value);
      if (layout.dims[member.dim].empty())
        continue;
      if (layout.fixed) {
        source = &member;
        break;
      }
      if (!source)
        source = &member;
    }
    if (!source)
      return false;
    SmallVector<StringRef, 2> axes = layoutOf(source->value).dims[source->dim];
    sdy::MeshAttr sourceMesh = meshOf(source->value);
    bool changed = false;
    for (const DimRef &member : factor) {
      Layout &layout = layoutOf(member.value);
      if (layout.fixed || !layout.dims[member.dim].empty())
        continue;
      SmallVector<StringRef, 2> kept = admissible(axes, sourceMesh, member);
      if (kept.empty())
        continue;
      layoutOf(member.value).dims[member.dim] = std::move(kept);
      changed = true;
    }
    return changed;
  }

  //===--------------------------------------------------------------------===//
  // Writing the result
  //===--------------------------------------------------------------------===//

  sdy::TensorShardingAttr shardingOf(const Layout &layout) {
    if (layout.isReplicated())
      return {};
    SmallVector<sdy::DimensionShardingAttr> dims;
    for (const auto &axes : layout.dims) {
      SmallVector<sdy::AxisRefAttr> refs;
      for (StringRef axis : axes)
        refs.push_back(sdy::AxisRefAttr::get(ctx, axis, {}));
      dims.push_back(sdy::DimensionShardingAttr::get(ctx, refs,
                                                     /*is_closed=*/true,
                                                     std::nullopt));
    }
    return sdy::TensorShardingAttr::get(
        ctx, FlatSymbolRefAttr::get(ctx, kMeshSymbol), dims, {}, {});
  }

  MeshTensorType typeFor(MeshTensorType type, const Layout &layout) {
    return MeshTensorType::get(ctx, type.getMeshName(),
                               type.getGlobalTensorType(), shardingOf(layout),
                               type.getMemoryKind());
  }

  void retype(Value value) {
    auto type = dyn_cast<MeshTensorType>(value.getType());
    if (!type)
      return;
    auto it = layouts.find(value);
    value.setType(typeFor(type, it == layouts.end() ? Layout() : it->second));
  }

  LogicalResult materialize() {
    Block &block = entry.getBody().front();
    for (BlockArgument arg : block.getArguments())
      retype(arg);
    for (Operation &op : block)
      if (isa<FragmentOp, TransferOp>(op))
        for (Value result : op.getResults())
          retype(result);
    auto returnOp = cast<func::ReturnOp>(block.getTerminator());
    OpBuilder builder(returnOp);
    for (OpOperand &operand : returnOp->getOpOperands()) {
      const std::optional<Layout> &user =
          userResults[operand.getOperandNumber()];
      auto type = dyn_cast<MeshTensorType>(operand.get().getType());
      if (!user || !type)
        continue;
      MeshTensorType wanted = typeFor(type, *user);
      if (wanted != type)
        operand.set(TransferOp::create(builder, returnOp.getLoc(), wanted,
                                       operand.get()));
    }
    dropShardingAttrs();
    entry.setFunctionType(FunctionType::get(ctx, block.getArgumentTypes(),
                                            returnOp.getOperandTypes()));
    return success();
  }

  /// The user shardings live in the types from now on.
  void dropShardingAttrs() {
    auto name = StringAttr::get(ctx, kShardingAttrName);
    for (unsigned index = 0; index < entry.getNumArguments(); ++index)
      entry.removeArgAttr(index, name);
    for (unsigned index = 0; index < entry.getNumResults(); ++index)
      entry.removeResultAttr(index, name);
  }

  func::FuncOp entry;
  TopologyAttr topology;
  MLIRContext *ctx;
  llvm::DenseMap<Value, Layout> layouts;
  SmallVector<std::optional<Layout>> userResults;
  SmallVector<ShardingFactor> factors;
  bool anySharded = false;
};

struct PropagateShardingsPass
    : public EntryFunctionPass<PropagateShardingsPass, mlir::mpmd::impl::PropagateShardingsPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp entry) {
    auto topology =
        entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    if (failed(Propagation(entry, topology).run()))
      return failure();
    return success();
  }
};

} // namespace
