//===- Options.h - Typed options of the optimize phase ----------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_OPTIMIZE_OPTIONS_H
#define MPMD_TRANSFORMS_OPTIMIZE_OPTIONS_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/OptionParsers.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mpmd {

/// The order of one mesh in an explicit schedule: fragment keys
/// (FragmentInfo::key). `loop` is empty for the function's schedule, else
/// the loop (`mpmd.loop`) whose own explicit schedule this is. Textual form
/// `MESH=KEY|KEY|...`, or `MESH@LOOP=KEY|...` for a loop.
struct MeshOrder {
  std::string mesh;
  std::vector<std::string> keys;
  std::string loop;

  static std::optional<MeshOrder> parse(StringRef text, std::string &error);
  bool operator==(const MeshOrder &other) const {
    return mesh == other.mesh && keys == other.keys && loop == other.loop;
  }
  bool operator!=(const MeshOrder &other) const { return !(*this == other); }
};
raw_ostream &operator<<(raw_ostream &os, const MeshOrder &order);

/// Fragments labelled `first` and `second` (FragmentInfo::label) with the
/// same call counter on one mesh become one program. Textual form `A:B`.
struct MergeRule {
  std::string first;
  std::string second;

  static std::optional<MergeRule> parse(StringRef text, std::string &error);
  bool operator==(const MergeRule &other) const {
    return first == other.first && second == other.second;
  }
  bool operator!=(const MergeRule &other) const { return !(*this == other); }
};
raw_ostream &operator<<(raw_ostream &os, const MergeRule &rule);

/// Evaluates a schedule the client holds (a table, a comparator) over the
/// user fragments of the program, in program order: the order of each
/// mesh, or nullopt with `error` set.
using OrderProvider = std::function<std::optional<std::vector<MeshOrder>>(
    ArrayRef<FragmentInfo> fragments, std::string &error)>;

/// Evaluates merge rules the client holds (a predicate) over the user
/// fragments: the label pairs to merge, or nullopt with `error` set.
using MergeRuleProvider = std::function<std::optional<std::vector<MergeRule>>(
    ArrayRef<FragmentInfo> fragments, std::string &error)>;

/// Every option of the optimize phase, typed: what C++ and Python callers
/// fill. The providers are for in-process callers only.
struct OptimizeOptions {
  ScheduleKind schedule = ScheduleKind::kNone;
  /// For ScheduleKind::kExplicit: the order of every mesh, given...
  std::vector<MeshOrder> order;
  /// ...or computed from the fragments (after the split, when asked for).
  OrderProvider orderProvider;
  /// Split backward fragments for zero-bubble schedules; zero-bubble-h1
  /// implies it.
  bool splitBackward = false;
  std::vector<MergeRule> mergeRules;
  MergeRuleProvider mergeRuleProvider;
  bool mergeLastStage = false;
  /// Recompute forward fragments before their backward (after the schedule
  /// and merges), and fuse each copy into that backward.
  bool remat = false;
  bool mergeRemat = false;
  /// Move forward residuals to pinned host memory until their backward
  /// (last, after remat), for the forwards of `offloadNames` (all when
  /// empty).
  bool offloadActivations = false;
  std::vector<std::string> offloadNames;
};

} // namespace mlir::mpmd

MPMD_ENUM_OPTION_PARSER(::mlir::mpmd::ScheduleKind, ScheduleKind)
MPMD_OPTION_PARSER(::mlir::mpmd::MeshOrder)
MPMD_OPTION_PARSER(::mlir::mpmd::MergeRule)

#endif // MPMD_TRANSFORMS_OPTIMIZE_OPTIONS_H
