//===- mpmd-opt.cpp - The mpmd optimizer driver ---------------------------===//
//
// Parses, verifies and transforms MLIR with the mpmd, sdy-compat and
// stablehlo-compat dialects and every mpmd pass and pipeline registered.
//
//===----------------------------------------------------------------------===//

#include "mpmd/InitAll.h"
#include "mpmd/Support/ParserGuards.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

/// An error instead of the crash of MLIR's parser on inputs it cannot
/// handle (mpmd/Support/ParserGuards.h). Standard input is not checked: it
/// can be read only once.
static bool hasParserHazard(llvm::StringRef inputFilename) {
  if (inputFilename == "-")
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(inputFilename);
  if (!buffer)
    return false; // MlirOptMain reports the missing file
  llvm::StringRef text = (*buffer)->getBuffer();
  mlir::mpmd::ParserHazard hazard = mlir::mpmd::findParserHazard(text);
  if (!hazard)
    return false;
  auto [line, column] = hazard.lineAndColumn(text);
  llvm::errs() << inputFilename << ":" << line << ":" << column
               << ": error: " << hazard.message << "\n";
  return true;
}

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
  int count = static_cast<int>(args.size());
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      count, args.data(), "mpmd optimizer driver\n", registry);
  if (hasParserHazard(inputFilename))
    return EXIT_FAILURE;
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      count, args.data(), inputFilename, outputFilename, registry));
}
