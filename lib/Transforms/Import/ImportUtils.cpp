//===- ImportUtils.cpp - Shared helpers of the import passes --------------===//

#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mpmd;

std::optional<NamedAssignment>
NamedAssignment::parse(StringRef text, std::string &error) {
  // Names may contain '=' or ':'; the mesh part is after the last '='.
  size_t eq = text.rfind('=');
  StringRef name = eq == StringRef::npos ? StringRef() : text.take_front(eq);
  StringRef target =
      eq == StringRef::npos ? StringRef() : text.drop_front(eq + 1);
  auto [mesh, stage] = target.split(':');
  if (name.empty() || mesh.empty()) {
    error = ("invalid assignment entry '" + text +
             "': expected NAME=MESH or NAME=MESH:STAGE")
                .str();
    return std::nullopt;
  }
  NamedAssignment entry{name.str(), mesh.str(), std::nullopt};
  if (target.contains(':')) {
    int64_t value;
    if (stage.getAsInteger(10, value) || value < 0) {
      error = ("invalid stage in assignment entry '" + text +
               "': expected a non-negative integer")
                  .str();
      return std::nullopt;
    }
    entry.stage = value;
  }
  return entry;
}

raw_ostream &mlir::mpmd::operator<<(raw_ostream &os,
                                    const NamedAssignment &entry) {
  os << entry.name << "=" << entry.mesh;
  if (entry.stage)
    os << ":" << *entry.stage;
  return os;
}

std::optional<IndexedAssignment>
IndexedAssignment::parse(StringRef text, std::string &error) {
  auto [indexText, target] = text.split('=');
  auto [mesh, memoryKind] = target.split(':');
  int64_t index;
  if (indexText.getAsInteger(10, index) || index < 0 || mesh.empty()) {
    error = ("invalid entry '" + text +
             "': expected INDEX=MESH or INDEX=MESH:MEMORY_KIND")
                .str();
    return std::nullopt;
  }
  return IndexedAssignment{index, mesh.str(), memoryKind.str()};
}

raw_ostream &mlir::mpmd::operator<<(raw_ostream &os,
                                    const IndexedAssignment &entry) {
  os << entry.index << "=" << entry.mesh;
  if (!entry.memoryKind.empty())
    os << ":" << entry.memoryKind;
  return os;
}

FailureOr<llvm::StringMap<MeshAssignment>>
mlir::mpmd::collectMeshAssignment(ArrayRef<NamedAssignment> entries,
                                  function_ref<InFlightDiagnostic()> emitError) {
  llvm::StringMap<MeshAssignment> result;
  for (const NamedAssignment &entry : entries) {
    auto [mesh, kind] = StringRef(entry.mesh).split('#');
    if (!kind.empty() && kind != "device" && kind != "pinned_host" &&
        kind != "unpinned_host")
      return emitError() << "assignment of '" << entry.name << "' to \""
                         << entry.mesh << "\" names memory kind \"" << kind
                         << "\"; expected \"device\", \"pinned_host\" or "
                            "\"unpinned_host\"";
    auto [it, inserted] = result.try_emplace(
        entry.name,
        MeshAssignment{mesh.str(), entry.stage,
                       kind == "device" ? std::string() : kind.str()});
    if (!inserted)
      return emitError() << "'" << entry.name << "' is assigned twice (to \""
                         << it->second.mesh << "\" and \"" << entry.mesh
                         << "\"); keep one entry per name";
  }
  return result;
}

FailureOr<std::map<int64_t, IoAssignment>>
mlir::mpmd::collectIoAssignment(ArrayRef<IndexedAssignment> entries,
                                StringRef optionName,
                                function_ref<InFlightDiagnostic()> emitError) {
  std::map<int64_t, IoAssignment> result;
  for (const IndexedAssignment &entry : entries) {
    auto [it, inserted] = result.try_emplace(
        entry.index, IoAssignment{entry.mesh, entry.memoryKind});
    if (!inserted)
      return emitError() << optionName << " assigns index " << entry.index
                         << " twice (to \"" << it->second.mesh << "\" and \""
                         << entry.mesh << "\")";
  }
  return result;
}

void mlir::mpmd::labelWithLoop(Operation *op, StringAttr schedule,
                               StringAttr loop) {
  op->walk([&](Operation *nested) {
    if (isa<NamedComputationOp, FragmentOp, func::CallOp, CallOp>(nested) &&
        !nested->hasAttr(kLoopAttrName)) {
      nested->setAttr(kLoopScheduleAttrName, schedule);
      nested->setAttr(kLoopAttrName, loop);
    }
  });
}

void mlir::mpmd::labelWithCounter(Operation *op, IntegerAttr counter) {
  op->walk([&](Operation *nested) {
    if (isa<NamedComputationOp, FragmentOp, func::CallOp, CallOp>(nested)) {
      if (!nested->hasAttr(MpmdDialect::kCallCounterAttrName))
        nested->setAttr(MpmdDialect::kCallCounterAttrName, counter);
      return;
    }
    // Nameless ops of the iteration itself (or of a loop in it), not those
    // in the regions of other ops: mesh inference turns each into an
    // inferred fragment of this iteration.
    StringRef dialect = nested->getName().getDialectNamespace();
    if ((nested == op || isa<ForOp>(nested->getParentOp())) &&
        dialect != MpmdDialect::getDialectNamespace() && dialect != "func" &&
        !nested->hasAttr(kLoopIterationAttrName))
      nested->setAttr(kLoopIterationAttrName, counter);
  });
}
