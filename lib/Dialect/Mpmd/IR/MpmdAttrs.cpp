//===- MpmdAttrs.cpp - mpmd attributes ------------------------------------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mpmd;

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdAttrs.cpp.inc"

void MpmdDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpmd/Dialect/Mpmd/IR/MpmdAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TopologyAttr
//===----------------------------------------------------------------------===//

LogicalResult TopologyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<NamedMeshAttr> meshes) {
  if (meshes.empty())
    return emitError() << "topology must have at least one mesh";
  llvm::StringSet<> names;
  for (NamedMeshAttr mesh : meshes) {
    if (mesh.getName().empty())
      return emitError() << "topology mesh names must not be empty";
    if (!names.insert(mesh.getName()).second)
      return emitError() << "topology has two meshes named \""
                         << mesh.getName() << "\"";
  }
  return success();
}

sdy::MeshAttr TopologyAttr::getMesh(StringRef name) const {
  for (NamedMeshAttr mesh : getMeshes())
    if (mesh.getName() == name)
      return mesh.getMesh();
  return {};
}

SmallVector<StringRef> TopologyAttr::getMeshNames() const {
  return llvm::to_vector(llvm::map_range(
      getMeshes(), [](NamedMeshAttr mesh) { return mesh.getName(); }));
}

//===----------------------------------------------------------------------===//
// UserOriginAttr
//===----------------------------------------------------------------------===//

LogicalResult
UserOriginAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr userName, int64_t transposeCount) {
  if (!userName || userName.getValue().empty())
    return emitError() << "origin name must not be empty";
  if (transposeCount < 0)
    return emitError() << "origin \"" << userName.getValue()
                       << "\" has a negative transpose count "
                       << transposeCount;
  return success();
}

UserOriginAttr UserOriginAttr::parseShort(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseString(&name))
    return {};
  int64_t count = 0;
  if (succeeded(parser.parseOptionalLParen()) &&
      (parser.parseInteger(count) || parser.parseRParen()))
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(),
                    StringAttr::get(parser.getContext(), name), count);
}

void UserOriginAttr::printShort(AsmPrinter &printer) const {
  printer.printString(getUserName().getValue());
  if (getTransposeCount() != 0)
    printer << "(" << getTransposeCount() << ")";
}

Attribute UserOriginAttr::parse(AsmParser &parser, Type) {
  UserOriginAttr origin;
  if (parser.parseLess() || !(origin = parseShort(parser)) ||
      parser.parseGreater())
    return {};
  return origin;
}

void UserOriginAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printShort(printer);
  printer << ">";
}

//===----------------------------------------------------------------------===//
// MeshWithOriginsAttr and MeshesWithOriginsAttr
//===----------------------------------------------------------------------===//

/// `"m1"` or `"m1"["a", "b"]`.
static MeshWithOriginsAttr parseMeshWithOriginsBody(AsmParser &parser) {
  std::string meshName;
  if (parser.parseString(&meshName))
    return {};
  SmallVector<OriginAttr> origins;
  if (succeeded(parser.parseOptionalLSquare())) {
    if (failed(parser.parseOptionalRSquare())) {
      do {
        std::string label;
        if (parser.parseString(&label))
          return {};
        origins.push_back(OriginAttr::get(parser.getContext(), label));
      } while (succeeded(parser.parseOptionalComma()));
      if (parser.parseRSquare())
        return {};
    }
  }
  return MeshWithOriginsAttr::get(parser.getContext(), meshName, origins);
}

static void printMeshWithOriginsBody(AsmPrinter &printer,
                                     MeshWithOriginsAttr attr) {
  printer.printString(attr.getMeshName());
  if (attr.getOrigins().empty())
    return;
  printer << "[";
  llvm::interleaveComma(attr.getOrigins(), printer, [&](OriginAttr origin) {
    printer.printString(origin.getOriginLabel());
  });
  printer << "]";
}

Attribute MeshWithOriginsAttr::parse(AsmParser &parser, Type) {
  MeshWithOriginsAttr attr;
  if (parser.parseLess() || !(attr = parseMeshWithOriginsBody(parser)) ||
      parser.parseGreater())
    return {};
  return attr;
}

void MeshWithOriginsAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printMeshWithOriginsBody(printer, *this);
  printer << ">";
}

Attribute MeshesWithOriginsAttr::parse(AsmParser &parser, Type) {
  SmallVector<MeshWithOriginsAttr> meshes;
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalGreater())) {
    do {
      MeshWithOriginsAttr mesh = parseMeshWithOriginsBody(parser);
      if (!mesh)
        return {};
      meshes.push_back(mesh);
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseGreater())
      return {};
  }
  return get(parser.getContext(), meshes);
}

void MeshesWithOriginsAttr::print(AsmPrinter &printer) const {
  printer << "<";
  llvm::interleaveComma(getValue(), printer, [&](MeshWithOriginsAttr mesh) {
    printMeshWithOriginsBody(printer, mesh);
  });
  printer << ">";
}
