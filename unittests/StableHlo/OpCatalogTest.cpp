//===- OpCatalogTest.cpp - Tests of the StableHLO/CHLO op catalog ---------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"

#include "mpmd/Dialect/StableHlo/IR/StableHloDialect.h"
#include "mpmd/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::stablehlo;

namespace {

// Every op of the StableHLO and CHLO dialects jaxlib 0.10.2 registers (the
// version requirements.txt pins): JAX can emit any of them.
constexpr llvm::StringLiteral kJaxStableHloOps[] = {
    "stablehlo.abs", "stablehlo.add", "stablehlo.after_all",
    "stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all",
    "stablehlo.and", "stablehlo.async_done", "stablehlo.async_start",
    "stablehlo.atan2", "stablehlo.batch_norm_grad",
    "stablehlo.batch_norm_inference", "stablehlo.batch_norm_training",
    "stablehlo.bitcast_convert", "stablehlo.broadcast",
    "stablehlo.broadcast_in_dim", "stablehlo.case", "stablehlo.cbrt",
    "stablehlo.ceil", "stablehlo.cholesky", "stablehlo.clamp",
    "stablehlo.collective_broadcast", "stablehlo.collective_permute",
    "stablehlo.compare", "stablehlo.complex", "stablehlo.composite",
    "stablehlo.concatenate", "stablehlo.constant", "stablehlo.convert",
    "stablehlo.convolution", "stablehlo.cosine",
    "stablehlo.count_leading_zeros", "stablehlo.create_token",
    "stablehlo.cross-replica-sum", "stablehlo.custom_call", "stablehlo.divide",
    "stablehlo.dot", "stablehlo.dot_general",
    "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_conv",
    "stablehlo.dynamic_gather", "stablehlo.dynamic_iota",
    "stablehlo.dynamic_pad", "stablehlo.dynamic_reshape",
    "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice",
    "stablehlo.einsum", "stablehlo.exponential",
    "stablehlo.exponential_minus_one", "stablehlo.fft", "stablehlo.floor",
    "stablehlo.gather", "stablehlo.get_dimension_size",
    "stablehlo.get_tuple_element", "stablehlo.if", "stablehlo.imag",
    "stablehlo.infeed", "stablehlo.iota", "stablehlo.is_finite",
    "stablehlo.log", "stablehlo.log_plus_one", "stablehlo.logistic",
    "stablehlo.map", "stablehlo.maximum", "stablehlo.minimum",
    "stablehlo.multiply", "stablehlo.negate", "stablehlo.not",
    "stablehlo.optimization_barrier", "stablehlo.or", "stablehlo.outfeed",
    "stablehlo.pad", "stablehlo.partition_id", "stablehlo.popcnt",
    "stablehlo.power", "stablehlo.real", "stablehlo.real_dynamic_slice",
    "stablehlo.recv", "stablehlo.reduce", "stablehlo.reduce_precision",
    "stablehlo.reduce_scatter", "stablehlo.reduce_window",
    "stablehlo.remainder", "stablehlo.replica_id", "stablehlo.reshape",
    "stablehlo.return", "stablehlo.reverse", "stablehlo.rng",
    "stablehlo.rng_bit_generator", "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even", "stablehlo.rsqrt", "stablehlo.scatter",
    "stablehlo.select", "stablehlo.select_and_scatter", "stablehlo.send",
    "stablehlo.set_dimension_size", "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic", "stablehlo.shift_right_logical",
    "stablehlo.sign", "stablehlo.sine", "stablehlo.slice", "stablehlo.sort",
    "stablehlo.sqrt", "stablehlo.subtract", "stablehlo.tan", "stablehlo.tanh",
    "stablehlo.torch_index_select", "stablehlo.transpose",
    "stablehlo.triangular_solve", "stablehlo.tuple", "stablehlo.unary_einsum",
    "stablehlo.uniform_dequantize", "stablehlo.uniform_quantize",
    "stablehlo.while", "stablehlo.xor",
};
constexpr llvm::StringLiteral kJaxChloOps[] = {
    "chlo._asin_acos_kernel", "chlo.acos", "chlo.acosh", "chlo.asin",
    "chlo.asinh", "chlo.atan", "chlo.atanh", "chlo.bessel_i1e",
    "chlo.broadcast_add", "chlo.broadcast_and", "chlo.broadcast_atan2",
    "chlo.broadcast_compare", "chlo.broadcast_complex",
    "chlo.broadcast_divide", "chlo.broadcast_maximum",
    "chlo.broadcast_minimum", "chlo.broadcast_multiply",
    "chlo.broadcast_next_after", "chlo.broadcast_or",
    "chlo.broadcast_polygamma", "chlo.broadcast_power",
    "chlo.broadcast_remainder", "chlo.broadcast_select",
    "chlo.broadcast_shift_left", "chlo.broadcast_shift_right_arithmetic",
    "chlo.broadcast_shift_right_logical", "chlo.broadcast_subtract",
    "chlo.broadcast_xor", "chlo.broadcast_zeta", "chlo.conj", "chlo.constant",
    "chlo.constant_like", "chlo.cosh", "chlo.digamma", "chlo.erf",
    "chlo.erf_inv", "chlo.erfc", "chlo.is_inf", "chlo.is_neg_inf",
    "chlo.is_pos_inf", "chlo.lgamma", "chlo.mulhi", "chlo.next_after",
    "chlo.polygamma", "chlo.ragged_dot", "chlo.scan", "chlo.sinh",
    "chlo.square", "chlo.tan", "chlo.top_k", "chlo.zeta",
};

TEST(OpCatalogTest, TableIsSortedAndUnique) {
  llvm::ArrayRef<OpInfo> infos = getAllOpInfos();
  ASSERT_FALSE(infos.empty());
  for (size_t i = 1; i < infos.size(); ++i)
    EXPECT_LT(infos[i - 1].name, infos[i].name)
        << "entries out of order or duplicated at " << infos[i].name.str();
}

TEST(OpCatalogTest, CoversEveryOpJaxKnows) {
  for (llvm::StringRef name : kJaxStableHloOps)
    EXPECT_NE(lookupOpInfo(name), nullptr) << name.str();
  for (llvm::StringRef name : kJaxChloOps)
    EXPECT_NE(lookupOpInfo(name), nullptr) << name.str();
}

TEST(OpCatalogTest, LookupByName) {
  const OpInfo *add = lookupOpInfo("stablehlo.add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name, "stablehlo.add");
  EXPECT_TRUE(add->isPure);
  EXPECT_TRUE(add->isElementwise);
  EXPECT_TRUE(add->isCommutative);
  EXPECT_FALSE(add->isCheapToClone);
  EXPECT_FALSE(add->isConstantLike);

  const OpInfo *constant = lookupOpInfo("stablehlo.constant");
  ASSERT_NE(constant, nullptr);
  EXPECT_TRUE(constant->isConstantLike);
  EXPECT_TRUE(constant->isCheapToClone);

  const OpInfo *allReduce = lookupOpInfo("stablehlo.all_reduce");
  ASSERT_NE(allReduce, nullptr);
  EXPECT_FALSE(allReduce->isPure);
  EXPECT_TRUE(allReduce->isCollective);
  EXPECT_TRUE(allReduce->hasRegions);

  const OpInfo *erf = lookupOpInfo("chlo.erf");
  ASSERT_NE(erf, nullptr);
  EXPECT_TRUE(erf->isPure);
  EXPECT_TRUE(erf->isElementwise);

  // Broadcasting CHLO ops change shapes, so they are not elementwise.
  const OpInfo *broadcastAdd = lookupOpInfo("chlo.broadcast_add");
  ASSERT_NE(broadcastAdd, nullptr);
  EXPECT_FALSE(broadcastAdd->isElementwise);

  // Modelled ops keep the flags they had as carried-along ops: custom_call
  // impure (isPure(Operation *) looks at has_side_effect), while pure with
  // regions, optimization_barrier and create_token pure.
  struct Expected {
    llvm::StringLiteral name;
    bool isPure, hasRegions;
  } expected[] = {{"stablehlo.custom_call", false, false},
                  {"stablehlo.while", true, true},
                  {"stablehlo.optimization_barrier", true, false},
                  {"stablehlo.create_token", true, false}};
  for (const Expected &e : expected) {
    const OpInfo *info = lookupOpInfo(e.name);
    ASSERT_NE(info, nullptr) << e.name.str();
    EXPECT_EQ(info->isPure, e.isPure) << e.name.str();
    EXPECT_EQ(info->hasRegions, e.hasRegions) << e.name.str();
    EXPECT_FALSE(info->isElementwise || info->isConstantLike ||
                 info->isCheapToClone || info->isCommutative ||
                 info->isCollective)
        << e.name.str();
  }

  EXPECT_EQ(lookupOpInfo("stablehlo.no_such_op"), nullptr);
  EXPECT_EQ(lookupOpInfo("mhlo.add"), nullptr);
  EXPECT_EQ(lookupOpInfo("add"), nullptr);
  EXPECT_EQ(lookupOpInfo(""), nullptr);
}

class OpCatalogIRTest : public ::testing::Test {
protected:
  OpCatalogIRTest() {
    DialectRegistry registry;
    mpmd::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.allowUnregisteredDialects();
  }

  /// Parses `source` and indexes its ops by their `test.name` attribute.
  void parse(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << "failed to parse";
    module->walk([&](Operation *op) {
      if (auto name = op->getAttrOfType<StringAttr>("test.name"))
        ops[name.getValue()] = op;
    });
  }

  Operation *op(llvm::StringRef name) {
    Operation *found = ops.lookup(name);
    EXPECT_NE(found, nullptr) << name.str();
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  llvm::StringMap<Operation *> ops;
};

TEST_F(OpCatalogIRTest, RegisteredOpsAgreeWithTheirTraits) {
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != StableHloDialect::getDialectNamespace())
      continue;
    const OpInfo *info = lookupOpInfo(name.getStringRef());
    ASSERT_NE(info, nullptr) << name.getStringRef().str();
    EXPECT_EQ(info->isCommutative, name.hasTrait<OpTrait::IsCommutative>())
        << name.getStringRef().str();
    EXPECT_EQ(info->isConstantLike, name.hasTrait<OpTrait::ConstantLike>())
        << name.getStringRef().str();
    EXPECT_EQ(info->hasRegions, !name.hasTrait<OpTrait::ZeroRegions>())
        << name.getStringRef().str();
    // custom_call's effects depend on its has_side_effect flag: its entry
    // is impure and its MemoryEffectOpInterface decides per op.
    if (name.getStringRef() == "stablehlo.custom_call") {
      EXPECT_FALSE(info->isPure);
      EXPECT_TRUE(name.hasInterface<MemoryEffectOpInterface>());
      continue;
    }
    // Every other modelled op is pure by itself (reduce and while through
    // their regions).
    EXPECT_TRUE(info->isPure) << name.getStringRef().str();
    // The catalog takes purity from AlwaysSpeculatable, which ODS's Pure
    // pairs with NoMemoryEffect: check the pairing on a bare instance.
    if (name.hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      continue;
    Operation *op = Operation::create(
        OperationState(UnknownLoc::get(&context), name));
    EXPECT_TRUE(isMemoryEffectFree(op)) << name.getStringRef().str();
    op->destroy();
  }
}

TEST_F(OpCatalogIRTest, OperationQueries) {
  parse(R"mlir(
    func.func @f(%x: tensor<4xf32>, %s: tensor<f32>) {
      %add = stablehlo.add %x, %x {test.name = "add"} : tensor<4xf32>
      %cst = stablehlo.constant {test.name = "constant"} dense<1.0> : tensor<f32>
      %b = stablehlo.broadcast_in_dim %s, dims = [] {test.name = "broadcast"} : (tensor<f32>) -> tensor<4xf32>
      %r = stablehlo.reduce(%x init: %s) applies stablehlo.add across dimensions = [0] {test.name = "reduce"} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %erf = "chlo.erf"(%x) {test.name = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
      %pure_call = "stablehlo.custom_call"(%x) <{call_target_name = "Sharding", has_side_effect = false}> {test.name = "pure_call"} : (tensor<4xf32>) -> tensor<4xf32>
      %effect_call = "stablehlo.custom_call"(%x) <{call_target_name = "foo", has_side_effect = true}> {test.name = "effect_call"} : (tensor<4xf32>) -> tensor<4xf32>
      %plain_call = "stablehlo.custom_call"(%x) <{call_target_name = "foo"}> {test.name = "plain_call"} : (tensor<4xf32>) -> tensor<4xf32>
      %w = "stablehlo.while"(%x) ({
      ^bb0(%a: tensor<4xf32>):
        %c = "stablehlo.custom_call"(%a) <{call_target_name = "foo"}> : (tensor<4xf32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }, {
      ^bb0(%a: tensor<4xf32>):
        stablehlo.return %a : tensor<4xf32>
      }) {test.name = "impure_while"} : (tensor<4xf32>) -> tensor<4xf32>
      %v = "stablehlo.while"(%x) ({
      ^bb0(%a: tensor<4xf32>):
        %c = stablehlo.constant dense<true> : tensor<i1>
        stablehlo.return %c : tensor<i1>
      }, {
      ^bb0(%a: tensor<4xf32>):
        %n = stablehlo.negate %a : tensor<4xf32>
        stablehlo.return %n : tensor<4xf32>
      }) {test.name = "pure_while"} : (tensor<4xf32>) -> tensor<4xf32>
      %ar = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
      ^bb0(%a: tensor<f32>, %b2: tensor<f32>):
        %s2 = stablehlo.add %a, %b2 : tensor<f32>
        stablehlo.return %s2 : tensor<f32>
      }) {test.name = "all_reduce"} : (tensor<4xf32>) -> tensor<4xf32>
      %u = "foo.bar"(%x) {test.name = "unknown"} : (tensor<4xf32>) -> tensor<4xf32>
      return
    }
  )mlir");

  EXPECT_TRUE(stablehlo::isPure(op("add")));
  EXPECT_TRUE(isElementwise(op("add")));
  EXPECT_FALSE(isCheapToClone(op("add")));

  EXPECT_TRUE(stablehlo::isPure(op("constant")));
  EXPECT_TRUE(isCheapToClone(op("constant")));
  EXPECT_TRUE(isCheapToClone(op("broadcast")));
  EXPECT_FALSE(isElementwise(op("broadcast")));

  EXPECT_TRUE(stablehlo::isPure(op("reduce")));
  EXPECT_FALSE(isElementwise(op("reduce")));

  // Unregistered ops are answered by name.
  EXPECT_FALSE(op("erf")->isRegistered());
  EXPECT_TRUE(stablehlo::isPure(op("erf")));
  EXPECT_TRUE(isElementwise(op("erf")));

  // custom_call is pure only when it says it has no side effect; the flag
  // is a property of the (registered) op, and its effects agree.
  EXPECT_TRUE(op("pure_call")->isRegistered());
  EXPECT_TRUE(stablehlo::isPure(op("pure_call")));
  EXPECT_TRUE(isMemoryEffectFree(op("pure_call")));
  EXPECT_FALSE(isMemoryEffectFree(op("plain_call")));
  EXPECT_FALSE(stablehlo::isPure(op("effect_call")));
  EXPECT_FALSE(stablehlo::isPure(op("plain_call")));

  // Ops with regions take the effects of their bodies.
  EXPECT_FALSE(stablehlo::isPure(op("impure_while")));
  EXPECT_TRUE(stablehlo::isPure(op("pure_while")));

  EXPECT_FALSE(stablehlo::isPure(op("all_reduce")));
  EXPECT_FALSE(isCheapToClone(op("all_reduce")));

  EXPECT_FALSE(stablehlo::isPure(op("unknown")));
  EXPECT_FALSE(isElementwise(op("unknown")));
  EXPECT_FALSE(isCheapToClone(op("unknown")));
}

} // namespace
