//===- VerifyImport.cpp - Every op of an entry function is in a fragment --===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Import/ImportUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_VERIFYIMPORTPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

struct VerifyImportPass
    : public EntryFunctionPass<VerifyImportPass, mlir::mpmd::impl::VerifyImportPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp func) {
    // Tokens live on no mesh: they stay as they are (fragments take and
    // return them).
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
      if (!isa<MeshTensorType>(type) && !stablehlo::isTokenType(type)) {
        func.emitError() << "import left argument " << index << " of @"
                         << func.getSymName() << " off the meshes (" << type
                         << ")";
        return failure();
      }
    for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
      if (!isa<MeshTensorType>(type) && !stablehlo::isTokenType(type)) {
        func.emitError() << "import left result " << index << " of @"
                         << func.getSymName() << " off the meshes (" << type
                         << ")";
        return failure();
      }
    for (Operation &op : func.getBody().front()) {
      if (isa<FragmentOp, TransferOp, func::ReturnOp>(op))
        continue;
      op.emitOpError() << "is outside any fragment after import; every "
                          "computation must be placed on a mesh";
      return failure();
    }
    return success();
  }
};

} // namespace
