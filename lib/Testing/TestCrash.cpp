//===- TestCrash.cpp - A pass that crashes on purpose ---------------------===//
//
// `mpmd-test-crash{mode=signal}` dereferences a null pointer,
// `mode=fatal-error` calls llvm::report_fatal_error, `mode=none` does
// nothing: the tests of the Python extension's crash recovery and of
// mpmd-opt's crash reproducer need a pass that really crashes.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Testing/TestPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace {

struct TestCrashPass
    : public PassWrapper<TestCrashPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCrashPass)

  TestCrashPass() = default;
  TestCrashPass(const TestCrashPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "mpmd-test-crash"; }
  StringRef getDescription() const final {
    return "Test only: crashes (mode=signal or fatal-error) to exercise "
           "crash recovery";
  }

  void runOnOperation() override {
    if (mode == "signal") {
      // A volatile null pointer: the compiler may not assume it is valid.
      volatile int *nowhere = nullptr;
      *nowhere = 1;
    } else if (mode == "fatal-error") {
      llvm::report_fatal_error("mpmd-test-crash: a fatal error on purpose");
    }
  }

  Option<std::string> mode{*this, "mode",
                           llvm::cl::desc("signal, fatal-error or none"),
                           llvm::cl::init("none")};
};

} // namespace

void mlir::mpmd::registerTestPasses() { PassRegistration<TestCrashPass>(); }
