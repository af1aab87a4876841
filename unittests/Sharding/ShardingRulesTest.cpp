//===- ShardingRulesTest.cpp - Dimension rules of the sharding phase ------===//

#include "mpmd/InitAll.h"
#include "mpmd/Transforms/Sharding/ShardingRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::mpmd;

namespace {

class ShardingRulesTest : public ::testing::Test {
protected:
  ShardingRulesTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.allowUnregisteredDialects();
  }

  /// The factors of the first op of `@f`'s body, each as a set of
  /// `"<r|oN>.<dim>"` strings (`r` the result, `oN` operand N).
  std::vector<std::set<std::string>> factorsOf(llvm::StringRef body,
                                               llvm::StringRef signature) {
    std::string text = ("func.func @f" + signature + " {\n" + body + "\n}").str();
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    auto func = *module->getOps<func::FuncOp>().begin();
    Operation *op = &func.getBody().front().front();
    std::vector<std::set<std::string>> result;
    for (const ShardingFactor &factor : getShardingFactors(op)) {
      std::set<std::string> members;
      for (const DimRef &ref : factor) {
        std::string name;
        for (OpOperand &operand : op->getOpOperands())
          if (operand.get() == ref.value)
            name = "o" + std::to_string(operand.getOperandNumber());
        if (name.empty())
          name = "r";
        members.insert(name + "." + std::to_string(ref.dim));
      }
      result.push_back(members);
    }
    return result;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

using Factors = std::vector<std::set<std::string>>;

TEST_F(ShardingRulesTest, ReshapeKeepsWholeDimensionsOnly) {
  // 4x6x8 -> 24x8: the first two dimensions merge (no factor), 8 stays.
  EXPECT_EQ(factorsOf("%0 = stablehlo.reshape %a : (tensor<4x6x8xf32>) -> "
                      "tensor<24x8xf32>\nreturn",
                      "(%a: tensor<4x6x8xf32>)"),
            (Factors{{"o0.2", "r.1"}}));
  // Size-1 dimensions carry nothing; 5 and 3 keep their places.
  EXPECT_EQ(factorsOf("%0 = stablehlo.reshape %a : (tensor<1x5x3xf32>) -> "
                      "tensor<5x1x3xf32>\nreturn",
                      "(%a: tensor<1x5x3xf32>)"),
            (Factors{{"o0.1", "r.0"}, {"o0.2", "r.2"}}));
  // A split: no factor.
  EXPECT_EQ(factorsOf("%0 = stablehlo.reshape %a : (tensor<12xf32>) -> "
                      "tensor<3x4xf32>\nreturn",
                      "(%a: tensor<12xf32>)"),
            Factors{});
}

TEST_F(ShardingRulesTest, DotGeneralBatchFreeAndContractingDimensions) {
  EXPECT_EQ(
      factorsOf("%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x "
                "[0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, "
                "tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\nreturn",
                "(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>)"),
      (Factors{{"o0.0", "o1.0", "r.0"},
               {"o0.1", "r.1"},
               {"o1.2", "r.2"},
               {"o0.2", "o1.1"}}));
}

TEST_F(ShardingRulesTest, BroadcastMapsOnlyDimensionsOfEqualSize) {
  EXPECT_EQ(factorsOf("%0 = stablehlo.broadcast_in_dim %a, dims = [0, 2] : "
                      "(tensor<1x8xf32>) -> tensor<4x3x8xf32>\nreturn",
                      "(%a: tensor<1x8xf32>)"),
            (Factors{{"o0.1", "r.2"}}));
}

TEST_F(ShardingRulesTest, GatherOfAnEmbeddingTable) {
  EXPECT_EQ(
      factorsOf(R"mlir(%0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<4x16x1xi32>) -> tensor<4x16x32xf32>
return)mlir",
                "(%t: tensor<64x32xf32>, %i: tensor<4x16x1xi32>)"),
      (Factors{{"o1.0", "r.0"}, {"o1.1", "r.1"}, {"o0.1", "r.2"}}));
}

TEST_F(ShardingRulesTest, DynamicSlicesOfAMicrobatchLoop) {
  // xs[i]: the batch and feature dimensions are taken whole.
  EXPECT_EQ(factorsOf(R"mlir(%0 = "stablehlo.dynamic_slice"(%xs, %i, %z, %z) <{slice_sizes = array<i64: 1, 8, 16>}> : (tensor<4x8x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x16xf32>
return)mlir",
                      "(%xs: tensor<4x8x16xf32>, %i: tensor<i32>, %z: tensor<i32>)"),
            (Factors{{"o0.1", "r.1"}, {"o0.2", "r.2"}}));
  // ys.at[i].set(y): the result is the operand's layout.
  EXPECT_EQ(factorsOf(R"mlir(%0 = "stablehlo.dynamic_update_slice"(%ys, %y, %i, %z) : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>
return)mlir",
                      "(%ys: tensor<4x8xf32>, %y: tensor<1x8xf32>, %i: tensor<i32>, %z: tensor<i32>)"),
            (Factors{{"o0.0", "r.0"}, {"o0.1", "o1.1", "r.1"}}));
}

TEST_F(ShardingRulesTest, OpsWithoutARuleHaveNoFactors) {
  EXPECT_EQ(factorsOf(R"mlir(%0 = "stablehlo.sort"(%a) ({
^bb0(%x: tensor<f32>, %y: tensor<f32>):
  %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
  stablehlo.return %c : tensor<i1>
}) {dimension = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>
return)mlir",
                      "(%a: tensor<8xf32>)"),
            Factors{});
  EXPECT_EQ(factorsOf("%0 = \"chlo.unknown_thing\"(%a) : (tensor<8xf32>) -> "
                      "tensor<8xf32>\nreturn",
                      "(%a: tensor<8xf32>)"),
            Factors{});
}

TEST_F(ShardingRulesTest, ElementwiseLeavesOutBroadcastScalars) {
  EXPECT_EQ(factorsOf("%0 = \"stablehlo.clamp\"(%lo, %a, %hi) : (tensor<f32>, "
                      "tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>\nreturn",
                      "(%lo: tensor<f32>, %a: tensor<4x2xf32>, %hi: tensor<f32>)"),
            (Factors{{"r.0", "o1.0"}, {"r.1", "o1.1"}}));
}

} // namespace
