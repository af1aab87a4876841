//===- ImportUtils.h - Shared helpers of the import passes ------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H
#define MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H

#include "mpmd/Transforms/Common/ModuleUtils.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::mpmd {

/// Where a named computation or named tensor goes.
struct MeshAssignment {
  std::string mesh;
  std::optional<int64_t> stage;
};

/// Parses `NAME=MESH` / `NAME=MESH:STAGE` entries. Errors name the entry:
/// malformed entries and names assigned twice.
FailureOr<llvm::StringMap<MeshAssignment>>
parseMeshAssignment(ArrayRef<std::string> entries,
                    function_ref<InFlightDiagnostic()> emitError);

/// Where a function argument or result goes.
struct IoAssignment {
  std::string mesh;
  std::string memoryKind; // empty: the mesh's default memory
};

/// Parses `INDEX=MESH` / `INDEX=MESH:MEMORY_KIND` entries of `optionName`.
FailureOr<std::map<int64_t, IoAssignment>>
parseIoAssignment(ArrayRef<std::string> entries, StringRef optionName,
                  function_ref<InFlightDiagnostic()> emitError);

/// Labels the named computations, fragments and calls in `op` (itself
/// included) with the call counter `counter` unless an inner loop or call
/// already did. A labelled `func.call` passes its counter on to what
/// mpmd-inline-calls inlines from it.
void labelWithCounter(Operation *op, IntegerAttr counter);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H
