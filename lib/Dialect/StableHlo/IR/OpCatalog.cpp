//===- OpCatalog.cpp - What the passes need to know about HLO ops ---------===//
//
// The ops this project models (StableHloOps.td) answer from their ODS
// traits, read at compile time from the op classes, so the catalog cannot
// drift from the ops. The ops it only carries along have one row each in a
// constant table; sources for their flags: the StableHLO specification and
// upstream's op traits (Pure, RecursiveMemoryEffects, Commutative,
// Elementwise), CHLO's likewise. Conservative: ops with unknown or external
// effects (custom_call, composite, rng, infeed/outfeed, send/recv, trace,
// async ops) and all collectives are impure; isPure(Operation *) refines
// custom_call by its `has_side_effect` flag, as upstream does. Both are
// merged, sorted by name, on first use, so that lookup is a binary search
// (no registry, no context).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;
using namespace mlir::stablehlo;

namespace {
enum Flags : unsigned {
  None = 0,
  Pure = 1 << 0,
  Elementwise = 1 << 1,
  ConstantLike = 1 << 2,
  Cheap = 1 << 3,
  Commutative = 1 << 4,
  Collective = 1 << 5,
  Regions = 1 << 6,
};

constexpr OpInfo entry(llvm::StringLiteral name, unsigned flags) {
  return OpInfo{name,
                (flags & Pure) != 0,
                (flags & Elementwise) != 0,
                (flags & ConstantLike) != 0,
                (flags & Cheap) != 0,
                (flags & Commutative) != 0,
                (flags & Collective) != 0,
                (flags & Regions) != 0};
}

// The ops that are not modelled, by name. A modelled op left here would
// appear twice, which OpCatalogTest rejects.
constexpr OpInfo kUnmodelledOpInfos[] = {
    entry("chlo._asin_acos_kernel", Pure | Elementwise),
    entry("chlo.acos", Pure | Elementwise),
    entry("chlo.acosh", Pure | Elementwise),
    entry("chlo.asin", Pure | Elementwise),
    entry("chlo.asinh", Pure | Elementwise),
    entry("chlo.atan", Pure | Elementwise),
    entry("chlo.atanh", Pure | Elementwise),
    entry("chlo.bessel_i1e", Pure | Elementwise),
    entry("chlo.broadcast_add", Pure | Commutative),
    entry("chlo.broadcast_and", Pure | Commutative),
    entry("chlo.broadcast_atan2", Pure),
    entry("chlo.broadcast_compare", Pure),
    entry("chlo.broadcast_complex", Pure),
    entry("chlo.broadcast_divide", Pure),
    entry("chlo.broadcast_maximum", Pure | Commutative),
    entry("chlo.broadcast_minimum", Pure | Commutative),
    entry("chlo.broadcast_multiply", Pure | Commutative),
    entry("chlo.broadcast_next_after", Pure),
    entry("chlo.broadcast_or", Pure | Commutative),
    entry("chlo.broadcast_polygamma", Pure),
    entry("chlo.broadcast_power", Pure),
    entry("chlo.broadcast_remainder", Pure),
    entry("chlo.broadcast_select", Pure),
    entry("chlo.broadcast_shift_left", Pure),
    entry("chlo.broadcast_shift_right_arithmetic", Pure),
    entry("chlo.broadcast_shift_right_logical", Pure),
    entry("chlo.broadcast_subtract", Pure),
    entry("chlo.broadcast_xor", Pure | Commutative),
    entry("chlo.broadcast_zeta", Pure),
    entry("chlo.conj", Pure | Elementwise),
    entry("chlo.constant", Pure | ConstantLike | Cheap),
    entry("chlo.constant_like", Pure | Cheap),
    entry("chlo.cosh", Pure | Elementwise),
    entry("chlo.digamma", Pure | Elementwise),
    entry("chlo.erf", Pure | Elementwise),
    entry("chlo.erf_inv", Pure | Elementwise),
    entry("chlo.erfc", Pure | Elementwise),
    entry("chlo.is_inf", Pure | Elementwise),
    entry("chlo.is_neg_inf", Pure | Elementwise),
    entry("chlo.is_pos_inf", Pure | Elementwise),
    entry("chlo.lgamma", Pure | Elementwise),
    entry("chlo.mulhi", Pure | Elementwise | Commutative),
    entry("chlo.next_after", Pure | Elementwise),
    entry("chlo.polygamma", Pure | Elementwise),
    entry("chlo.ragged_dot", Pure),
    entry("chlo.scan", Pure | Regions),
    entry("chlo.sinh", Pure | Elementwise),
    entry("chlo.square", Pure | Elementwise),
    entry("chlo.tan", Pure | Elementwise),
    entry("chlo.top_k", Pure),
    entry("chlo.zeta", Pure | Elementwise),
    entry("stablehlo.after_all", Pure),
    entry("stablehlo.all_gather", Collective),
    entry("stablehlo.all_reduce", Collective | Regions),
    entry("stablehlo.all_to_all", Collective),
    entry("stablehlo.async_done", None),
    entry("stablehlo.async_start", None),
    entry("stablehlo.batch_norm_grad", Pure),
    entry("stablehlo.batch_norm_inference", Pure),
    entry("stablehlo.batch_norm_training", Pure),
    entry("stablehlo.bitcast_convert", Pure),
    entry("stablehlo.broadcast", Pure | Cheap),
    entry("stablehlo.case", Pure | Regions),
    entry("stablehlo.cholesky", Pure),
    entry("stablehlo.clamp", Pure | Elementwise),
    entry("stablehlo.collective_broadcast", Collective),
    entry("stablehlo.collective_permute", Collective),
    entry("stablehlo.complex", Pure | Elementwise),
    entry("stablehlo.composite", None),
    entry("stablehlo.compute_reshape_shape", Pure),
    entry("stablehlo.convolution", Pure),
    entry("stablehlo.cross-replica-sum", Collective),
    entry("stablehlo.cstr_reshapable", Pure),
    entry("stablehlo.dot", Pure),
    entry("stablehlo.dynamic_broadcast_in_dim", Pure | Cheap),
    entry("stablehlo.dynamic_conv", Pure),
    entry("stablehlo.dynamic_gather", Pure),
    entry("stablehlo.dynamic_iota", Pure | Cheap),
    entry("stablehlo.dynamic_pad", Pure),
    entry("stablehlo.dynamic_reshape", Pure),
    entry("stablehlo.einsum", Pure),
    entry("stablehlo.fft", Pure),
    entry("stablehlo.gather", Pure),
    entry("stablehlo.get_dimension_size", Pure),
    entry("stablehlo.get_tuple_element", Pure),
    entry("stablehlo.if", Pure | Regions),
    entry("stablehlo.imag", Pure | Elementwise),
    entry("stablehlo.infeed", None),
    entry("stablehlo.map", Pure | Elementwise | Regions),
    entry("stablehlo.outfeed", None),
    entry("stablehlo.pad", Pure),
    entry("stablehlo.partition_id", Pure),
    entry("stablehlo.real", Pure | Elementwise),
    entry("stablehlo.real_dynamic_slice", Pure),
    entry("stablehlo.recv", None),
    entry("stablehlo.reduce_precision", Pure | Elementwise),
    entry("stablehlo.reduce_scatter", Collective | Regions),
    entry("stablehlo.reduce_window", Pure | Regions),
    entry("stablehlo.replica_id", Pure),
    entry("stablehlo.reverse", Pure),
    entry("stablehlo.rng", None),
    entry("stablehlo.rng_bit_generator", Pure),
    entry("stablehlo.scatter", Pure | Regions),
    entry("stablehlo.select_and_scatter", Pure | Regions),
    entry("stablehlo.send", None),
    entry("stablehlo.set_dimension_size", Pure),
    entry("stablehlo.sort", Pure | Regions),
    entry("stablehlo.torch_index_select", Pure),
    entry("stablehlo.trace", None),
    entry("stablehlo.triangular_solve", Pure),
    entry("stablehlo.tuple", Pure),
    entry("stablehlo.unary_einsum", Pure),
    entry("stablehlo.uniform_dequantize", Pure | Elementwise),
    entry("stablehlo.uniform_quantize", Pure | Elementwise),
};

/// The entry of a modelled op, from its traits. ODS's `Pure` is
/// AlwaysSpeculatable plus NoMemoryEffect, and no op here is speculatable
/// with effects (OpCatalogTest checks it); ops with regions (reduce, while)
/// are pure by themselves when their effects are those of their bodies.
/// custom_call has neither trait: its effects depend on `has_side_effect`
/// (isPure below), so its entry is impure.
template <typename OpT>
OpInfo getModelledOpInfo() {
  return OpInfo{
      OpT::getOperationName(),
      OpT::template hasTrait<OpTrait::AlwaysSpeculatableImplTrait>() ||
          OpT::template hasTrait<OpTrait::HasRecursiveMemoryEffects>(),
      OpT::template hasTrait<trait::Elementwise>(),
      OpT::template hasTrait<OpTrait::ConstantLike>(),
      OpT::template hasTrait<trait::CheapToClone>(),
      OpT::template hasTrait<OpTrait::IsCommutative>(),
      // No modelled op communicates; modelling one would need a marker
      // trait like trait::Elementwise.
      /*isCollective=*/false,
      !OpT::template hasTrait<OpTrait::ZeroRegions>()};
}

template <typename... OpTs>
std::vector<OpInfo> buildCatalog() {
  std::vector<OpInfo> infos = {getModelledOpInfo<OpTs>()...};
  llvm::append_range(infos, kUnmodelledOpInfos);
  llvm::sort(infos, [](const OpInfo &lhs, const OpInfo &rhs) {
    return lhs.name < rhs.name;
  });
  return infos;
}
} // namespace

llvm::ArrayRef<OpInfo> mlir::stablehlo::getAllOpInfos() {
  static const std::vector<OpInfo> infos = buildCatalog<
#define GET_OP_LIST
#include "mpmd/Dialect/StableHlo/IR/StableHloOps.cpp.inc"
      >();
  return infos;
}

const OpInfo *mlir::stablehlo::lookupOpInfo(llvm::StringRef fullOpName) {
  llvm::ArrayRef<OpInfo> infos = getAllOpInfos();
  const OpInfo *it = llvm::lower_bound(
      infos, fullOpName, [](const OpInfo &info, llvm::StringRef name) {
        return info.name < name;
      });
  if (it == infos.end() || it->name != fullOpName)
    return nullptr;
  return it;
}

/// An attribute of `op` by name, looking also at the properties of
/// unregistered ops, which keep their `<{...}>` dictionary as a whole.
static Attribute getAttrOrProperty(Operation *op, llvm::StringRef name) {
  if (Attribute attr = op->getAttr(name))
    return attr;
  if (auto properties = llvm::dyn_cast_if_present<DictionaryAttr>(
          op->getPropertiesAsAttribute()))
    return properties.get(name);
  return {};
}

bool mlir::stablehlo::isPure(Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  const OpInfo *info = lookupOpInfo(name);
  if (!info)
    return false;
  // Upstream gives custom_call every effect unless it says it has none.
  if (name == "stablehlo.custom_call") {
    auto hasSideEffect = llvm::dyn_cast_if_present<BoolAttr>(
        getAttrOrProperty(op, "has_side_effect"));
    return hasSideEffect && !hasSideEffect.getValue();
  }
  if (!info->isPure)
    return false;
  // The effects of the ops in the regions are the op's own.
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block)
        if (!stablehlo::isPure(&nested))
          return false;
  return true;
}

bool mlir::stablehlo::isElementwise(Operation *op) {
  const OpInfo *info = lookupOpInfo(op->getName().getStringRef());
  return info && info->isElementwise;
}

bool mlir::stablehlo::isCheapToClone(Operation *op) {
  const OpInfo *info = lookupOpInfo(op->getName().getStringRef());
  return info && info->isCheapToClone && stablehlo::isPure(op);
}
