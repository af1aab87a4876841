//===- ImportUtils.h - Shared helpers of the import passes ------*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H
#define MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H

#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Common/OptionParsers.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::mpmd {

/// One entry of the assignment: a named computation or named tensor and
/// the mesh (and stage) it goes to. Any name is allowed; in a textual pass
/// option the entry is `NAME=MESH` or `NAME=MESH:STAGE`, the mesh after the
/// last `=`.
struct NamedAssignment {
  std::string name;
  std::string mesh;
  std::optional<int64_t> stage;

  static std::optional<NamedAssignment> parse(StringRef text,
                                              std::string &error);
  bool operator==(const NamedAssignment &other) const {
    return name == other.name && mesh == other.mesh && stage == other.stage;
  }
  bool operator!=(const NamedAssignment &other) const {
    return !(*this == other);
  }
};
raw_ostream &operator<<(raw_ostream &os, const NamedAssignment &entry);

/// Where a function argument or result goes: `INDEX=MESH` or
/// `INDEX=MESH:MEMORY_KIND` in a textual pass option.
struct IndexedAssignment {
  int64_t index = 0;
  std::string mesh;
  std::string memoryKind; // empty: the mesh's default memory

  static std::optional<IndexedAssignment> parse(StringRef text,
                                                std::string &error);
  bool operator==(const IndexedAssignment &other) const {
    return index == other.index && mesh == other.mesh &&
           memoryKind == other.memoryKind;
  }
  bool operator!=(const IndexedAssignment &other) const {
    return !(*this == other);
  }
};
raw_ostream &operator<<(raw_ostream &os, const IndexedAssignment &entry);

/// Where a named computation or named tensor goes.
struct MeshAssignment {
  std::string mesh;
  std::optional<int64_t> stage;
  /// From `MESH#KIND` ("m1#pinned_host", as Shardy:MPMD spells it); empty
  /// when not given or "device". Only named tensors may have one.
  std::string memoryKind;
};

/// The assignment by name. Errors (on `emitError`) name the entries: a
/// name assigned twice, an unknown memory kind.
FailureOr<llvm::StringMap<MeshAssignment>>
collectMeshAssignment(ArrayRef<NamedAssignment> entries,
                      function_ref<InFlightDiagnostic()> emitError);

/// Where a function argument or result goes.
struct IoAssignment {
  std::string mesh;
  std::string memoryKind; // empty: the mesh's default memory
};

/// The assignment by index; `optionName` names the option in errors (an
/// index assigned twice).
FailureOr<std::map<int64_t, IoAssignment>>
collectIoAssignment(ArrayRef<IndexedAssignment> entries, StringRef optionName,
                    function_ref<InFlightDiagnostic()> emitError);

/// Labels the named computations, fragments and calls in `op` (itself
/// included) with the call counter `counter` unless an inner loop or call
/// already did, and its nameless ops with `mpmd.loop_iteration`. A labelled `func.call` passes its counter on to what
/// mpmd-inline-calls inlines from it.
void labelWithCounter(Operation *op, IntegerAttr counter);

/// Labels the named computations, fragments and calls in `op` (itself
/// included) with a loop's own schedule and the loop's name, unless an
/// inner loop already did (`mpmd.loop_schedule`, `mpmd.loop`).
void labelWithLoop(Operation *op, StringAttr schedule, StringAttr loop);

} // namespace mlir::mpmd

MPMD_OPTION_PARSER(::mlir::mpmd::NamedAssignment)
MPMD_OPTION_PARSER(::mlir::mpmd::IndexedAssignment)

#endif // MPMD_TRANSFORMS_IMPORT_IMPORTUTILS_H
