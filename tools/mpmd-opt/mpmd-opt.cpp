//===- mpmd-opt.cpp - The mpmd optimizer driver ---------------------------===//
//
// Parses, verifies and transforms MLIR with the mpmd, sdy-compat and
// stablehlo-compat dialects and every mpmd pass and pipeline registered.
//
//===----------------------------------------------------------------------===//

#include "mpmd/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mpmd::registerAllDialects(registry);
  mlir::mpmd::registerAllPasses();
  // JAX modules carry chlo/mhlo and other ops that we keep opaque, so unknown
  // dialects are accepted by default (`--allow-unregistered-dialect=false`
  // turns that off).
  llvm::SmallVector<char *> args(argv, argv + argc);
  bool userSetIt = llvm::any_of(args, [](const char *arg) {
    return llvm::StringRef(arg).starts_with("--allow-unregistered-dialect") ||
           llvm::StringRef(arg).starts_with("-allow-unregistered-dialect");
  });
  static char allowFlag[] = "--allow-unregistered-dialect";
  if (!userSetIt)
    args.insert(args.begin() + 1, allowFlag);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      static_cast<int>(args.size()), args.data(), "mpmd optimizer driver\n",
      registry));
}
