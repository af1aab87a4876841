//===- SdyAttrs.cpp - Shardy compat attributes ----------------------------===//
//
// Parsers and printers follow Shardy's textual syntax exactly, e.g.
//   #sdy.mesh<["x"=2, "y"=4], device_ids=[0, 1, 2, 3, 4, 5, 6, 7]>
//   #sdy.sharding<@mesh, [{"x", ?}, {"y":(1)2}p1], replicated={"z"}>
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sdy;

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Sdy/IR/SdyAttrs.cpp.inc"

void SdyDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpmd/Dialect/Sdy/IR/SdyAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MeshAxisAttr
//===----------------------------------------------------------------------===//

LogicalResult MeshAxisAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef name, int64_t size) {
  if (name.empty())
    return emitError() << "mesh axis name must not be empty";
  if (size <= 0)
    return emitError() << "mesh axis \"" << name
                       << "\" must have a positive size, got " << size;
  return success();
}

Attribute MeshAxisAttr::parse(AsmParser &parser, Type) {
  std::string name;
  int64_t size;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseString(&name) || parser.parseEqual() ||
      parser.parseInteger(size))
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), name, size);
}

void MeshAxisAttr::print(AsmPrinter &printer) const {
  printer.printString(getName());
  printer << "=" << getSize();
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<MeshAxisAttr> axes,
                               ArrayRef<int64_t> deviceIds) {
  llvm::StringSet<> seen;
  int64_t total = 1;
  for (MeshAxisAttr axis : axes) {
    if (!seen.insert(axis.getName()).second)
      return emitError() << "mesh has duplicate axis name \"" << axis.getName()
                         << "\"";
    total *= axis.getSize();
  }
  if (deviceIds.empty())
    return success();
  if (static_cast<int64_t>(deviceIds.size()) != total)
    return emitError() << "mesh has " << deviceIds.size()
                       << " device ids but its axes hold " << total
                       << " devices";
  llvm::DenseSet<int64_t> ids;
  for (int64_t id : deviceIds) {
    if (id < 0)
      return emitError() << "mesh device id must be non-negative, got " << id;
    if (!ids.insert(id).second)
      return emitError() << "mesh has duplicate device id " << id;
  }
  return success();
}

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<MeshAxisAttr> axes;
  SmallVector<int64_t> deviceIds;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        auto axis = dyn_cast_or_null<MeshAxisAttr>(
            MeshAxisAttr::parse(parser, Type()));
        if (!axis)
          return failure();
        axes.push_back(axis);
        return success();
      }))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("device_ids") || parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
          return parser.parseInteger(deviceIds.emplace_back());
        }))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), axes, deviceIds);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getAxes(), printer,
                        [&](MeshAxisAttr axis) { axis.print(printer); });
  printer << "]";
  if (!getDeviceIds().empty()) {
    printer << ", device_ids=[";
    llvm::interleaveComma(getDeviceIds(), printer);
    printer << "]";
  }
  printer << ">";
}

int64_t MeshAttr::getTotalSize() const {
  int64_t total = 1;
  for (MeshAxisAttr axis : getAxes())
    total *= axis.getSize();
  return total;
}

MeshAxisAttr MeshAttr::getAxis(StringRef name) const {
  for (MeshAxisAttr axis : getAxes())
    if (axis.getName() == name)
      return axis;
  return {};
}

int64_t MeshAttr::getAxisSize(StringRef name) const {
  MeshAxisAttr axis = getAxis(name);
  return axis ? axis.getSize() : -1;
}

SmallVector<StringRef> MeshAttr::getAxisNames() const {
  return llvm::to_vector(
      llvm::map_range(getAxes(), [](MeshAxisAttr a) { return a.getName(); }));
}

//===----------------------------------------------------------------------===//
// SubAxisInfoAttr and AxisRefAttr
//===----------------------------------------------------------------------===//

Attribute SubAxisInfoAttr::parse(AsmParser &parser, Type) {
  int64_t preSize, size;
  if (parser.parseLParen() || parser.parseInteger(preSize) ||
      parser.parseRParen() || parser.parseInteger(size))
    return {};
  return get(parser.getContext(), preSize, size);
}

void SubAxisInfoAttr::print(AsmPrinter &printer) const {
  printer << "(" << getPreSize() << ")" << getSize();
}

Attribute AxisRefAttr::parse(AsmParser &parser, Type) {
  std::string name;
  if (parser.parseString(&name))
    return {};
  SubAxisInfoAttr subAxis;
  if (succeeded(parser.parseOptionalColon())) {
    subAxis = dyn_cast_or_null<SubAxisInfoAttr>(
        SubAxisInfoAttr::parse(parser, Type()));
    if (!subAxis)
      return {};
  }
  return get(parser.getContext(), name, subAxis);
}

void AxisRefAttr::print(AsmPrinter &printer) const {
  printer.printString(getName());
  if (getSubAxisInfo()) {
    printer << ":";
    getSubAxisInfo().print(printer);
  }
}

/// Parses `{"a", "b":(1)2}` into `axes`.
static ParseResult parseAxisRefSet(AsmParser &parser,
                                   SmallVectorImpl<AxisRefAttr> &axes) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces, [&] {
    auto axis = dyn_cast_or_null<AxisRefAttr>(AxisRefAttr::parse(parser, {}));
    if (!axis)
      return failure();
    axes.push_back(axis);
    return success();
  });
}

static void printAxisRefSet(AsmPrinter &printer, ArrayRef<AxisRefAttr> axes) {
  printer << "{";
  llvm::interleaveComma(axes, printer,
                        [&](AxisRefAttr axis) { axis.print(printer); });
  printer << "}";
}

//===----------------------------------------------------------------------===//
// DimensionShardingAttr
//===----------------------------------------------------------------------===//

Attribute DimensionShardingAttr::parse(AsmParser &parser, Type) {
  SmallVector<AxisRefAttr> axes;
  bool isClosed = true;
  if (parser.parseLBrace())
    return {};
  if (failed(parser.parseOptionalRBrace())) {
    do {
      if (succeeded(parser.parseOptionalQuestion())) {
        isClosed = false;
        break;
      }
      auto axis =
          dyn_cast_or_null<AxisRefAttr>(AxisRefAttr::parse(parser, Type()));
      if (!axis)
        return {};
      axes.push_back(axis);
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseRBrace())
      return {};
  }
  // An optional priority follows the closing brace: `{"x"}p1`.
  std::optional<int64_t> priority;
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (succeeded(parser.parseOptionalKeyword(&keyword))) {
    int64_t value;
    if (!keyword.consume_front("p") || keyword.getAsInteger(10, value)) {
      parser.emitError(loc) << "expected a priority such as 'p0' after '}'";
      return {};
    }
    priority = value;
  }
  return get(parser.getContext(), axes, isClosed, priority);
}

void DimensionShardingAttr::print(AsmPrinter &printer) const {
  printer << "{";
  llvm::interleaveComma(getAxes(), printer,
                        [&](AxisRefAttr axis) { axis.print(printer); });
  if (!getIsClosed())
    printer << (getAxes().empty() ? "?" : ", ?");
  printer << "}";
  if (getPriority())
    printer << "p" << *getPriority();
}

//===----------------------------------------------------------------------===//
// TensorShardingAttr
//===----------------------------------------------------------------------===//

LogicalResult
TensorShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           Attribute meshOrRef,
                           ArrayRef<DimensionShardingAttr> dimShardings,
                           ArrayRef<AxisRefAttr> replicatedAxes,
                           ArrayRef<AxisRefAttr> unreducedAxes) {
  auto inlineMesh = dyn_cast_or_null<MeshAttr>(meshOrRef);
  if (!inlineMesh && !isa_and_nonnull<FlatSymbolRefAttr>(meshOrRef))
    return emitError() << "sharding must name a mesh symbol or hold a mesh";
  // Each full axis may appear once across dimensions, replicated and
  // unreduced axes; with an inline mesh, axes must exist in it.
  llvm::StringSet<> used;
  auto check = [&](AxisRefAttr axis) -> LogicalResult {
    if (inlineMesh && !inlineMesh.hasAxis(axis.getName()))
      return emitError() << "sharding refers to unknown axis \""
                         << axis.getName() << "\"";
    if (!axis.getSubAxisInfo() && !used.insert(axis.getName()).second)
      return emitError() << "sharding uses axis \"" << axis.getName()
                         << "\" more than once";
    return success();
  };
  for (DimensionShardingAttr dim : dimShardings)
    for (AxisRefAttr axis : dim.getAxes())
      if (failed(check(axis)))
        return failure();
  for (AxisRefAttr axis : llvm::concat<const AxisRefAttr>(replicatedAxes,
                                                          unreducedAxes))
    if (failed(check(axis)))
      return failure();
  return success();
}

Attribute TensorShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  Attribute meshOrRef;
  if (succeeded(parser.parseOptionalKeyword("mesh"))) {
    meshOrRef = MeshAttr::parse(parser, Type());
    if (!meshOrRef)
      return {};
  } else {
    StringAttr symbol;
    if (parser.parseSymbolName(symbol))
      return {};
    meshOrRef = FlatSymbolRefAttr::get(symbol);
  }
  SmallVector<DimensionShardingAttr> dims;
  SmallVector<AxisRefAttr> replicated, unreduced;
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        auto dim = dyn_cast_or_null<DimensionShardingAttr>(
            DimensionShardingAttr::parse(parser, Type()));
        if (!dim)
          return failure();
        dims.push_back(dim);
        return success();
      }))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc kwLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return {};
    if (keyword == "replicated") {
      if (parseAxisRefSet(parser, replicated))
        return {};
    } else if (keyword == "unreduced") {
      if (parseAxisRefSet(parser, unreduced))
        return {};
    } else {
      parser.emitError(kwLoc) << "expected 'replicated' or 'unreduced'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), meshOrRef, dims, replicated,
                    unreduced);
}

void TensorShardingAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (auto mesh = getInlineMesh()) {
    printer << "mesh";
    mesh.print(printer);
  } else {
    printer.printSymbolName(getMeshName());
  }
  printer << ", [";
  llvm::interleaveComma(getDimShardings(), printer,
                        [&](DimensionShardingAttr dim) { dim.print(printer); });
  printer << "]";
  if (!getReplicatedAxes().empty()) {
    printer << ", replicated=";
    printAxisRefSet(printer, getReplicatedAxes());
  }
  if (!getUnreducedAxes().empty()) {
    printer << ", unreduced=";
    printAxisRefSet(printer, getUnreducedAxes());
  }
  printer << ">";
}

StringRef TensorShardingAttr::getMeshName() const {
  if (auto ref = dyn_cast<FlatSymbolRefAttr>(getMeshOrRef()))
    return ref.getValue();
  return {};
}

MeshAttr TensorShardingAttr::getInlineMesh() const {
  return dyn_cast<MeshAttr>(getMeshOrRef());
}

MeshAttr TensorShardingAttr::getMesh(Operation *from) const {
  if (MeshAttr mesh = getInlineMesh())
    return mesh;
  auto ref = cast<FlatSymbolRefAttr>(getMeshOrRef());
  if (auto meshOp = SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, ref))
    return meshOp.getMesh();
  return {};
}

SmallVector<StringRef> TensorShardingAttr::getShardingAxes(int64_t dim) const {
  return llvm::to_vector(llvm::map_range(
      getDimShardings()[dim].getAxes(),
      [](AxisRefAttr axis) { return axis.getName(); }));
}

bool TensorShardingAttr::isFullyReplicated() const {
  return llvm::all_of(getDimShardings(), [](DimensionShardingAttr dim) {
    return dim.getAxes().empty();
  });
}

TensorShardingAttr TensorShardingAttr::getReplicated(MLIRContext *ctx,
                                                     Attribute meshOrRef,
                                                     int64_t rank,
                                                     bool isClosed) {
  SmallVector<DimensionShardingAttr> dims(
      rank, DimensionShardingAttr::get(ctx, {}, isClosed, std::nullopt));
  return get(ctx, meshOrRef, dims, {}, {});
}

//===----------------------------------------------------------------------===//
// TensorShardingPerValueAttr and VerbatimAttr
//===----------------------------------------------------------------------===//

Attribute TensorShardingPerValueAttr::parse(AsmParser &parser, Type) {
  SmallVector<TensorShardingAttr> shardings;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        auto sharding = dyn_cast_or_null<TensorShardingAttr>(
            TensorShardingAttr::parse(parser, Type()));
        if (!sharding)
          return failure();
        shardings.push_back(sharding);
        return success();
      }) ||
      parser.parseGreater())
    return {};
  return get(parser.getContext(), shardings);
}

void TensorShardingPerValueAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getShardings(), printer,
                        [&](TensorShardingAttr s) { s.print(printer); });
  printer << "]>";
}

Attribute ManualAxesAttr::parse(AsmParser &parser, Type) {
  SmallVector<StringAttr> axes;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces, [&] {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        axes.push_back(StringAttr::get(parser.getContext(), name));
        return success();
      }))
    return {};
  return get(parser.getContext(), axes);
}

void ManualAxesAttr::print(AsmPrinter &printer) const {
  printer << "{";
  llvm::interleaveComma(getValue(), printer, [&](StringAttr axis) {
    printer.printString(axis.getValue());
  });
  printer << "}";
}

Attribute VerbatimAttr::parse(AsmParser &parser, Type) {
  parser.emitError(parser.getCurrentLocation())
      << "sdy verbatim attributes are created by the dialect parser only";
  return {};
}

void VerbatimAttr::print(AsmPrinter &printer) const {
  printer.getStream() << getSpec();
}

//===----------------------------------------------------------------------===//
// Dialect hooks
//===----------------------------------------------------------------------===//

namespace {
/// Returns true if `spec` (the text after `#sdy.`) has the shape of an
/// attribute this subset models, e.g. `mesh<[...` or `sharding<@...`.
/// Other shapes (such as the RFC's `#sdy.mesh<"x"=2>`) stay opaque.
bool isModelledForm(StringRef spec) {
  size_t lt = spec.find('<');
  if (lt == StringRef::npos)
    return false;
  StringRef mnemonic = spec.take_front(lt).trim();
  StringRef body = spec.drop_front(lt + 1).ltrim();
  if (mnemonic == "mesh" || mnemonic == "sharding_per_value")
    return body.starts_with("[");
  if (mnemonic == "sharding")
    return body.starts_with("@") || body.starts_with("mesh<");
  return false;
}

/// `manual_axes{"a", "b"}`, the bracketed form `#sdy<manual_axes{...}>`.
bool isManualAxesForm(StringRef spec) {
  return spec.consume_front("manual_axes") && spec.ltrim().starts_with("{");
}
} // namespace


Attribute SdyDialect::parseAttribute(DialectAsmParser &parser,
                                     Type type) const {
  StringRef spec = parser.getFullSymbolSpec();
  if (isModelledForm(spec) || isManualAxesForm(spec)) {
    StringRef mnemonic;
    Attribute attr;
    OptionalParseResult result =
        generatedAttributeParser(parser, &mnemonic, type, attr);
    if (result.has_value())
      return succeeded(*result) ? attr : Attribute();
  }
  // The parser resets the lexer to the end of the attribute body after this
  // hook returns, so the opaque form needs no token-level skipping.
  return VerbatimAttr::get(getContext(), spec);
}

void SdyDialect::printAttribute(Attribute attr,
                                DialectAsmPrinter &printer) const {
  if (auto opaque = dyn_cast<VerbatimAttr>(attr)) {
    printer.getStream() << opaque.getSpec();
    return;
  }
  (void)generatedAttributePrinter(attr, printer);
}
