//===- DeclareSdyMeshes.cpp - Shardings name declared sdy.mesh symbols ----===//
//
// Inside the compiler a sharding's mesh is known from where it sits (a mesh
// tensor's mesh, a fragment's), and its symbol is a placeholder. For
// Shardy:MPMD's dialects, which resolve each `#sdy.sharding<@name, ...>`
// against `sdy.mesh @name`, every mesh shape of the topology gets a declared
// symbol (`@mesh` when the meshes are alike, as Shardy's own export writes
// it) and every sharding names the symbol of its mesh.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_DECLARESDYMESHESPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// The symbol the compiler's own shardings use before export.
constexpr StringLiteral kPlaceholder = "mesh";
/// Function attribute naming the mesh of a program (mpmd-outline-fragments).
constexpr StringLiteral kProgramMeshAttr = "mpmd.mesh";

/// Meshes are alike when their axes are (device ids do not matter here).
bool sameShape(sdy::MeshAttr a, sdy::MeshAttr b) {
  return a && b && a.getAxes() == b.getAxes();
}

struct DeclareSdyMeshesPass
    : public EntryFunctionPass<DeclareSdyMeshesPass,
                               mlir::mpmd::impl::DeclareSdyMeshesPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    llvm::StringSet<> meshSymbols{kPlaceholder};
    SmallVector<sdy::MeshOp> declared;
    for (auto meshOp : module.getOps<sdy::MeshOp>()) {
      meshSymbols.insert(meshOp.getSymName());
      declared.push_back(meshOp);
    }

    // One symbol per mesh shape, in topology order.
    llvm::StringMap<std::string> symbolOf; // mesh name -> symbol
    SmallVector<std::pair<sdy::MeshAttr, std::string>> shapes;
    for (func::FuncOp entry : entries) {
      auto topology =
          entry->getAttrOfType<TopologyAttr>(MpmdDialect::kTopologyAttrName);
      for (StringRef name : topology.getMeshNames()) {
        sdy::MeshAttr mesh = topology.getMesh(name);
        auto known = llvm::find_if(shapes, [&](auto &entry) {
          return sameShape(entry.first, mesh);
        });
        if (known == shapes.end()) {
          shapes.emplace_back(mesh, symbolFor(mesh, name, symbols, shapes));
          known = std::prev(shapes.end());
        }
        auto [it, inserted] = symbolOf.try_emplace(name, known->second);
        if (!inserted && it->second != known->second)
          return entry.emitError()
                 << "mesh \"" << name
                 << "\" has different shapes in two entry functions' "
                    "topologies; export them separately";
      }
    }

    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    for (auto &[mesh, symbol] : shapes)
      if (!symbols.lookup(symbol))
        sdy::MeshOp::create(builder, module.getLoc(), symbol,
                            sdy::MeshAttr::get(ctx, mesh.getAxes(), {}));

    // When every sharding names the placeholder already and no declaration
    // can become unused, nothing is renamed or erased (the common case:
    // meshes of one shape and a front end that declares none).
    bool renames =
        !declared.empty() ||
        llvm::any_of(symbolOf, [](const llvm::StringMapEntry<std::string> &e) {
          return e.getValue() != kPlaceholder;
        });

    // Entry functions: each mesh tensor's sharding names its mesh's symbol.
    AttrTypeReplacer types;
    types.addReplacement([&](MeshTensorType type) -> std::optional<Type> {
      sdy::TensorShardingAttr sharding = type.getSharding();
      auto symbol = symbolOf.find(type.getMeshName());
      if (!sharding || symbol == symbolOf.end() ||
          sharding.getMeshName() == symbol->second)
        return std::nullopt;
      return MeshTensorType::get(
          ctx, type.getMeshName(), type.getRankedTensorType(),
          sdy::TensorShardingAttr::get(
              ctx, FlatSymbolRefAttr::get(ctx, symbol->second),
              sharding.getDimShardings(), sharding.getReplicatedAxes(),
              sharding.getUnreducedAxes()),
          type.getMemoryKind());
    });
    if (renames)
      for (func::FuncOp entry : entries)
        types.recursivelyReplaceElementsIn(entry, /*replaceAttrs=*/true,
                                           /*replaceLocs=*/false,
                                           /*replaceTypes=*/true);

    // Programs: every sharding inside names the program's mesh.
    for (auto function : module.getOps<func::FuncOp>()) {
      auto mesh = function->getAttrOfType<StringAttr>(kProgramMeshAttr);
      if (!mesh)
        continue;
      auto symbol = symbolOf.find(mesh.getValue());
      if (symbol == symbolOf.end())
        return function.emitError()
               << "runs on mesh \"" << mesh.getValue()
               << "\", which is not in the topology";
      if (renames)
        renameMeshSymbols(function, meshSymbols, symbol->second);
    }
    if (declared.empty())
      return success();

    // Declarations nothing names any more (the front end's, say) go.
    // (MLIR's symbol uses do not look inside types, so walk them here.)
    llvm::StringSet<> used;
    auto note = [&](FlatSymbolRefAttr ref) { used.insert(ref.getValue()); };
    module.walk([&](Operation *op) {
      op->getAttrDictionary().walk(note);
      if (Attribute properties = op->getPropertiesAsAttribute())
        properties.walk(note);
      for (Type type : op->getResultTypes())
        type.walk(note);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.getType().walk(note);
    });
    for (sdy::MeshOp meshOp : declared)
      if (!used.contains(meshOp.getSymName()))
        meshOp.erase();
    return success();
  }

  /// `mesh` for the first shape that can have it, else a declaration of the
  /// same shape already in the module, else `mesh_<name>`.
  std::string
  symbolFor(sdy::MeshAttr mesh, StringRef name, SymbolTable &symbols,
            ArrayRef<std::pair<sdy::MeshAttr, std::string>> taken) {
    auto free = [&](StringRef symbol) {
      return llvm::none_of(taken,
                           [&](auto &entry) { return entry.second == symbol; });
    };
    auto fits = [&](StringRef symbol) {
      auto existing = symbols.lookup<sdy::MeshOp>(symbol);
      return free(symbol) &&
             (!symbols.lookup(symbol) ||
              (existing && sameShape(existing.getMesh(), mesh)));
    };
    if (fits(kPlaceholder))
      return kPlaceholder.str();
    for (auto meshOp :
         cast<ModuleOp>(symbols.getOp()).getOps<sdy::MeshOp>())
      if (free(meshOp.getSymName()) && sameShape(meshOp.getMesh(), mesh))
        return meshOp.getSymName().str();
    std::string symbol = (Twine(kPlaceholder) + "_" + name).str();
    for (unsigned suffix = 0; !fits(symbol); ++suffix)
      symbol = (Twine(kPlaceholder) + "_" + name + "_" + Twine(suffix)).str();
    return symbol;
  }
};

} // namespace
