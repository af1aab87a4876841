//===- SdyAttrsTest.cpp - The C++ API of the sdy compat attributes --------===//

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"
#include "mpmd/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sdy;

namespace {

class SdyAttrsTest : public ::testing::Test {
protected:
  SdyAttrsTest() {
    DialectRegistry registry;
    mpmd::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  template <typename AttrT> AttrT parse(StringRef text) {
    return dyn_cast_or_null<AttrT>(parseAttribute(text, &context));
  }

  std::string print(Attribute attr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    attr.print(os);
    return text;
  }

  MLIRContext context;
};

TEST_F(SdyAttrsTest, MeshAxesAndSizes) {
  auto mesh = parse<MeshAttr>(R"(#sdy.mesh<["x"=2, "y"=4]>)");
  ASSERT_TRUE(mesh);
  EXPECT_EQ(mesh.getTotalSize(), 8);
  EXPECT_EQ(mesh.getAxisSize("y"), 4);
  EXPECT_EQ(mesh.getAxisSize("z"), -1);
  EXPECT_TRUE(mesh.hasAxis("x"));
  EXPECT_FALSE(mesh.hasAxis("z"));
  ASSERT_EQ(mesh.getAxisNames().size(), 2u);
  EXPECT_EQ(mesh.getAxisNames()[0], "x");
  EXPECT_EQ(mesh.getAxisNames()[1], "y");
  EXPECT_TRUE(mesh.getDeviceIds().empty());
}

TEST_F(SdyAttrsTest, MeshDeviceIds) {
  auto mesh = parse<MeshAttr>(R"(#sdy.mesh<["a"=2], device_ids=[1, 0]>)");
  ASSERT_TRUE(mesh);
  ASSERT_EQ(mesh.getDeviceIds().size(), 2u);
  EXPECT_EQ(mesh.getDeviceIds()[0], 1);
  EXPECT_EQ(print(mesh), R"(#sdy.mesh<["a"=2], device_ids=[1, 0]>)");
}

TEST_F(SdyAttrsTest, ShardingAxesPerDimension) {
  auto sharding = parse<TensorShardingAttr>(
      R"(#sdy.sharding<@mesh, [{"x", "y"}, {?}, {"z", ?}], replicated={"w"}>)");
  ASSERT_TRUE(sharding);
  EXPECT_EQ(sharding.getRank(), 3);
  EXPECT_EQ(sharding.getMeshName(), "mesh");
  EXPECT_FALSE(sharding.getInlineMesh());
  auto dim0 = sharding.getShardingAxes(0);
  ASSERT_EQ(dim0.size(), 2u);
  EXPECT_EQ(dim0[0], "x");
  EXPECT_EQ(dim0[1], "y");
  EXPECT_TRUE(sharding.getShardingAxes(1).empty());
  EXPECT_TRUE(sharding.getDimShardings()[1].isOpen());
  EXPECT_TRUE(sharding.getDimShardings()[0].getIsClosed());
  EXPECT_TRUE(sharding.getDimShardings()[2].isOpen());
  ASSERT_EQ(sharding.getReplicatedAxes().size(), 1u);
  EXPECT_EQ(sharding.getReplicatedAxes()[0].getName(), "w");
  EXPECT_FALSE(sharding.isFullyReplicated());
}

TEST_F(SdyAttrsTest, SubAxesAndPriorities) {
  auto sharding =
      parse<TensorShardingAttr>(R"(#sdy.sharding<@mesh, [{"x":(2)4}p3]>)");
  ASSERT_TRUE(sharding);
  DimensionShardingAttr dim = sharding.getDimShardings()[0];
  ASSERT_TRUE(dim.getPriority().has_value());
  EXPECT_EQ(*dim.getPriority(), 3);
  SubAxisInfoAttr sub = dim.getAxes()[0].getSubAxisInfo();
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub.getPreSize(), 2);
  EXPECT_EQ(sub.getSize(), 4);
}

TEST_F(SdyAttrsTest, ReplicatedBuilderPrintsLikeShardy) {
  auto ref = FlatSymbolRefAttr::get(&context, "mesh");
  auto open = TensorShardingAttr::getReplicated(&context, ref, 2, false);
  EXPECT_TRUE(open.isFullyReplicated());
  EXPECT_EQ(print(open), R"(#sdy.sharding<@mesh, [{?}, {?}]>)");
  auto closed = TensorShardingAttr::getReplicated(&context, ref, 1, true);
  EXPECT_EQ(print(closed), R"(#sdy.sharding<@mesh, [{}]>)");
}

TEST_F(SdyAttrsTest, ResolvesMeshSymbolFromAnOp) {
  const char *text = R"mlir(
    sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @f(%arg0: tensor<4xf32>) {
      func.return
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  Operation *func = &module->getBody()->back();
  auto sharding = parse<TensorShardingAttr>(R"(#sdy.sharding<@mesh, [{"y"}]>)");
  MeshAttr mesh = sharding.getMesh(func);
  ASSERT_TRUE(mesh);
  EXPECT_EQ(mesh.getAxisSize("y"), 2);
  auto missing = parse<TensorShardingAttr>(R"(#sdy.sharding<@nope, [{}]>)");
  EXPECT_FALSE(missing.getMesh(func));
  auto inlined =
      parse<TensorShardingAttr>(R"(#sdy.sharding<mesh<["q"=8]>, [{"q"}]>)");
  EXPECT_EQ(inlined.getMesh(func).getAxisSize("q"), 8);
}

TEST_F(SdyAttrsTest, UnmodelledAttributesStayVerbatim) {
  auto attr = parse<VerbatimAttr>(R"(#sdy.manual_axes<{"x", "y"}>)");
  ASSERT_TRUE(attr);
  EXPECT_EQ(print(attr), R"(#sdy.manual_axes<{"x", "y"}>)");
}

} // namespace
