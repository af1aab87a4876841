//===- MpmdDialect.cpp - The mpmd dialect ---------------------------------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::mpmd;

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.cpp.inc"
#include "mpmd/Dialect/Mpmd/IR/MpmdEnums.cpp.inc"

void MpmdDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "mpmd/Dialect/Mpmd/IR/MpmdOps.cpp.inc"
      >();
}

TopologyAttr mlir::mpmd::getEnclosingTopology(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  while (func) {
    if (auto topology = func->getAttrOfType<TopologyAttr>(
            MpmdDialect::kTopologyAttrName))
      return topology;
    func = func->getParentOfType<func::FuncOp>();
  }
  return {};
}

LogicalResult mlir::mpmd::verifyMeshInTopology(Operation *op,
                                               StringRef meshName,
                                               StringRef what) {
  TopologyAttr topology = getEnclosingTopology(op);
  if (!topology || topology.hasMesh(meshName))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << what << " refers to mesh \"" << meshName
                            << "\", which is not in the topology; known meshes: ";
  llvm::interleaveComma(topology.getMeshNames(), diag,
                        [&](StringRef name) { diag << "\"" << name << "\""; });
  return diag;
}
