//===- Passes.h - Export passes and the mpmd-export pipeline ----*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_EXPORT_PASSES_H
#define MPMD_TRANSFORMS_EXPORT_PASSES_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/Pass/Pass.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::mpmd {

#define GEN_PASS_DECL
#include "mpmd/Transforms/Export/Passes.h.inc"

/// Bytes per device that other live values take on a fragment's mesh while
/// it runs (mpmd-mark-fragment-reserved-memory), on fragments and programs.
inline constexpr llvm::StringLiteral kReservedHbmBytesAttrName =
    "reserved_hbm_bytes";

/// Adds the export passes to `pm` (a module pass manager).
void addExportPipeline(OpPassManager &pm);

/// Registers the export passes and the `mpmd-export` pipeline.
void registerExportPasses();

/// The execution plan of an exported module (see PrintExecutionPlanPass) as
/// JSON text. Emits errors on the module when it is not an exported program.
/// Without `withProgramTexts` the programs carry no "module" text: printing
/// them is most of the plan's cost, and buildProgramTexts gives them when
/// they are compiled.
FailureOr<std::string> buildExecutionPlan(ModuleOp module,
                                          bool withProgramTexts = true);

/// The texts of the programs of `module`'s plan, by program name in the
/// order of their first calls: what buildExecutionPlan writes as each
/// program's "module" (equal programs share one text).
FailureOr<std::vector<std::pair<std::string, std::string>>>
buildProgramTexts(ModuleOp module);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_EXPORT_PASSES_H
