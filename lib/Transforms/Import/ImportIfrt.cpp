//===- ImportIfrt.cpp - An IFRT IR program as an exported MPMD module -----===//
//
// IFRT IR (what Shardy:MPMD hands to Pathways, and what mpmd-lower-to-ifrt
// writes) says the same as an exported MPMD module in other words: device
// lists instead of named meshes, sharding parameters instead of axis names,
// atom programs in nested modules instead of outlined functions, copies
// instead of transfers. This pass says it in ours, so that the execution
// plan (ExecutionPlan.cpp) and the runtime take IFRT IR with nothing of
// their own changed.
//
// Meshes. Every device list a call runs on is a mesh: its name is the
// calls' `ifrt.mesh_name` (or `devices_0_1` without one), its axes those of
// the `sdy.mesh` the atom programs declare (where none does, as when all
// its arrays are replicated: the program's own sdy.mesh of that size if it
// has one, else one axis `devices`). Arrays on devices no call runs on get
// a mesh of their own.
//
// Shardings. A sharding parameter fixes which tile of the array each device
// of its list holds; the mesh tensor's sharding is the one over the mesh's
// axes that gives every device the same tile. It is found by matching
// tiles, so any factoring of the mesh the parameter uses (`on 4` for a
// 2x2 mesh, permuted axes) reads the same; a parameter no assignment of
// whole mesh axes reproduces is "not supported yet".
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h"
#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Import/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>

namespace mlir::mpmd {
#define GEN_PASS_DEF_IMPORTIFRTPASS
#include "mpmd/Transforms/Import/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kAliasingOutputAttr = "tf.aliasing_output";
constexpr StringLiteral kBufferDonorAttr = "jax.buffer_donor";
constexpr StringLiteral kSupportedOps =
    "ifrt.Call, ifrt.CopyArrays and ifrt.Reshard";

std::string listText(ArrayRef<int64_t> ids) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(ids, os);
  os << "]";
  return text;
}

/// A mesh of the program: a device list with a name and axes.
struct Mesh {
  std::string name;
  SmallVector<int64_t> devices;
  sdy::MeshAttr axes; // null until an atom program or the default says
};

/// The meshes of the program, found by device list.
class Meshes {
public:
  Mesh *byDevices(ArrayRef<int64_t> devices) {
    auto it = indexByDevices.find(SmallVector<int64_t>(devices));
    return it == indexByDevices.end() ? nullptr : &meshes[it->second];
  }
  /// The mesh holding exactly these devices, in any order.
  Mesh *bySet(ArrayRef<int64_t> devices) {
    SmallVector<int64_t> sorted(devices);
    llvm::sort(sorted);
    for (Mesh &mesh : meshes) {
      SmallVector<int64_t> other(mesh.devices);
      llvm::sort(other);
      if (other == sorted)
        return &mesh;
    }
    return nullptr;
  }
  Mesh *byName(StringRef name) {
    for (Mesh &mesh : meshes)
      if (mesh.name == name)
        return &mesh;
    return nullptr;
  }
  Mesh &add(StringRef name, ArrayRef<int64_t> devices) {
    indexByDevices[SmallVector<int64_t>(devices)] = meshes.size();
    meshes.push_back({name.str(), SmallVector<int64_t>(devices), nullptr});
    return meshes.back();
  }
  /// The mesh an array lives on (one exists for every array by then).
  Mesh &of(ifrt::ArrayType type) {
    if (Mesh *mesh = byDevices(type.getDevices()))
      return *mesh;
    return *bySet(type.getDevices());
  }
  std::deque<Mesh> &all() { return meshes; }
  /// A mesh holding one of `devices` (and a device they share), if any.
  std::optional<std::pair<Mesh *, int64_t>> sharing(ArrayRef<int64_t> devices) {
    for (Mesh &mesh : meshes)
      for (int64_t id : devices)
        if (llvm::is_contained(mesh.devices, id))
          return std::make_pair(&mesh, id);
    return std::nullopt;
  }

private:
  std::deque<Mesh> meshes;
  std::map<SmallVector<int64_t>, size_t> indexByDevices;
};

/// `devices_0_1`: the name of a mesh no call names.
std::string nameOfDevices(ArrayRef<int64_t> devices) {
  std::string name = "devices";
  for (int64_t id : devices)
    name += "_" + std::to_string(id);
  return name;
}

/// The sdy.mesh that the atom program `callee` shards over: the one its
/// boundary shardings name, else the only one its module declares.
sdy::MeshAttr atomMesh(func::FuncOp callee) {
  auto module = callee->getParentOfType<ModuleOp>();
  if (!module)
    return nullptr;
  auto lookup = [&](StringRef name) -> sdy::MeshAttr {
    for (auto meshOp : module.getOps<sdy::MeshOp>())
      if (meshOp.getSymName() == name)
        return meshOp.getMesh();
    return nullptr;
  };
  auto fromAttrs = [&](ArrayAttr attrs) -> sdy::MeshAttr {
    if (!attrs)
      return nullptr;
    for (Attribute dict : attrs)
      if (auto sharding = cast<DictionaryAttr>(dict)
                              .getAs<sdy::TensorShardingAttr>("sdy.sharding"))
        if (sdy::MeshAttr mesh = lookup(sharding.getMeshName()))
          return mesh;
    return nullptr;
  };
  if (sdy::MeshAttr mesh = fromAttrs(callee.getArgAttrsAttr()))
    return mesh;
  if (sdy::MeshAttr mesh = fromAttrs(callee.getResAttrsAttr()))
    return mesh;
  auto meshOps = llvm::to_vector(module.getOps<sdy::MeshOp>());
  if (meshOps.size() == 1 && !meshOps.front().getMesh().getAxes().empty())
    return meshOps.front().getMesh();
  return nullptr;
}

/// The sharding over `mesh`'s axes that puts on each device of `type` the
/// tile its sharding parameter puts there.
FailureOr<sdy::TensorShardingAttr>
shardingOverMesh(ifrt::ArrayType type, const Mesh &mesh,
                 FlatSymbolRefAttr meshRef,
                 function_ref<InFlightDiagnostic()> emitError) {
  MLIRContext *ctx = type.getContext();
  ifrt::ShardingParamAttr param = type.getShardingParam();
  if (!param)
    return emitError() << "not supported yet: the sharding "
                       << type.getSharding()
                       << " (mpmd reads #ifrt.sharding_param shardings)";
  if (!param.getUnreducedAxes().empty())
    return emitError() << "not supported yet: unreduced axes in the sharding "
                       << param;
  ArrayRef<int64_t> dims = param.getDimShards();
  int64_t numDevices = type.getDevices().size();
  int64_t tiles = 1;
  for (int64_t shards : dims)
    tiles *= shards;
  SmallVector<int64_t> tileShape(dims);
  tileShape.push_back(numDevices / tiles);

  // Per logical device: its tile's coordinates, and its coordinates in the
  // mesh.
  auto axes = mesh.axes.getAxes();
  SmallVector<int64_t> tileOf = param.getTileOfDevice();
  SmallVector<SmallVector<int64_t>> tileCoords, meshCoords;
  for (int64_t position = 0; position < numDevices; ++position) {
    auto unravel = [](int64_t index, ArrayRef<int64_t> shape) {
      SmallVector<int64_t> coords(shape.size());
      for (int64_t dim = static_cast<int64_t>(shape.size()) - 1; dim >= 0;
           --dim) {
        coords[dim] = index % shape[dim];
        index /= shape[dim];
      }
      return coords;
    };
    tileCoords.push_back(unravel(tileOf[position], tileShape));
    int64_t inMesh =
        llvm::find(mesh.devices, type.getDevices()[position]) -
        mesh.devices.begin();
    SmallVector<int64_t> sizes;
    for (sdy::MeshAxisAttr axis : axes)
      sizes.push_back(axis.getSize());
    meshCoords.push_back(unravel(inMesh, sizes));
  }

  // Per sharded dimension, the mesh axes (major first) whose coordinates
  // number its tiles; axes are used once across dimensions.
  SmallVector<SmallVector<int64_t>> chosen(dims.size());
  SmallVector<bool> used(axes.size(), false);
  auto matches = [&](size_t dim, ArrayRef<int64_t> sequence) {
    for (int64_t position = 0; position < numDevices; ++position) {
      int64_t index = 0;
      for (int64_t axis : sequence)
        index = index * axes[axis].getSize() + meshCoords[position][axis];
      if (index != tileCoords[position][dim])
        return false;
    }
    return true;
  };
  std::function<bool(size_t)> assign = [&](size_t dim) -> bool {
    if (dim == dims.size())
      return true;
    if (dims[dim] == 1)
      return assign(dim + 1);
    SmallVector<int64_t> sequence;
    std::function<bool(int64_t)> extend = [&](int64_t product) -> bool {
      if (product == dims[dim])
        return matches(dim, sequence) && (chosen[dim] = sequence, true) &&
               assign(dim + 1);
      for (size_t axis = 0; axis < axes.size(); ++axis) {
        if (used[axis] || dims[dim] % (product * axes[axis].getSize()) != 0)
          continue;
        used[axis] = true;
        sequence.push_back(axis);
        if (extend(product * axes[axis].getSize()))
          return true;
        sequence.pop_back();
        used[axis] = false;
      }
      return false;
    };
    return extend(1);
  };
  if (!assign(0)) {
    return emitError() << "not supported yet: the sharding " << param
                       << " of " << type.getShape() << " on devices "
                       << listText(type.getDevices())
                       << " is no sharding over whole axes of mesh \""
                       << mesh.name << "\" " << mesh.axes;
  }
  SmallVector<sdy::DimensionShardingAttr> dimShardings;
  for (ArrayRef<int64_t> sequence : chosen) {
    SmallVector<sdy::AxisRefAttr> refs;
    for (int64_t axis : sequence)
      refs.push_back(
          sdy::AxisRefAttr::get(ctx, axes[axis].getName(), nullptr));
    dimShardings.push_back(sdy::DimensionShardingAttr::get(
        ctx, refs, /*is_closed=*/true, std::nullopt));
  }
  return sdy::TensorShardingAttr::get(ctx, meshRef, dimShardings, {}, {});
}

/// Whether `op` refers to a symbol of `module` other than its meshes (a
/// function it calls): such an op means something else in another module
/// even where its text is equal. (Meshes are compared by their text.)
bool refersToSymbols(Operation *op, ModuleOp module) {
  bool refers = false;
  op->walk([&](Operation *inner) {
    AttrTypeWalker walker;
    walker.addWalk([&](SymbolRefAttr ref) {
      if (!isa<FlatSymbolRefAttr>(ref) ||
          !isa_and_nonnull<sdy::MeshOp>(
              SymbolTable::lookupSymbolIn(module, ref.getRootReference())))
        refers = true;
    });
    walker.walk(inner->getRawDictionaryAttrs());
    if (Attribute properties = inner->getPropertiesAsAttribute())
      if (inner != op) // the function's own name is no reference
        walker.walk(properties);
  });
  return refers;
}

struct ImportIfrtPass
    : public mlir::mpmd::impl::ImportIfrtPassBase<ImportIfrtPass> {
  using ImportIfrtPassBase::ImportIfrtPassBase;

  void runOnOperation() override {
    if (failed(run(getOperation())))
      signalPassFailure();
  }

private:
  /// A device outside `available-devices`, as an error on `op`.
  LogicalResult checkAvailable(Operation *op, ArrayRef<int64_t> devices,
                               StringRef what) {
    if (availableDevices.empty())
      return success();
    for (int64_t id : devices)
      if (!llvm::is_contained(availableDevices, id))
        return op->emitOpError()
               << what << " device " << id
               << ", which is not a device of this job (its devices are "
               << listText(SmallVector<int64_t>(availableDevices.begin(),
                                                availableDevices.end()))
               << "; IFRT IR numbers the devices it is compiled for)";
    return success();
  }

  LogicalResult run(ModuleOp module);
};

LogicalResult ImportIfrtPass::run(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(ifrt::IfrtDialect::kFunctionAttrName))
      entries.push_back(func);
  if (entries.size() != 1)
    return module.emitError()
           << "an IFRT IR program has one main function (a func.func with "
              "the `ifrt.function` attribute), found "
           << entries.size();
  func::FuncOp entry = entries.front();
  if (entry.isExternal())
    return entry.emitOpError() << "is the IFRT IR main function but has no "
                                  "body";
  Block &body = entry.getBody().front();

  // What the main function may hold, and its signature.
  for (Operation &op : body) {
    if (isa<ifrt::CallOp, ifrt::CopyArraysOp, ifrt::ReshardOp,
            func::ReturnOp>(op))
      continue;
    if (op.getName().getDialectNamespace() == "ifrt")
      return op.emitOpError() << "not supported yet: mpmd runs "
                              << kSupportedOps << " in IFRT IR";
    return op.emitOpError() << "cannot run in an IFRT IR main function, "
                               "which holds only "
                            << kSupportedOps;
  }
  for (auto [index, type] : llvm::enumerate(entry.getArgumentTypes()))
    if (!isa<ifrt::ArrayType>(type))
      return entry.emitOpError() << "argument " << index << " is a " << type
                                 << "; an IFRT IR main takes !ifrt.array "
                                    "values";
  for (auto [index, type] : llvm::enumerate(entry.getResultTypes()))
    if (!isa<ifrt::ArrayType>(type))
      return entry.emitOpError() << "result " << index << " is a " << type
                                 << "; an IFRT IR main returns !ifrt.array "
                                    "values";

  // Meshes: one per device list of a call.
  SymbolTableCollection symbols;
  Meshes meshes;
  for (auto call : body.getOps<ifrt::CallOp>()) {
    ArrayRef<int64_t> devices = call.getDevices().getIds();
    if (failed(checkAvailable(call, devices, "runs on")))
      return failure();
    auto nameAttr =
        call->getAttrOfType<StringAttr>(ifrt::IfrtDialect::kMeshNameAttrName);
    std::string name =
        nameAttr ? nameAttr.getValue().str() : nameOfDevices(devices);
    Mesh *mesh = meshes.byDevices(devices);
    if (!mesh) {
      if (Mesh *named = meshes.byName(name))
        return call.emitOpError()
               << "runs on devices " << listText(devices) << " as mesh \""
               << name << "\", which other calls run on devices "
               << listText(named->devices);
      if (auto shared = meshes.sharing(devices))
        return call.emitOpError()
               << "runs on devices " << listText(devices)
               << ", which share device " << shared->second << " with mesh \""
               << shared->first->name << "\" (devices "
               << listText(shared->first->devices)
               << "); the device lists of an IFRT IR program's calls are "
                  "equal or disjoint";
      mesh = &meshes.add(name, devices);
    } else if (mesh->name != name) {
      return call.emitOpError()
             << "names devices " << listText(devices) << " mesh \"" << name
             << "\", which other calls name \"" << mesh->name << "\"";
    }
    auto callee =
        symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCallee());
    if (!callee)
      return call.emitOpError() << "calls " << call.getCallee()
                                << ", which is not a func.func";
    if (sdy::MeshAttr axes = atomMesh(callee)) {
      if (axes.getTotalSize() != static_cast<int64_t>(devices.size()))
        return call.emitOpError()
               << "runs " << call.getCallee() << ", whose sdy.mesh " << axes
               << " has " << axes.getTotalSize() << " devices, on "
               << devices.size() << " devices";
      sdy::MeshAttr plain = sdy::MeshAttr::get(ctx, axes.getAxes(), {});
      if (mesh->axes && mesh->axes != plain)
        return call.emitOpError()
               << "runs " << call.getCallee() << " over mesh " << plain
               << " on mesh \"" << mesh->name
               << "\", where other programs use " << mesh->axes;
      mesh->axes = plain;
    }
  }
  // Arrays on devices no call runs on (moved there, or passed through).
  auto ensureMesh = [&](ifrt::ArrayType type, Operation *op) -> LogicalResult {
    if (failed(checkAvailable(op, type.getDevices(), "has an array on")))
      return failure();
    if (meshes.byDevices(type.getDevices()) || meshes.bySet(type.getDevices()))
      return success();
    if (auto shared = meshes.sharing(type.getDevices()))
      return op->emitOpError()
             << "not supported yet: an array on devices "
             << listText(type.getDevices()) << ", which share device "
             << shared->second << " with mesh \"" << shared->first->name
             << "\" (devices " << listText(shared->first->devices)
             << "); mpmd places each array on a whole mesh";
    std::string name = nameOfDevices(type.getDevices());
    if (meshes.byName(name))
      return op->emitOpError() << "has an array on devices "
                               << listText(type.getDevices())
                               << ", whose mesh name \"" << name
                               << "\" a call already uses";
    meshes.add(name, type.getDevices());
    return success();
  };
  for (Type type : entry.getArgumentTypes())
    if (failed(ensureMesh(cast<ifrt::ArrayType>(type), entry)))
      return failure();
  for (Operation &op : body)
    for (Type type : op.getResultTypes())
      if (auto array = dyn_cast<ifrt::ArrayType>(type))
        if (failed(ensureMesh(array, &op)))
          return failure();
  // Meshes no atom program declares (all their arrays replicated): the
  // program's own sdy.mesh of their size where it has exactly one, else one
  // axis over the devices.
  auto topLevel = [&](int64_t size) -> sdy::MeshAttr {
    sdy::MeshAttr found;
    for (auto meshOp : module.getOps<sdy::MeshOp>()) {
      sdy::MeshAttr axes = meshOp.getMesh();
      if (axes.getAxes().empty() || axes.getTotalSize() != size)
        continue;
      axes = sdy::MeshAttr::get(ctx, axes.getAxes(), {});
      if (found && found != axes)
        return nullptr;
      found = axes;
    }
    return found;
  };
  for (Mesh &mesh : meshes.all())
    if (!mesh.axes)
      mesh.axes = topLevel(static_cast<int64_t>(mesh.devices.size()));
  for (Mesh &mesh : meshes.all())
    if (!mesh.axes)
      mesh.axes = sdy::MeshAttr::get(
          ctx,
          {sdy::MeshAxisAttr::get(ctx, "devices",
                                  static_cast<int64_t>(mesh.devices.size()))},
          {});

  // Hoist the atom programs: the nested modules' symbols move to the top
  // level, each module's @main under the module's name.
  OpBuilder builder(ctx);
  llvm::StringSet<> taken;
  for (Operation &op : module.getBody()->getOperations())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      taken.insert(name.getValue());
  auto unique = [&](std::string name) {
    std::string candidate = name;
    for (int suffix = 1; !taken.insert(candidate).second; ++suffix)
      candidate = name + "_" + std::to_string(suffix);
    return candidate;
  };
  llvm::StringMap<std::string> atomNames; // nested module -> its main's name
  std::map<std::string, std::string> sharedFunctions; // text -> hoisted name
  for (auto nested : llvm::to_vector(module.getOps<ModuleOp>())) {
    StringRef moduleName = nested.getSymName().value_or("atom");
    // The module goes: its @main takes its name.
    taken.erase(moduleName);
    llvm::StringMap<std::string> renamed;
    SmallVector<Operation *> duplicates;
    for (Operation &op : nested.getBody()->getOperations()) {
      auto name =
          op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!name)
        continue;
      if (name.getValue() == "main") {
        renamed["main"] = unique(moduleName.str());
        continue;
      }
      // A function that several atom modules hold alike (the program that
      // specializations of ours share) is hoisted once, and compiled once.
      std::string key;
      if (isa<func::FuncOp>(op) && !refersToSymbols(&op, nested)) {
        llvm::raw_string_ostream os(key);
        // Numbered on its own (not after the ops before it).
        OpPrintingFlags flags;
        flags.printGenericOpForm().useLocalScope();
        for (auto meshOp : nested.getOps<sdy::MeshOp>())
          meshOp->print(os, flags);
        op.print(os, flags);
        if (auto it = sharedFunctions.find(key); it != sharedFunctions.end()) {
          renamed[name.getValue()] = it->second;
          duplicates.push_back(&op);
          continue;
        }
      }
      renamed[name.getValue()] =
          taken.contains(name.getValue())
              ? unique((moduleName + "." + name.getValue()).str())
              : unique(name.getValue().str());
      if (!key.empty())
        sharedFunctions[key] = renamed[name.getValue()];
    }
    for (Operation *op : duplicates)
      op->erase();
    renameSymbolRefs(nested, [&](StringRef name) -> std::optional<StringRef> {
      auto it = renamed.find(name);
      if (it == renamed.end())
        return std::nullopt;
      return StringRef(it->second);
    });
    for (Operation &op : nested.getBody()->getOperations())
      if (auto name =
              op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())) {
        op.setAttr(SymbolTable::getSymbolAttrName(),
                   StringAttr::get(ctx, renamed[name.getValue()]));
        if (isa<func::FuncOp>(op))
          SymbolTable::setSymbolVisibility(&op,
                                           SymbolTable::Visibility::Private);
      }
    if (renamed.count("main"))
      atomNames[moduleName] = renamed["main"];
    module.getBody()->getOperations().splice(
        Block::iterator(nested), nested.getBody()->getOperations());
    nested.erase();
  }
  auto hoisted = [&](ifrt::CallOp call) -> func::FuncOp {
    SymbolRefAttr callee = call.getCallee();
    if (callee.getNestedReferences().size() != 1 ||
        callee.getLeafReference() != "main")
      return nullptr;
    auto it = atomNames.find(callee.getRootReference());
    if (it == atomNames.end())
      return nullptr;
    return module.lookupSymbol<func::FuncOp>(it->second);
  };

  // A top-level sdy.mesh per mesh, for the mesh tensors' shardings.
  builder.setInsertionPointToStart(module.getBody());
  llvm::StringMap<FlatSymbolRefAttr> meshRefs;
  for (Mesh &mesh : meshes.all()) {
    std::string symbol = unique("mesh_" + mesh.name);
    sdy::MeshOp::create(builder, entry.getLoc(), symbol, mesh.axes);
    meshRefs[mesh.name] = FlatSymbolRefAttr::get(ctx, symbol);
  }

  auto meshTensor = [&](Type type, Operation *op,
                        StringRef what = "") -> FailureOr<Type> {
    auto array = cast<ifrt::ArrayType>(type);
    auto emitError = [&] {
      InFlightDiagnostic diag = op->emitOpError();
      if (!what.empty())
        diag << what << ": ";
      return diag;
    };
    Mesh &mesh = meshes.of(array);
    if (array.getLayout())
      return emitError() << "not supported yet: an array with a layout ("
                               << array.getLayout() << ")";
    StringAttr kind = array.getMemoryKind();
    if (kind && !llvm::is_contained(
                    {StringRef("device"), StringRef("pinned_host"),
                     StringRef("unpinned_host")},
                    kind.getValue()))
      return emitError()
             << "not supported yet: memory kind " << kind
             << " (mpmd moves arrays between \"device\", \"pinned_host\" and "
                "\"unpinned_host\")";
    FailureOr<sdy::TensorShardingAttr> sharding = shardingOverMesh(
        array, mesh, meshRefs[mesh.name], emitError);
    if (failed(sharding))
      return failure();
    return Type(MeshTensorType::get(ctx, mesh.name, array.getShape(),
                                    *sharding, kind));
  };

  // The new main, with the topology and the devices of each mesh.
  auto meshTensors = [&](TypeRange types, StringRef what,
                         SmallVector<Type> &out) -> LogicalResult {
    for (auto [index, type] : llvm::enumerate(types)) {
      FailureOr<Type> converted =
          meshTensor(type, entry, (what + " " + Twine(index)).str());
      if (failed(converted))
        return failure();
      out.push_back(*converted);
    }
    return success();
  };
  SmallVector<Type> inputs, results;
  if (failed(meshTensors(entry.getArgumentTypes(), "argument", inputs)) ||
      failed(meshTensors(entry.getResultTypes(), "result", results)))
    return failure();
  builder.setInsertionPoint(entry);
  auto main = func::FuncOp::create(builder, entry.getLoc(), entry.getSymName(),
                                   builder.getFunctionType(inputs, results));
  main.setVisibility(entry.getVisibility());
  SmallVector<NamedMeshAttr> named;
  SmallVector<NamedAttribute> devicesOfMeshes;
  for (Mesh &mesh : meshes.all()) {
    named.push_back(NamedMeshAttr::get(ctx, mesh.name, mesh.axes));
    devicesOfMeshes.push_back(builder.getNamedAttr(
        mesh.name, builder.getDenseI64ArrayAttr(mesh.devices)));
  }
  main->setAttr(MpmdDialect::kTopologyAttrName, TopologyAttr::get(ctx, named));
  main->setAttr(MpmdDialect::kMeshDevicesAttrName,
                builder.getDictionaryAttr(devicesOfMeshes));
  auto keptAttrs = [ctx](DictionaryAttr attrs) {
    SmallVector<NamedAttribute> kept;
    if (attrs)
      for (NamedAttribute attr : attrs)
        if (!attr.getName().getValue().starts_with("ifrt."))
          kept.push_back(attr);
    return DictionaryAttr::get(ctx, kept);
  };
  for (unsigned index = 0; index < entry.getNumArguments(); ++index)
    main.setArgAttrs(index,
                     keptAttrs(entry.getArgAttrDict(index)).getValue());
  for (unsigned index = 0; index < entry.getNumResults(); ++index)
    main.setResultAttrs(index,
                        keptAttrs(entry.getResultAttrDict(index)).getValue());

  Block *block = main.addEntryBlock();
  builder.setInsertionPointToEnd(block);
  IRMapping values;
  for (auto [from, to] : llvm::zip(body.getArguments(), block->getArguments()))
    values.map(from, to);

  // Donations are the call's: the program's argument attributes say them
  // once per donation pattern and mesh (an atom called with several, or on
  // several device lists, gets a copy per pattern and mesh).
  llvm::DenseMap<Operation *, llvm::MapVector<Attribute, func::FuncOp>>
      byPattern;
  auto programFor = [&](ifrt::CallOp call,
                        func::FuncOp atom) -> func::FuncOp {
    SmallVector<Attribute> pattern(call.getInputs().size(),
                                   builder.getUnitAttr());
    for (Attribute pair : call.getIoAliases()) {
      ArrayRef<int32_t> alias = cast<DenseI32ArrayAttr>(pair).asArrayRef();
      pattern[alias[0]] = builder.getI32IntegerAttr(alias[1]);
    }
    for (int32_t index : call.getDonatedInputIndices())
      pattern[index] = builder.getBoolAttr(true);
    // A program is compiled for one mesh: an atom called on several device
    // lists is a program per mesh.
    SmallVector<Attribute> keyParts(pattern);
    keyParts.push_back(builder.getStringAttr(
        meshes.byDevices(call.getDevices().getIds())->name));
    Attribute key = builder.getArrayAttr(keyParts);
    auto &programs = byPattern[atom];
    if (auto it = programs.find(key); it != programs.end())
      return it->second;
    func::FuncOp program = atom;
    if (!programs.empty()) {
      OpBuilder cloner(atom);
      program = cast<func::FuncOp>(cloner.clone(*atom));
      program.setSymName(unique((atom.getSymName() + ".variant").str()));
    }
    for (auto [index, donation] : llvm::enumerate(pattern)) {
      program.removeArgAttr(index, kAliasingOutputAttr);
      program.removeArgAttr(index, kBufferDonorAttr);
      // (A BoolAttr is an IntegerAttr too: test it first.)
      if (isa<BoolAttr>(donation))
        program.setArgAttr(index, kBufferDonorAttr, builder.getBoolAttr(true));
      else if (auto output = dyn_cast<IntegerAttr>(donation))
        program.setArgAttr(index, kAliasingOutputAttr, output);
    }
    programs.insert({key, program});
    return program;
  };

  for (Operation &op : body) {
    if (auto call = dyn_cast<ifrt::CallOp>(op)) {
      func::FuncOp atom = hoisted(call);
      if (!atom)
        return call.emitOpError()
               << "calls " << call.getCallee()
               << "; an IFRT IR call names the @main of a nested module "
                  "(@module::@main)";
      func::FuncOp program = programFor(call, atom);
      SmallVector<Type> types;
      for (Value output : call.getOutputs()) {
        FailureOr<Type> converted = meshTensor(output.getType(), call);
        if (failed(converted))
          return failure();
        types.push_back(*converted);
      }
      SmallVector<Value> operands;
      for (Value input : call.getInputs())
        operands.push_back(values.lookup(input));
      Mesh &mesh = *meshes.byDevices(call.getDevices().getIds());
      for (auto [index, input] : llvm::enumerate(call.getInputs())) {
        auto array = cast<ifrt::ArrayType>(input.getType());
        if (&meshes.of(array) != &mesh)
          return call.emitOpError()
                 << "reads input " << index << " on devices "
                 << listText(array.getDevices())
                 << "; mpmd runs a call on arrays on all of its devices "
                    "(not supported yet: arrays on some of them)";
      }
      auto fragment = FragmentCallOp::create(
          builder, call.getLoc(), types, operands, builder.getArrayAttr({}),
          builder.getStringAttr(mesh.name),
          FlatSymbolRefAttr::get(ctx, program.getSymName()));
      for (auto [from, to] :
           llvm::zip(call.getOutputs(), fragment.getResults()))
        values.map(from, to);
    } else if (isa<ifrt::CopyArraysOp, ifrt::ReshardOp>(op)) {
      auto copy = dyn_cast<ifrt::CopyArraysOp>(op);
      auto reshard = dyn_cast<ifrt::ReshardOp>(op);
      ValueRange moved = copy ? copy.getInputs() : reshard.getInputs();
      ValueRange outputs = copy ? copy.getOutputs() : reshard.getOutputs();
      for (auto [input, output] : llvm::zip(moved, outputs)) {
        FailureOr<Type> type = meshTensor(output.getType(), &op);
        if (failed(type))
          return failure();
        values.map(output, TransferOp::create(builder, op.getLoc(), *type,
                                              values.lookup(input)));
      }
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> returned;
      for (Value value : ret.getOperands())
        returned.push_back(values.lookup(value));
      func::ReturnOp::create(builder, ret.getLoc(), returned);
    }
  }
  entry.erase();
  return success();
}

} // namespace
