//===- ImportUtilsTest.cpp - Parsing of import options --------------------===//

#include "mpmd/InitAll.h"
#include "mpmd/Transforms/Import/ImportUtils.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::mpmd;

namespace {

class ImportUtilsTest : public ::testing::Test {
protected:
  ImportUtilsTest() : handler(&context, [this](Diagnostic &diag) {
    messages.push_back(diag.str());
    return success();
  }) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
  }

  std::function<InFlightDiagnostic()> emitError() {
    return [this] { return mlir::emitError(UnknownLoc::get(&context)); };
  }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
};

TEST_F(ImportUtilsTest, MeshAssignmentWithAndWithoutStages) {
  std::vector<std::string> entries = {"layer1=m1", "layer2=m2:3"};
  auto parsed = parseMeshAssignment(entries, emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->lookup("layer1").mesh, "m1");
  EXPECT_FALSE(parsed->lookup("layer1").stage.has_value());
  EXPECT_EQ(parsed->lookup("layer2").mesh, "m2");
  EXPECT_EQ(parsed->lookup("layer2").stage, 3);
  EXPECT_TRUE(messages.empty());
}

TEST_F(ImportUtilsTest, NamesMayContainEquals) {
  std::vector<std::string> entries = {"a=b=m1"};
  auto parsed = parseMeshAssignment(entries, emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->lookup("a=b").mesh, "m1");
}

TEST_F(ImportUtilsTest, DuplicateNameIsAnError) {
  std::vector<std::string> entries = {"f=m1", "f=m2"};
  EXPECT_TRUE(failed(parseMeshAssignment(entries, emitError())));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("'f' is assigned twice"), std::string::npos);
}

TEST_F(ImportUtilsTest, MalformedEntries) {
  for (const char *entry : {"f", "=m1", "f=", "f=m1:-1", "f=m1:x"}) {
    messages.clear();
    std::vector<std::string> entries = {entry};
    EXPECT_TRUE(failed(parseMeshAssignment(entries, emitError()))) << entry;
    EXPECT_EQ(messages.size(), 1u) << entry;
  }
}

TEST_F(ImportUtilsTest, IoAssignmentWithMemoryKind) {
  std::vector<std::string> entries = {"0=m1", "2=m2:pinned_host"};
  auto parsed = parseIoAssignment(entries, "input-assignment", emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->at(0).mesh, "m1");
  EXPECT_TRUE(parsed->at(0).memoryKind.empty());
  EXPECT_EQ(parsed->at(2).memoryKind, "pinned_host");
  EXPECT_EQ(parsed->count(1), 0u);
}

TEST_F(ImportUtilsTest, IoAssignmentErrorsNameTheOption) {
  std::vector<std::string> entries = {"-1=m1"};
  EXPECT_TRUE(failed(parseIoAssignment(entries, "output-assignment", emitError())));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("invalid output-assignment entry '-1=m1'"),
            std::string::npos);
}

TEST_F(ImportUtilsTest, FormatsMeshLists) {
  EXPECT_EQ(formatMeshList({"a", "b"}), "\"a\", \"b\"");
  EXPECT_EQ(formatMeshList({}), "");
}

} // namespace
