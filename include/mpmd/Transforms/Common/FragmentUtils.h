//===- FragmentUtils.h - Helpers shared by passes on fragments --*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H
#define MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include <optional>
#include <string>

namespace mlir::mpmd {

/// What a schedule knows about a fragment (DESIGN.md section 5).
struct FragmentInfo {
  /// `layer1`, `layer1(1)`, ... one per origin.
  SmallVector<std::string> origins;
  std::optional<int64_t> stage;
  std::optional<uint64_t> callCounter;
  std::string mesh;
  /// 0: every origin is a forward computation; 1: every origin is a
  /// transpose; 2: a mix (e.g. a merged forward and backward); 3: the
  /// weight-gradient part of a split backward (`mpmd.weight_gradient`).
  int kind = 0;

  /// `layer1+layer1(1)`: the origins, without the call counter; weight-
  /// gradient parts end in `[w]`.
  std::string label() const;
  /// `layer1(1)#3`: the label and the call counter, unique on a mesh.
  std::string key() const;
};

FragmentInfo getFragmentInfo(FragmentOp fragment);

/// Discardable attribute marking the weight-gradient part of a backward
/// fragment split for zero-bubble schedules.
inline constexpr llvm::StringLiteral kWeightGradientAttrName =
    "mpmd.weight_gradient";

/// Fuses `first` and `second` (same mesh, `first` earlier in the block) into
/// one fragment created right before `anchor` (one of the two), which must
/// be a valid position: the caller checks that `second`'s operands exist
/// there (anchor == first) or that nothing between them reads `first`'s
/// results (anchor == second). The merged fragment has `first`'s results
/// then `second`'s, the union of the origins, the first stage found, and
/// both fragments' discardable attributes. Both are erased.
FragmentOp mergeFragments(FragmentOp first, FragmentOp second,
                          FragmentOp anchor);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_COMMON_FRAGMENTUTILS_H
