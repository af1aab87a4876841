//===- ZeroBubble.cpp - The zero-bubble H1 schedule -----------------------===//
//
// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023) on p meshes
// and m microbatches, for the mesh at pipeline position r, with F, B and W
// the forward, input-gradient and weight-gradient parts of microbatch k:
//
//   - F and B keep the order of 1F1B: p - r warm-up forwards, then one B per
//     F, then the remaining B's.
//   - W_k is deferred until after B_(k+r): the first mesh (r = 0) runs each W
//     right after its B, as 1F1B would; mesh r keeps r weight gradients
//     pending. Those W's then fill the time the mesh would otherwise wait
//     for the next B at the end of the step, and the earlier B's let the
//     input gradients reach the previous meshes sooner.
//   - W comes before the following F: a microbatch holds activations from
//     its F to its W, so every mesh has at most (p - r) + r = p microbatches
//     in flight, the peak of 1F1B (on its first mesh).
//   - the W's still pending after the last B run at the end.
//
// So mesh r runs: F_0 .. F_(p-r-1), then for k = 0 .. m-1: B_k, W_(k-r) if
// k >= r, F_(k+p-r) if there is one; then W_(m-r) .. W_(m-1). With equal F,
// B and W costs and m >= p, every mesh idles p - 1 units before its first B
// and never after: the bubble is (p - 1) / (3m + p - 1), a third of what
// 1F1B leaves with the same split fragments.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Optimize/Schedules.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::mpmd;

namespace {

enum class Part { kForward, kInputGradient, kWeightGradient };

Part partOf(const FragmentInfo &info) {
  switch (info.kind) {
  case FragmentKind::kBackward:
    return Part::kInputGradient;
  case FragmentKind::kWeightGradient:
    return Part::kWeightGradient;
  default:
    // A merged forward+backward starts with its forward: it goes where the
    // forward would.
    return Part::kForward;
  }
}

int64_t microbatchOf(const FragmentInfo &info) {
  return info.callCounter ? static_cast<int64_t>(*info.callCounter) : 0;
}

std::string describe(const std::set<int64_t> &set) {
  std::string text;
  for (int64_t value : set)
    text += (text.empty() ? "" : ", ") + std::to_string(value);
  return "{" + text + "}";
}

} // namespace

std::optional<std::vector<unsigned>>
mlir::mpmd::orderZeroBubbleH1(ArrayRef<FragmentInfo> fragments, unsigned rank,
                              unsigned numMeshes, std::string &error) {
  std::set<int64_t> forward, inputGradient, weightGradient;
  for (const FragmentInfo &info : fragments) {
    switch (partOf(info)) {
    case Part::kForward:
      forward.insert(microbatchOf(info));
      break;
    case Part::kInputGradient:
      inputGradient.insert(microbatchOf(info));
      break;
    case Part::kWeightGradient:
      weightGradient.insert(microbatchOf(info));
      break;
    }
  }
  // On the first mesh W directly follows its B, so a backward left whole
  // there (the first stage sends no input gradient anywhere, so
  // mpmd-split-backward keeps it in one piece) is already in ZB-H1 order.
  // Anywhere else the whole backward would hold back the previous mesh.
  if (weightGradient.empty() && !inputGradient.empty() && rank != 0) {
    error = "zero-bubble-h1 needs split backward fragments: run "
            "mpmd-split-backward first";
    return std::nullopt;
  }
  if (!weightGradient.empty() && weightGradient != inputGradient) {
    error = "weight-gradient fragments have microbatches " +
            describe(weightGradient) +
            " but input-gradient fragments have " + describe(inputGradient) +
            "; zero-bubble-h1 needs every backward split in two";
    return std::nullopt;
  }
  std::set<int64_t> backward = inputGradient;
  backward.insert(weightGradient.begin(), weightGradient.end());
  if (!backward.empty() && forward != backward) {
    error = "forward fragments have microbatches " + describe(forward) +
            " but backward fragments have " + describe(backward) +
            "; every microbatch needs both (check the call counters)";
    return std::nullopt;
  }

  // The sequence over positions 0 .. m-1 of the sorted microbatches, so that
  // call counters need not start at 0 or be contiguous.
  std::vector<int64_t> microbatches(forward.begin(), forward.end());
  int64_t m = microbatches.size();
  int64_t r = rank;
  int64_t warmup = std::min<int64_t>(static_cast<int64_t>(numMeshes) - r, m);
  using Step = std::pair<Part, int64_t>;
  std::vector<Step> sequence;
  for (int64_t k = 0; k < warmup; ++k)
    sequence.emplace_back(Part::kForward, k);
  for (int64_t k = 0; k < m; ++k) {
    sequence.emplace_back(Part::kInputGradient, k);
    if (k >= r)
      sequence.emplace_back(Part::kWeightGradient, k - r);
    if (k + warmup < m)
      sequence.emplace_back(Part::kForward, k + warmup);
  }
  for (int64_t k = std::max<int64_t>(m - r, 0); k < m; ++k)
    sequence.emplace_back(Part::kWeightGradient, k);

  std::map<Step, unsigned> position;
  for (auto [index, step] : llvm::enumerate(sequence))
    position.emplace(step, index);
  std::vector<unsigned> order(fragments.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  auto key = [&](unsigned i) {
    const FragmentInfo &info = fragments[i];
    int64_t index = llvm::lower_bound(microbatches, microbatchOf(info)) -
                    microbatches.begin();
    return position.at({partOf(info), index});
  };
  // Fragments sharing a step (several computations of one stage and
  // microbatch) keep their program order.
  std::stable_sort(order.begin(), order.end(),
                   [&](unsigned a, unsigned b) { return key(a) < key(b); });
  return order;
}
