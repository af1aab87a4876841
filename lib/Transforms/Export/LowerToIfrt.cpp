//===- LowerToIfrt.cpp - An exported MPMD program as IFRT IR --------------===//
//
// IFRT IR is the form Shardy:MPMD hands to Pathways and to XLA's IFRT IR
// runtime: a main function over arrays placed on explicit device lists,
// calling atom programs (one nested module each) and moving arrays between
// device lists. This pass writes an exported MPMD program in that form, so
// that what mpmd partitions can run there too.
//
// The ops are built by name (generic form), the types and attributes as
// opaque ones whose text is what jaxlib's IFRT dialect parses (and the
// compiler's own IFRT subset, include/mpmd/Dialect/Ifrt, which reads IFRT
// IR back for mpmd-import-ifrt, without loading it here). The layouts
// follow the road Shardy's lowering takes (an sdy sharding, as an XLA iota
// tile assignment, as an IFRT sharding param), so that both print the same
// arrays for the same program.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h"
#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <numeric>
#include <tuple>

namespace mlir::mpmd {
#define GEN_PASS_DEF_LOWERTOIFRTPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

constexpr StringLiteral kIfrt = "ifrt";
constexpr StringLiteral kIfrtFunctionAttr =
    ifrt::IfrtDialect::kFunctionAttrName;
constexpr StringLiteral kIfrtDonatedAttr = "ifrt.donated";
constexpr StringLiteral kIfrtMeshNameAttr =
    ifrt::IfrtDialect::kMeshNameAttrName;
constexpr StringLiteral kAliasingOutputAttr = "tf.aliasing_output";
constexpr StringLiteral kBufferDonorAttr = "jax.buffer_donor";
/// The mesh shape outlining leaves on programs: Shardy's lowering drops it
/// (the devices are the call's now), and so does this one.
constexpr StringLiteral kMeshShapeAttr = "mesh_shape";
/// The name of an atom program's entry function in its nested module.
constexpr StringLiteral kAtomMain = "main";

std::string joined(ArrayRef<int64_t> values, StringRef separator) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(values, os, separator);
  return text;
}

/// XLA's canonical form of an iota tile assignment's reshape dims and
/// transpose: dims of size 1 go, and dims the transpose keeps adjacent and
/// in order merge into one, until nothing changes. Shardy's lowering
/// converts through XLA's HloSharding, which holds tile assignments in this
/// form, so the IFRT sharding params it prints come from it.
void canonicalizeIota(SmallVector<int64_t> &dims, SmallVector<int64_t> &perm) {
  while (true) {
    // Drop the dims of size 1, renumbering the rest in the transpose.
    SmallVector<int64_t> renumbered(dims.size(), -1);
    SmallVector<int64_t> keptDims;
    for (auto [index, size] : llvm::enumerate(dims)) {
      if (size == 1)
        continue;
      renumbered[index] = keptDims.size();
      keptDims.push_back(size);
    }
    SmallVector<int64_t> keptPerm;
    for (int64_t dim : perm)
      if (renumbered[dim] >= 0)
        keptPerm.push_back(renumbered[dim]);
    dims = std::move(keptDims);
    perm = std::move(keptPerm);

    // Merge each run of the transpose that reads consecutive dims in order
    // into its first dim; the others become 1 and go in the next round.
    bool changed = false;
    for (size_t i = 1, base = 0; i < perm.size(); ++i) {
      if (perm[base] + static_cast<int64_t>(i - base) == perm[i]) {
        dims[perm[base]] *= dims[perm[i]];
        dims[perm[i]] = 1;
        changed = true;
      } else {
        base = i;
      }
    }
    if (!changed)
      return;
  }
}

/// How a value is laid out on its mesh, as IFRT writes it:
/// `#ifrt.sharding_param<2x1 to [1, 0] on 2x2>`. Emits an error through
/// `emitError` for what IFRT's sharding params do not express here.
FailureOr<std::string>
shardingParam(MeshTensorType type, sdy::MeshAttr mesh,
              function_ref<InFlightDiagnostic()> emitError) {
  int64_t rank = type.getRankedTensorType().getRank();
  SmallVector<int64_t> dimShards(rank, 1);
  // Mesh axes in the order the tile assignment walks them: those sharding
  // dimension 0 (major to minor), dimension 1, ..., then the replicated
  // ones in mesh order.
  SmallVector<int64_t> axisOrder;
  if (sdy::TensorShardingAttr sharding = type.getSharding()) {
    if (!sharding.getUnreducedAxes().empty())
      return emitError() << "not supported yet in IFRT IR: unreduced axes in "
                         << type;
    for (auto [dim, dimSharding] :
         llvm::enumerate(sharding.getDimShardings())) {
      for (sdy::AxisRefAttr axis : dimSharding.getAxes()) {
        if (axis.getSubAxisInfo())
          return emitError()
                 << "not supported yet in IFRT IR: sub-axis \""
                 << axis.getName() << "\" in " << type;
        auto position = llvm::find_if(mesh.getAxes(), [&](auto meshAxis) {
          return meshAxis.getName() == axis.getName();
        });
        if (position == mesh.getAxes().end())
          return emitError() << "axis \"" << axis.getName() << "\" of " << type
                             << " is not an axis of mesh \""
                             << type.getMeshName() << "\"";
        dimShards[dim] *= position->getSize();
        axisOrder.push_back(position - mesh.getAxes().begin());
      }
    }
  }
  int64_t numDevices = mesh.getTotalSize();
  int64_t tiles = std::accumulate(dimShards.begin(), dimShards.end(),
                                  int64_t{1}, std::multiplies<int64_t>());

  SmallVector<int64_t> axisSizes, permutation;
  if (tiles == 1) {
    // Replicated: one axis over all devices, as XLA's replicated sharding
    // converts.
    axisSizes = {numDevices};
    permutation = {0};
  } else {
    for (int64_t axis = 0, e = mesh.getAxes().size(); axis < e; ++axis)
      if (!llvm::is_contained(axisOrder, axis))
        axisOrder.push_back(axis);
    SmallVector<int64_t> reshape;
    for (sdy::MeshAxisAttr axis : mesh.getAxes())
      reshape.push_back(axis.getSize());
    canonicalizeIota(reshape, axisOrder);
    // IFRT lists the axes minor to major.
    axisSizes.assign(reshape.rbegin(), reshape.rend());
    int64_t numAxes = axisOrder.size();
    for (int64_t axis : llvm::reverse(axisOrder))
      permutation.push_back(numAxes - axis - 1);
  }
  return "#ifrt.sharding_param<" + joined(dimShards, "x") + " to [" +
         joined(permutation, ", ") + "] on " + joined(axisSizes, "x") + ">";
}

/// An array of the IFRT dialect, opaque here.
struct IfrtArray {
  Type type;
  /// What decides copy or reshard, and what merges moves.
  std::string shardingParam;
  StringRef mesh;
  StringRef memoryKind;
  ArrayRef<int64_t> devices;
};

struct LowerToIfrtPass
    : public EntryFunctionPass<LowerToIfrtPass,
                               mlir::mpmd::impl::LowerToIfrtPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    if (entries.size() != 1) {
      InFlightDiagnostic diag = module.emitError()
                                << "IFRT IR has one main function, but "
                                << entries.size()
                                << " functions have a topology:";
      for (func::FuncOp entry : entries)
        diag << " @" << entry.getSymName();
      return diag;
    }
    func::FuncOp main = entries.front();
    ctx = module.getContext();
    topology =
        main->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
    if (failed(checkExported(main)) || failed(assignDevices(main)))
      return failure();

    SymbolTable symbols(module);
    // Programs in the order their first call reaches them; each becomes a
    // module of its own.
    llvm::MapVector<Operation *, ModuleOp> atoms;
    for (auto call : main.getBody().getOps<FragmentCallOp>()) {
      auto program = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!program || program.isExternal())
        return call.emitOpError()
               << "calls @" << call.getCallee()
               << ", which is not a func.func with a body in this module";
      atoms.insert({program, nullptr});
    }
    for (auto &[program, atom] : atoms) {
      FailureOr<ModuleOp> outlined =
          outline(cast<func::FuncOp>(program), module, symbols);
      if (failed(outlined))
        return failure();
      atom = *outlined;
    }

    if (failed(lowerMain(main, atoms)))
      return failure();

    // Every program lives in its module now, with the meshes it names; a
    // declaration stays only if the main function still names it (in a
    // sharding attribute of an argument, say).
    llvm::StringSet<> named;
    main.walk([&](Operation *op) {
      op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
        named.insert(ref.getRootReference().getValue());
      });
    });
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (&op == main.getOperation())
        continue;
      if (isa<func::FuncOp>(op))
        op.erase();
      else if (auto mesh = dyn_cast<sdy::MeshOp>(op);
               mesh && !named.contains(mesh.getSymName()))
        op.erase();
    }
    return success();
  }

private:
  MLIRContext *ctx = nullptr;
  TopologyAttr topology;
  /// Device ids of each mesh.
  llvm::StringMap<SmallVector<int64_t>> devicesOf;
  /// Mesh tensor types and the array types made from them.
  DenseMap<Type, IfrtArray> converted;

  /// The entry function holds only what mpmd-export leaves: fragment calls
  /// of programs, transfers and the return; and mesh tensors only.
  LogicalResult checkExported(func::FuncOp main) {
    auto isMeshTensor = [](Type type) { return isa<MeshTensorType>(type); };
    for (auto [index, type] :
         llvm::enumerate(main.getFunctionType().getInputs()))
      if (!isMeshTensor(type))
        return main.emitOpError()
               << "has argument " << index << " of type " << type
               << "; IFRT IR takes mesh tensors only (not supported yet)";
    for (auto [index, type] :
         llvm::enumerate(main.getFunctionType().getResults()))
      if (!isMeshTensor(type))
        return main.emitOpError()
               << "has result " << index << " of type " << type
               << "; IFRT IR returns mesh tensors only (not supported yet)";
    for (Operation &op : main.getBody().front()) {
      if (isa<TransferOp, func::ReturnOp>(op))
        continue;
      if (auto call = dyn_cast<FragmentCallOp>(op)) {
        if (call->hasAttr(MpmdDialect::kConstantArgsAttrName))
          return call.emitOpError()
                 << "passes constant arguments (mpmd.constant_args), which "
                    "an IFRT call cannot; run mpmd-specialize-constant-args "
                    "(part of mpmd-export) first";
        continue;
      }
      return op.emitOpError()
             << "cannot be lowered to IFRT IR: the main function of an "
                "exported program holds only mpmd.fragment_call and "
                "mpmd.transfer ops; run mpmd-export first";
    }
    return success();
  }

  /// Meshes take consecutive device ids in topology order, from 0, as
  /// Shardy's lowering numbers them: the IFRT program's devices are
  /// logical, bound to real ones when it is compiled.
  LogicalResult assignDevices(func::FuncOp main) {
    int64_t next = 0;
    for (NamedMeshAttr named : topology.getMeshes()) {
      sdy::MeshAttr mesh = named.getMesh();
      int64_t size = mesh.getTotalSize();
      ArrayRef<int64_t> explicitIds = mesh.getDeviceIds();
      SmallVector<int64_t> iota(size);
      std::iota(iota.begin(), iota.end(), int64_t{0});
      // Explicit device ids reorder the devices of a mesh, which the
      // sharding params below do not say.
      if (!explicitIds.empty() && explicitIds != ArrayRef<int64_t>(iota))
        return main.emitOpError()
               << "not supported yet in IFRT IR: mesh \"" << named.getName()
               << "\" of the topology has explicit device ids";
      SmallVector<int64_t> &ids = devicesOf[named.getName()];
      for (int64_t i = 0; i < size; ++i)
        ids.push_back(next++);
    }
    return success();
  }

  /// The IFRT array of a mesh tensor type. Operands lowered already have
  /// their array type, which maps back to the same array.
  FailureOr<IfrtArray> convert(Type type, Operation *at) {
    auto known = converted.find(type);
    if (known != converted.end())
      return known->second;
    auto meshTensor = dyn_cast<MeshTensorType>(type);
    if (!meshTensor)
      return at->emitOpError() << "has a value of type " << type
                               << "; IFRT IR moves mesh tensors only";
    sdy::MeshAttr mesh = topology.getMesh(meshTensor.getMeshName());
    if (!mesh)
      return at->emitOpError()
             << "uses mesh \"" << meshTensor.getMeshName()
             << "\", which is not in the topology";
    FailureOr<std::string> param =
        shardingParam(meshTensor, mesh, [&] { return at->emitOpError(); });
    if (failed(param))
      return failure();
    IfrtArray array;
    array.shardingParam = *param;
    array.mesh = meshTensor.getMeshName();
    array.devices = devicesOf.find(array.mesh)->second;
    if (StringAttr kind = meshTensor.getMemoryKind())
      array.memoryKind = kind.getValue();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "array<" << meshTensor.getRankedTensorType() << ", "
       << array.shardingParam << ", [" << joined(array.devices, ", ") << "]";
    if (!array.memoryKind.empty())
      os << ", memory_kind = \"" << array.memoryKind << "\"";
    os << ">";
    array.type = OpaqueType::get(StringAttr::get(ctx, kIfrt), text);
    converted[type] = array;
    converted[array.type] = array;
    return array;
  }

  Type controlType() {
    return OpaqueType::get(StringAttr::get(ctx, kIfrt), "control");
  }

  /// `program` and what it refers to (the functions it calls, the sdy.mesh
  /// declarations its shardings name), as a private module right after it:
  /// the program is its public @main. A specialization (mpmd.specializes)
  /// takes the shared program along as a private function, as Shardy's
  /// lowering outlines a program that calls another.
  FailureOr<ModuleOp> outline(func::FuncOp program, ModuleOp module,
                              SymbolTable &symbols) {
    OpBuilder builder(program);
    builder.setInsertionPointAfter(program);
    auto atom = ModuleOp::create(builder, program.getLoc(),
                                 StringRef(program.getSymName()));
    atom.setVisibility(SymbolTable::Visibility::Private);
    OpBuilder inner = OpBuilder::atBlockEnd(atom.getBody());

    SmallVector<func::FuncOp> stack = {program};
    llvm::SmallPtrSet<Operation *, 8> taken;
    SmallVector<sdy::MeshOp> meshes;
    while (!stack.empty()) {
      func::FuncOp function = stack.pop_back_val();
      if (!taken.insert(function).second)
        continue;
      auto clone = cast<func::FuncOp>(inner.clone(*function));
      clone->removeAttr(kMeshShapeAttr);
      if (function == program) {
        clone.setSymName(kAtomMain);
        clone.setVisibility(SymbolTable::Visibility::Public);
      }
      // Symbols hide in attributes and properties: callees, the meshes of
      // shardings (nested in sharding attributes), mpmd.specializes.
      WalkResult walk = function.walk([&](Operation *op) {
        WalkResult found = WalkResult::advance();
        op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
          if (found.wasInterrupted())
            return;
          Operation *symbol = symbols.lookup(ref.getRootReference());
          if (auto callee = dyn_cast_or_null<func::FuncOp>(symbol)) {
            stack.push_back(callee);
          } else if (auto mesh = dyn_cast_or_null<sdy::MeshOp>(symbol)) {
            if (taken.insert(mesh).second)
              meshes.push_back(mesh);
          } else {
            op->emitOpError()
                << "refers to @" << ref.getRootReference().getValue()
                << ", which is neither a func.func nor an sdy.mesh of the "
                   "module; program @"
                << program.getSymName()
                << " cannot move into a module of its own";
            found = WalkResult::interrupt();
          }
        });
        return found;
      });
      if (walk.wasInterrupted())
        return failure();
    }
    // Declarations first, in the order the module had them.
    llvm::sort(meshes, [](sdy::MeshOp a, sdy::MeshOp b) {
      return a->isBeforeInBlock(b);
    });
    inner.setInsertionPointToStart(atom.getBody());
    for (sdy::MeshOp mesh : meshes)
      inner.clone(*mesh);
    return atom;
  }

  LogicalResult lowerMain(func::FuncOp main,
                          const llvm::MapVector<Operation *, ModuleOp> &atoms) {
    Block &body = main.getBody().front();
    FunctionType type = main.getFunctionType();
    SmallVector<Type> inputs, results;
    for (BlockArgument arg : body.getArguments()) {
      FailureOr<IfrtArray> array = convert(arg.getType(), main);
      if (failed(array))
        return failure();
      arg.setType(array->type);
      inputs.push_back(array->type);
      // The caller gave the buffer up (donate_argnums); IFRT says so with
      // ifrt.donated, which its versioned form keeps, as Shardy's lowering
      // does.
      unsigned index = arg.getArgNumber();
      auto donor = main.getArgAttrOfType<BoolAttr>(index, kBufferDonorAttr);
      bool donated = main.getArgAttr(index, kAliasingOutputAttr) ||
                     (donor && donor.getValue());
      main.removeArgAttr(index, kAliasingOutputAttr);
      main.removeArgAttr(index, kBufferDonorAttr);
      if (donated)
        main.setArgAttr(index, kIfrtDonatedAttr, UnitAttr::get(ctx));
    }
    for (Type result : type.getResults()) {
      FailureOr<IfrtArray> array = convert(result, main);
      if (failed(array))
        return failure();
      results.push_back(array->type);
    }

    // The control output of the last call on each device list: the next
    // call there waits for it, so every mesh runs its programs in the
    // order of the schedule.
    llvm::StringMap<Value> lastCall;
    for (Operation *op = &body.front(); op;) {
      Operation *next = op->getNextNode();
      if (auto call = dyn_cast<FragmentCallOp>(op)) {
        auto program = cast<func::FuncOp>(
            SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
        if (failed(lowerCall(call, program, atoms.lookup(program), lastCall)))
          return failure();
      } else if (auto transfer = dyn_cast<TransferOp>(op)) {
        // A run of transfers is lowered at once; go on after it.
        while (isa_and_nonnull<TransferOp>(next))
          next = next->getNextNode();
        if (failed(lowerTransfers(transfer)))
          return failure();
      }
      op = next;
    }
    main.setType(FunctionType::get(ctx, inputs, results));
    main->removeAttr(MpmdDialect::kTopologyAttrName);
    main->setAttr(kIfrtFunctionAttr, UnitAttr::get(ctx));
    return success();
  }

  LogicalResult lowerCall(FragmentCallOp call, func::FuncOp program,
                          ModuleOp atom,
                          llvm::StringMap<Value> &lastCall) {
    SmallVector<Type> resultTypes;
    for (Type type : call.getResultTypes()) {
      FailureOr<IfrtArray> array = convert(type, call);
      if (failed(array))
        return failure();
      resultTypes.push_back(array->type);
    }
    resultTypes.push_back(controlType());

    // What the program's boundary says about its buffers: an argument
    // whose buffer a result reuses, or one XLA may free early.
    SmallVector<Attribute> aliases;
    SmallVector<int32_t> donated;
    for (unsigned arg = 0, e = program.getNumArguments(); arg < e; ++arg) {
      if (auto output =
              program.getArgAttrOfType<IntegerAttr>(arg, kAliasingOutputAttr))
        aliases.push_back(DenseI32ArrayAttr::get(
            ctx, {static_cast<int32_t>(arg),
                  static_cast<int32_t>(output.getInt())}));
      auto donor = program.getArgAttrOfType<BoolAttr>(arg, kBufferDonorAttr);
      if (donor && donor.getValue())
        donated.push_back(arg);
    }

    // Meshes have disjoint device lists: a mesh's name stands for its list.
    ArrayRef<int64_t> devices = devicesOf.find(call.getMeshName())->second;
    SmallVector<Value> controls;
    if (Value previous = lastCall.lookup(call.getMeshName()))
      controls.push_back(previous);

    OperationState state(call.getLoc(), "ifrt.Call");
    state.addOperands(call.getOperands());
    state.addOperands(controls);
    state.addTypes(resultTypes);
    state.addAttribute("callee",
                       SymbolRefAttr::get(atom.getSymNameAttr(),
                                          {FlatSymbolRefAttr::get(
                                              ctx, kAtomMain)}));
    state.addAttribute(
        "devices",
        OpaqueAttr::get(StringAttr::get(ctx, kIfrt),
                        ("devices[" + joined(devices, ", ") + "]"),
                        NoneType::get(ctx)));
    state.addAttribute("io_aliases", ArrayAttr::get(ctx, aliases));
    state.addAttribute("donated_input_indices",
                       DenseI32ArrayAttr::get(ctx, donated));
    state.addAttribute(
        "operandSegmentSizes",
        DenseI32ArrayAttr::get(ctx,
                               {static_cast<int32_t>(call.getNumOperands()),
                                static_cast<int32_t>(controls.size())}));
    // Per-mesh compile options are keyed by the mesh's name.
    state.addAttribute(kIfrtMeshNameAttr, call.getMeshNameAttr());
    OpBuilder builder(call);
    Operation *ifrtCall = builder.create(state);
    lastCall[call.getMeshName()] = ifrtCall->getResults().back();
    call->replaceAllUsesWith(ifrtCall->getResults().drop_back());
    call.erase();
    return success();
  }

  /// The run of consecutive transfers starting at `first`. The runtime
  /// issues a run at one point of the program, so transfers in it between
  /// the same meshes and memory kinds, and of the same kind (copy or
  /// reshard), become one IFRT op with several arrays, placed where the run
  /// starts (what mpmd-issue-transfers-early decided stays). A transfer
  /// that moves what another of the run moved joins only a group made after
  /// that one's.
  LogicalResult lowerTransfers(TransferOp first) {
    struct Group {
      bool copy;
      SmallVector<TransferOp> transfers;
      SmallVector<Type> types;
    };
    // Groups match on everything the IFRT ops require to be common to
    // their arrays.
    using Key = std::tuple<bool, StringRef, StringRef, StringRef, StringRef>;
    SmallVector<Group> groups;
    std::map<Key, size_t> lastGroupOf;
    DenseMap<Operation *, size_t> groupOfTransfer;
    for (Operation *op = first;
         auto transfer = dyn_cast_or_null<TransferOp>(op);
         op = op->getNextNode()) {
      FailureOr<IfrtArray> from =
          convert(transfer.getTensor().getType(), transfer);
      FailureOr<IfrtArray> to = convert(transfer.getType(), transfer);
      if (failed(from) || failed(to))
        return failure();
      // The same layout elsewhere is a copy; a new layout is a reshard.
      bool copy = from->shardingParam == to->shardingParam;
      Key key{copy, from->mesh, to->mesh, from->memoryKind, to->memoryKind};
      auto producer =
          groupOfTransfer.find(transfer.getTensor().getDefiningOp());
      auto last = lastGroupOf.find(key);
      size_t group;
      if (last != lastGroupOf.end() &&
          (producer == groupOfTransfer.end() ||
           last->second > producer->second)) {
        group = last->second;
      } else {
        group = groups.size();
        groups.push_back(Group{copy, {}, {}});
        lastGroupOf[key] = group;
      }
      groups[group].transfers.push_back(transfer);
      groups[group].types.push_back(to->type);
      groupOfTransfer[transfer] = group;
    }

    OpBuilder builder(first);
    for (Group &group : groups) {
      OperationState state(group.transfers.front().getLoc(),
                           group.copy ? "ifrt.CopyArrays" : "ifrt.Reshard");
      for (TransferOp transfer : group.transfers)
        state.addOperands(transfer.getTensor());
      state.addTypes(group.types);
      state.addTypes(controlType());
      state.addAttribute(
          "operandSegmentSizes",
          DenseI32ArrayAttr::get(
              ctx, {static_cast<int32_t>(group.transfers.size()), 0}));
      Operation *moved = builder.create(state);
      for (auto [transfer, result] :
           llvm::zip(group.transfers, moved->getResults()))
        transfer.getResult().replaceAllUsesWith(result);
    }
    for (Group &group : groups)
      for (TransferOp transfer : group.transfers)
        transfer.erase();
    return success();
  }
};

} // namespace
