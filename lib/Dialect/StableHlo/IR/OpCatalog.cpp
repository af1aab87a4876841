//===- OpCatalog.cpp - What the passes need to know about HLO ops ---------===//
//
// One row per op name, sorted so that lookup is a binary search over a
// constant table (no registry, no global mutable state). Sources for the
// flags: the StableHLO specification and upstream's op traits (Pure,
// RecursiveMemoryEffects, Commutative, Elementwise), CHLO's likewise.
// Conservative: ops with unknown or external effects (custom_call,
// composite, rng, infeed/outfeed, send/recv, trace, async ops) and all
// collectives are impure; isPure(Operation *) refines custom_call by its
// `has_side_effect` flag, as upstream does.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

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

// Sorted by name (byte order); OpCatalogTest checks it.
constexpr OpInfo kOpInfos[] = {
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
    entry("stablehlo.abs", Pure | Elementwise),
    entry("stablehlo.add", Pure | Elementwise | Commutative),
    entry("stablehlo.after_all", Pure),
    entry("stablehlo.all_gather", Collective),
    entry("stablehlo.all_reduce", Collective | Regions),
    entry("stablehlo.all_to_all", Collective),
    entry("stablehlo.and", Pure | Elementwise | Commutative),
    entry("stablehlo.async_done", None),
    entry("stablehlo.async_start", None),
    entry("stablehlo.atan2", Pure | Elementwise),
    entry("stablehlo.batch_norm_grad", Pure),
    entry("stablehlo.batch_norm_inference", Pure),
    entry("stablehlo.batch_norm_training", Pure),
    entry("stablehlo.bitcast_convert", Pure),
    entry("stablehlo.broadcast", Pure | Cheap),
    entry("stablehlo.broadcast_in_dim", Pure | Cheap),
    entry("stablehlo.case", Pure | Regions),
    entry("stablehlo.cbrt", Pure | Elementwise),
    entry("stablehlo.ceil", Pure | Elementwise),
    entry("stablehlo.cholesky", Pure),
    entry("stablehlo.clamp", Pure | Elementwise),
    entry("stablehlo.collective_broadcast", Collective),
    entry("stablehlo.collective_permute", Collective),
    entry("stablehlo.compare", Pure | Elementwise),
    entry("stablehlo.complex", Pure | Elementwise),
    entry("stablehlo.composite", None),
    entry("stablehlo.compute_reshape_shape", Pure),
    entry("stablehlo.concatenate", Pure),
    entry("stablehlo.constant", Pure | ConstantLike | Cheap),
    entry("stablehlo.convert", Pure | Elementwise),
    entry("stablehlo.convolution", Pure),
    entry("stablehlo.cosine", Pure | Elementwise),
    entry("stablehlo.count_leading_zeros", Pure | Elementwise),
    entry("stablehlo.create_token", Pure),
    entry("stablehlo.cross-replica-sum", Collective),
    entry("stablehlo.cstr_reshapable", Pure),
    entry("stablehlo.custom_call", None),
    entry("stablehlo.divide", Pure | Elementwise),
    entry("stablehlo.dot", Pure),
    entry("stablehlo.dot_general", Pure),
    entry("stablehlo.dynamic_broadcast_in_dim", Pure | Cheap),
    entry("stablehlo.dynamic_conv", Pure),
    entry("stablehlo.dynamic_gather", Pure),
    entry("stablehlo.dynamic_iota", Pure | Cheap),
    entry("stablehlo.dynamic_pad", Pure),
    entry("stablehlo.dynamic_reshape", Pure),
    entry("stablehlo.dynamic_slice", Pure),
    entry("stablehlo.dynamic_update_slice", Pure),
    entry("stablehlo.einsum", Pure),
    entry("stablehlo.exponential", Pure | Elementwise),
    entry("stablehlo.exponential_minus_one", Pure | Elementwise),
    entry("stablehlo.fft", Pure),
    entry("stablehlo.floor", Pure | Elementwise),
    entry("stablehlo.gather", Pure),
    entry("stablehlo.get_dimension_size", Pure),
    entry("stablehlo.get_tuple_element", Pure),
    entry("stablehlo.if", Pure | Regions),
    entry("stablehlo.imag", Pure | Elementwise),
    entry("stablehlo.infeed", None),
    entry("stablehlo.iota", Pure | Cheap),
    entry("stablehlo.is_finite", Pure | Elementwise),
    entry("stablehlo.log", Pure | Elementwise),
    entry("stablehlo.log_plus_one", Pure | Elementwise),
    entry("stablehlo.logistic", Pure | Elementwise),
    entry("stablehlo.map", Pure | Elementwise | Regions),
    entry("stablehlo.maximum", Pure | Elementwise | Commutative),
    entry("stablehlo.minimum", Pure | Elementwise | Commutative),
    entry("stablehlo.multiply", Pure | Elementwise | Commutative),
    entry("stablehlo.negate", Pure | Elementwise),
    entry("stablehlo.not", Pure | Elementwise),
    entry("stablehlo.optimization_barrier", Pure),
    entry("stablehlo.or", Pure | Elementwise | Commutative),
    entry("stablehlo.outfeed", None),
    entry("stablehlo.pad", Pure),
    entry("stablehlo.partition_id", Pure),
    entry("stablehlo.popcnt", Pure | Elementwise),
    entry("stablehlo.power", Pure | Elementwise),
    entry("stablehlo.real", Pure | Elementwise),
    entry("stablehlo.real_dynamic_slice", Pure),
    entry("stablehlo.recv", None),
    entry("stablehlo.reduce", Pure | Regions),
    entry("stablehlo.reduce_precision", Pure | Elementwise),
    entry("stablehlo.reduce_scatter", Collective | Regions),
    entry("stablehlo.reduce_window", Pure | Regions),
    entry("stablehlo.remainder", Pure | Elementwise),
    entry("stablehlo.replica_id", Pure),
    entry("stablehlo.reshape", Pure),
    entry("stablehlo.return", Pure),
    entry("stablehlo.reverse", Pure),
    entry("stablehlo.rng", None),
    entry("stablehlo.rng_bit_generator", Pure),
    entry("stablehlo.round_nearest_afz", Pure | Elementwise),
    entry("stablehlo.round_nearest_even", Pure | Elementwise),
    entry("stablehlo.rsqrt", Pure | Elementwise),
    entry("stablehlo.scatter", Pure | Regions),
    entry("stablehlo.select", Pure | Elementwise),
    entry("stablehlo.select_and_scatter", Pure | Regions),
    entry("stablehlo.send", None),
    entry("stablehlo.set_dimension_size", Pure),
    entry("stablehlo.shift_left", Pure | Elementwise),
    entry("stablehlo.shift_right_arithmetic", Pure | Elementwise),
    entry("stablehlo.shift_right_logical", Pure | Elementwise),
    entry("stablehlo.sign", Pure | Elementwise),
    entry("stablehlo.sine", Pure | Elementwise),
    entry("stablehlo.slice", Pure),
    entry("stablehlo.sort", Pure | Regions),
    entry("stablehlo.sqrt", Pure | Elementwise),
    entry("stablehlo.subtract", Pure | Elementwise),
    entry("stablehlo.tan", Pure | Elementwise),
    entry("stablehlo.tanh", Pure | Elementwise),
    entry("stablehlo.torch_index_select", Pure),
    entry("stablehlo.trace", None),
    entry("stablehlo.transpose", Pure),
    entry("stablehlo.triangular_solve", Pure),
    entry("stablehlo.tuple", Pure),
    entry("stablehlo.unary_einsum", Pure),
    entry("stablehlo.uniform_dequantize", Pure | Elementwise),
    entry("stablehlo.uniform_quantize", Pure | Elementwise),
    entry("stablehlo.while", Pure | Regions),
    entry("stablehlo.xor", Pure | Elementwise | Commutative),
};
} // namespace

llvm::ArrayRef<OpInfo> mlir::stablehlo::getAllOpInfos() { return kOpInfos; }

const OpInfo *mlir::stablehlo::lookupOpInfo(llvm::StringRef fullOpName) {
  const OpInfo *it =
      std::lower_bound(std::begin(kOpInfos), std::end(kOpInfos), fullOpName,
                       [](const OpInfo &info, llvm::StringRef name) {
                         return info.name < name;
                       });
  if (it == std::end(kOpInfos) || it->name != fullOpName)
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
