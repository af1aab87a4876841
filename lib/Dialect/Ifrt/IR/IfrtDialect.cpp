//===- IfrtDialect.cpp - IFRT IR subset: attributes and types -------------===//
//
// The text is IFRT's: `#ifrt.sharding_param<2x1 to [1, 0] on 2x2>`,
// `#ifrt<devices[0, 1]>`, `!ifrt.array<tensor<4xf32>, #sp, [0, 1],
// memory_kind = "pinned_host">`, `!ifrt.control`. An `#ifrt` attribute this
// subset does not model is a parse error that says so.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ifrt;

#include "mpmd/Dialect/Ifrt/IR/IfrtDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mpmd/Dialect/Ifrt/IR/IfrtTypes.cpp.inc"

namespace {

/// Short names for sharding params in printed modules, as jaxlib prints
/// them (`#sp`, `#sp1`, ...).
struct IfrtOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<ShardingParamAttr>(attr)) {
      os << "sp";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};

void printDims(raw_ostream &os, ArrayRef<int64_t> dims) {
  llvm::interleave(dims, os, "x");
}

/// `[0, 1, 2]` (the brackets included).
ParseResult parseIntList(AsmParser &parser, SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    values.push_back(value);
    return success();
  });
}

/// `2x1x3`, or nothing before `keyword` (a scalar's dims).
ParseResult parseDimsBefore(AsmParser &parser, StringRef keyword,
                            SmallVectorImpl<int64_t> &dims) {
  if (succeeded(parser.parseOptionalKeyword(keyword)))
    return success();
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return failure();
  return parser.parseKeyword(keyword);
}

int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t value : values)
    result *= value;
  return result;
}

} // namespace

void IfrtDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpmd/Dialect/Ifrt/IR/IfrtAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "mpmd/Dialect/Ifrt/IR/IfrtTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mpmd/Dialect/Ifrt/IR/IfrtOps.cpp.inc"
      >();
  addInterfaces<IfrtOpAsmInterface>();
  // Other IFRT ops in generic form parse as unregistered ops, which
  // mpmd-import-ifrt refuses by name.
  allowUnknownOperations();
}

Attribute IfrtDialect::parseAttribute(DialectAsmParser &parser,
                                      Type type) const {
  SMLoc loc = parser.getCurrentLocation();
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult parsed =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (parsed.has_value())
    return succeeded(*parsed) ? attr : Attribute();
  parser.emitError(loc) << "not supported yet: the IFRT attribute #ifrt."
                        << mnemonic
                        << " (mpmd reads #ifrt.sharding_param and "
                           "#ifrt<devices[...]>)";
  return {};
}

void IfrtDialect::printAttribute(Attribute attr,
                                 DialectAsmPrinter &printer) const {
  (void)generatedAttributePrinter(attr, printer);
}

//===----------------------------------------------------------------------===//
// ShardingParamAttr
//===----------------------------------------------------------------------===//

Attribute ShardingParamAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> dims, permutation, sizes, unreduced;
  if (parser.parseLess() || parseDimsBefore(parser, "to", dims) ||
      parseIntList(parser, permutation) || parser.parseKeyword("on") ||
      parser.parseDimensionList(sizes, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (succeeded(parser.parseOptionalKeyword("unreduced")) &&
      parseIntList(parser, unreduced))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingParamAttr>(parser.getContext(), dims,
                                              permutation, sizes, unreduced);
}

void ShardingParamAttr::printBody(AsmPrinter &printer) const {
  raw_ostream &os = printer.getStream();
  printDims(os, getDimShards());
  os << " to [";
  llvm::interleaveComma(getPermutation(), os);
  os << "] on ";
  printDims(os, getAxisSizes());
  if (!getUnreducedAxes().empty()) {
    os << " unreduced [";
    llvm::interleaveComma(getUnreducedAxes(), os);
    os << "]";
  }
}

void ShardingParamAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

LogicalResult
ShardingParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<int64_t> dimShards,
                          ArrayRef<int64_t> permutation,
                          ArrayRef<int64_t> axisSizes,
                          ArrayRef<int64_t> unreducedAxes) {
  if (axisSizes.empty() || permutation.size() != axisSizes.size())
    return emitError() << "sharding param: the permutation and the axis "
                          "sizes must have the same, non-zero, length (got "
                       << permutation.size() << " and " << axisSizes.size()
                       << ")";
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : permutation)
    if (axis < 0 || axis >= static_cast<int64_t>(axisSizes.size()) ||
        !seen.insert(axis).second)
      return emitError() << "sharding param: the permutation must list each "
                            "axis 0.."
                         << axisSizes.size() - 1 << " once";
  for (int64_t size : axisSizes)
    if (size < 1 || size > (1 << 20))
      return emitError() << "sharding param: axis size " << size
                         << " is out of range";
  for (int64_t shards : dimShards)
    if (shards < 1 || shards > (1 << 20))
      return emitError() << "sharding param: " << shards
                         << " shards for a dimension is out of range";
  if (product(axisSizes) % product(dimShards) != 0)
    return emitError() << "sharding param: cannot cut the dimensions into "
                       << product(dimShards) << " shards over "
                       << product(axisSizes) << " devices";
  llvm::SmallSet<int64_t, 4> unreduced;
  for (int64_t axis : unreducedAxes)
    if (axis < 0 || axis >= static_cast<int64_t>(axisSizes.size()) ||
        !unreduced.insert(axis).second)
      return emitError() << "sharding param: unreduced axis " << axis
                         << " is out of range or repeated";
  return success();
}

int64_t ShardingParamAttr::getNumDevices() const {
  return product(getAxisSizes());
}

SmallVector<int64_t> ShardingParamAttr::getTileOfDevice() const {
  // The logical devices in tile order: the axes expand from the last of the
  // permutation (major) to its first (minor); axis `a` steps device ids by
  // the product of the sizes of the axes before it.
  ArrayRef<int64_t> sizes = getAxisSizes();
  SmallVector<int64_t> strides(sizes.size(), 1);
  for (size_t axis = 1; axis < sizes.size(); ++axis)
    strides[axis] = strides[axis - 1] * sizes[axis - 1];
  SmallVector<int64_t> order{0};
  for (int64_t axis : llvm::reverse(getPermutation())) {
    SmallVector<int64_t> next;
    for (int64_t base : order)
      for (int64_t step = 0; step < sizes[axis]; ++step)
        next.push_back(base + step * strides[axis]);
    order = std::move(next);
  }
  SmallVector<int64_t> tileOf(order.size());
  for (auto [tile, device] : llvm::enumerate(order))
    tileOf[device] = tile;
  return tileOf;
}

//===----------------------------------------------------------------------===//
// DevicesAttr
//===----------------------------------------------------------------------===//

Attribute DevicesAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> ids;
  if (parseIntList(parser, ids))
    return {};
  return parser.getChecked<DevicesAttr>(parser.getContext(), ids);
}

void DevicesAttr::print(AsmPrinter &printer) const {
  printer << "[";
  llvm::interleaveComma(getIds(), printer.getStream());
  printer << "]";
}

LogicalResult DevicesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> ids) {
  if (ids.empty())
    return emitError() << "a device list must name at least one device";
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t id : ids)
    if (id < 0 || !seen.insert(id).second)
      return emitError() << "device " << id
                         << " is negative or listed twice in a device list";
  return success();
}

//===----------------------------------------------------------------------===//
// ArrayType
//===----------------------------------------------------------------------===//

Type ArrayType::parse(AsmParser &parser) {
  RankedTensorType shape;
  Attribute sharding, layout;
  SmallVector<int64_t> devices;
  StringAttr memoryKind;
  if (parser.parseLess() || parser.parseType(shape) || parser.parseComma() ||
      parser.parseAttribute(sharding) || parser.parseComma() ||
      parseIntList(parser, devices))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "memory_kind") {
      if (parser.parseAttribute(memoryKind))
        return {};
    } else if (key == "layout") {
      if (parser.parseAttribute(layout))
        return {};
    } else {
      parser.emitError(loc) << "unknown parameter '" << key
                            << "' of !ifrt.array (it takes memory_kind and "
                               "layout)";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ArrayType>(parser.getContext(), shape, sharding,
                                      devices, memoryKind, layout);
}

void ArrayType::print(AsmPrinter &printer) const {
  printer << "<" << getShape() << ", ";
  printer.printAttribute(getSharding());
  printer << ", [";
  llvm::interleaveComma(getDevices(), printer.getStream());
  printer << "]";
  if (getMemoryKind())
    printer << ", memory_kind = " << getMemoryKind();
  if (getLayout()) {
    printer << ", layout = ";
    printer.printAttribute(getLayout());
  }
  printer << ">";
}

LogicalResult ArrayType::verify(function_ref<InFlightDiagnostic()> emitError,
                                RankedTensorType shape, Attribute sharding,
                                ArrayRef<int64_t> devices,
                                StringAttr memoryKind, Attribute layout) {
  if (failed(DevicesAttr::verify(emitError, devices)))
    return failure();
  if (!shape.hasStaticShape())
    return emitError() << "!ifrt.array needs a static shape, got " << shape;
  auto param = dyn_cast<ShardingParamAttr>(sharding);
  if (!param)
    return success(); // other shardings are refused where they are read
  if (param.getDimShards().size() != static_cast<size_t>(shape.getRank()))
    return emitError() << "the sharding cuts "
                       << param.getDimShards().size()
                       << " dimensions, but the array " << shape << " has "
                       << shape.getRank();
  for (auto [dim, shards] : llvm::enumerate(param.getDimShards()))
    if (shape.getDimSize(dim) % shards != 0)
      return emitError() << "dimension " << dim << " of " << shape
                         << " does not divide into " << shards << " shards";
  if (param.getNumDevices() != static_cast<int64_t>(devices.size()))
    return emitError() << "the sharding is over " << param.getNumDevices()
                       << " devices, but the array is on " << devices.size();
  return success();
}
