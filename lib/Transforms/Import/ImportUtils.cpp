//===- ImportUtils.cpp - Shared helpers of the import passes --------------===//

#include "mpmd/Transforms/Import/ImportUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mpmd;

FailureOr<SmallVector<func::FuncOp>>
mlir::mpmd::getEntryFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    Attribute attr = func->getAttr(MpmdDialect::kTopologyAttrName);
    if (!attr)
      continue;
    if (!isa<TopologyAttr>(attr))
      return func.emitError()
             << "'topology' attribute of @" << func.getSymName()
             << " must be an #mpmd.topology, e.g. #mpmd.topology<<\"m1\" : "
                "<[\"x\"=2]>>>; got "
             << attr;
    entries.push_back(func);
  }
  if (entries.empty())
    return module.emitError()
           << "no func.func has a 'topology' attribute; put the meshes on "
              "the entry function, e.g. attributes {topology = "
              "#mpmd.topology<<\"m1\" : <[\"x\"=2]>>>}";
  return entries;
}

std::string mlir::mpmd::formatMeshList(ArrayRef<StringRef> meshes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(meshes, os,
                        [&](StringRef mesh) { os << "\"" << mesh << "\""; });
  return text;
}

LogicalResult
mlir::mpmd::checkMeshExists(TopologyAttr topology, StringRef mesh,
                            function_ref<InFlightDiagnostic()> emitError,
                            const Twine &what) {
  if (topology.hasMesh(mesh))
    return success();
  return emitError() << what << " names mesh \"" << mesh
                     << "\", which is not in the topology (meshes: "
                     << formatMeshList(topology.getMeshNames()) << ")";
}

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

SmallVector<Value>
mlir::mpmd::cloneBlockBody(Block &body, ValueRange args, OpBuilder &builder,
                           function_ref<void(Operation *)> onClone) {
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator()) {
    Operation *copy = builder.clone(op, mapping);
    if (onClone)
      onClone(copy);
  }
  return llvm::to_vector(llvm::map_range(
      body.getTerminator()->getOperands(),
      [&](Value value) { return mapping.lookupOrDefault(value); }));
}

void mlir::mpmd::eraseUnusedPrivateFunctions(
    llvm::SmallPtrSetImpl<Operation *> &callees, ModuleOp module) {
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *callee : llvm::to_vector(callees)) {
      auto func = cast<func::FuncOp>(callee);
      if (func.isPrivate() && SymbolTable::symbolKnownUseEmpty(func, module)) {
        callees.erase(callee);
        func.erase();
        erased = true;
      }
    }
  }
}

FailureOr<func::FuncOp>
mlir::mpmd::lookupInlinableCallee(Operation *call, FlatSymbolRefAttr callee,
                                  SymbolTableCollection &symbols) {
  auto func = symbols.lookupNearestSymbolFrom<func::FuncOp>(call, callee);
  if (!func)
    return call->emitOpError() << "calls @" << callee.getValue()
                               << ", which is not a func.func of this module";
  if (func.isExternal())
    return call->emitOpError()
           << "not supported yet: calling the declaration @"
           << callee.getValue() << " (it has no body to place on a mesh)";
  if (!func.getBody().hasOneBlock())
    return call->emitOpError()
           << "not supported yet: inlining @" << callee.getValue()
           << ", whose body has several blocks";
  return func;
}

void mlir::mpmd::labelWithCounter(Operation *op, IntegerAttr counter) {
  op->walk([&](Operation *nested) {
    if (isa<NamedComputationOp, FragmentOp, func::CallOp, CallOp>(nested) &&
        !nested->hasAttr(MpmdDialect::kCallCounterAttrName))
      nested->setAttr(MpmdDialect::kCallCounterAttrName, counter);
  });
}

GreedyRewriteConfig mlir::mpmd::canonicalizeWithoutRegionSimplify() {
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}
