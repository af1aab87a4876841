//===- ModuleUtils.cpp - Helpers every phase uses on MPMD modules ---------===//

#include "mpmd/Transforms/Common/ModuleUtils.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>

using namespace mlir;
using namespace mlir::mpmd;

FailureOr<SmallVector<func::FuncOp>>
mlir::mpmd::getEntryFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    // MLIR's verifier accepts `@""`, but nothing can call such a function
    // and it prints as `@<<INVALID EMPTY SYMBOL>>`, which does not parse.
    if (func.getSymName().empty())
      return func.emitError()
             << "function has an empty name; give it a name, e.g. "
                "func.func @main";
    Attribute attr = func->getAttr(MpmdDialect::kTopologyAttrName);
    if (!attr)
      continue;
    if (func.isExternal())
      return func.emitError()
             << "entry function @" << func.getSymName()
             << " (it has a topology) has no body; give it one, or drop "
                "its 'topology' attribute";
    // The passes read the results where func.return returns them.
    Block &last = func.getBody().back();
    if (last.empty() || !isa<func::ReturnOp>(last.back()))
      return func.emitError()
             << "entry function @" << func.getSymName()
             << " must end with func.return, which returns its results";
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

std::string mlir::mpmd::printBuffered(
    llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os.SetBufferSize(1 << 16);
  print(os);
  os.flush();
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

void mlir::mpmd::forEachAttribute(Operation *op,
                                  llvm::function_ref<void(Attribute)> fn) {
  // Ops without properties keep every attribute here.
  for (NamedAttribute attr : op->getRawDictionaryAttrs())
    fn(attr.getValue());
  if (!op->getPropertiesStorageSize())
    return;
  // An unregistered op (a dialect this build does not load, with its
  // `<{...}>` parsed) keeps its properties as one attribute.
  if (!op->getName().isRegistered()) {
    if (Attribute properties = op->getPropertiesAsAttribute())
      fn(properties);
    return;
  }
  NamedAttrList inherent;
  op->getName().populateInherentAttrs(op, inherent);
  for (NamedAttribute attr : inherent)
    fn(attr.getValue());
}

void mlir::mpmd::forEachSymbolRef(Operation *root,
                                  llvm::function_ref<void(SymbolRefAttr)> fn) {
  // The walker visits each attribute once, however many ops hold it.
  AttrTypeWalker walker;
  walker.addWalk([&](SymbolRefAttr ref) { fn(ref); });
  root->walk([&](Operation *op) {
    forEachAttribute(op, [&](Attribute attr) { walker.walk(attr); });
  });
}

void mlir::mpmd::eraseUnusedPrivateFunctions(
    llvm::SmallPtrSetImpl<Operation *> &callees, ModuleOp module) {
  // One walk per round collects every name referred to (from any symbol
  // table: a use it may not be is still kept); a round that erases may
  // leave the callees those called unused.
  for (bool erased = true; erased && !callees.empty();) {
    erased = false;
    llvm::DenseSet<StringAttr> used;
    forEachSymbolRef(module, [&](SymbolRefAttr ref) {
      used.insert(ref.getRootReference());
    });
    for (Operation *callee : llvm::to_vector(callees)) {
      auto func = cast<func::FuncOp>(callee);
      if (func.isPrivate() && !used.contains(func.getSymNameAttr())) {
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
  // func.func verifies only func.return against its signature.
  Block &body = func.getBody().front();
  if (body.empty() || !isa<func::ReturnOp>(body.back()))
    return call->emitOpError()
           << "calls @" << callee.getValue()
           << ", whose body does not end in func.return; it cannot be "
              "inlined";
  return func;
}

GreedyRewriteConfig mlir::mpmd::canonicalizeWithoutRegionSimplify() {
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

bool mlir::mpmd::renameSymbolRefs(
    Operation *root,
    llvm::function_ref<std::optional<StringRef>(StringRef)> rename) {
  MLIRContext *ctx = root->getContext();
  bool renamed = false;
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
        std::optional<StringRef> to = rename(ref.getValue());
        if (!to)
          return std::nullopt;
        renamed = true;
        return FlatSymbolRefAttr::get(ctx, *to);
      });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/false);
  // The replacer sees discardable attributes only; ops JAX prints in generic
  // form (sdy.sharding_constraint, sdy.manual_computation) keep their
  // shardings in properties, func.call its callee.
  root->walk([&](Operation *op) {
    if (!op->getPropertiesStorageSize())
      return;
    if (!op->getName().isRegistered()) {
      Attribute properties = op->getPropertiesAsAttribute();
      Attribute replaced = properties ? replacer.replace(properties) : nullptr;
      if (replaced != properties)
        (void)op->setPropertiesFromAttribute(replaced, /*emitError=*/nullptr);
      return;
    }
    NamedAttrList inherent;
    op->getName().populateInherentAttrs(op, inherent);
    for (NamedAttribute attr : inherent) {
      Attribute replaced = replacer.replace(attr.getValue());
      if (replaced != attr.getValue())
        op->setInherentAttr(attr.getName(), replaced);
    }
  });
  return renamed;
}

bool mlir::mpmd::renameMeshSymbols(Operation *root,
                                   const llvm::StringSet<> &meshSymbols,
                                   StringRef to) {
  return renameSymbolRefs(root, [&](StringRef name) -> std::optional<StringRef> {
    if (!meshSymbols.contains(name))
      return std::nullopt;
    return to;
  });
}

LogicalResult mlir::mpmd::checkNoRecursion(ArrayRef<func::FuncOp> roots,
                                           SymbolTableCollection &symbols) {
  // Depth-first over the call graph; a call to a function on the stack
  // closes a cycle.
  llvm::DenseMap<Operation *, int> state; // 1: on the stack, 2: done
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    state[func] = 1;
    WalkResult walk = func.walk([&](Operation *op) {
      FlatSymbolRefAttr callee;
      if (auto call = dyn_cast<func::CallOp>(op))
        callee = call.getCalleeAttr();
      else if (auto call = dyn_cast<CallOp>(op))
        callee = call.getCalleeAttr();
      if (!callee)
        return WalkResult::advance();
      auto target = symbols.lookupNearestSymbolFrom<func::FuncOp>(op, callee);
      if (!target || target.isExternal())
        return WalkResult::advance();
      int seen = state.lookup(target);
      if (seen == 1) {
        op->emitOpError() << "calls @" << callee.getValue()
                          << " recursively (@" << func.getSymName()
                          << " is reached from it); mpmd cannot inline or "
                             "unroll recursive calls";
        return WalkResult::interrupt();
      }
      if (seen == 0 && failed(visit(target)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    state[func] = 2;
    return failure(walk.wasInterrupted());
  };
  for (func::FuncOp root : roots)
    if (!state.lookup(root) && failed(visit(root)))
      return failure();
  return success();
}

LogicalResult GrowthBudget::spend(uint64_t ops, Operation *at,
                                  StringRef what) {
  if (ops > kMaxOps || spent + ops > kMaxOps)
    return at->emitOpError()
           << "not supported yet: " << what << " would make the program "
           << "larger than " << kMaxOps << " ops (" << spent + ops
           << " or more)";
  spent += ops;
  return success();
}

uint64_t mlir::mpmd::countOps(Block &block) {
  uint64_t count = 0;
  for (Operation &op : block.without_terminator())
    op.walk([&](Operation *) { ++count; });
  return count;
}

int64_t mlir::mpmd::elementBits(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBits(complex.getElementType());
  if (type.isIntOrIndexOrFloat() && !type.isIndex())
    return type.getIntOrFloatBitWidth();
  return 32;
}

int64_t mlir::mpmd::tensorBytes(int64_t elements, Type elementType) {
  return (elements * elementBits(elementType) + 7) / 8;
}
