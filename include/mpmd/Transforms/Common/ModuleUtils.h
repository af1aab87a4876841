//===- ModuleUtils.h - Helpers every phase uses on MPMD modules -*- C++ -*-===//

#ifndef MPMD_TRANSFORMS_COMMON_MODULEUTILS_H
#define MPMD_TRANSFORMS_COMMON_MODULEUTILS_H

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace mlir::mpmd {

/// The functions an MPMD program starts from: those with a `topology`
/// attribute. Emits an error on `module` when there is none, or when a
/// `topology` attribute is not an #mpmd.topology or its function has no
/// body or does not end in func.return; and on any function of the module
/// with an empty name (`@""`), which every pass refuses.
FailureOr<SmallVector<func::FuncOp>> getEntryFunctions(ModuleOp module);

/// Calls `fn` with each attribute of `op`: its discardable ones and the
/// inherent ones kept in its properties, one by one (without building the
/// dictionary of all of them, as Operation::getAttrDictionary does for
/// every op it is asked about).
void forEachAttribute(Operation *op,
                      llvm::function_ref<void(Attribute)> fn);

/// Calls `fn` once with each distinct symbol reference in the attributes
/// of `root` and of the ops nested in it (inherent and discardable, nested
/// in other attributes or not).
void forEachSymbolRef(Operation *root,
                      llvm::function_ref<void(SymbolRefAttr)> fn);

/// Renames the flat symbol references in `root` and the ops nested in it
/// (attributes and op properties: callees, shardings, sharding constraints,
/// manual computations): `rename` gives a reference's new name, or nothing
/// to keep it. Returns whether any was renamed.
bool renameSymbolRefs(
    Operation *root,
    llvm::function_ref<std::optional<StringRef>(StringRef)> rename);

/// Makes every reference in `root` and the ops nested in it to a symbol
/// named in `meshSymbols` refer to `to` instead (renameSymbolRefs). Returns
/// whether any did.
bool renameMeshSymbols(Operation *root, const llvm::StringSet<> &meshSymbols,
                       StringRef to);

/// Emits an error naming `what` unless `mesh` is in `topology`.
LogicalResult checkMeshExists(TopologyAttr topology, StringRef mesh,
                              function_ref<InFlightDiagnostic()> emitError,
                              const Twine &what);

/// The func.func `call` (a func.call or mpmd.call) calls, if it can be
/// inlined: it exists, has a body, and the body is one block. Emits an error
/// on `call` naming the callee otherwise.
FailureOr<func::FuncOp> lookupInlinableCallee(Operation *call,
                                              FlatSymbolRefAttr callee,
                                              SymbolTableCollection &symbols);

/// Clones the ops of single-block `body` (not its terminator) before
/// `builder`'s insertion point, with `body`'s arguments replaced by `args`;
/// `onClone` sees each cloned top-level op. Returns the values the
/// terminator returned, as cloned.
SmallVector<Value> cloneBlockBody(Block &body, ValueRange args,
                                  OpBuilder &builder,
                                  function_ref<void(Operation *)> onClone = {});

/// Erases the private functions among `callees` that nothing refers to any
/// more, repeatedly (callees may call each other).
void eraseUnusedPrivateFunctions(llvm::SmallPtrSetImpl<Operation *> &callees,
                                 ModuleOp module);

/// Emits an error on the first call (func.call or mpmd.call) that closes a
/// cycle of calls among the functions `roots` reach: recursion cannot be
/// inlined or unrolled.
LogicalResult checkNoRecursion(ArrayRef<func::FuncOp> roots,
                               SymbolTableCollection &symbols);

/// How many ops inlining and unrolling may create in one pass run: a
/// program past it (a loop of 2**32 iterations, calls that double at every
/// level) is reported instead of exhausting memory. Unrolled programs of
/// thousands of microbatches stay far below it.
class GrowthBudget {
public:
  static constexpr uint64_t kMaxOps = 5'000'000;

  /// Counts `ops` more ops; an error on `at` (saying it would create more
  /// than kMaxOps by `what`) once the total passes the budget.
  LogicalResult spend(uint64_t ops, Operation *at, StringRef what);

private:
  uint64_t spent = 0;
};

/// The number of ops in `block`, nested ones included, its terminator not.
/// Bits per element of `type`: twice its parts' for complex numbers, 32
/// for element types without a bit width (an estimate).
int64_t elementBits(Type type);

/// Bytes of `shape` elements of `type` (rounded up to whole bytes).
int64_t tensorBytes(int64_t elements, Type elementType);

uint64_t countOps(Block &block);

/// How the pipelines canonicalize: without MLIR's region simplification
/// (block argument and block merging), which the MPMD program does not need
/// (fragments drop unused arguments themselves) and which doubles the time
/// of canonicalization on unrolled programs.
GreedyRewriteConfig canonicalizeWithoutRegionSimplify();

/// `"m1", "m2"` for diagnostics.
std::string formatMeshList(ArrayRef<StringRef> meshes);

/// What `print` writes, as a string, through a buffer: a plain
/// llvm::raw_string_ostream is unbuffered and appends each piece to the
/// string on its own, which makes printing a module or a large JSON
/// document (escaped character by character) several times slower.
std::string printBuffered(llvm::function_ref<void(llvm::raw_ostream &)> print);

} // namespace mlir::mpmd

#endif // MPMD_TRANSFORMS_COMMON_MODULEUTILS_H
