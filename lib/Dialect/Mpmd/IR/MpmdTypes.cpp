//===- MpmdTypes.cpp - mpmd types -----------------------------------------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mpmd;

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdTypes.cpp.inc"

void MpmdDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "mpmd/Dialect/Mpmd/IR/MpmdTypes.cpp.inc"
      >();
}

static constexpr llvm::StringLiteral kMemoryKinds[] = {"device", "pinned_host",
                                                       "unpinned_host"};

LogicalResult
MeshTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringRef meshName, RankedTensorType type,
                       sdy::TensorShardingAttr sharding,
                       StringAttr memoryKind) {
  if (meshName.empty())
    return emitError() << "mesh tensor needs a non-empty mesh name";
  if (!type)
    return emitError() << "mesh tensor needs a ranked tensor type";
  if (sharding && sharding.getRank() != type.getRank())
    return emitError() << "mesh tensor sharding has rank "
                       << sharding.getRank() << " but " << type
                       << " has rank " << type.getRank();
  if (memoryKind && !llvm::is_contained(kMemoryKinds, memoryKind.getValue()))
    return emitError() << "unknown memory kind \"" << memoryKind.getValue()
                       << "\"; expected one of \"device\", \"pinned_host\", "
                          "\"unpinned_host\"";
  return success();
}

Type MeshTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string meshName;
  Type type;
  if (parser.parseLess() || parser.parseString(&meshName) ||
      parser.parseComma() || parser.parseType(type))
    return {};
  auto rankedType = dyn_cast<RankedTensorType>(type);
  if (!rankedType) {
    parser.emitError(loc) << "mesh tensor must wrap a ranked tensor type, got "
                          << type;
    return {};
  }
  sdy::TensorShardingAttr sharding;
  StringAttr memoryKind;
  if (succeeded(parser.parseOptionalComma())) {
    bool parseMemoryKind = true;
    if (succeeded(parser.parseOptionalKeyword("sharding"))) {
      if (parser.parseEqual())
        return {};
      sharding = dyn_cast_or_null<sdy::TensorShardingAttr>(
          sdy::TensorShardingAttr::parse(parser, Type()));
      if (!sharding)
        return {};
      parseMemoryKind = succeeded(parser.parseOptionalComma());
    }
    if (parseMemoryKind) {
      std::string kind;
      if (parser.parseKeyword("memory_kind") || parser.parseEqual() ||
          parser.parseString(&kind))
        return {};
      memoryKind = StringAttr::get(parser.getContext(), kind);
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), meshName, rankedType, sharding,
                    memoryKind);
}

void MeshTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printString(getMeshName());
  printer << ", " << getRankedTensorType();
  if (getSharding()) {
    printer << ", sharding=";
    getSharding().print(printer);
  }
  if (getMemoryKind()) {
    printer << ", memory_kind=";
    printer.printString(getMemoryKind().getValue());
  }
  printer << ">";
}

FailureOr<RankedTensorType>
MeshTensorType::getLocalTensorType(sdy::MeshAttr mesh) const {
  RankedTensorType global = getRankedTensorType();
  sdy::TensorShardingAttr sharding = getSharding();
  if (!sharding)
    return global;
  SmallVector<int64_t> shape(global.getShape());
  for (auto [dim, dimSharding] : llvm::enumerate(sharding.getDimShardings())) {
    int64_t parts = 1;
    for (sdy::AxisRefAttr axis : dimSharding.getAxes()) {
      if (axis.getSubAxisInfo()) {
        parts *= axis.getSubAxisInfo().getSize();
        continue;
      }
      int64_t size = mesh.getAxisSize(axis.getName());
      if (size < 0)
        return failure();
      parts *= size;
    }
    if (ShapedType::isDynamic(shape[dim]) || shape[dim] % parts != 0)
      return failure();
    shape[dim] /= parts;
  }
  return RankedTensorType::get(shape, global.getElementType());
}

MeshTensorType MeshTensorType::withMesh(StringRef meshName) const {
  return MeshTensorType::get(getContext(), meshName, getRankedTensorType());
}

Type mlir::mpmd::getFragmentBodyType(Type type) {
  if (auto meshType = dyn_cast<MeshTensorType>(type))
    return meshType.getGlobalTensorType();
  return type;
}
