//===- Schedules.h - Built-in pipeline schedules ----------------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_OPTIMIZE_SCHEDULES_H
#define MPMD_TRANSFORMS_OPTIMIZE_SCHEDULES_H

#include "mpmd/Transforms/Common/FragmentUtils.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir::mpmd {

/// The order a built-in schedule gives the user fragments of one mesh.
/// `fragments` are in program order; `rank` is the mesh's position in the
/// pipeline (0 = first) among `numMeshes`. Returns indices into `fragments`,
/// or an error message.
std::optional<std::vector<unsigned>>
orderFragments(ScheduleKind kind, llvm::ArrayRef<FragmentInfo> fragments,
               unsigned rank, unsigned numMeshes, std::string &error);

/// Zero-bubble H1 (ZeroBubble.cpp): fragments are forward (kind 0),
/// backward input-gradient (kind 1) and weight-gradient (kind 3) parts.
std::optional<std::vector<unsigned>>
orderZeroBubbleH1(llvm::ArrayRef<FragmentInfo> fragments, unsigned rank,
                  unsigned numMeshes, std::string &error);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_OPTIMIZE_SCHEDULES_H
