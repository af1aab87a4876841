//===- InferMeshes.cpp - Mesh inference -----------------------------------===//
//
// After named ops are on meshes, the remaining ("nameless") ops of an entry
// function are placed (docs/architecture.md#mesh-inference):
//
//   src(v)  meshes where v exists without a transfer: a value read from a
//           mesh tensor exists on that mesh and wherever it was transferred;
//           an op's results exist where all its operands exist; constants
//           and unassigned arguments exist anywhere.
//   use(v)  meshes where v is needed: assigns name them; an op needs its
//           operands wherever its results are needed.
//
// Each nameless op is cloned, as an inferred fragment (empty origin), into
// every mesh of its use set. If the use set is not inside the src set a
// transfer is needed: with infer-transfers, values coming from mesh tensors
// (and arguments) are transferred where they are missing; without it, the
// first such op is reported with both sets. mpmd.broadcast and mpmd.reduce
// always move their operands where needed: that is what they are for.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <set>

namespace mlir::mpmd {
#define GEN_PASS_DEF_INFERMESHESPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// A set of meshes (bits indexed by topology position), or "any mesh".
struct MeshSet {
  static MeshSet any() {
    MeshSet set;
    set.isAny = true;
    return set;
  }
  static MeshSet none(unsigned numMeshes) {
    MeshSet set;
    set.bits.resize(numMeshes);
    return set;
  }
  bool contains(unsigned mesh) const { return isAny || bits.test(mesh); }
  bool empty() const { return !isAny && bits.none(); }
  void intersect(const MeshSet &other) {
    if (other.isAny)
      return;
    if (isAny) {
      *this = other;
      return;
    }
    bits &= other.bits;
  }
  void unite(const MeshSet &other) {
    assert(!other.isAny && "use sets are concrete");
    bits |= other.bits;
  }
  /// Whether every mesh of `this` (a concrete set) is in `other`.
  bool isSubsetOf(const MeshSet &other) const {
    if (other.isAny)
      return true;
    // BitVector::test(RHS): whether any bit is set here but not in RHS.
    return !bits.test(other.bits);
  }
  std::optional<unsigned> first() const {
    if (isAny || bits.none())
      return std::nullopt;
    return bits.find_first();
  }

  bool isAny = false;
  llvm::BitVector bits;
};

/// How a reduction op of StableHLO maps to an mpmd.reduce kind.
std::optional<ReductionType> reductionKindOf(Operation *op) {
  return llvm::StringSwitch<std::optional<ReductionType>>(
             op->getName().getStringRef())
      .Case("stablehlo.add", ReductionType::kAdd)
      .Case("stablehlo.maximum", ReductionType::kMax)
      .Case("stablehlo.minimum", ReductionType::kMin)
      .Case("stablehlo.multiply", ReductionType::kMul)
      .Case("stablehlo.or", ReductionType::kOr)
      .Case("stablehlo.and", ReductionType::kAnd)
      .Default(std::nullopt);
}

StringRef stablehloOpOf(ReductionType kind) {
  switch (kind) {
  case ReductionType::kAdd:
    return "stablehlo.add";
  case ReductionType::kMax:
    return "stablehlo.maximum";
  case ReductionType::kMin:
    return "stablehlo.minimum";
  case ReductionType::kMul:
    return "stablehlo.multiply";
  case ReductionType::kOr:
    return "stablehlo.or";
  case ReductionType::kAnd:
    return "stablehlo.and";
  case ReductionType::kNone:
    return "";
  }
  return "";
}

/// Ops that import places: everything outside the mpmd dialect, and the two
/// mpmd ops whose purpose is moving values between meshes. Ops of dialects
/// nobody registered (`chlo`, `mhlo`) have no Dialect object: they are
/// recognised by name.
bool isNameless(Operation &op) {
  return op.getName().getDialectNamespace() !=
             MpmdDialect::getDialectNamespace() &&
         !isa<func::ReturnOp>(op);
}

/// An identity that moves its operand to where its result is used, as
/// mpmd.broadcast does: a single-operand optimization barrier (what
/// mpmd-split-optimization-barriers leaves of jax.checkpoint's barriers). A
/// value passing through one between named computations on two meshes is
/// the direct edge it would be without it, which needs no permission to
/// transfer.
bool isMovingIdentity(Operation &op) {
  return op.getName().getStringRef() == "stablehlo.optimization_barrier" &&
         op.getNumOperands() == 1 && op.getNumResults() == 1 &&
         op.getOperand(0).getType() == op.getResult(0).getType();
}

/// A constant that each nameless op reading it gets a copy of, inside its
/// own fragment, rather than reading it as a fragment operand: unrolled
/// loops repeat the body's constants once per iteration, and a fragment per
/// constant and mesh would only be merged back into its users afterwards.
bool isAbsorbedConstant(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumOperands() != 0 || def->getNumRegions() != 0 ||
      def->getNumResults() != 1 || !isNameless(*def))
    return false;
  const stablehlo::OpInfo *info =
      stablehlo::lookupOpInfo(def->getName().getStringRef());
  return info && info->isConstantLike && info->isPure;
}

/// Whether `user` takes a copy of an absorbed constant instead of reading it.
bool absorbsConstants(Operation &user) {
  return isNameless(user) && !isMovingIdentity(user);
}

/// Values `op` reads that are defined outside it, in a stable order.
SmallVector<Value> externalInputs(Operation *op) {
  llvm::SetVector<Value> inputs;
  for (Value operand : op->getOperands())
    inputs.insert(operand);
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, inputs);
  return inputs.takeVector();
}

class FunctionInference {
public:
  FunctionInference(func::FuncOp func, bool inferTransfers,
                    bool inferReductions)
      : func(func), block(func.getBody().front()),
        topology(func->getAttrOfType<TopologyAttr>(
            MpmdDialect::kTopologyAttrName)),
        meshNames(topology.getMeshNames()), inferTransfers(inferTransfers),
        inferReductions(inferReductions) {
    for (auto [index, name] : llvm::enumerate(meshNames))
      meshIndex[name] = index;
  }

  LogicalResult run() {
    if (failed(checkInput()) || failed(computeSrcSets()) ||
        failed(assignFreeOutputs()))
      return failure();
    computeUseSets();
    if (failed(checkPlacements()))
      return failure();
    return materialize();
  }

private:
  unsigned numMeshes() const { return meshNames.size(); }

  std::string format(const MeshSet &set) const {
    if (set.isAny)
      return "any mesh";
    SmallVector<StringRef> names;
    for (unsigned index : set.bits.set_bits())
      names.push_back(meshNames[index]);
    return "{" + formatMeshList(names) + "}";
  }

  MeshSet singleton(unsigned mesh) const {
    MeshSet set = MeshSet::none(numMeshes());
    set.bits.set(mesh);
    return set;
  }

  unsigned meshOf(Value meshValue) {
    return meshIndex.lookup(
        cast<MeshTensorType>(meshValue.getType()).getMeshName());
  }

  /// The mesh a value is computed on when it is needed elsewhere: one where
  /// it exists; for a value whose inputs are on different meshes, the mesh
  /// where computing it moves the fewest bytes.
  unsigned home(Value value) {
    MeshSet set = src.lookup(value);
    if (!set.empty() && !set.isAny)
      return *set.first();
    auto [it, inserted] = homes.try_emplace(value, 0);
    if (inserted)
      it->second = cheapestMesh({value});
    return it->second;
  }

  /// The mesh an op without users runs on: where its inputs all are, or
  /// where the fewest of their bytes have to move.
  unsigned homeOfOp(Operation *op) {
    MeshSet set = MeshSet::any();
    SmallVector<Value> inputs = externalInputs(op);
    for (Value input : inputs)
      set.intersect(src.lookup(input));
    if (!set.empty())
      return set.first().value_or(0);
    return cheapestMesh(inputs);
  }

  /// Bytes of a tensor value (an estimate for element types without a bit
  /// width): what moving it between meshes costs.
  static uint64_t byteSize(Value value) {
    auto type = dyn_cast<ShapedType>(localTypeOf(value));
    if (!type || !type.hasStaticShape())
      return 0;
    return tensorBytes(type.getNumElements(), type.getElementType());
  }

  /// The mesh that needs the fewest bytes moved to it to compute `roots`
  /// (the first on a tie). This is what keeps a parameter's update on the
  /// parameter's mesh when it also reads a scalar that lives elsewhere (an
  /// optimizer's step count): the scalar moves, not the stage's
  /// computation. Only meshes of `allowed` are candidates (the first mesh
  /// when it holds none).
  unsigned cheapestMesh(ArrayRef<Value> roots,
                        const MeshSet &allowed = MeshSet::any()) {
    std::optional<unsigned> best;
    uint64_t bestCost = 0;
    for (unsigned mesh = 0; mesh < numMeshes(); ++mesh) {
      if (!allowed.contains(mesh))
        continue;
      uint64_t cost = bytesToHaveAll(roots, mesh);
      if (!best || cost < bestCost) {
        best = mesh;
        bestCost = cost;
      }
    }
    return best.value_or(0);
  }

  /// Bytes that must move to `mesh` for all of `values` to be there.
  uint64_t bytesToHaveAll(ArrayRef<Value> values, unsigned mesh) {
    uint64_t cost = 0;
    for (Value value : values)
      cost += bytesToHave(value, mesh);
    return cost;
  }

  /// Bytes that must move to `mesh` for `value` to be there: none where it
  /// is (a mesh tensor's mesh and the meshes it was transferred to; host
  /// data goes wherever it is needed); for a value computed from others,
  /// the cheaper of moving it and computing it there from its inputs (its
  /// inputs on several meshes: only the latter). An estimate: inputs shared
  /// by several paths count once per path.
  uint64_t bytesToHave(Value value, unsigned mesh, unsigned depth = 0) {
    if (value.getDefiningOp<UnassignOp>()) {
      auto members = classMembers.find(value);
      bool there = members != classMembers.end() &&
                   members->second.count(mesh);
      return there ? 0 : byteSize(value);
    }
    if (isa<BlockArgument>(value))
      return 0;
    auto found = src.find(value);
    bool known = found != src.end() && !found->second.empty();
    // "Any mesh" may only mean "made of arguments that move": look further.
    if (known && !found->second.isAny && found->second.contains(mesh))
      return 0;
    auto key = std::make_pair(value, mesh);
    if (auto cached = costs.find(key); cached != costs.end())
      return cached->second;
    Operation *def = value.getDefiningOp();
    bool computed = def && isNameless(*def) && !isMovingIdentity(*def);
    if (!computed && known && found->second.isAny)
      return 0; // broadcast and reduce results are made where needed
    uint64_t cost = byteSize(value);
    if (computed && depth < kMaxCostDepth) {
      uint64_t fromInputs = 0;
      for (Value input : externalInputs(def))
        fromInputs += bytesToHave(input, mesh, depth + 1);
      cost = known ? std::min(cost, fromInputs) : fromInputs;
    }
    costs[key] = cost;
    return cost;
  }

  /// How far back bytesToHave looks; deeper values count as moved whole.
  static constexpr unsigned kMaxCostDepth = 64;

  /// The type a value has inside a fragment.
  static Type localTypeOf(Value value) {
    if (auto meshType = dyn_cast<MeshTensorType>(value.getType()))
      return meshType.getGlobalTensorType();
    return value.getType();
  }

  //===--------------------------------------------------------------------===//
  // Analysis
  //===--------------------------------------------------------------------===//

  LogicalResult checkInput() {
    if (!func.getBody().hasOneBlock())
      return func.emitError() << "not supported yet: mesh inference of @"
                              << func.getSymName() << " with several blocks";
    for (Operation &op : block) {
      if (isa<NamedComputationOp, NamedTensorOp>(op))
        return op.emitOpError() << "must be mapped to a mesh before mesh "
                                   "inference (run mpmd-map-named-ops first)";
      if (isa<ForOp, CallOp>(op))
        return op.emitOpError()
               << "not supported yet: mesh inference of " << op.getName()
               << "; run mpmd-unroll-loops first (mpmd-import does)";
      if (!isNameless(op))
        continue;
      for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
        if (!isa<RankedTensorType>(value.getType()))
          return op.emitOpError()
                 << "not supported yet: placing an op that takes or returns "
                 << value.getType()
                 << " on a mesh; only ranked tensors can move between meshes";
    }
    return success();
  }

  /// The value a chain of transfers starts from.
  static Value rootOf(Value meshTensor) {
    while (auto transfer = meshTensor.getDefiningOp<TransferOp>())
      meshTensor = transfer.getTensor();
    return meshTensor;
  }

  /// Meshes holding the value of mesh tensor `value` (the mesh it is on and
  /// those it was transferred to or from), with one mesh tensor per mesh.
  void collectTransferClass(Value value,
                            llvm::DenseMap<unsigned, Value> &members) {
    SmallVector<Value> worklist = {value};
    llvm::SmallPtrSet<Value, 8> seen;
    while (!worklist.empty()) {
      Value current = worklist.pop_back_val();
      if (!seen.insert(current).second)
        continue;
      members.try_emplace(meshOf(current), current);
      if (auto transfer = current.getDefiningOp<TransferOp>())
        worklist.push_back(transfer.getTensor());
      for (Operation *user : current.getUsers())
        if (auto transfer = dyn_cast<TransferOp>(user))
          worklist.push_back(transfer.getResult());
    }
  }

  LogicalResult computeSrcSets() {
    for (BlockArgument arg : block.getArguments())
      if (!isa<MeshTensorType>(arg.getType()))
        src[arg] = MeshSet::any();
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto unassign = dyn_cast<UnassignOp>(op)) {
        auto &members = classMembers[unassign.getResult()];
        collectTransferClass(unassign.getTensor(), members);
        MeshSet set = MeshSet::none(numMeshes());
        for (auto &[mesh, member] : members)
          set.bits.set(mesh);
        // A function argument moves to any mesh that uses it (Shardy:MPMD's
        // rule too: an argument's src set is its use set); only values
        // computed on a mesh stay where they are.
        if (isa<BlockArgument>(rootOf(unassign.getTensor())))
          set = MeshSet::any();
        src[unassign.getResult()] = set;
        continue;
      }
      if (isa<BroadcastOp, ReduceOp>(op) || isMovingIdentity(op)) {
        src[op.getResult(0)] = MeshSet::any();
        continue;
      }
      if (!isNameless(op))
        continue;
      MeshSet set = MeshSet::any();
      for (Value input : externalInputs(&op))
        set.intersect(src.lookup(input));
      if ((inferReductions || markedAsReduction(op)) &&
          (set.empty() || extendsReduce(op)))
        if (ReduceOp reduce = convertToReduce(op)) {
          src[reduce.getResult()] = MeshSet::any();
          continue;
        }
      for (Value result : op.getResults())
        src[result] = set;
    }
    return success();
  }

  /// Whether the user marked `op` as a cross-mesh reduction: its result
  /// feeds only `mpmd.reduce<none>` (the front end's `reduce(x)`), or only
  /// reductions of its kind that are marked themselves (a tree of adds
  /// under one mark).
  bool markedAsReduction(Operation &op, unsigned depth = 0) {
    std::optional<ReductionType> kind = reductionKindOf(&op);
    if (!kind || op.getNumResults() != 1 || op.use_empty() || depth > 64)
      return false;
    return llvm::all_of(op.getUsers(), [&](Operation *user) {
      if (auto reduce = dyn_cast<ReduceOp>(user))
        return reduce.getReductionType() == ReductionType::kNone;
      return reductionKindOf(user) == kind &&
             markedAsReduction(*user, depth + 1);
    });
  }

  /// Whether `op` continues a cross-mesh reduction of its own kind, e.g.
  /// `add(reduce<add>(a, b), c)`.
  bool extendsReduce(Operation &op) {
    std::optional<ReductionType> kind = reductionKindOf(&op);
    return kind && llvm::any_of(op.getOperands(), [&](Value operand) {
             auto reduce = operand.getDefiningOp<ReduceOp>();
             return reduce && reduce.getReductionType() == *kind &&
                    reduce->hasOneUse();
           });
  }

  /// `add(a, b)` of values that live on different meshes becomes
  /// `mpmd.reduce<add>(a, b)`; nested reductions of one kind are flattened.
  ReduceOp convertToReduce(Operation &op) {
    std::optional<ReductionType> kind = reductionKindOf(&op);
    if (!kind || op.getNumOperands() != 2 || op.getNumRegions() != 0)
      return {};
    SmallVector<Value> operands;
    for (Value operand : op.getOperands()) {
      auto inner = operand.getDefiningOp<ReduceOp>();
      if (inner && inner.getReductionType() == *kind && inner->hasOneUse()) {
        operands.append(inner.getTensors().begin(), inner.getTensors().end());
        continue;
      }
      if (src.lookup(operand).empty())
        return {};
      operands.push_back(operand);
    }
    OpBuilder builder(&op);
    auto reduce = ReduceOp::create(
        builder, op.getLoc(), op.getResult(0).getType(), operands,
        ReductionAttr::get(op.getContext(), *kind));
    op.getResult(0).replaceAllUsesWith(reduce.getResult());
    for (Value operand : op.getOperands())
      if (auto inner = operand.getDefiningOp<ReduceOp>())
        if (inner->use_empty())
          inner.erase();
    op.erase();
    return reduce;
  }

  /// Results returned without an output assignment go on the first mesh
  /// where they exist without a transfer.
  LogicalResult assignFreeOutputs() {
    auto returnOp = cast<func::ReturnOp>(block.getTerminator());
    OpBuilder builder(returnOp);
    for (OpOperand &operand : returnOp->getOpOperands()) {
      Value value = operand.get();
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type)
        continue;
      StringRef mesh = meshNames[home(value)];
      operand.set(AssignOp::create(builder, returnOp.getLoc(),
                                   MeshTensorType::get(func.getContext(), mesh,
                                                       type),
                                   value, StringAttr()));
    }
    func.setFunctionType(FunctionType::get(func.getContext(),
                                           block.getArgumentTypes(),
                                           returnOp.getOperandTypes()));
    return success();
  }

  /// What one use of `value` by `user` (an op of the block) asks for.
  MeshSet demandOf(Value value, Operation *user) {
    if (auto assign = dyn_cast<AssignOp>(user))
      return singleton(meshOf(assign.getResult()));
    if (isa<BroadcastOp, ReduceOp>(user) || isMovingIdentity(*user)) {
      // The operand stays where it exists; the op moves it.
      MeshSet wanted = use.lookup(user->getResult(0));
      MeshSet available = src.lookup(value);
      MeshSet both = wanted;
      both.intersect(available);
      // An unplaced argument lives on one mesh: the first one asking for
      // it; the op moves it to the others.
      if (isa<BlockArgument>(value) && both.bits.count() > 1)
        return singleton(*both.first());
      if (!both.empty())
        return both;
      return wanted.empty() ? MeshSet::none(numMeshes())
                            : singleton(home(value));
    }
    if (isNameless(*user)) {
      if (absorbs(*user, value))
        return MeshSet::none(numMeshes());
      return placementOf(user);
    }
    return MeshSet::none(numMeshes());
  }

  MeshSet useOf(Value value) {
    MeshSet set = MeshSet::none(numMeshes());
    for (OpOperand &use : value.getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (user)
        set.unite(demandOf(value, user));
    }
    return set;
  }

  void computeUseSets() {
    for (Operation &op : llvm::reverse(block)) {
      if (!isNameless(op) && !isa<BroadcastOp, ReduceOp, UnassignOp>(op))
        continue;
      MeshSet set = MeshSet::none(numMeshes());
      for (Value result : op.getResults())
        set.unite(useOf(result));
      // All results of an op live together.
      for (Value result : op.getResults())
        use[result] = set;
      if (inferTransfers && isNameless(op) && !isMovingIdentity(op))
        chooseWhereComputed(op, set);
    }
    for (BlockArgument arg : block.getArguments())
      if (!isa<MeshTensorType>(arg.getType()))
        use[arg] = useOf(arg);
  }

  /// An op needed on meshes where its inputs are not (`uses` is not in its
  /// src set) is either cloned onto them, its inputs moved there, or
  /// computed where its inputs are, its results moved: whichever moves
  /// fewer bytes. A squared norm of one mesh's gradient needed on every
  /// mesh is computed once and the scalar sent, not the gradient.
  void chooseWhereComputed(Operation &op, const MeshSet &uses) {
    if (op.getNumResults() == 0 || uses.empty())
      return;
    MeshSet sources = src.lookup(op.getResult(0));
    if (sources.empty() || (!sources.isAny && uses.isSubsetOf(sources)))
      return;
    // Absorbed constants among the inputs cost nothing: each fragment
    // makes its own copy.
    SmallVector<Value> inputs = externalInputs(&op);
    uint64_t resultBytes = 0;
    for (Value result : op.getResults())
      resultBytes += byteSize(result);
    // Computed where nothing moves (or, failing that, where the least
    // does), and sent from there to the other meshes that need it.
    MeshSet here = MeshSet::none(numMeshes());
    uint64_t cloneCost = 0;
    for (unsigned mesh : uses.bits.set_bits()) {
      uint64_t cost = bytesToHaveAll(inputs, mesh);
      cloneCost += cost;
      if (cost == 0)
        here.bits.set(mesh);
    }
    uint64_t moveCost = 0;
    if (here.empty()) {
      unsigned best = cheapestMesh(inputs, sources);
      here = singleton(best);
      moveCost = bytesToHaveAll(inputs, best);
    }
    for (unsigned mesh : uses.bits.set_bits())
      if (!here.contains(mesh))
        moveCost += resultBytes;
    if (moveCost < cloneCost)
      computedOn[&op] = here;
  }

  MeshSet useOfOp(Operation *op) {
    return op->getNumResults() ? use.lookup(op->getResult(0))
                               : MeshSet::none(numMeshes());
  }

  /// Whether an op nobody uses can go: it has no side effects, by its
  /// interfaces or (for ops of dialects we do not model, e.g. chlo) by the
  /// op catalog. Unknown ops stay.
  static bool isRemovable(Operation *op) {
    return isMemoryEffectFree(op) || stablehlo::isPure(op);
  }

  /// Where a nameless op runs: where its results are used; an op without
  /// users that must stay (side effects, or unknown) runs where its inputs
  /// are; a removable one without users nowhere.
  MeshSet placementOf(Operation *op) {
    auto computed = computedOn.find(op);
    if (computed != computedOn.end())
      return computed->second;
    MeshSet meshes = useOfOp(op);
    if (!meshes.empty() || isRemovable(op))
      return meshes;
    return singleton(homeOfOp(op));
  }

  //===--------------------------------------------------------------------===//
  // Checks
  //===--------------------------------------------------------------------===//

  LogicalResult checkPlacements() {
    if (inferTransfers)
      return success();
    // The op where a transfer would first be needed is the clearest place
    // to report: its operands come from meshes that do not all hold them.
    for (Operation &op : block) {
      if (!isNameless(op))
        continue;
      MeshSet uses = useOfOp(&op);
      MeshSet sources = op.getNumResults() ? src.lookup(op.getResult(0))
                                           : MeshSet::any();
      if (uses.isSubsetOf(sources))
        continue;
      // Worded as Shardy:MPMD words it (its tests match the opening), then
      // the sets and the way out.
      InFlightDiagnostic diag = op.emitError();
      if (sources.empty())
        diag << "Mesh assignment is not possible for op as its operands are "
                "on conflicting meshes: '"
             << op.getName() << "' is used on " << format(uses)
             << ", and bringing its operands together needs a transfer that "
                "mesh inference may not add";
      else
        diag << "Mesh assignment is not possible for op as it is used in "
             << format(uses) << " but it can only be placed on "
             << format(sources) << ": '" << op.getName()
             << "' needs a transfer that mesh inference may not add";
      for (auto [index, input] : llvm::enumerate(externalInputs(&op)))
        diag << (index == 0 ? "; " : ", ") << "input " << index
             << " is available on " << format(src.lookup(input));
      diag << ". Set infer-transfers=true to let inference transfer the "
              "inputs, or put this computation in a named_computation "
              "assigned to one mesh";
      // A sum of values from several meshes (gradients of a parameter
      // used on two meshes, say) has a third way out.
      if (reductionKindOf(&op) && sources.empty())
        diag << "; or, as it reduces values of several meshes, set "
                "infer-cross-mesh-reductions=true or mark its result with "
                "mpmd.reduce (from Python: mpmd.reduce(x))";
      diag << " (from Python: partitioning_options infer_transfers / "
              "infer_cross_mesh_reductions, Shardy's mpmd_infer_transfers / "
              "mpmd_infer_cross_mesh_reductions)";
      return diag;
    }
    // Values used on a mesh where they do not exist, with no op in between
    // (arguments move to every mesh that uses them).
    for (Operation &op : block) {
      auto unassign = dyn_cast<UnassignOp>(op);
      if (!unassign)
        continue;
      MeshSet uses = use.lookup(unassign.getResult());
      MeshSet sources = src.lookup(unassign.getResult());
      if (uses.isSubsetOf(sources))
        continue;
      InFlightDiagnostic diag = unassign.emitOpError();
      diag << "reads a value that exists on " << format(sources)
           << " but is used on " << format(uses)
           << " with no computation in between; set infer-transfers=true, or "
              "assign the producer and its users to one mesh";
      return diag;
    }
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Rewrite
  //===--------------------------------------------------------------------===//

  /// Moves a transfer (and the transfers it reads) up to right after its
  /// source, so that it dominates every new use.
  void hoistTransfer(Value value) {
    auto transfer = value.getDefiningOp<TransferOp>();
    if (!transfer || hoisted.contains(transfer))
      return;
    hoistTransfer(transfer.getTensor());
    hoisted.insert(transfer);
    Value source = transfer.getTensor();
    if (Operation *def = source.getDefiningOp())
      transfer->moveAfter(def);
    else
      transfer->moveBefore(&block, block.begin());
  }

  TransferOp createTransfer(Value source, unsigned mesh, OpBuilder &builder) {
    auto type = cast<MeshTensorType>(source.getType());
    return TransferOp::create(builder, source.getLoc(),
                              type.withMesh(meshNames[mesh]), source);
  }

  /// Where to put a transfer of `source` so that it dominates any later use.
  OpBuilder builderAfter(Value source) {
    if (Operation *def = source.getDefiningOp())
      return OpBuilder(def->getBlock(), std::next(def->getIterator()));
    return OpBuilder::atBlockBegin(&block);
  }

  /// A mesh tensor made by an assign of a nameless value (a named tensor of
  /// a constant, say) is, once that assign is rewritten, what replaced it.
  Value resolved(Value meshTensor) {
    Value replacement = replacedAssigns.lookup(meshTensor);
    return replacement ? replacement : meshTensor;
  }

  FailureOr<Value> meshValue(Value value, unsigned mesh) {
    auto key = std::make_pair(value, mesh);
    if (Value known = meshValues.lookup(key))
      return known;
    Value result;
    if (auto unassign = value.getDefiningOp<UnassignOp>()) {
      auto &members = classMembers[value];
      if (Value member = members.lookup(mesh)) {
        member = resolved(member);
        hoistTransfer(member);
        result = member;
      } else {
        Value source = resolved(unassign.getTensor());
        OpBuilder builder = builderAfter(source);
        result = createTransfer(source, mesh, builder);
      }
    } else if (auto arg = dyn_cast<BlockArgument>(value)) {
      unsigned argMesh = argMeshes.lookup(arg);
      if (argMesh == mesh) {
        result = arg;
      } else {
        OpBuilder builder = OpBuilder::atBlockBegin(&block);
        result = createTransfer(arg, mesh, builder);
      }
    } else if (auto computed = computedOn.find(value.getDefiningOp());
               computed != computedOn.end() &&
               !computed->second.contains(mesh)) {
      // Computed on other meshes (chooseWhereComputed): moved from there.
      FailureOr<Value> source =
          meshValue(value, *computed->second.first());
      if (failed(source))
        return failure();
      OpBuilder builder = builderAfter(*source);
      result = createTransfer(*source, mesh, builder);
    } else {
      return value.getDefiningOp()->emitOpError()
             << "internal error: mesh inference has no copy of this value "
                "on mesh \""
             << meshNames[mesh] << "\"";
    }
    meshValues[key] = result;
    return result;
  }

  /// A copy of `value` on `mesh`, moved there by a transfer if it does not
  /// exist there (for broadcast and reduce operands).
  FailureOr<Value> movedValue(Value value, unsigned mesh, OpBuilder &builder) {
    if (src.lookup(value).contains(mesh))
      return meshValue(value, mesh);
    FailureOr<Value> source = meshValue(value, home(value));
    if (failed(source))
      return failure();
    return createTransfer(*source, mesh, builder).getResult();
  }

  /// Whether `user` takes a copy of `value`, an absorbed constant, instead
  /// of reading it. Not a loop's initial value (a constant before the loop
  /// read by its first iteration only): inside, it would make that
  /// iteration's program unlike the others'.
  bool absorbs(Operation &user, Value value) {
    if (!absorbsConstants(user) || !isAbsorbedConstant(value))
      return false;
    if (!func->hasAttr(kLoopIterationsKnownAttrName))
      return true;
    Operation *constant = value.getDefiningOp();
    auto [it, inserted] = initialValues.try_emplace(constant, false);
    if (inserted) {
      std::optional<uint64_t> own = loopIterationOf(constant);
      std::set<std::optional<uint64_t>> others;
      for (Operation *reader : constant->getUsers())
        if (Operation *ancestor = block.findAncestorOpInBlock(*reader))
          if (loopIterationOf(ancestor) != own)
            others.insert(loopIterationOf(ancestor));
      it->second = others.size() == 1;
    }
    return !it->second || loopIterationOf(&user) == loopIterationOf(constant);
  }

  FragmentOp createFragment(OpBuilder &builder, Location loc, unsigned mesh,
                            ArrayRef<Value> inputs, TypeRange localInputTypes,
                            TypeRange localResultTypes) {
    MLIRContext *ctx = func.getContext();
    SmallVector<Type> resultTypes;
    for (Type type : localResultTypes)
      resultTypes.push_back(MeshTensorType::get(
          ctx, meshNames[mesh], cast<RankedTensorType>(type)));
    auto fragment = FragmentOp::create(
        builder, loc, resultTypes, inputs, builder.getArrayAttr({}),
        builder.getStringAttr(meshNames[mesh]), IntegerAttr(),
        /*in_shardings=*/nullptr, /*out_shardings=*/nullptr);
    Block *body = builder.createBlock(&fragment.getRegion());
    for (Type type : localInputTypes)
      body->addArgument(type, loc);
    builder.setInsertionPointAfter(fragment);
    return fragment;
  }

  LogicalResult placeOp(Operation &op) {
    MeshSet meshes = placementOf(&op);
    if (meshes.empty())
      return success(); // dead: erased with the other nameless ops
    SmallVector<Value> inputs;
    SmallVector<Operation *> constants;
    for (Value input : externalInputs(&op)) {
      if (absorbs(op, input))
        constants.push_back(input.getDefiningOp());
      else
        inputs.push_back(input);
    }
    OpBuilder builder(&op);
    for (unsigned mesh : meshes.bits.set_bits()) {
      SmallVector<Value> meshInputs;
      for (Value input : inputs) {
        FailureOr<Value> meshInput = isMovingIdentity(op)
                                         ? movedValue(input, mesh, builder)
                                         : meshValue(input, mesh);
        if (failed(meshInput))
          return failure();
        meshInputs.push_back(*meshInput);
      }
      SmallVector<Type> localTypes =
          llvm::to_vector(llvm::map_range(inputs, localTypeOf));
      FragmentOp fragment = createFragment(builder, op.getLoc(), mesh,
                                           meshInputs, localTypes,
                                           op.getResultTypes());
      Block &body = fragment.getRegion().front();
      IRMapping mapping;
      mapping.map(inputs, body.getArguments());
      OpBuilder inner = OpBuilder::atBlockEnd(&body);
      for (Operation *constant : constants)
        inner.clone(*constant, mapping)->removeAttr(kLoopIterationAttrName);
      Operation *clone = inner.clone(op, mapping);
      // The iteration labels the fragment, not the op (programs of every
      // iteration must read alike).
      if (Attribute iteration = clone->removeAttr(kLoopIterationAttrName))
        fragment->setAttr(kLoopIterationAttrName, iteration);
      ReturnOp::create(inner, op.getLoc(), clone->getResults());
      for (auto [result, meshResult] :
           llvm::zip(op.getResults(), fragment.getResults()))
        meshValues[{result, mesh}] = meshResult;
    }
    return success();
  }

  LogicalResult placeBroadcast(BroadcastOp op) {
    OpBuilder builder(op);
    for (unsigned mesh : use.lookup(op.getResult()).bits.set_bits()) {
      FailureOr<Value> moved = movedValue(op.getTensor(), mesh, builder);
      if (failed(moved))
        return failure();
      meshValues[{op.getResult(), mesh}] = *moved;
    }
    return success();
  }

  /// A fragment on `mesh` reducing `values` (all on `mesh`) with `op`'s
  /// reduction.
  Value reduceOn(ReduceOp op, unsigned mesh, ArrayRef<Value> values,
                 OpBuilder &builder) {
    Type type = op.getType();
    SmallVector<Type> localTypes(values.size(), type);
    FragmentOp fragment = createFragment(builder, op.getLoc(), mesh, values,
                                         localTypes, TypeRange{type});
    Block &body = fragment.getRegion().front();
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    Value accumulator = body.getArgument(0);
    for (Value next : body.getArguments().drop_front()) {
      OperationState state(op.getLoc(), stablehloOpOf(op.getReductionType()));
      state.addOperands({accumulator, next});
      state.addTypes(type);
      accumulator = inner.create(state)->getResult(0);
    }
    ReturnOp::create(inner, op.getLoc(), accumulator);
    return fragment.getResult(0);
  }

  /// On each mesh that uses the result: the operands there, and those of
  /// other meshes moved there. Two or more operands of one other mesh are
  /// reduced on it first, so one value crosses instead of each (a gradient
  /// accumulated over microbatches from a mesh's contributions crosses
  /// once per step, not once per microbatch).
  LogicalResult placeReduce(ReduceOp op) {
    OpBuilder builder(op);
    bool reduced = op.getReductionType() != ReductionType::kNone;
    for (unsigned mesh : use.lookup(op.getResult()).bits.set_bits()) {
      // The operands of each other mesh; where there are several, their
      // partial takes the place of the first (the operand order is kept).
      llvm::DenseMap<unsigned, SmallVector<Value>> remote;
      for (Value operand : op.getTensors())
        if (reduced && !src.lookup(operand).contains(mesh))
          remote[home(operand)].push_back(operand);
      SmallVector<Value> moved;
      for (Value operand : op.getTensors()) {
        auto group = remote.end();
        if (reduced && !src.lookup(operand).contains(mesh))
          group = remote.find(home(operand));
        if (group == remote.end() || group->second.size() == 1) {
          FailureOr<Value> value = movedValue(operand, mesh, builder);
          if (failed(value))
            return failure();
          moved.push_back(*value);
          continue;
        }
        if (group->second.front() != operand)
          continue;
        SmallVector<Value> local;
        for (Value each : group->second) {
          FailureOr<Value> value = meshValue(each, group->first);
          if (failed(value))
            return failure();
          local.push_back(*value);
        }
        Value partial = reduceOn(op, group->first, local, builder);
        moved.push_back(createTransfer(partial, mesh, builder).getResult());
      }
      meshValues[{op.getResult(), mesh}] =
          !reduced || moved.size() == 1 ? moved.front()
                                        : reduceOn(op, mesh, moved, builder);
    }
    return success();
  }

  LogicalResult materialize() {
    // Unassigned arguments go on the first mesh that uses them. Their ops
    // are all replaced below, so the type changes right away.
    for (BlockArgument arg : block.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      unsigned mesh = use.lookup(arg).first().value_or(0);
      argMeshes[arg] = mesh;
      arg.setType(
          MeshTensorType::get(func.getContext(), meshNames[mesh], type));
    }
    SmallVector<Operation *> toErase;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto assign = dyn_cast<AssignOp>(op)) {
        FailureOr<Value> value =
            meshValue(assign.getTensor(), meshOf(assign.getResult()));
        if (failed(value))
          return failure();
        Value replacement = *value;
        if (replacement.getType() != assign.getType()) {
          // Same mesh, other memory kind or sharding: an intra-mesh move.
          OpBuilder builder(assign);
          replacement = TransferOp::create(builder, assign.getLoc(),
                                           assign.getType(), replacement);
        }
        replacedAssigns[assign.getResult()] = replacement;
        assign.replaceAllUsesWith(replacement);
        toErase.push_back(assign);
      } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
        if (failed(placeBroadcast(broadcast)))
          return failure();
        toErase.push_back(broadcast);
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        if (failed(placeReduce(reduce)))
          return failure();
        toErase.push_back(reduce);
      } else if (isa<UnassignOp>(op)) {
        toErase.push_back(&op);
      } else if (isNameless(op)) {
        if (failed(placeOp(op)))
          return failure();
        toErase.push_back(&op);
      }
    }
    for (Operation *op : llvm::reverse(toErase)) {
      if (!op->use_empty())
        return op->emitOpError()
               << "internal error: still used after mesh inference";
      op->erase();
    }
    func.setFunctionType(FunctionType::get(
        func.getContext(), block.getArgumentTypes(),
        block.getTerminator()->getOperandTypes()));
    return success();
  }

  func::FuncOp func;
  Block &block;
  TopologyAttr topology;
  SmallVector<StringRef> meshNames;
  llvm::StringMap<unsigned> meshIndex;
  bool inferTransfers;
  bool inferReductions;

  llvm::DenseMap<Value, MeshSet> src;
  llvm::DenseMap<Value, MeshSet> use;
  llvm::DenseMap<Value, llvm::DenseMap<unsigned, Value>> classMembers;
  llvm::DenseMap<std::pair<Value, unsigned>, Value> meshValues;
  llvm::DenseMap<Value, unsigned> argMeshes;
  llvm::DenseMap<Value, unsigned> homes;
  llvm::DenseMap<Value, Value> replacedAssigns;
  llvm::DenseMap<std::pair<Value, unsigned>, uint64_t> costs;
  llvm::DenseMap<Operation *, MeshSet> computedOn;
  llvm::SmallPtrSet<Operation *, 16> hoisted;
  /// Absorbed constants that are a loop's initial value (see `absorbs`).
  llvm::DenseMap<Operation *, bool> initialValues;
};

struct InferMeshesPass
    : public EntryFunctionPass<InferMeshesPass, mlir::mpmd::impl::InferMeshesPassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  LogicalResult runOnEntryFunction(func::FuncOp func) {
    FunctionInference inference(func, inferTransfers,
                                inferCrossMeshReductions);
    if (failed(inference.run()))
      return failure();
    return success();
  }
};

} // namespace
