//===- ExecutionPlan.cpp - The plan the runtime executes ------------------===//
//
// The runtime consumes JSON, not MLIR: it needs no MLIR passes and no MLIR
// bindings beyond handing each program's text to XLA. Values are numbered:
// the entry function's arguments first, then the results of each step.
// The plan carries its format version (kExecutionPlanVersion below), which
// the runtime checks before it reads anything else.
//
//   {"version": 1, "function": "main",
//    "meshes": [{"name": "m1", "axes": [["x", 2]]}],   (+ "devices": [0, 1]
//                                                      from IFRT IR)
//    "inputs": [{"mesh": "m1", "shape": [4], "dtype": "f32", ...}],
//    "outputs": [{"value": 3, "mesh": "m2", ...}],
//    "programs": {"p0_stage0_fwd": {"mesh": "m1", "module": "...",
//                                   "in_shardings": [[["x"]]],
//                                   "out_shardings": [null],
//                                   "donated_args": [0], "buffer_donors": [],
//                                   "reserved_bytes": 0, "num_calls": 2}},
//    "steps": [{"op": "call", "program": "p0_stage0_fwd", "mesh": "m1",
//               "inputs": [0], "outputs": [1], "origins": [["layer1", 0]],
//               "call_counter": 0, "free": [0]},
//              {"op": "transfer", "input": 1, "output": 2, "from": "m1",
//               "to": "m2", "free": [1]}]}
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_PRINTEXECUTIONPLANPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// The format version of the plan, its "version" field. The runtime
/// (python/mpmd/runtime/plan.py, PLAN_VERSION) reads exactly this version
/// and refuses others, so bump it (and PLAN_VERSION, and add the new
/// version to "Plan versions" in docs/runtime.md) with any change that a
/// reader of the previous format would misread: a field or a step op the
/// runtime must act on added, a field removed or renamed, or the meaning,
/// unit or numbering of a field changed. A field a reader may ignore
/// without running the program differently (a new optional annotation)
/// needs no bump.
constexpr int64_t kExecutionPlanVersion = 1;

constexpr StringLiteral kShardingAttrName = "sdy.sharding";
constexpr StringLiteral kMeshSymbol = "mesh";

std::string printToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

std::string printToString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// The axes of each dimension, major to minor: `[["data"], []]`.
llvm::json::Array describeSharding(sdy::TensorShardingAttr sharding) {
  llvm::json::Array dims;
  for (int64_t dim = 0; dim < sharding.getRank(); ++dim) {
    llvm::json::Array axes;
    for (StringRef axis : sharding.getShardingAxes(dim))
      axes.push_back(axis);
    dims.push_back(std::move(axes));
  }
  return dims;
}

llvm::json::Object describeTensor(MeshTensorType type) {
  RankedTensorType global = type.getGlobalTensorType();
  llvm::json::Array shape;
  for (int64_t dim : global.getShape())
    shape.push_back(dim);
  llvm::json::Object object{
      {"mesh", type.getMeshName()},
      {"shape", std::move(shape)},
      {"dtype", printToString(global.getElementType())},
  };
  if (sdy::TensorShardingAttr sharding = type.getSharding())
    object["sharding"] = describeSharding(sharding);
  if (StringAttr kind = type.getMemoryKind())
    object["memory_kind"] = kind.getValue();
  return object;
}

/// A constant argument: `{"dtype": "ui32", "shape": [], "data": [3]}`.
FailureOr<llvm::json::Object> describeConstant(DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  llvm::json::Array shape, data;
  for (int64_t dim : type.getShape())
    shape.push_back(dim);
  Type element = type.getElementType();
  if (auto integer = dyn_cast<IntegerType>(element)) {
    for (APInt v : value.getValues<APInt>())
      data.push_back(integer.isUnsigned() || integer.getWidth() == 1
                         ? static_cast<int64_t>(v.getZExtValue())
                         : v.getSExtValue());
  } else if (isa<FloatType>(element)) {
    for (APFloat v : value.getValues<APFloat>())
      data.push_back(v.convertToDouble());
  } else {
    return failure();
  }
  return llvm::json::Object{{"dtype", printToString(element)},
                            {"shape", std::move(shape)},
                            {"data", std::move(data)}};
}

/// Per argument (or result) of `callee`, its sharding or null (replicated).
llvm::json::Array describeShardings(func::FuncOp callee, bool results) {
  llvm::json::Array shardings;
  unsigned count = results ? callee.getNumResults() : callee.getNumArguments();
  for (unsigned index = 0; index < count; ++index) {
    auto sharding =
        results ? callee.getResultAttrOfType<sdy::TensorShardingAttr>(
                      index, kShardingAttrName)
                : callee.getArgAttrOfType<sdy::TensorShardingAttr>(
                      index, kShardingAttrName);
    if (sharding && !sharding.isFullyReplicated())
      shardings.push_back(describeSharding(sharding));
    else
      shardings.push_back(nullptr);
  }
  return shardings;
}

/// The program runs on `mesh`: its boundary shardings may only name the
/// mesh's axes (the plan gives them to JAX as shardings over it).
LogicalResult checkBoundaryAxes(FragmentCallOp call, func::FuncOp callee,
                                sdy::MeshAttr mesh) {
  auto check = [&](ArrayAttr attrs, StringRef what) -> LogicalResult {
    if (!attrs || !mesh)
      return success();
    for (auto [index, dict] : llvm::enumerate(attrs)) {
      auto sharding = cast<DictionaryAttr>(dict).getAs<sdy::TensorShardingAttr>(
          kShardingAttrName);
      if (!sharding)
        continue;
      for (sdy::DimensionShardingAttr dim : sharding.getDimShardings())
        for (sdy::AxisRefAttr axis : dim.getAxes())
          if (!mesh.hasAxis(axis.getName()))
            return call.emitOpError()
                   << "calls @" << callee.getSymName() << ", whose " << what
                   << " " << index << " is sharded over axis \""
                   << axis.getName() << "\", which its mesh \""
                   << call.getMeshName() << "\" " << mesh
                   << " does not have";
    }
    return success();
  };
  if (failed(check(callee.getArgAttrsAttr(), "argument")))
    return failure();
  return check(callee.getResAttrsAttr(), "result");
}

/// Calls `fn` with each symbol reference in `op`'s attributes and properties
/// (ops JAX prints in generic form keep theirs in properties).
void forEachSymbolRef(Operation *op,
                      function_ref<void(SymbolRefAttr)> fn) {
  AttrTypeWalker walker;
  walker.addWalk([&](SymbolRefAttr ref) { fn(ref); });
  walker.walk(op->getRawDictionaryAttrs());
  if (Attribute properties = op->getPropertiesAsAttribute())
    walker.walk(properties);
}

/// Clones into `target` the functions of `source` that the ops of `root`
/// refer to (a composite's decomposition, a custom call's called
/// computations), and the functions those refer to.
void cloneReferencedFunctions(Operation *root, ModuleOp source,
                              ModuleOp target, OpBuilder &builder) {
  llvm::StringSet<> cloned;
  SmallVector<Operation *> pending{root};
  while (!pending.empty()) {
    Operation *next = pending.pop_back_val();
    next->walk([&](Operation *op) {
      forEachSymbolRef(op, [&](SymbolRefAttr ref) {
        StringRef name = ref.getRootReference().getValue();
        auto fn = dyn_cast_or_null<func::FuncOp>(
            SymbolTable::lookupSymbolIn(source, ref.getRootReference()));
        if (!fn || fn == root || !cloned.insert(name).second)
          return;
        builder.setInsertionPointToEnd(target.getBody());
        pending.push_back(builder.clone(*fn));
      });
    });
  }
}

/// The program as a module XLA compiles on its own: the callee, public, as
/// `@main`, in generic form (what jaxlib's parser reads most reliably), with
/// the functions it refers to.
/// Every sharding inside (the boundary, constraints, manual computations)
/// names the program's mesh as `@mesh`, declared in the module with `mesh`'s
/// axes; the sharding phase has checked that the axes they use agree.
std::string programModule(func::FuncOp callee, sdy::MeshAttr mesh) {
  MLIRContext *ctx = callee.getContext();
  OpBuilder builder(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(callee.getLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto main = cast<func::FuncOp>(builder.clone(*callee));
  main.setSymName("main");
  main.setPublic();
  // Where the program runs and what else is live there are the plan's to
  // say: one program text serves every mesh of its shape.
  for (StringRef attr : {StringRef("mesh_shape"), StringRef("mpmd.mesh"),
                         StringRef(kReservedHbmBytesAttrName)})
    main->removeAttr(attr);
  llvm::StringSet<> meshSymbols{kMeshSymbol};
  if (auto parent = callee->getParentOfType<ModuleOp>()) {
    for (auto meshOp : parent.getOps<sdy::MeshOp>())
      meshSymbols.insert(meshOp.getSymName());
    cloneReferencedFunctions(callee, parent, *module, builder);
  }
  bool usesMesh = renameMeshSymbols(*module, meshSymbols, kMeshSymbol);
  if (usesMesh && mesh) {
    builder.setInsertionPointToStart(module->getBody());
    sdy::MeshOp::create(builder, callee.getLoc(), kMeshSymbol,
                        sdy::MeshAttr::get(ctx, mesh.getAxes(), {}));
  }
  OpPrintingFlags flags;
  flags.printGenericOpForm();
  return printBuffered(
      [&](llvm::raw_ostream &os) { module->print(os, flags); });
}

} // namespace

FailureOr<std::string> mlir::mpmd::buildExecutionPlan(ModuleOp module) {
  FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
  if (failed(entries))
    return failure();
  if (entries->size() != 1)
    return module.emitError() << "an execution plan needs exactly one entry "
                                 "function with a topology, found "
                              << entries->size();
  func::FuncOp entry = entries->front();
  Block &block = entry.getBody().front();
  auto topology =
      entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);

  // The devices of each mesh, where the program names them (IFRT IR does:
  // mpmd-import-ifrt keeps them here).
  auto meshDevices = entry->getAttrOfType<DictionaryAttr>(
      MpmdDialect::kMeshDevicesAttrName);
  llvm::json::Array meshes;
  for (NamedMeshAttr mesh : topology.getMeshes()) {
    llvm::json::Array axes;
    for (sdy::MeshAxisAttr axis : mesh.getMesh().getAxes())
      axes.push_back(llvm::json::Array{axis.getName(), axis.getSize()});
    llvm::json::Object object{{"name", mesh.getName()},
                              {"axes", std::move(axes)}};
    if (!mesh.getMesh().getDeviceIds().empty())
      object["device_ids"] = llvm::json::Array(mesh.getMesh().getDeviceIds());
    if (meshDevices)
      if (auto ids = meshDevices.getAs<DenseI64ArrayAttr>(mesh.getName()))
        object["devices"] = llvm::json::Array(ids.asArrayRef());
    meshes.push_back(std::move(object));
  }

  llvm::DenseMap<Value, int64_t> ids;
  int64_t nextId = 0;
  llvm::json::Array inputs;
  for (BlockArgument arg : block.getArguments()) {
    auto type = dyn_cast<MeshTensorType>(arg.getType());
    if (!type && stablehlo::isTokenType(arg.getType()))
      return entry.emitError()
             << "not supported yet: argument " << arg.getArgNumber()
             << " of @" << entry.getSymName()
             << " is a !stablehlo.token; the runtime passes tensors only "
                "(tokens may pass between fragments, which export gives "
                "their own)";
    if (!type)
      return entry.emitError()
             << "argument " << arg.getArgNumber()
             << " is not a mesh tensor; run the import pipeline first";
    ids[arg] = nextId++;
    inputs.push_back(describeTensor(type));
  }

  // The last op of the block reading each value: it is freed after it.
  llvm::DenseMap<Operation *, SmallVector<int64_t>> freedAfter;
  auto lastUser = [&](Value value) -> Operation * {
    Operation *last = nullptr;
    for (Operation *user : value.getUsers())
      if (!last || last->isBeforeInBlock(user))
        last = user;
    return last;
  };

  SymbolTableCollection symbols;
  llvm::json::Object programs;
  llvm::StringMap<int64_t> callCounts;
  llvm::json::Array steps;
  for (Operation &op : block) {
    if (auto call = dyn_cast<FragmentCallOp>(op)) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee)
        return call.emitOpError() << "calls @" << call.getCallee()
                                  << ", which is not a func.func";
      // A specialization (mpmd-specialize-constant-args) runs its shared
      // program with its constants.
      ArrayAttr constants =
          call->getAttrOfType<ArrayAttr>(MpmdDialect::kConstantArgsAttrName);
      if (auto shared = callee->getAttrOfType<FlatSymbolRefAttr>(
              MpmdDialect::kSpecializesAttrName)) {
        constants =
            callee->getAttrOfType<ArrayAttr>(MpmdDialect::kConstantArgsAttrName);
        callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(call, shared);
        if (!callee || !constants)
          return call.emitOpError()
                 << "calls @" << call.getCallee()
                 << ", a specialization without its program or constants";
      }
      StringRef programName = callee.getSymName();
      if (!programs.get(programName)) {
        if (failed(checkBoundaryAxes(call, callee,
                                     topology.getMesh(call.getMeshName()))))
          return failure();
        // Donating pays off where a result reuses the buffer; other dying
        // arguments are only listed (the runtime frees them at last use).
        llvm::json::Array donated, donors;
        for (unsigned arg = 0; arg < callee.getNumArguments(); ++arg) {
          if (callee.getArgAttr(arg, "tf.aliasing_output"))
            donated.push_back(arg);
          else if (callee.getArgAttr(arg, "jax.buffer_donor"))
            donors.push_back(arg);
        }
        programs[programName] = llvm::json::Object{
            {"mesh", call.getMeshName()},
            {"module",
             programModule(callee, topology.getMesh(call.getMeshName()))},
            {"in_shardings", describeShardings(callee, /*results=*/false)},
            {"out_shardings", describeShardings(callee, /*results=*/true)},
            {"donated_args", std::move(donated)},
            {"buffer_donors", std::move(donors)},
        };
        if (auto reserved =
                callee->getAttrOfType<IntegerAttr>(kReservedHbmBytesAttrName))
          (*programs.getObject(programName))["reserved_bytes"] =
              reserved.getInt();
      }
      ++callCounts[programName];
      llvm::json::Array operandIds, resultIds, origins;
      for (Value operand : call.getOperands())
        operandIds.push_back(ids.lookup(operand));
      for (Value result : call.getResults()) {
        ids[result] = nextId;
        resultIds.push_back(nextId++);
      }
      for (Attribute origin : call.getOrigin()) {
        // [name, transpose count]: clients need not parse `layer1(1)`.
        auto user = cast<UserOriginAttr>(origin);
        origins.push_back(llvm::json::Array{user.getUserName().getValue(),
                                            user.getTransposeCount()});
      }
      llvm::json::Object step{{"op", "call"},
                              {"program", programName},
                              {"mesh", call.getMeshName()},
                              {"inputs", std::move(operandIds)},
                              {"outputs", std::move(resultIds)},
                              {"origins", std::move(origins)}};
      if (auto counter = call->getAttrOfType<IntegerAttr>(
              MpmdDialect::kCallCounterAttrName))
        step["call_counter"] = counter.getValue().getZExtValue();
      if (auto stage = call->getAttrOfType<IntegerAttr>("mpmd.stage"))
        step["stage"] = stage.getInt();
      if (call->hasAttr("mpmd.weight_gradient"))
        step["weight_gradient"] = true;
      if (call->hasAttr("mpmd.remat"))
        step["recompute"] = true;
      if (constants) {
        llvm::json::Array values;
        for (Attribute constant : constants) {
          FailureOr<llvm::json::Object> value =
              describeConstant(cast<DenseElementsAttr>(constant));
          if (failed(value))
            return call.emitOpError()
                   << "has a constant argument of unsupported element type "
                   << constant;
          values.push_back(std::move(*value));
        }
        step["constants"] = std::move(values);
      }
      steps.push_back(std::move(step));
    } else if (auto transfer = dyn_cast<TransferOp>(op)) {
      ids[transfer.getResult()] = nextId++;
      steps.push_back(llvm::json::Object{
          {"op", "transfer"},
          {"input", ids.lookup(transfer.getTensor())},
          {"output", ids.lookup(transfer.getResult())},
          {"from", transfer.getTensor().getType().getMeshName()},
          {"to", transfer.getType().getMeshName()},
          {"type", describeTensor(transfer.getType())}});
    } else if (isa<func::ReturnOp>(op)) {
      continue;
    } else {
      return op.emitOpError()
             << "cannot be executed by the runtime; an exported program has "
                "only mpmd.fragment_call and mpmd.transfer (run mpmd-export)";
    }
    // Values read here for the last time (and not returned) die here.
    llvm::json::Array freed;
    for (Value operand : op.getOperands()) {
      if (isa<BlockArgument>(operand))
        continue;
      Operation *last = lastUser(operand);
      if (last == &op && !llvm::is_contained(freed, ids.lookup(operand)))
        freed.push_back(ids.lookup(operand));
    }
    steps.back().getAsObject()->try_emplace("free", std::move(freed));
  }

  llvm::json::Array outputs;
  // Every returned value is an argument or a result of a step, all mesh
  // tensors by now.
  for (Value returned : block.getTerminator()->getOperands()) {
    llvm::json::Object object =
        describeTensor(cast<MeshTensorType>(returned.getType()));
    object["value"] = ids.lookup(returned);
    outputs.push_back(std::move(object));
  }
  for (auto &[name, count] : callCounts)
    programs.getObject(name)->try_emplace("num_calls", count);

  llvm::json::Object plan{{"version", kExecutionPlanVersion},
                          {"function", entry.getSymName()},
                          {"topology", printToString(topology)},
                          {"meshes", std::move(meshes)},
                          {"inputs", std::move(inputs)},
                          {"outputs", std::move(outputs)},
                          {"programs", std::move(programs)},
                          {"steps", std::move(steps)}};
  llvm::json::Value value(std::move(plan));
  return printBuffered(
      [&](llvm::raw_ostream &os) { os << llvm::formatv("{0:2}", value); });
}

namespace {

struct PrintExecutionPlanPass
    : public mlir::mpmd::impl::PrintExecutionPlanPassBase<
          PrintExecutionPlanPass> {
  void runOnOperation() override {
    FailureOr<std::string> plan = buildExecutionPlan(getOperation());
    if (failed(plan))
      return signalPassFailure();
    llvm::outs() << *plan << "\n";
    markAllAnalysesPreserved();
  }
};

} // namespace
