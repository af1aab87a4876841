//===- ImportUtils.cpp - Shared helpers of the import passes --------------===//

#include "mpmd/Transforms/Import/ImportUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mpmd;

FailureOr<llvm::StringMap<MeshAssignment>>
mlir::mpmd::parseMeshAssignment(ArrayRef<std::string> entries,
                                function_ref<InFlightDiagnostic()> emitError) {
  llvm::StringMap<MeshAssignment> result;
  for (StringRef entry : entries) {
    // Names may contain '=' or ':'; the mesh part is after the last '='.
    size_t eq = entry.rfind('=');
    StringRef name = eq == StringRef::npos ? StringRef() : entry.take_front(eq);
    StringRef target = eq == StringRef::npos ? StringRef() : entry.drop_front(eq + 1);
    MeshAssignment assignment;
    auto [mesh, stage] = target.split(':');
    if (name.empty() || mesh.empty())
      return emitError() << "invalid assignment entry '" << entry
                         << "': expected NAME=MESH or NAME=MESH:STAGE";
    assignment.mesh = mesh.str();
    if (target.contains(':')) {
      int64_t value;
      if (stage.getAsInteger(10, value) || value < 0)
        return emitError() << "invalid stage in assignment entry '" << entry
                           << "': expected a non-negative integer";
      assignment.stage = value;
    }
    auto [it, inserted] = result.try_emplace(name, assignment);
    if (!inserted)
      return emitError() << "'" << name << "' is assigned twice (to \""
                         << it->second.mesh << "\" and \"" << assignment.mesh
                         << "\"); keep one entry per name";
  }
  return result;
}

FailureOr<std::map<int64_t, IoAssignment>>
mlir::mpmd::parseIoAssignment(ArrayRef<std::string> entries,
                              StringRef optionName,
                              function_ref<InFlightDiagnostic()> emitError) {
  std::map<int64_t, IoAssignment> result;
  for (StringRef entry : entries) {
    auto [indexText, target] = entry.split('=');
    auto [mesh, memoryKind] = target.split(':');
    int64_t index;
    if (indexText.getAsInteger(10, index) || index < 0 || mesh.empty())
      return emitError() << "invalid " << optionName << " entry '" << entry
                         << "': expected INDEX=MESH or INDEX=MESH:MEMORY_KIND";
    auto [it, inserted] =
        result.try_emplace(index, IoAssignment{mesh.str(), memoryKind.str()});
    if (!inserted)
      return emitError() << optionName << " assigns index " << index
                         << " twice (to \"" << it->second.mesh << "\" and \""
                         << mesh << "\")";
  }
  return result;
}

void mlir::mpmd::labelWithCounter(Operation *op, IntegerAttr counter) {
  op->walk([&](Operation *nested) {
    if (isa<NamedComputationOp, FragmentOp, func::CallOp, CallOp>(nested) &&
        !nested->hasAttr(MpmdDialect::kCallCounterAttrName))
      nested->setAttr(MpmdDialect::kCallCounterAttrName, counter);
  });
}
