//===- Schedules.cpp - Built-in pipeline schedules ------------------------===//
//
// Each built-in orders the fragments of one mesh. With p meshes, a mesh at
// pipeline position r, microbatch i, and F / B for forward / backward
// (transpose count >= 1):
//
//   gpipe             every F in microbatch order, then every B:
//                     F0 F1 ... F(m-1) B0 B1 ... B(m-1)
//   1f1b              p - r forwards to fill the pipeline, then one B per F:
//                     sort by (i + (p - r) * isB, -isB), as in the RFC
//   interleaved-1f1b  v stages ("chunks") per mesh, microbatches in groups
//                     of p: forwards go chunk by chunk through a group,
//                     backwards in reverse chunk order; (p - r - 1) * 2 +
//                     (v - 1) * p warm-up forwards, then alternate, then
//                     drain (Megatron-LM's interleaved schedule).
//
// Fragments of one mesh that share a position (several named computations
// of one stage and microbatch) keep their program order.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Optimize/Schedules.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::mpmd;

namespace {

int64_t microbatch(const FragmentInfo &info) {
  return info.callCounter ? static_cast<int64_t>(*info.callCounter) : 0;
}

/// 1 for a backward fragment (or its weight-gradient part); merged
/// forward+backward counts as forward (it starts with the forward).
int64_t isBackward(const FragmentInfo &info) {
  return info.kind == FragmentKind::kBackward ||
         info.kind == FragmentKind::kWeightGradient;
}

std::vector<unsigned> sortByKey(
    ArrayRef<FragmentInfo> fragments,
    const std::function<std::tuple<int64_t, int64_t, int64_t>(
        const FragmentInfo &)> &key) {
  std::vector<unsigned> order(fragments.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return key(fragments[a]) < key(fragments[b]);
  });
  return order;
}

/// Every mesh runs each microbatch forward and backward: the counters of
/// its forward and backward fragments must agree.
bool checkMicrobatches(ArrayRef<FragmentInfo> fragments, std::string &error) {
  std::set<int64_t> forward, backward;
  for (const FragmentInfo &info : fragments)
    (isBackward(info) ? backward : forward).insert(microbatch(info));
  if (backward.empty() || forward == backward)
    return true;
  auto describe = [](const std::set<int64_t> &set) {
    std::string text;
    for (int64_t value : set)
      text += (text.empty() ? "" : ", ") + std::to_string(value);
    return "{" + text + "}";
  };
  error = "forward fragments have microbatches " + describe(forward) +
          " but backward fragments have " + describe(backward) +
          "; every microbatch needs both (check the call counters)";
  return false;
}

std::optional<std::vector<unsigned>>
interleaved(ArrayRef<FragmentInfo> fragments, unsigned rank,
            unsigned numMeshes, std::string &error) {
  std::set<int64_t> stageSet, microbatchSet;
  for (const FragmentInfo &info : fragments) {
    if (!info.stage) {
      error = "interleaved-1f1b needs a stage on every fragment; fragment '" +
              info.key() + "' has none (assign NAME=MESH:STAGE)";
      return std::nullopt;
    }
    stageSet.insert(*info.stage);
    microbatchSet.insert(microbatch(info));
  }
  std::vector<int64_t> stages(stageSet.begin(), stageSet.end());
  int64_t v = stages.size();
  int64_t m = microbatchSet.size();
  int64_t p = numMeshes;
  if (v < 2) {
    error = "interleaved-1f1b needs at least two stages per mesh, this mesh "
            "has " +
            std::to_string(v) + "; use 1f1b";
    return std::nullopt;
  }
  if (m % p != 0) {
    error = "interleaved-1f1b needs the number of microbatches (" +
            std::to_string(m) + ") to be a multiple of the number of meshes (" +
            std::to_string(p) + ")";
    return std::nullopt;
  }
  std::vector<int64_t> mbs(microbatchSet.begin(), microbatchSet.end());
  using Step = std::tuple<int64_t, int64_t, int64_t>; // (isB, mb, chunk)
  std::vector<Step> forward, backward;
  for (int64_t group = 0; group < m / p; ++group) {
    for (int64_t chunk = 0; chunk < v; ++chunk)
      for (int64_t k = 0; k < p; ++k)
        forward.emplace_back(0, mbs[group * p + k], chunk);
    for (int64_t chunk = v - 1; chunk >= 0; --chunk)
      for (int64_t k = 0; k < p; ++k)
        backward.emplace_back(1, mbs[group * p + k], chunk);
  }
  int64_t total = m * v;
  int64_t warmup =
      std::min<int64_t>((p - rank - 1) * 2 + (v - 1) * p, total);
  std::vector<Step> sequence(forward.begin(), forward.begin() + warmup);
  for (int64_t i = 0; i < total - warmup; ++i) {
    sequence.push_back(forward[warmup + i]);
    sequence.push_back(backward[i]);
  }
  sequence.insert(sequence.end(), backward.begin() + (total - warmup),
                  backward.end());
  std::map<Step, int64_t> position;
  for (auto [index, step] : llvm::enumerate(sequence))
    position.emplace(step, index);
  return sortByKey(fragments, [&](const FragmentInfo &info) {
    int64_t chunk = llvm::find(stages, *info.stage) - stages.begin();
    Step step{isBackward(info), microbatch(info), chunk};
    return std::make_tuple(position.at(step), int64_t(0), int64_t(0));
  });
}

} // namespace

std::optional<std::vector<unsigned>>
mlir::mpmd::orderFragments(ScheduleKind kind, ArrayRef<FragmentInfo> fragments,
                           unsigned rank, unsigned numMeshes,
                           std::string &error) {
  if (kind != ScheduleKind::kNone && !checkMicrobatches(fragments, error))
    return std::nullopt;
  switch (kind) {
  case ScheduleKind::kNone:
  case ScheduleKind::kExplicit:
    return sortByKey(fragments, [](const FragmentInfo &) {
      return std::make_tuple(int64_t(0), int64_t(0), int64_t(0));
    });
  case ScheduleKind::kGPipe:
    return sortByKey(fragments, [](const FragmentInfo &info) {
      return std::make_tuple(isBackward(info), microbatch(info), int64_t(0));
    });
  case ScheduleKind::k1F1B: {
    int64_t delay = static_cast<int64_t>(numMeshes) - rank;
    return sortByKey(fragments, [&](const FragmentInfo &info) {
      int64_t backward = isBackward(info);
      return std::make_tuple(microbatch(info) + delay * backward, -backward,
                             int64_t(0));
    });
  }
  case ScheduleKind::kInterleaved1F1B:
    return interleaved(fragments, rank, numMeshes, error);
  case ScheduleKind::kZeroBubbleH1:
    return orderZeroBubbleH1(fragments, rank, numMeshes, error);
  }
  return std::nullopt;
}
