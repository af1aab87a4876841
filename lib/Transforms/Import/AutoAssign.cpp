//===- AutoAssign.cpp - Named computations to stages by cost --------------===//
//
// mpmd-auto-assign places the named computations the assignment leaves out:
// it reads what each costs per microbatch from its body (FLOPs of its
// forward and backward, the bytes of its parameters, of the activations a
// microbatch keeps for its backward, and of what it sends on), then splits
// the named computations, in program order, into one contiguous run per
// mesh. The split minimizes the busiest stage's FLOPs (what bounds a
// pipeline's steady state), ties going to the split that sends fewer
// bytes between stages, under an optional memory limit per stage. Dynamic
// programming over the split points makes it exact for a chain.
//
// Graphs that are not chains (skip connections, tied weights) are split
// the same way, in program order: a value read by a later stage than the
// next one crosses more meshes than the cost counts, and a parameter used
// by two stages (tied embeddings) counts on its first user's stage only.
//
// The result goes on the module as `mpmd.assignment` ({name = "mesh:stage"}),
// which mpmd-map-named-ops reads for the names its own option leaves out.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Import/AutoAssign.h"

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <limits>

namespace mlir::mpmd {
#define GEN_PASS_DEF_AUTOASSIGNPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

int64_t bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensorBytes(tensor.getNumElements(), tensor.getElementType());
}

double elementsOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape()
             ? static_cast<double>(tensor.getNumElements())
             : 0.0;
}

/// FLOPs of one op (not of the ops in its regions).
double flopsOf(Operation &op) {
  if (op.getNumResults() == 0)
    return 0;
  double out = elementsOf(op.getResult(0).getType());
  if (auto dot = dyn_cast<stablehlo::DotGeneralOp>(op)) {
    auto lhs = cast<RankedTensorType>(dot.getLhs().getType());
    double contracted = 1;
    for (int64_t dim :
         dot.getDotDimensionNumbers().getLhsContractingDimensions())
      contracted *= lhs.getDimSize(dim);
    return 2 * out * contracted;
  }
  if (op.getName().getStringRef() == "stablehlo.convolution" &&
      op.getNumOperands() == 2) {
    // Kernel elements per output element, taking the kernel's last
    // dimension as its output features (HWIO, JAX's default).
    auto kernel = dyn_cast<RankedTensorType>(op.getOperand(1).getType());
    if (kernel && kernel.hasStaticShape() && kernel.getRank() > 0 &&
        kernel.getShape().back() > 0)
      return 2 * out * (elementsOf(kernel) / kernel.getShape().back());
  }
  return out;
}

/// FLOPs of a named computation's body (nested named computations
/// included, the bodies of reductions and the like not).
double bodyFlops(NamedComputationOp op) {
  double total = 0;
  op.getRegion().walk([&](Operation *nested) {
    if (isa<NamedComputationOp>(nested->getParentOp()))
      total += flopsOf(*nested);
  });
  return total;
}

bool isBackward(Operation *op) {
  auto named = dyn_cast<NamedComputationOp>(op);
  return named && named.getTransposeCount() > 0;
}

/// How many times the op runs per call of the program: the iterations of
/// the loops around it, and the calls of the function holding it.
int64_t instancesOf(Operation *op, ModuleOp module) {
  int64_t count = 1;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<ForOp>(parent))
      count *= loop.getIterations();
    if (auto func = dyn_cast<func::FuncOp>(parent); func && func.isPrivate())
      if (auto uses = SymbolTable::getSymbolUses(func, module))
        count *= std::max<int64_t>(
            1, std::distance(uses->begin(), uses->end()));
  }
  return count;
}

} // namespace

CostTable mlir::mpmd::measureNamedComputations(ModuleOp module) {
  CostTable table;
  llvm::StringMap<unsigned> index;
  llvm::StringMap<llvm::DenseSet<Value>> parameters;
  llvm::StringMap<int64_t> instances;
  module.walk([&](NamedComputationOp op) {
    // Nested ones are part of the one around them.
    if (op->getParentOfType<NamedComputationOp>())
      return;
    auto [it, inserted] = index.try_emplace(op.getName(), table.names.size());
    if (inserted) {
      table.names.emplace_back();
      table.names.back().name = op.getName().str();
    }
    NamedComputationCost &cost = table.names[it->second];
    double flops = bodyFlops(op);
    if (op.getTransposeCount() > 0) {
      cost.backwardFlops = std::max(cost.backwardFlops, flops);
      return;
    }
    cost.forwardFlops = std::max(cost.forwardFlops, flops);
    instances[op.getName()] += instancesOf(op, module);
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && isa<func::FuncOp>(arg.getOwner()->getParentOp()) &&
          parameters[op.getName()].insert(operand).second)
        cost.parameterBytes += bytesOf(operand.getType());
    int64_t kept = 0, sent = 0;
    for (Value result : op.getResults()) {
      bool toBackward = false, onward = false;
      for (Operation *user : result.getUsers())
        (isBackward(user) ? toBackward : onward) = true;
      if (toBackward)
        kept += bytesOf(result.getType());
      if (onward)
        sent += bytesOf(result.getType());
    }
    cost.activationBytes = std::max(cost.activationBytes, kept);
    cost.outputBytes = std::max(cost.outputBytes, sent);
  });
  for (auto &entry : instances)
    table.microbatches = std::max(table.microbatches, entry.second);
  return table;
}

SmallVector<int64_t> mlir::mpmd::inflightMicrobatches(unsigned stages,
                                                      int64_t microbatches,
                                                      bool gpipe) {
  SmallVector<int64_t> inflight;
  for (unsigned s = 0; s < stages; ++s)
    inflight.push_back(gpipe ? microbatches
                             : std::min<int64_t>(microbatches, stages - s));
  return inflight;
}

int64_t mlir::mpmd::stageMemory(ArrayRef<NamedComputationCost> names,
                                unsigned begin, unsigned end,
                                int64_t inflight) {
  int64_t parameters = 0, activations = 0;
  for (unsigned i = begin; i < end; ++i) {
    parameters += names[i].parameterBytes;
    activations += names[i].activationBytes;
  }
  return parameters + inflight * activations;
}

namespace {

/// Splits [0, n) into `stages` runs. `better(a, b)` orders candidate
/// (busiest, tie) pairs; `costOf(s, begin, end)` is a run's (busiest, tie)
/// contribution, or nullopt when the run is not allowed on stage s.
struct Candidate {
  double busiest = std::numeric_limits<double>::infinity();
  double tie = std::numeric_limits<double>::infinity();
  unsigned from = 0;
  bool valid = false;
};

template <typename Cost>
std::optional<SmallVector<unsigned>> dynamicSplit(unsigned n, unsigned stages,
                                                  Cost costOf) {
  // best[s][i]: the first i names on stages 0..s-1.
  std::vector<std::vector<Candidate>> best(
      stages + 1, std::vector<Candidate>(n + 1));
  best[0][0] = {0, 0, 0, true};
  for (unsigned s = 1; s <= stages; ++s)
    for (unsigned end = s; end + (stages - s) <= n; ++end)
      for (unsigned begin = s - 1; begin < end; ++begin) {
        const Candidate &before = best[s - 1][begin];
        if (!before.valid)
          continue;
        std::optional<std::pair<double, double>> run = costOf(s - 1, begin, end);
        if (!run)
          continue;
        Candidate candidate{std::max(before.busiest, run->first),
                            before.tie + run->second, begin, true};
        Candidate &current = best[s][end];
        if (!current.valid || candidate.busiest < current.busiest ||
            (candidate.busiest == current.busiest &&
             candidate.tie < current.tie))
          current = candidate;
      }
  if (!best[stages][n].valid)
    return std::nullopt;
  SmallVector<unsigned> stageOf(n);
  unsigned end = n;
  for (unsigned s = stages; s > 0; --s) {
    unsigned begin = best[s][end].from;
    for (unsigned i = begin; i < end; ++i)
      stageOf[i] = s - 1;
    end = begin;
  }
  return stageOf;
}

StageSplit describe(ArrayRef<NamedComputationCost> names,
                    SmallVector<unsigned> stageOf, unsigned stages,
                    ArrayRef<int64_t> inflight) {
  StageSplit split;
  split.flops.assign(stages, 0);
  split.memory.assign(stages, 0);
  for (unsigned s = 0; s < stages; ++s) {
    unsigned begin = names.size(), end = 0;
    for (unsigned i = 0; i < names.size(); ++i)
      if (stageOf[i] == s) {
        begin = std::min(begin, i);
        end = i + 1;
        split.flops[s] += names[i].flops();
      }
    if (begin < end)
      split.memory[s] = stageMemory(names, begin, end, inflight[s]);
  }
  split.stageOf = std::move(stageOf);
  return split;
}

} // namespace

FailureOr<StageSplit> mlir::mpmd::splitIntoStages(
    ArrayRef<NamedComputationCost> names, unsigned stages,
    ArrayRef<std::optional<unsigned>> fixed, ArrayRef<int64_t> inflight,
    std::optional<int64_t> memoryLimit, std::string &error,
    std::optional<unsigned> &culprit) {
  unsigned n = names.size();
  llvm::raw_string_ostream os(error);
  if (stages == 0 || n < stages) {
    os << "cannot split " << n << " named computation" << (n == 1 ? "" : "s")
       << " into " << stages << " stages: every stage needs at least one; "
       << "use fewer meshes or label more of the program";
    return failure();
  }
  // Hand-placed names must come in stage order.
  std::optional<unsigned> lastFixed;
  for (unsigned i = 0; i < n; ++i) {
    if (!fixed[i])
      continue;
    if (*fixed[i] >= stages) {
      culprit = i;
      os << "'" << names[i].name << "' is assigned stage " << *fixed[i]
         << ", but there are only " << stages << " stages";
      return failure();
    }
    if (lastFixed && *fixed[*lastFixed] > *fixed[i]) {
      culprit = i;
      os << "the hand assignment makes a contiguous split impossible: '"
         << names[*lastFixed].name << "' (stage " << *fixed[*lastFixed]
         << ") comes before '" << names[i].name << "' (stage " << *fixed[i]
         << ") in the program; assign them in program order or leave one "
            "to \"auto\"";
      return failure();
    }
    lastFixed = i;
  }
  auto allowed = [&](unsigned s, unsigned begin, unsigned end) {
    for (unsigned i = begin; i < end; ++i)
      if (fixed[i] && *fixed[i] != s)
        return false;
    return true;
  };
  auto memory = [&](unsigned s, unsigned begin, unsigned end) {
    return stageMemory(names, begin, end, inflight[s]);
  };
  std::optional<SmallVector<unsigned>> stageOf = dynamicSplit(
      n, stages,
      [&](unsigned s, unsigned begin, unsigned end)
          -> std::optional<std::pair<double, double>> {
        if (!allowed(s, begin, end) ||
            (memoryLimit && memory(s, begin, end) > *memoryLimit))
          return std::nullopt;
        double flops = 0;
        for (unsigned i = begin; i < end; ++i)
          flops += names[i].flops();
        // What this stage sends on (nothing from the last).
        double sent = end < n ? names[end - 1].outputBytes : 0;
        return std::make_pair(flops, sent);
      });
  if (stageOf)
    return describe(names, std::move(*stageOf), stages, inflight);
  // The smallest limit that fits: the split with the least memory on its
  // fullest stage.
  std::optional<SmallVector<unsigned>> leanest = dynamicSplit(
      n, stages,
      [&](unsigned s, unsigned begin, unsigned end)
          -> std::optional<std::pair<double, double>> {
        if (!allowed(s, begin, end))
          return std::nullopt;
        return std::make_pair(static_cast<double>(memory(s, begin, end)), 0.0);
      });
  os << "no split of the named computations into " << stages
     << " stages fits the memory limit of " << *memoryLimit
     << " bytes per stage";
  if (leanest) {
    StageSplit split = describe(names, std::move(*leanest), stages, inflight);
    os << "; the smallest limit that fits is "
       << *std::max_element(split.memory.begin(), split.memory.end())
       << " bytes";
  }
  return failure();
}

StageSplit mlir::mpmd::splitByCount(ArrayRef<NamedComputationCost> names,
                                    unsigned stages,
                                    ArrayRef<int64_t> inflight) {
  unsigned n = names.size();
  SmallVector<unsigned> stageOf(n);
  unsigned base = n / stages, extra = n % stages, i = 0;
  for (unsigned s = 0; s < stages; ++s)
    for (unsigned k = 0; k < base + (s < extra ? 1 : 0) && i < n; ++k)
      stageOf[i++] = s;
  return describe(names, std::move(stageOf), stages, inflight);
}

namespace {

struct AutoAssignPass
    : public mlir::mpmd::impl::AutoAssignPassBase<AutoAssignPass> {
  using AutoAssignPassBase::AutoAssignPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (meshes.empty()) {
      module.emitError() << "mpmd-auto-assign needs meshes=M1,M2,...: one "
                            "stage per mesh, in pipeline order";
      return signalPassFailure();
    }
    CostTable table = measureNamedComputations(module);
    llvm::StringMap<unsigned> stageOfMesh;
    for (auto [s, mesh] : llvm::enumerate(meshes))
      stageOfMesh[mesh] = s;
    llvm::StringMap<unsigned> fixedStage;
    for (const NamedAssignment &entry : assignment) {
      auto found = stageOfMesh.find(entry.mesh);
      if (found == stageOfMesh.end()) {
        module.emitError() << "assignment of '" << entry.name
                           << "' names mesh \"" << entry.mesh
                           << "\", which is not in meshes=";
        return signalPassFailure();
      }
      fixedStage[entry.name] = found->second;
    }
    SmallVector<std::optional<unsigned>> fixed;
    for (const NamedComputationCost &cost : table.names) {
      auto found = fixedStage.find(cost.name);
      fixed.push_back(found == fixedStage.end()
                          ? std::nullopt
                          : std::optional<unsigned>(found->second));
    }
    SmallVector<int64_t> inflight = inflightMicrobatches(
        meshes.size(), table.microbatches, schedule == "gpipe");
    std::string error;
    std::optional<unsigned> culprit;
    FailureOr<StageSplit> split = splitIntoStages(
        table.names, meshes.size(), fixed, inflight,
        memoryLimit > 0 ? std::optional<int64_t>(memoryLimit) : std::nullopt,
        error, culprit);
    if (failed(split)) {
      // On the named computation at fault where there is one.
      Operation *at = module;
      if (culprit)
        module.walk([&](NamedComputationOp op) {
          if (op.getName() != table.names[*culprit].name)
            return WalkResult::advance();
          at = op;
          return WalkResult::interrupt();
        });
      at->emitError() << error;
      return signalPassFailure();
    }
    Builder builder(module.getContext());
    SmallVector<NamedAttribute> entries;
    for (auto [cost, stage] : llvm::zip(table.names, split->stageOf))
      entries.push_back(builder.getNamedAttr(
          cost.name, builder.getStringAttr(meshes[stage] + ":" +
                                           std::to_string(stage))));
    module->setAttr(kAutoAssignmentAttrName,
                    builder.getDictionaryAttr(entries));
  }
};

} // namespace
