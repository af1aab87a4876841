//===- MpmdTypesTest.cpp - The C++ API of mpmd types and attributes -------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"
#include "mpmd/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::mpmd;

namespace {

class MpmdTypesTest : public ::testing::Test {
protected:
  MpmdTypesTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

TEST_F(MpmdTypesTest, LocalTypeOfShardedMeshTensor) {
  auto type = dyn_cast_or_null<MeshTensorType>(parseType(
      R"(!mpmd.mesh_tensor<"m", tensor<8x12xf32>, sharding=<@mesh, [{"x", "y"}, {?}]>>)",
      &context));
  ASSERT_TRUE(type);
  auto mesh = cast<sdy::MeshAttr>(
      parseAttribute(R"(#sdy.mesh<["x"=2, "y"=2, "z"=3]>)", &context));
  FailureOr<RankedTensorType> local = type.getLocalTensorType(mesh);
  ASSERT_TRUE(succeeded(local));
  EXPECT_EQ(local->getShape()[0], 2);
  EXPECT_EQ(local->getShape()[1], 12);
  EXPECT_EQ(type.getGlobalTensorType().getShape()[0], 8);
}

TEST_F(MpmdTypesTest, IndivisibleShardingHasNoLocalType) {
  auto type = cast<MeshTensorType>(parseType(
      R"(!mpmd.mesh_tensor<"m", tensor<6xf32>, sharding=<@mesh, [{"x"}]>>)",
      &context));
  auto mesh =
      cast<sdy::MeshAttr>(parseAttribute(R"(#sdy.mesh<["x"=4]>)", &context));
  EXPECT_TRUE(failed(type.getLocalTensorType(mesh)));
}

TEST_F(MpmdTypesTest, WithMeshDropsShardingAndMemoryKind) {
  auto type = cast<MeshTensorType>(parseType(
      R"(!mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>, memory_kind="pinned_host">)",
      &context));
  EXPECT_TRUE(type.isOnHost());
  MeshTensorType moved = type.withMesh("m2");
  EXPECT_EQ(moved.getMeshName(), "m2");
  EXPECT_FALSE(moved.getSharding());
  EXPECT_FALSE(moved.getMemoryKind());
  EXPECT_EQ(moved.getGlobalTensorType(), type.getGlobalTensorType());
}

TEST_F(MpmdTypesTest, TopologyLookup) {
  auto topology = cast<TopologyAttr>(parseAttribute(
      R"(#mpmd.topology<<"a" : <["x"=2]>>, <"b" : <["x"=4]>>>)", &context));
  ASSERT_EQ(topology.getMeshNames().size(), 2u);
  EXPECT_EQ(topology.getMeshNames()[1], "b");
  EXPECT_EQ(topology.getMesh("b").getTotalSize(), 4);
  EXPECT_FALSE(topology.getMesh("c"));
}

TEST_F(MpmdTypesTest, UserOriginShortForm) {
  auto origin = cast<UserOriginAttr>(
      parseAttribute(R"(#mpmd.user_origin<"layer"(2)>)", &context));
  EXPECT_EQ(origin.getUserName().getValue(), "layer");
  EXPECT_EQ(origin.getTransposeCount(), 2);
}

} // namespace
