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

#include <map>

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

// The plan is written as it is walked (llvm::json::OStream), not built as a
// llvm::json::Value first: the tree's allocations cost as much as the
// writing. Every object's keys are written in sorted order, the order
// llvm::json prints an Object in (and earlier plans had).

/// The axes of each dimension, major to minor: `[["data"], []]`.
void writeSharding(llvm::json::OStream &j, sdy::TensorShardingAttr sharding) {
  j.array([&] {
    for (int64_t dim = 0; dim < sharding.getRank(); ++dim)
      j.array([&] {
        for (StringRef axis : sharding.getShardingAxes(dim))
          j.value(axis);
      });
  });
}

/// `key`: `values`, as an array.
void writeInts(llvm::json::OStream &j, StringRef key,
               ArrayRef<int64_t> values) {
  j.attributeArray(key, [&] {
    for (int64_t value : values)
      j.value(value);
  });
}

/// A tensor's mesh, shape, dtype, sharding and memory kind; with the value
/// it is, for an output.
void writeTensor(llvm::json::OStream &j, MeshTensorType type,
                 std::optional<int64_t> value = std::nullopt) {
  RankedTensorType global = type.getGlobalTensorType();
  j.object([&] {
    j.attribute("dtype", printToString(global.getElementType()));
    if (StringAttr kind = type.getMemoryKind())
      j.attribute("memory_kind", kind.getValue());
    j.attribute("mesh", type.getMeshName());
    writeInts(j, "shape", global.getShape());
    if (sdy::TensorShardingAttr sharding = type.getSharding()) {
      j.attributeBegin("sharding");
      writeSharding(j, sharding);
      j.attributeEnd();
    }
    if (value)
      j.attribute("value", *value);
  });
}

/// Whether the runtime can take `value` as a constant argument (integer or
/// floating-point elements).
bool isWritableConstant(DenseElementsAttr value) {
  return isa<IntegerType, FloatType>(value.getElementType());
}

/// A constant argument: `{"data": [3], "dtype": "ui32", "shape": []}`.
void writeConstant(llvm::json::OStream &j, DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  j.object([&] {
    j.attributeArray("data", [&] {
      if (auto integer = dyn_cast<IntegerType>(element)) {
        for (APInt v : value.getValues<APInt>())
          j.value(integer.isUnsigned() || integer.getWidth() == 1
                      ? static_cast<int64_t>(v.getZExtValue())
                      : v.getSExtValue());
      } else {
        for (APFloat v : value.getValues<APFloat>())
          j.value(v.convertToDouble());
      }
    });
    j.attribute("dtype", printToString(element));
    writeInts(j, "shape", type.getShape());
  });
}

/// `key`: per argument (or result) of `callee`, its sharding or null
/// (replicated).
void writeShardings(llvm::json::OStream &j, StringRef key, func::FuncOp callee,
                    bool results) {
  unsigned count = results ? callee.getNumResults() : callee.getNumArguments();
  j.attributeArray(key, [&] {
    for (unsigned index = 0; index < count; ++index) {
      auto sharding =
          results ? callee.getResultAttrOfType<sdy::TensorShardingAttr>(
                        index, kShardingAttrName)
                  : callee.getArgAttrOfType<sdy::TensorShardingAttr>(
                        index, kShardingAttrName);
      if (sharding && !sharding.isFullyReplicated())
        writeSharding(j, sharding);
      else
        j.value(nullptr);
    }
  });
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

/// Clones into `target` the functions of `source` that the ops of `root`
/// refer to (a composite's decomposition, a custom call's called
/// computations), and the functions those refer to.
void cloneReferencedFunctions(Operation *root, ModuleOp source,
                              ModuleOp target, OpBuilder &builder) {
  llvm::StringSet<> cloned;
  SmallVector<Operation *> pending{root};
  while (!pending.empty()) {
    Operation *next = pending.pop_back_val();
    forEachSymbolRef(next, [&](SymbolRefAttr ref) {
      StringRef name = ref.getRootReference().getValue();
      auto fn = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupSymbolIn(source, ref.getRootReference()));
      if (!fn || fn == root || !cloned.insert(name).second)
        return;
      builder.setInsertionPointToEnd(target.getBody());
      pending.push_back(builder.clone(*fn));
    });
  }
}

/// The program as a module XLA compiles on its own: the callee, public, as
/// `@main`, with the functions it refers to (printed in generic form, what
/// jaxlib's parser reads most reliably).
/// Every sharding inside (the boundary, constraints, manual computations)
/// names the program's mesh as `@mesh`, declared in the module with `mesh`'s
/// axes; the sharding phase has checked that the axes they use agree.
OwningOpRef<ModuleOp> programModule(func::FuncOp callee, sdy::MeshAttr mesh) {
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
  // So are the arguments that die here without a result reusing them
  // (`buffer_donors`): they depend on the other programs of the mesh.
  for (unsigned arg = 0; arg < main.getNumArguments(); ++arg)
    main.removeArgAttr(arg, "jax.buffer_donor");
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
  return module;
}

/// The texts of a plan's programs, each distinct one printed once: the
/// programs of equal stages on meshes of one shape are equal modules
/// (checked op by op, ignoring locations, which the text does not carry).
class ProgramTexts {
public:
  std::string get(func::FuncOp callee, sdy::MeshAttr mesh) {
    OwningOpRef<ModuleOp> module = programModule(callee, mesh);
    SmallVector<Printed> &candidates = printed[callee.getFunctionType()];
    for (const Printed &candidate : candidates)
      if (OperationEquivalence::isEquivalentTo(
              *candidate.module, *module,
              OperationEquivalence::IgnoreLocations))
        return candidate.text;
    OpPrintingFlags flags;
    flags.printGenericOpForm();
    std::string text = printBuffered(
        [&](llvm::raw_ostream &os) { module->print(os, flags); });
    candidates.push_back({std::move(module), text});
    return text;
  }

private:
  struct Printed {
    OwningOpRef<ModuleOp> module;
    std::string text;
  };
  // By the callee's type: only programs of one signature can be equal.
  llvm::DenseMap<Type, SmallVector<Printed>> printed;
};

/// What a fragment call runs: its callee, or for a specialization
/// (mpmd-specialize-constant-args) the shared program, with the constants
/// passed after the call's operands (null when none).
struct CalledProgram {
  func::FuncOp callee;
  ArrayAttr constants;
};

FailureOr<CalledProgram> calledProgram(FragmentCallOp call,
                                       SymbolTableCollection &symbols) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError()
           << "calls @" << call.getCallee() << ", which is not a func.func";
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
  return CalledProgram{callee, constants};
}

/// A program of the plan, as its first call finds it.
struct ProgramEntry {
  func::FuncOp callee;
  StringRef mesh;
  std::string module;
  int64_t numCalls = 0;
};

/// A step of the plan: a fragment call (of `program`, with `constants`) or
/// a transfer; `freed`, the values read for the last time there.
struct StepEntry {
  Operation *op;
  StringRef program;
  ArrayAttr constants;
  SmallVector<int64_t> freed;
};

} // namespace

FailureOr<std::string>
mlir::mpmd::buildExecutionPlan(ModuleOp module, bool withProgramTexts) {
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

  // First what the plan says, checked; then the plan, written (below).
  llvm::DenseMap<Value, int64_t> ids;
  int64_t nextId = 0;
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
  }

  // The last op of the block reading each value: it is freed after it.
  auto lastUser = [&](Value value) -> Operation * {
    Operation *last = nullptr;
    for (Operation *user : value.getUsers())
      if (!last || last->isBeforeInBlock(user))
        last = user;
    return last;
  };

  SymbolTableCollection symbols;
  ProgramTexts programTexts;
  // Sorted by name, as a JSON object's keys are printed.
  std::map<std::string, ProgramEntry> programs;
  SmallVector<StepEntry> steps;
  for (Operation &op : block) {
    if (auto call = dyn_cast<FragmentCallOp>(op)) {
      FailureOr<CalledProgram> called = calledProgram(call, symbols);
      if (failed(called))
        return failure();
      auto [callee, constants] = *called;
      if (constants)
        for (Attribute constant : constants)
          if (!isWritableConstant(cast<DenseElementsAttr>(constant)))
            return call.emitOpError()
                   << "has a constant argument of unsupported element type "
                   << constant;
      StringRef programName = callee.getSymName();
      auto [found, isNew] = programs.try_emplace(programName.str());
      if (isNew) {
        if (failed(checkBoundaryAxes(call, callee,
                                     topology.getMesh(call.getMeshName()))))
          return failure();
        found->second.callee = callee;
        found->second.mesh = call.getMeshName();
        if (withProgramTexts)
          found->second.module =
              programTexts.get(callee, topology.getMesh(call.getMeshName()));
      }
      ++found->second.numCalls;
      for (Value result : call.getResults())
        ids[result] = nextId++;
      steps.push_back({&op, programName, constants, {}});
    } else if (auto transfer = dyn_cast<TransferOp>(op)) {
      ids[transfer.getResult()] = nextId++;
      steps.push_back({&op, StringRef(), nullptr, {}});
    } else if (isa<func::ReturnOp>(op)) {
      continue;
    } else {
      return op.emitOpError()
             << "cannot be executed by the runtime; an exported program has "
                "only mpmd.fragment_call and mpmd.transfer (run mpmd-export)";
    }
    // Values read here for the last time (and not returned) die here.
    SmallVector<int64_t> &freed = steps.back().freed;
    for (Value operand : op.getOperands()) {
      if (isa<BlockArgument>(operand))
        continue;
      Operation *last = lastUser(operand);
      if (last == &op && !llvm::is_contained(freed, ids.lookup(operand)))
        freed.push_back(ids.lookup(operand));
    }
  }

  // The devices of each mesh, where the program names them (IFRT IR does:
  // mpmd-import-ifrt keeps them here).
  auto meshDevices = entry->getAttrOfType<DictionaryAttr>(
      MpmdDialect::kMeshDevicesAttrName);
  auto writeMesh = [&](llvm::json::OStream &j, NamedMeshAttr mesh) {
    j.object([&] {
      j.attributeArray("axes", [&] {
        for (sdy::MeshAxisAttr axis : mesh.getMesh().getAxes())
          j.array([&] {
            j.value(axis.getName());
            j.value(axis.getSize());
          });
      });
      if (!mesh.getMesh().getDeviceIds().empty())
        writeInts(j, "device_ids", mesh.getMesh().getDeviceIds());
      if (meshDevices)
        if (auto devices = meshDevices.getAs<DenseI64ArrayAttr>(mesh.getName()))
          writeInts(j, "devices", devices.asArrayRef());
      j.attribute("name", mesh.getName());
    });
  };
  auto valueIds = [&](llvm::json::OStream &j, StringRef key,
                      ValueRange values) {
    j.attributeArray(key, [&] {
      for (Value value : values)
        j.value(ids.lookup(value));
    });
  };
  auto writeProgram = [&](llvm::json::OStream &j, const ProgramEntry &program) {
    func::FuncOp callee = program.callee;
    // Donating pays off where a result reuses the buffer; other dying
    // arguments are only listed (the runtime frees them at last use).
    SmallVector<int64_t> donated, donors;
    for (unsigned arg = 0; arg < callee.getNumArguments(); ++arg) {
      if (callee.getArgAttr(arg, "tf.aliasing_output"))
        donated.push_back(arg);
      else if (callee.getArgAttr(arg, "jax.buffer_donor"))
        donors.push_back(arg);
    }
    j.object([&] {
      writeInts(j, "buffer_donors", donors);
      writeInts(j, "donated_args", donated);
      writeShardings(j, "in_shardings", callee, /*results=*/false);
      j.attribute("mesh", program.mesh);
      if (withProgramTexts)
        j.attribute("module", program.module);
      j.attribute("num_calls", program.numCalls);
      writeShardings(j, "out_shardings", callee, /*results=*/true);
      if (auto reserved =
              callee->getAttrOfType<IntegerAttr>(kReservedHbmBytesAttrName))
        j.attribute("reserved_bytes", reserved.getInt());
    });
  };
  auto writeCall = [&](llvm::json::OStream &j, const StepEntry &step) {
    auto call = cast<FragmentCallOp>(step.op);
    j.object([&] {
      if (auto counter = call->getAttrOfType<IntegerAttr>(
              MpmdDialect::kCallCounterAttrName))
        j.attribute("call_counter", counter.getValue().getZExtValue());
      if (step.constants)
        j.attributeArray("constants", [&] {
          for (Attribute constant : step.constants)
            writeConstant(j, cast<DenseElementsAttr>(constant));
        });
      writeInts(j, "free", step.freed);
      valueIds(j, "inputs", call.getOperands());
      j.attribute("mesh", call.getMeshName());
      j.attribute("op", "call");
      // [name, transpose count]: clients need not parse `layer1(1)`.
      j.attributeArray("origins", [&] {
        for (Attribute origin : call.getOrigin()) {
          auto user = cast<UserOriginAttr>(origin);
          j.array([&] {
            j.value(user.getUserName().getValue());
            j.value(user.getTransposeCount());
          });
        }
      });
      valueIds(j, "outputs", call.getResults());
      j.attribute("program", step.program);
      if (call->hasAttr("mpmd.remat"))
        j.attribute("recompute", true);
      if (auto stage = call->getAttrOfType<IntegerAttr>("mpmd.stage"))
        j.attribute("stage", stage.getInt());
      if (call->hasAttr("mpmd.weight_gradient"))
        j.attribute("weight_gradient", true);
    });
  };
  auto writeTransfer = [&](llvm::json::OStream &j, const StepEntry &step) {
    auto transfer = cast<TransferOp>(step.op);
    j.object([&] {
      writeInts(j, "free", step.freed);
      j.attribute("from", transfer.getTensor().getType().getMeshName());
      j.attribute("input", ids.lookup(transfer.getTensor()));
      j.attribute("op", "transfer");
      j.attribute("output", ids.lookup(transfer.getResult()));
      j.attribute("to", transfer.getType().getMeshName());
      j.attributeBegin("type");
      writeTensor(j, transfer.getType());
      j.attributeEnd();
    });
  };

  return printBuffered([&](llvm::raw_ostream &os) {
    llvm::json::OStream j(os, /*IndentSize=*/2);
    j.object([&] {
      j.attribute("function", entry.getSymName());
      j.attributeArray("inputs", [&] {
        for (BlockArgument arg : block.getArguments())
          writeTensor(j, cast<MeshTensorType>(arg.getType()));
      });
      j.attributeArray("meshes", [&] {
        for (NamedMeshAttr mesh : topology.getMeshes())
          writeMesh(j, mesh);
      });
      // Every returned value is an argument or a result of a step, all
      // mesh tensors by now.
      j.attributeArray("outputs", [&] {
        for (Value returned : block.getTerminator()->getOperands())
          writeTensor(j, cast<MeshTensorType>(returned.getType()),
                      ids.lookup(returned));
      });
      j.attributeObject("programs", [&] {
        for (const auto &[name, program] : programs) {
          j.attributeBegin(name);
          writeProgram(j, program);
          j.attributeEnd();
        }
      });
      j.attributeArray("steps", [&] {
        for (const StepEntry &step : steps) {
          if (isa<FragmentCallOp>(step.op))
            writeCall(j, step);
          else
            writeTransfer(j, step);
        }
      });
      j.attribute("topology", printToString(topology));
      j.attribute("version", kExecutionPlanVersion);
    });
  });
}

FailureOr<std::vector<std::pair<std::string, std::string>>>
mlir::mpmd::buildProgramTexts(ModuleOp module) {
  FailureOr<SmallVector<func::FuncOp>> entries = getEntryFunctions(module);
  if (failed(entries) || entries->size() != 1)
    return module.emitError()
           << "program texts need exactly one entry function with a topology";
  func::FuncOp entry = entries->front();
  auto topology =
      entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
  SymbolTableCollection symbols;
  ProgramTexts programTexts;
  llvm::StringSet<> seen;
  std::vector<std::pair<std::string, std::string>> texts;
  for (auto call : entry.getBody().front().getOps<FragmentCallOp>()) {
    FailureOr<CalledProgram> called = calledProgram(call, symbols);
    if (failed(called))
      return failure();
    func::FuncOp callee = called->callee;
    if (!seen.insert(callee.getSymName()).second)
      continue;
    texts.emplace_back(
        callee.getSymName().str(),
        programTexts.get(callee, topology.getMesh(call.getMeshName())));
  }
  return texts;
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
