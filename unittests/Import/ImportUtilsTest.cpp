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

/// Parses textual entries as the pass options do; false on the first
/// malformed one (its message in `error`).
template <typename T>
bool parseAll(std::vector<std::string> texts, std::vector<T> &entries,
              std::string &error) {
  for (const std::string &text : texts) {
    std::optional<T> entry = T::parse(text, error);
    if (!entry)
      return false;
    entries.push_back(*entry);
  }
  return true;
}

TEST_F(ImportUtilsTest, MeshAssignmentWithAndWithoutStages) {
  std::vector<NamedAssignment> entries;
  std::string error;
  ASSERT_TRUE(parseAll({"layer1=m1", "layer2=m2:3"}, entries, error));
  auto parsed = collectMeshAssignment(entries, emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->lookup("layer1").mesh, "m1");
  EXPECT_FALSE(parsed->lookup("layer1").stage.has_value());
  EXPECT_EQ(parsed->lookup("layer2").mesh, "m2");
  EXPECT_EQ(parsed->lookup("layer2").stage, 3);
  EXPECT_TRUE(messages.empty());
}

TEST_F(ImportUtilsTest, NamesMayContainEquals) {
  std::string error;
  std::optional<NamedAssignment> entry = NamedAssignment::parse("a=b=m1", error);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->name, "a=b");
  EXPECT_EQ(entry->mesh, "m1");
}

TEST_F(ImportUtilsTest, TypedEntriesTakeAnyName) {
  // Typed callers (Python) pass names the textual form cannot spell.
  std::vector<NamedAssignment> entries = {
      {"a, b=c:d", "m1", std::nullopt}, {"\u00e9t\u00e9 @x", "m2", 1}};
  auto parsed = collectMeshAssignment(entries, emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->lookup("a, b=c:d").mesh, "m1");
  EXPECT_EQ(parsed->lookup("\u00e9t\u00e9 @x").stage, 1);
}

TEST_F(ImportUtilsTest, PrintsWhatItParses) {
  std::string error, printed;
  llvm::raw_string_ostream os(printed);
  os << *NamedAssignment::parse("f=m2:4", error) << " "
     << *IndexedAssignment::parse("3=m1:pinned_host", error);
  EXPECT_EQ(printed, "f=m2:4 3=m1:pinned_host");
}

TEST_F(ImportUtilsTest, DuplicateNameIsAnError) {
  std::vector<NamedAssignment> entries = {{"f", "m1", std::nullopt},
                                          {"f", "m2", std::nullopt}};
  EXPECT_TRUE(failed(collectMeshAssignment(entries, emitError())));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("'f' is assigned twice"), std::string::npos);
}

TEST_F(ImportUtilsTest, MalformedEntries) {
  for (const char *text : {"f", "=m1", "f=", "f=m1:-1", "f=m1:x"}) {
    std::string error;
    EXPECT_FALSE(NamedAssignment::parse(text, error).has_value()) << text;
    EXPECT_NE(error.find(text), std::string::npos) << error;
  }
}

TEST_F(ImportUtilsTest, IoAssignmentWithMemoryKind) {
  std::vector<IndexedAssignment> entries;
  std::string error;
  ASSERT_TRUE(parseAll({"0=m1", "2=m2:pinned_host"}, entries, error));
  auto parsed = collectIoAssignment(entries, "input-assignment", emitError());
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_EQ(parsed->at(0).mesh, "m1");
  EXPECT_TRUE(parsed->at(0).memoryKind.empty());
  EXPECT_EQ(parsed->at(2).memoryKind, "pinned_host");
  EXPECT_EQ(parsed->count(1), 0u);
}

TEST_F(ImportUtilsTest, IoAssignmentErrors) {
  std::string error;
  EXPECT_FALSE(IndexedAssignment::parse("-1=m1", error).has_value());
  EXPECT_NE(error.find("invalid entry '-1=m1'"), std::string::npos);
  std::vector<IndexedAssignment> twice = {{1, "m1", ""}, {1, "m2", ""}};
  EXPECT_TRUE(failed(collectIoAssignment(twice, "output-assignment",
                                         emitError())));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("output-assignment assigns index 1 twice"),
            std::string::npos);
}

TEST_F(ImportUtilsTest, GrowthBudgetStopsAtItsLimit) {
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  GrowthBudget budget;
  EXPECT_TRUE(succeeded(budget.spend(GrowthBudget::kMaxOps - 10, *module,
                                     "unrolling")));
  EXPECT_TRUE(succeeded(budget.spend(10, *module, "inlining @f")));
  EXPECT_TRUE(messages.empty());
  EXPECT_TRUE(failed(budget.spend(1, *module, "inlining @g")));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("not supported yet: inlining @g would make the "
                             "program larger than 5000000 ops"),
            std::string::npos);
}

TEST_F(ImportUtilsTest, FormatsMeshLists) {
  EXPECT_EQ(formatMeshList({"a", "b"}), "\"a\", \"b\"");
  EXPECT_EQ(formatMeshList({}), "");
}

} // namespace
