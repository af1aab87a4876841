//===- Schedule.cpp - Apply a pipeline schedule ---------------------------===//
//
// The schedule gives each mesh an order of its user fragments; consecutive
// fragments in that order become ordering edges. With the data dependencies
// they form a graph whose topological sort (ties broken by the original
// position, so unrelated ops stay put) is the new op order of the entry
// function. Inferred fragments and transfers have no schedule edges: they go
// wherever their data lets them. A forward recomputed for its backward
// (`mpmd.remat`, mpmd-mark-recomputed-forwards) is not ordered by the
// schedule: it is moved down to right before its first user (the backward
// that reads it, or the recompute it feeds).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Optimize/Passes.h"
#include "mpmd/Transforms/Optimize/Schedules.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <queue>
#include <set>
#include <tuple>

namespace mlir::mpmd {
#define GEN_PASS_DEF_SCHEDULEPASS
#include "mpmd/Transforms/Optimize/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kScheduleAttrName = "mpmd.schedule";

std::string describe(Operation *op) {
  if (auto fragment = dyn_cast<FragmentOp>(op)) {
    FragmentInfo info = getFragmentInfo(fragment);
    return "'" + (info.origins.empty() ? std::string("inferred fragment")
                                       : info.key()) +
           "' on " + info.mesh;
  }
  if (auto transfer = dyn_cast<TransferOp>(op))
    return "transfer " + transfer.getTensor().getType().getMeshName().str() +
           " -> " + transfer.getType().getMeshName().str();
  return "'" + op->getName().getStringRef().str() + "'";
}

/// The fragments of one pipelined loop, per mesh, and the schedule that
/// orders them.
struct LoopGroup {
  ScheduleKind kind = ScheduleKind::kNone;
  StringRef name;
  llvm::MapVector<StringRef, SmallVector<FragmentOp>> byMesh;
};

class Scheduler {
public:
  /// `tables`: the explicit orders, per loop ("" for the function's).
  Scheduler(func::FuncOp func, ScheduleKind kind, StringRef scheduleName,
            llvm::StringMap<DictionaryAttr> tables)
      : func(func), block(func.getBody().front()), kind(kind),
        scheduleName(scheduleName), tables(std::move(tables)) {}

  LogicalResult run() {
    for (Operation &op : block.without_terminator()) {
      index[&op] = nodes.size();
      nodes.push_back(&op);
    }
    auto topology =
        func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    // The pipelined loops: the function's schedule orders the loop
    // without one of its own (group ""), each loop with one
    // (`mpmd.loop_schedule`) is ordered by its own.
    // (No reference into `groups` is held across insertions: a MapVector
    // moves its entries when it grows.)
    llvm::MapVector<StringRef, LoopGroup> groups;
    groups[""].kind = kind;
    groups[""].name = scheduleName;
    for (StringRef mesh : topology.getMeshNames())
      groups[""].byMesh[mesh];
    // Built-in schedules order the microbatches of a loop: fragments
    // without a call counter (code before or after the loops) keep their
    // data order. Explicit tables place every user fragment.
    for (auto fragment : block.getOps<FragmentOp>()) {
      if (!fragment.isUserFragment())
        continue;
      // A forward recomputed for its backward (jax.checkpoint) is not
      // ordered by the schedule: it runs right before that backward.
      // (Here only mpmd-mark-recomputed-forwards has set `mpmd.remat`.)
      if (fragment->hasAttr(kRematAttrName)) {
        recomputes.insert(fragment);
        recomputeKeys[fragment.getMeshName()].insert(
            getFragmentInfo(fragment).key());
        continue;
      }
      auto loop = fragment->getAttrOfType<StringAttr>(kLoopAttrName);
      bool counted = fragment->hasAttr(MpmdDialect::kCallCounterAttrName);
      if (!loop) {
        if (kind == ScheduleKind::kExplicit || counted)
          groups[""].byMesh[fragment.getMeshName()].push_back(fragment);
        continue;
      }
      auto [it, fresh] = groups.try_emplace(loop.getValue());
      LoopGroup &group = it->second;
      if (fresh) {
        auto name = fragment->getAttrOfType<StringAttr>(kLoopScheduleAttrName);
        std::optional<ScheduleKind> own;
        if (name)
          own = isExplicitLoopSchedule(name.getValue())
                    ? ScheduleKind::kExplicit
                    : symbolizeScheduleKind(name.getValue());
        if (!own)
          return fragment.emitOpError()
                 << "has loop schedule '"
                 << (name ? name.getValue() : StringRef("(none)"))
                 << "'; a loop's own schedule is one of gpipe, 1f1b, "
                    "interleaved-1f1b, zero-bubble-h1, none, or "
                    "explicit[:<id>] (an order the client gives per mesh)";
        group.kind = *own;
        group.name = name.getValue();
      }
      if (counted)
        group.byMesh[fragment.getMeshName()].push_back(fragment);
    }
    for (auto &[loop, group] : groups)
      if (!loop.empty() && failed(checkFits(loop, group)))
        return failure();
    if (kind != ScheduleKind::kExplicit && groups.size() == 1)
      warnIfNothingToPipeline(groups[""].byMesh);
    warnOnStagesAgainstDataFlow();
    // Each mesh runs the loops one after another, in program order (of
    // their first fragment on the mesh), each in its own schedule's order.
    llvm::MapVector<StringRef, SmallVector<SmallVector<FragmentOp>>> chunks;
    for (auto &[loop, group] : groups) {
      if (group.kind == ScheduleKind::kNone)
        continue;
      for (auto &[mesh, fragments] : group.byMesh)
        for (FragmentOp fragment : fragments)
          if (IntegerAttr stage = fragment.getStageIdAttr())
            stagesByMesh[mesh].insert(stage.getInt());
      if (!loop.empty())
        group.byMesh.remove_if([](auto &entry) { return entry.second.empty(); });
      SmallVector<StringRef> ranked = rankMeshes(group.byMesh);
      for (auto [rank, mesh] : llvm::enumerate(ranked)) {
        FailureOr<SmallVector<FragmentOp>> order =
            orderOf(group.kind, group.name, loop, mesh, group.byMesh[mesh],
                    rank, ranked.size());
        if (failed(order))
          return failure();
        if (!order->empty())
          chunks[mesh].push_back(std::move(*order));
      }
    }
    llvm::MapVector<StringRef, SmallVector<FragmentOp>> meshOrder;
    for (auto &[mesh, loops] : chunks) {
      auto first = [&](ArrayRef<FragmentOp> loop) {
        unsigned lowest = std::numeric_limits<unsigned>::max();
        for (FragmentOp fragment : loop)
          lowest = std::min(lowest, index[fragment.getOperation()]);
        return lowest;
      };
      llvm::stable_sort(loops, [&](const auto &a, const auto &b) {
        return first(a) < first(b);
      });
      for (auto &loop : loops)
        llvm::append_range(meshOrder[mesh], loop);
    }
    for (auto &[mesh, order] : meshOrder) {
      for (unsigned i = 1; i < order.size(); ++i)
        scheduleEdges.emplace_back(order[i - 1], order[i]);
      for (auto [position, fragment] : llvm::enumerate(order))
        placeInSchedule[fragment] = static_cast<int64_t>(position);
    }
    return sortAndReorder();
  }

private:
  /// A loop's own schedule that cannot fit it: zero bubble fills the
  /// pipeline's bubbles with weight-gradient work, which a loop without a
  /// backward (evaluation, reference log-probs) does not have.
  LogicalResult checkFits(StringRef loop, const LoopGroup &group) {
    if (group.kind != ScheduleKind::kZeroBubbleH1)
      return success();
    FragmentOp first;
    for (auto &[mesh, fragments] : group.byMesh)
      for (FragmentOp fragment : fragments) {
        if (getFragmentInfo(fragment).kind != FragmentKind::kForward)
          return success();
        if (!first)
          first = fragment;
      }
    if (!first)
      return success();
    return first.emitError()
           << "fragment '" << getFragmentInfo(first).key() << "' on mesh \""
           << first.getMeshName() << "\" is in loop '" << loop
           << "', whose own schedule zero-bubble-h1 does not fit it: the "
              "loop runs forwards only, and zero bubble fills the pipeline "
              "with backward (weight-gradient) work; give it gpipe or 1f1b";
  }

  /// A built-in schedule orders microbatches (call counters). A program
  /// whose user fragments have none (a Python loop without call counters,
  /// say) would run every mesh in program order: no pipeline. Said once.
  void warnIfNothingToPipeline(
      llvm::MapVector<StringRef, SmallVector<FragmentOp>> &byMesh) {
    bool anyCounted = llvm::any_of(
        byMesh, [](auto &entry) { return !entry.second.empty(); });
    if (anyCounted)
      return;
    auto users = llvm::make_filter_range(
        block.getOps<FragmentOp>(),
        [](FragmentOp fragment) { return fragment.isUserFragment(); });
    if (users.empty())
      return;
    func.emitWarning()
        << "pipeline schedule " << scheduleName
        << " has nothing to order: no fragment has a call counter "
           "(microbatch), so every mesh runs its fragments in program "
           "order, one microbatch after another, without pipelining. "
           "Trace the microbatches as one loop whose iterations carry call "
           "counters (from Python: mpmd.fori_loop, or mpmd.call(..., "
           "call_counter=i) in a Python loop)";
  }

  /// Stages number the pipeline in data-flow order: a forward of stage s
  /// feeds stages after s. A forward reading the forward of a later stage
  /// is most likely a swapped assignment; the schedules would run that
  /// pipeline backwards. Said once, at the first such reader.
  void warnOnStagesAgainstDataFlow() {
    for (FragmentOp fragment : block.getOps<FragmentOp>()) {
      IntegerAttr stage = fragment.getStageIdAttr();
      if (!fragment.isUserFragment() || !stage)
        continue;
      FragmentInfo reader = getFragmentInfo(fragment);
      if (reader.kind != FragmentKind::kForward)
        continue;
      for (Value operand : fragment->getOperands()) {
        while (auto transfer = operand.getDefiningOp<TransferOp>())
          operand = transfer.getTensor();
        auto producer = operand.getDefiningOp<FragmentOp>();
        if (!producer || !producer.isUserFragment() ||
            !producer.getStageIdAttr() ||
            producer.getStageIdAttr().getInt() <= stage.getInt())
          continue;
        FragmentInfo written = getFragmentInfo(producer);
        if (written.kind != FragmentKind::kForward)
          continue;
        fragment.emitWarning()
            << "stage numbers run against the data flow: '"
            << reader.label() << "' (stage " << stage.getInt()
            << ") reads the forward of '" << written.label() << "' (stage "
            << producer.getStageIdAttr().getInt()
            << "); a stage feeds the stages after it, so give '"
            << written.label() << "' a stage before " << stage.getInt();
        return;
      }
    }
  }

  /// For a cycle error: a schedule that would fit the stages the meshes
  /// hold, when the chosen one runs a single stage per mesh.
  std::string scheduleThatFits() {
    if (kind != ScheduleKind::kGPipe && kind != ScheduleKind::k1F1B &&
        kind != ScheduleKind::kZeroBubbleH1)
      return "";
    for (auto &[mesh, stages] : stagesByMesh) {
      if (stages.size() < 2)
        continue;
      unsigned meshes = stagesByMesh.size();
      std::string held;
      for (int64_t stage : stages)
        held += (held.empty() ? "" : ", ") + std::to_string(stage);
      std::string fit = "interleaved-1f1b (stages in rounds: mesh r holds "
                        "r, r+p, ...)";
      bool vShaped = llvm::all_of(stagesByMesh, [&](auto &entry) {
        const std::set<int64_t> &pair = entry.second;
        return pair.size() == 2 &&
               *pair.begin() + *pair.rbegin() ==
                   static_cast<int64_t>(2 * meshes - 1);
      });
      if (vShaped)
        fit = "a V schedule (zero-bubble-v or dualpipe-v: mesh r holds "
              "stages r and 2p-1-r)";
      return "; mesh \"" + mesh.str() + "\" holds stages " + held +
             ", but " + scheduleName.str() +
             " runs one stage per mesh: use " + fit;
    }
    return "";
  }

  /// Pipeline position: by the smallest stage of a mesh's fragments when all
  /// have stages, else topology order.
  SmallVector<StringRef>
  rankMeshes(llvm::MapVector<StringRef, SmallVector<FragmentOp>> &byMesh) {
    SmallVector<StringRef> meshes;
    bool allStaged = true;
    llvm::StringMap<int64_t> firstStage;
    for (auto &[mesh, fragments] : byMesh) {
      meshes.push_back(mesh);
      int64_t lowest = std::numeric_limits<int64_t>::max();
      for (FragmentOp fragment : fragments) {
        if (!fragment.getStageIdAttr())
          allStaged = false;
        else
          lowest = std::min(lowest, fragment.getStageIdAttr().getInt());
      }
      firstStage[mesh] = lowest;
    }
    if (allStaged)
      llvm::stable_sort(meshes, [&](StringRef a, StringRef b) {
        return firstStage[a] < firstStage[b];
      });
    return meshes;
  }

  FailureOr<SmallVector<FragmentOp>> orderOf(ScheduleKind groupKind,
                                             StringRef groupName,
                                             StringRef loop, StringRef mesh,
                                             ArrayRef<FragmentOp> fragments,
                                             unsigned rank, unsigned count) {
    SmallVector<FragmentInfo> infos;
    for (FragmentOp fragment : fragments)
      infos.push_back(getFragmentInfo(fragment));
    if (groupKind == ScheduleKind::kExplicit)
      return explicitOrder(loop, mesh, fragments, infos);
    std::string error;
    std::optional<std::vector<unsigned>> order =
        orderFragments(groupKind, infos, rank, count, error);
    if (!order) {
      // On a fragment of the loop when the loop has a schedule of its own.
      if (!loop.empty())
        return FragmentOp(fragments.front()).emitError()
               << "fragment '" << infos.front().key() << "' on mesh \""
               << mesh << "\" is in loop '" << loop << "', whose own schedule "
               << groupName << " cannot order that mesh: " << error;
      return func.emitError() << "pipeline schedule " << groupName
                              << " cannot order mesh \"" << mesh
                              << "\": " << error;
    }
    SmallVector<FragmentOp> result;
    for (unsigned i : *order)
      result.push_back(fragments[i]);
    return result;
  }

  /// The order an explicit table gives `mesh`: the function's table
  /// (`loop` empty) or the loop's own. Errors go on the function for the
  /// function's table, on the loop's first fragment on the mesh for a
  /// loop's.
  FailureOr<SmallVector<FragmentOp>>
  explicitOrder(StringRef loop, StringRef mesh, ArrayRef<FragmentOp> fragments,
                ArrayRef<FragmentInfo> infos) {
    DictionaryAttr table = tables.lookup(loop);
    std::string whose =
        loop.empty() ? std::string("the schedule")
                     : "the schedule of loop '" + loop.str() + "'";
    auto fail = [&]() -> InFlightDiagnostic {
      if (!loop.empty() && !fragments.empty())
        return FragmentOp(fragments.front()).emitError();
      return func.emitError();
    };
    if (!table) {
      if (!loop.empty())
        return fail() << "fragment '" << infos.front().key() << "' on mesh \""
                      << mesh << "\" is in loop '" << loop
                      << "', whose schedule is explicit, but no order was "
                         "given for it: give the pass an order "
                         "MESH@LOOP=KEY|... per mesh, or partition from "
                         "Python, which evaluates the loop's schedule";
      return func.emitError()
             << "the explicit schedule needs a '" << kScheduleAttrName
             << "' attribute on @" << func.getSymName()
             << ": a dictionary from mesh name to an array of fragment keys";
    }
    llvm::StringMap<FragmentOp> byKey;
    for (auto [fragment, info] : llvm::zip(fragments, infos))
      if (!byKey.try_emplace(info.key(), fragment).second)
        return FragmentOp(fragment).emitOpError()
               << "shares the key '" << info.key() << "' with another "
               << "fragment on mesh \"" << mesh
               << "\"; give microbatches call counters to tell them apart";
    for (NamedAttribute entry : table)
      if (!func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName)
               .hasMesh(entry.getName()))
        return fail() << whose << " names mesh \""
                      << entry.getName().getValue()
                      << "\", which is not in the topology";
    auto list = table.getAs<ArrayAttr>(mesh);
    if (!list) {
      if (fragments.empty())
        return SmallVector<FragmentOp>();
      return fail() << whose << " has no order for mesh \"" << mesh
                    << "\", which runs " << fragments.size() << " fragments";
    }
    SmallVector<FragmentOp> order;
    llvm::StringSet<> placed;
    for (Attribute attr : list) {
      auto key = dyn_cast<StringAttr>(attr);
      if (!key)
        return fail() << whose << " of mesh \"" << mesh
                      << "\" must list fragment keys as strings";
      FragmentOp fragment = byKey.lookup(key.getValue());
      if (!fragment && recomputeKeys[mesh].contains(key.getValue()))
        return fail() << whose << " of mesh \"" << mesh << "\" names '"
                      << key.getValue()
                      << "', a forward recomputed for its backward "
                         "(jax.checkpoint): it runs right before that "
                         "backward, so schedules do not list it";
      if (!fragment) {
        InFlightDiagnostic diag = fail()
                                  << whose << " of mesh \"" << mesh
                                  << "\" names '" << key.getValue()
                                  << "', which is not a fragment there; "
                                     "fragments on that mesh: ";
        llvm::interleaveComma(infos, diag, [&](const FragmentInfo &info) {
          diag << "'" << info.key() << "'";
        });
        return diag;
      }
      if (!placed.insert(key.getValue()).second)
        return fail() << whose << " of mesh \"" << mesh << "\" lists '"
                      << key.getValue() << "' twice";
      order.push_back(fragment);
    }
    for (const FragmentInfo &info : infos)
      if (!placed.contains(info.key()))
        return fail() << whose << " of mesh \"" << mesh
                      << "\" does not place fragment '" << info.key()
                      << "'; list every fragment of the mesh";
    return order;
  }

  LogicalResult sortAndReorder() {
    unsigned n = nodes.size();
    std::vector<SmallVector<unsigned>> successors(n);
    std::vector<SmallVector<std::pair<unsigned, bool>>> predecessors(n);
    std::vector<unsigned> indegree(n, 0);
    auto addEdge = [&](unsigned from, unsigned to, bool bySchedule) {
      successors[from].push_back(to);
      predecessors[to].push_back({from, bySchedule});
      ++indegree[to];
    };
    for (auto [to, op] : llvm::enumerate(nodes)) {
      llvm::SmallPtrSet<Operation *, 8> seen;
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def)
            continue;
          def = block.findAncestorOpInBlock(*def);
          if (def && def != op && index.count(def) && seen.insert(def).second)
            addEdge(index[def], to, /*bySchedule=*/false);
        }
      });
    }
    for (auto [from, to] : scheduleEdges)
      addEdge(index[from], index[to], /*bySchedule=*/true);

    // First the order itself: ties broken by the original position, so
    // unrelated ops stay put.
    std::priority_queue<unsigned, std::vector<unsigned>, std::greater<>> ready;
    for (unsigned i = 0; i < n; ++i)
      if (indegree[i] == 0)
        ready.push(i);
    std::vector<unsigned> sorted;
    while (!ready.empty()) {
      unsigned next = ready.top();
      ready.pop();
      sorted.push_back(next);
      for (unsigned succ : successors[next])
        if (--indegree[succ] == 0)
          ready.push(succ);
    }
    if (sorted.size() != n)
      return reportCycle(indegree, predecessors);
    sorted = interleaveMeshes(sorted, successors);
    Operation *terminator = block.getTerminator();
    for (unsigned i : sorted)
      nodes[i]->moveBefore(terminator);
    sinkRecomputes();
    return success();
  }

  /// Moves each recomputed forward, and each transfer of its results, down
  /// to right before its first user, latest first: a recompute runs right
  /// before the first backward reading it, or before the recompute it
  /// feeds (jax.checkpoint around several computations recomputes them in
  /// a chain, on their meshes, before the first backward). Only moving ops
  /// later, before their users, cannot contradict the data flow or the
  /// order of the other fragments.
  void sinkRecomputes() {
    if (recomputes.empty())
      return;
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      bool sink = recomputes.contains(op);
      if (auto transfer = dyn_cast<TransferOp>(op))
        sink = recomputes.contains(transfer.getTensor().getDefiningOp());
      if (!sink)
        continue;
      Operation *first = nullptr;
      for (Operation *user : op->getUsers())
        if (Operation *ancestor = block.findAncestorOpInBlock(*user);
            ancestor && (!first || ancestor->isBeforeInBlock(first)))
          first = ancestor;
      if (first && first != op->getNextNode())
        op->moveBefore(first);
    }
  }

  /// `sorted` with each mesh's sequence of fragments kept and the meshes
  /// interleaved as a wavefront, as Shardy:MPMD prints them: of the ops
  /// ready, the one earliest in its mesh's schedule goes first (ties: the
  /// earlier mesh of the topology); a fragment the schedule does not place
  /// (inferred, or outside the loop) follows the one before it on its
  /// mesh; transfers go as soon as their value is there.
  std::vector<unsigned>
  interleaveMeshes(ArrayRef<unsigned> sorted,
                   const std::vector<SmallVector<unsigned>> &successors) {
    unsigned n = nodes.size();
    auto topology =
        func->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    SmallVector<StringRef> meshNames = topology.getMeshNames();
    using Key = std::tuple<int64_t, unsigned, unsigned>;
    std::vector<Key> keys(n);
    std::vector<SmallVector<unsigned>> next(n);
    std::vector<unsigned> indegree(n, 0);
    for (unsigned i = 0; i < n; ++i)
      for (unsigned succ : successors[i]) {
        next[i].push_back(succ);
        ++indegree[succ];
      }
    // Per mesh: the last fragment seen, and the schedule position reached.
    llvm::StringMap<std::pair<unsigned, int64_t>> lane;
    for (auto [rank, i] : llvm::enumerate(sorted)) {
      auto fragment = dyn_cast<FragmentOp>(nodes[i]);
      if (!fragment) {
        keys[i] = {-1, 0, rank};
        continue;
      }
      StringRef mesh = fragment.getMeshName();
      unsigned meshIndex = llvm::find(meshNames, mesh) - meshNames.begin();
      auto placed = placeInSchedule.find(fragment);
      auto [it, first] = lane.try_emplace(mesh, i, int64_t(-1));
      int64_t position = placed != placeInSchedule.end()
                             ? placed->second
                             : it->second.second;
      if (!first) {
        next[it->second.first].push_back(i);
        ++indegree[i];
      }
      it->second = {i, position};
      keys[i] = {position, meshIndex, rank};
    }
    std::priority_queue<std::pair<Key, unsigned>,
                        std::vector<std::pair<Key, unsigned>>, std::greater<>>
        ready;
    for (unsigned i = 0; i < n; ++i)
      if (indegree[i] == 0)
        ready.push({keys[i], i});
    std::vector<unsigned> result;
    while (!ready.empty()) {
      unsigned current = ready.top().second;
      ready.pop();
      result.push_back(current);
      for (unsigned succ : next[current])
        if (--indegree[succ] == 0)
          ready.push({keys[succ], succ});
    }
    // `sorted` satisfies every edge added here, so nothing is left over.
    return result.size() == n ? result
                              : std::vector<unsigned>(sorted.begin(),
                                                      sorted.end());
  }

  /// Walks back along unsorted predecessors until a node repeats.
  LogicalResult reportCycle(
      const std::vector<unsigned> &indegree,
      const std::vector<SmallVector<std::pair<unsigned, bool>>> &predecessors) {
    unsigned start = 0;
    while (indegree[start] == 0)
      ++start;
    std::vector<int> seenAt(nodes.size(), -1);
    SmallVector<std::pair<unsigned, bool>> path; // node, reached by schedule
    unsigned current = start;
    bool bySchedule = false;
    while (seenAt[current] < 0) {
      seenAt[current] = path.size();
      path.push_back({current, bySchedule});
      for (auto [pred, schedule] : predecessors[current])
        if (indegree[pred] != 0) {
          current = pred;
          bySchedule = schedule;
          break;
        }
    }
    // The cycle runs from path[seenAt[current]] back to `current`; print it
    // in execution order.
    SmallVector<std::pair<unsigned, bool>> cycle(path.begin() + seenAt[current],
                                                 path.end());
    std::reverse(cycle.begin(), cycle.end());
    InFlightDiagnostic diag = nodes[cycle.front().first]->emitError()
                              << "pipeline schedule " << scheduleName
                              << " contradicts the data flow; cycle: ";
    for (auto [position, step] : llvm::enumerate(cycle)) {
      if (position)
        diag << (cycle[position - 1].second ? " -(schedule)-> " : " -> ");
      diag << describe(nodes[step.first]);
    }
    diag << (cycle.back().second ? " -(schedule)-> " : " -> ")
         << describe(nodes[cycle.front().first]) << scheduleThatFits();
    return diag;
  }

  func::FuncOp func;
  Block &block;
  ScheduleKind kind;
  StringRef scheduleName;
  llvm::StringMap<DictionaryAttr> tables;
  SmallVector<Operation *> nodes;
  llvm::DenseMap<Operation *, unsigned> index;
  SmallVector<std::pair<Operation *, Operation *>> scheduleEdges;
  llvm::MapVector<StringRef, std::set<int64_t>> stagesByMesh;
  // Per scheduled fragment: its position in its mesh's order.
  llvm::DenseMap<Operation *, int64_t> placeInSchedule;
  // Recomputed forwards (no place in the schedule: they run right before
  // their first user), and their keys per mesh, for table errors.
  llvm::SmallPtrSet<Operation *, 16> recomputes;
  llvm::StringMap<llvm::StringSet<>> recomputeKeys;
};

struct SchedulePass
    : public EntryFunctionPass<SchedulePass, mlir::mpmd::impl::SchedulePassBase> {
  using EntryFunctionPass::EntryFunctionPass;

  /// The orders per loop ("" for the function's), each as the dictionary
  /// from mesh to keys that the function's attribute would hold.
  FailureOr<llvm::StringMap<DictionaryAttr>>
  orderTables(func::FuncOp func, ArrayRef<MeshOrder> orders) {
    Builder builder(func.getContext());
    llvm::MapVector<StringRef, SmallVector<NamedAttribute>> byLoop;
    llvm::StringSet<> seen;
    for (const MeshOrder &entry : orders) {
      if (!seen.insert(entry.mesh + "@" + entry.loop).second)
        return func.emitError()
               << "the schedule order lists mesh \"" << entry.mesh << "\""
               << (entry.loop.empty() ? "" : " of loop '" + entry.loop + "'")
               << " twice";
      SmallVector<Attribute> list;
      for (const std::string &key : entry.keys)
        list.push_back(builder.getStringAttr(key));
      byLoop[entry.loop].push_back(
          builder.getNamedAttr(entry.mesh, builder.getArrayAttr(list)));
    }
    llvm::StringMap<DictionaryAttr> tables;
    for (auto &[loop, meshes] : byLoop)
      tables[loop] = builder.getDictionaryAttr(meshes);
    return tables;
  }

  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    // Without a schedule for the function, loops with their own still
    // need ordering.
    bool anyLoop = false, anyExplicitLoop = false;
    module.walk([&](FragmentOp fragment) {
      anyLoop |= fragment->hasAttr(kLoopAttrName);
      if (auto own =
              fragment->getAttrOfType<StringAttr>(kLoopScheduleAttrName))
        anyExplicitLoop |= isExplicitLoopSchedule(own.getValue());
    });
    if (schedule == ScheduleKind::kNone && !anyLoop)
      return success();
    for (func::FuncOp func : entries) {
      std::vector<MeshOrder> orders(order.begin(), order.end());
      if ((schedule == ScheduleKind::kExplicit || anyExplicitLoop) &&
          provider) {
        std::string error;
        std::optional<std::vector<MeshOrder>> computed =
            provider(listUserFragments(func), error);
        if (!computed)
          return func.emitError()
                 << "the schedule could not be evaluated: " << error;
        orders = std::move(*computed);
      }
      FailureOr<llvm::StringMap<DictionaryAttr>> tables =
          orderTables(func, orders);
      if (failed(tables))
        return failure();
      if (!tables->count(""))
        if (auto table =
                func->getAttrOfType<DictionaryAttr>(kScheduleAttrName))
          (*tables)[""] = table;
      Scheduler scheduler(func, schedule, stringifyScheduleKind(schedule),
                          std::move(*tables));
      if (failed(scheduler.run()))
        return failure();
    }
    return success();
  }

  /// Computes the order of an explicit schedule; set by C++ callers.
  OrderProvider provider;
};

} // namespace

std::unique_ptr<Pass> mlir::mpmd::createSchedulePass(SchedulePassOptions options,
                                                     OrderProvider provider) {
  auto pass = std::make_unique<SchedulePass>(std::move(options));
  pass->provider = std::move(provider);
  return pass;
}
