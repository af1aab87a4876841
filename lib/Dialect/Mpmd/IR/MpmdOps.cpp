//===- MpmdOps.cpp - mpmd operations: syntax, verifiers, folders ----------===//

#include "mpmd/Dialect/Mpmd/IR/MpmdDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::mpmd;

#define GET_OP_CLASSES
#include "mpmd/Dialect/Mpmd/IR/MpmdOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared syntax pieces
//===----------------------------------------------------------------------===//

namespace {

/// `["f", "g"(1)]`
ParseResult parseOriginList(OpAsmParser &parser, ArrayAttr &origins) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        UserOriginAttr origin = UserOriginAttr::parseShort(parser);
        if (!origin)
          return failure();
        list.push_back(origin);
        return success();
      }))
    return failure();
  origins = parser.getBuilder().getArrayAttr(list);
  return success();
}

void printOriginList(OpAsmPrinter &printer, ArrayAttr origins) {
  printer << "[";
  llvm::interleaveComma(origins, printer, [&](Attribute origin) {
    cast<UserOriginAttr>(origin).printShort(printer);
  });
  printer << "]";
}

/// `[<@mesh, [{"x"}]>, ...]`
ParseResult parseShardingList(OpAsmParser &parser,
                              sdy::TensorShardingPerValueAttr &shardings) {
  SmallVector<sdy::TensorShardingAttr> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        auto sharding = dyn_cast_or_null<sdy::TensorShardingAttr>(
            sdy::TensorShardingAttr::parse(parser, Type()));
        if (!sharding)
          return failure();
        list.push_back(sharding);
        return success();
      }))
    return failure();
  shardings = sdy::TensorShardingPerValueAttr::get(parser.getContext(), list);
  return success();
}

void printShardingList(OpAsmPrinter &printer,
                       sdy::TensorShardingPerValueAttr shardings) {
  printer << "[";
  llvm::interleaveComma(shardings.getShardings(), printer,
                        [&](sdy::TensorShardingAttr s) { s.print(printer); });
  printer << "]";
}

/// Parses the part shared by region ops after their `<...>` header:
///   `(%operands) attr-dict (%arg: T, ...) { region } : (T...) -> (T...)`
/// and resolves operands against the functional type.
ParseResult parseRegionOpBody(OpAsmParser &parser, OperationState &result,
                              bool functionalType = true) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<OpAsmParser::Argument> arguments;
  SMLoc operandsLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands, AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseArgumentList(arguments, AsmParser::Delimiter::Paren,
                               /*allowType=*/true))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, arguments) || parser.parseColon())
    return failure();
  SmallVector<Type> operandTypes;
  if (functionalType) {
    FunctionType type;
    if (parser.parseType(type))
      return failure();
    operandTypes.append(type.getInputs().begin(), type.getInputs().end());
    result.addTypes(type.getResults());
  } else {
    // Loops: results have the operand types; `: T, T`.
    if (parser.parseTypeList(operandTypes))
      return failure();
    result.addTypes(operandTypes);
  }
  return parser.resolveOperands(operands, operandTypes, operandsLoc,
                                result.operands);
}

void printRegionOpBody(OpAsmPrinter &printer, Operation *op,
                       ArrayRef<StringRef> elidedAttrs,
                       bool functionalType = true) {
  printer << " (";
  printer.printOperands(op->getOperands());
  printer << ")";
  printer.printOptionalAttrDict(op->getAttrs(), elidedAttrs);
  printer << " (";
  Block &block = op->getRegion(0).front();
  llvm::interleaveComma(block.getArguments(), printer, [&](BlockArgument arg) {
    printer.printRegionArgument(arg);
  });
  printer << ") ";
  printer.printRegion(op->getRegion(0), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/true);
  printer << " : ";
  if (functionalType)
    printer.printFunctionalType(op->getOperandTypes(), op->getResultTypes());
  else
    llvm::interleaveComma(op->getResultTypes(), printer);
}

/// Checks that `values` have exactly `expected` types; `what` names them in
/// the error ("block argument", "returned value").
LogicalResult verifyTypesMatch(Operation *op, TypeRange actual,
                               TypeRange expected, StringRef actualWhat,
                               StringRef expectedWhat) {
  if (actual.size() != expected.size())
    return op->emitOpError() << "has " << actual.size() << " " << actualWhat
                             << "s but " << expected.size() << " "
                             << expectedWhat << "s";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(actual, expected))) {
    auto [a, e] = pair;
    if (a != e)
      return op->emitOpError()
             << actualWhat << " " << index << " has type " << a << " but "
             << expectedWhat << " " << index << " requires " << e;
  }
  return success();
}

/// The types fragment bodies see for fragment operands or results: the
/// global tensor type of a mesh tensor; a token stays a token.
SmallVector<Type> globalTypes(TypeRange meshTensorTypes) {
  return llvm::to_vector(llvm::map_range(meshTensorTypes, getFragmentBodyType));
}

/// Every mesh tensor in `types` must live on `meshName` (tokens live on no
/// mesh).
LogicalResult verifyAllOnMesh(Operation *op, TypeRange types,
                              StringRef meshName, StringRef what) {
  for (auto [index, type] : llvm::enumerate(types)) {
    auto meshType = dyn_cast<MeshTensorType>(type);
    if (meshType && meshType.getMeshName() != meshName)
      return op->emitOpError()
             << what << " " << index << " lives on mesh \""
             << meshType.getMeshName() << "\" but the op is on mesh \""
             << meshName << "\"";
  }
  return success();
}

LogicalResult verifyShardingsRank(Operation *op,
                                  sdy::TensorShardingPerValueAttr shardings,
                                  TypeRange types, StringRef what) {
  if (!shardings)
    return success();
  if (shardings.getShardings().size() != types.size())
    return op->emitOpError() << "has " << shardings.getShardings().size()
                             << " " << what << " but " << types.size()
                             << " values";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(shardings.getShardings(), types))) {
    auto [sharding, type] = pair;
    // A token has no dimensions: its sharding, if listed, is `<@mesh, []>`.
    auto meshType = dyn_cast<MeshTensorType>(type);
    int64_t rank = meshType ? meshType.getGlobalTensorType().getRank() : 0;
    if (sharding.getRank() != rank)
      return op->emitOpError() << what << " " << index << " has rank "
                               << sharding.getRank() << " but the value has rank "
                               << rank;
  }
  return success();
}

Operation *terminatorOf(Region &region) {
  return region.front().getTerminator();
}

} // namespace

//===----------------------------------------------------------------------===//
// NamedComputationOp
//===----------------------------------------------------------------------===//

ParseResult NamedComputationOp::parse(OpAsmParser &parser,
                                      OperationState &result) {
  UserOriginAttr origin;
  if (parser.parseLess() || !(origin = UserOriginAttr::parseShort(parser)) ||
      parser.parseGreater())
    return failure();
  result.addAttribute(getOriginAttrName(result.name), origin);
  if (parseRegionOpBody(parser, result))
    return failure();
  NamedComputationOp::ensureTerminator(*result.regions.front(),
                                       parser.getBuilder(), result.location);
  return success();
}

void NamedComputationOp::print(OpAsmPrinter &printer) {
  printer << "<";
  getOrigin().printShort(printer);
  printer << ">";
  printRegionOpBody(printer, *this, {getOriginAttrName()});
}

LogicalResult NamedComputationOp::verify() {
  Block &block = getRegion().front();
  if (failed(verifyTypesMatch(*this, block.getArgumentTypes(),
                              getOperandTypes(), "block argument", "operand")))
    return failure();
  return verifyTypesMatch(*this, terminatorOf(getRegion())->getOperandTypes(),
                          getResultTypes(), "returned value", "result");
}

//===----------------------------------------------------------------------===//
// NamedTensorOp
//===----------------------------------------------------------------------===//

LogicalResult NamedTensorOp::verify() {
  if (getName().empty())
    return emitOpError() << "needs a non-empty name";
  return success();
}

//===----------------------------------------------------------------------===//
// FragmentOp
//===----------------------------------------------------------------------===//

ParseResult FragmentOp::parse(OpAsmParser &parser, OperationState &result) {
  std::string meshName;
  ArrayAttr origins;
  if (parser.parseLess() || parser.parseKeyword("mesh") ||
      parser.parseEqual() || parser.parseString(&meshName) ||
      parser.parseComma() || parser.parseKeyword("origin") ||
      parser.parseEqual() || parseOriginList(parser, origins))
    return failure();
  Builder &builder = parser.getBuilder();
  result.addAttribute(getMeshNameAttrName(result.name),
                      builder.getStringAttr(meshName));
  result.addAttribute(getOriginAttrName(result.name), origins);
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return failure();
    if (keyword == "stage") {
      int64_t stage;
      if (parser.parseInteger(stage))
        return failure();
      result.addAttribute(getStageIdAttrName(result.name),
                          builder.getI64IntegerAttr(stage));
    } else if (keyword == "in_shardings" || keyword == "out_shardings") {
      sdy::TensorShardingPerValueAttr shardings;
      if (parseShardingList(parser, shardings))
        return failure();
      result.addAttribute(keyword == "in_shardings"
                              ? getInShardingsAttrName(result.name)
                              : getOutShardingsAttrName(result.name),
                          shardings);
    } else {
      return parser.emitError(loc)
             << "expected 'stage', 'in_shardings' or 'out_shardings', got '"
             << keyword << "'";
    }
  }
  if (parser.parseGreater() || parseRegionOpBody(parser, result))
    return failure();
  FragmentOp::ensureTerminator(*result.regions.front(), builder,
                               result.location);
  return success();
}

void FragmentOp::print(OpAsmPrinter &printer) {
  printer << "<mesh=";
  printer.printString(getMeshName());
  printer << ", origin=";
  printOriginList(printer, getOrigin());
  if (getStageIdAttr())
    printer << ", stage=" << getStageIdAttr().getInt();
  if (getInShardings()) {
    printer << ", in_shardings=";
    printShardingList(printer, *getInShardings());
  }
  if (getOutShardings()) {
    printer << ", out_shardings=";
    printShardingList(printer, *getOutShardings());
  }
  printer << ">";
  printRegionOpBody(printer, *this,
                    {getMeshNameAttrName(), getOriginAttrName(),
                     getStageIdAttrName(), getInShardingsAttrName(),
                     getOutShardingsAttrName()});
}

LogicalResult FragmentOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (!isa_and_nonnull<func::FuncOp, ForOp>(parent))
    return emitOpError() << "must be directly inside a func.func or mpmd.for";
  if (failed(verifyMeshInTopology(*this, getMeshName(), "fragment")) ||
      failed(verifyAllOnMesh(*this, getOperandTypes(), getMeshName(),
                             "operand")) ||
      failed(verifyAllOnMesh(*this, getResultTypes(), getMeshName(),
                             "result")))
    return failure();
  if (IntegerAttr stage = getStageIdAttr()) {
    if (!isUserFragment())
      return emitOpError() << "has a stage but no origin; only fragments of "
                              "user named computations have stages";
    if (stage.getInt() < 0)
      return emitOpError() << "stage must be non-negative, got "
                           << stage.getInt();
  }
  if (Attribute counter = (*this)->getAttr(MpmdDialect::kCallCounterAttrName)) {
    auto intAttr = dyn_cast<IntegerAttr>(counter);
    if (!intAttr || !intAttr.getType().isUnsignedInteger(32))
      return emitOpError() << "call_counter must be a ui32 integer, e.g. "
                              "{call_counter = 0 : ui32}";
  }
  if (failed(verifyShardingsRank(*this, getInShardingsAttr(), getOperandTypes(),
                                 "in_shardings")) ||
      failed(verifyShardingsRank(*this, getOutShardingsAttr(),
                                 getResultTypes(), "out_shardings")))
    return failure();
  Block &block = getRegion().front();
  if (failed(verifyTypesMatch(*this, block.getArgumentTypes(),
                              globalTypes(getOperandTypes()), "block argument",
                              "global type of operand")))
    return failure();
  return verifyTypesMatch(*this, terminatorOf(getRegion())->getOperandTypes(),
                          globalTypes(getResultTypes()), "returned value",
                          "global type of result");
}

//===----------------------------------------------------------------------===//
// FragmentCallOp
//===----------------------------------------------------------------------===//

ParseResult FragmentCallOp::parse(OpAsmParser &parser,
                                  OperationState &result) {
  std::string meshName;
  ArrayAttr origins;
  FlatSymbolRefAttr callee;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  FunctionType type;
  if (parser.parseLess() || parser.parseKeyword("mesh") ||
      parser.parseEqual() || parser.parseString(&meshName) ||
      parser.parseComma() || parser.parseKeyword("origin") ||
      parser.parseEqual() || parseOriginList(parser, origins) ||
      parser.parseGreater() || parser.parseAttribute(callee))
    return failure();
  SMLoc operandsLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands, AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type) ||
      parser.resolveOperands(operands, type.getInputs(), operandsLoc,
                             result.operands))
    return failure();
  Builder &builder = parser.getBuilder();
  result.addAttribute(getMeshNameAttrName(result.name),
                      builder.getStringAttr(meshName));
  result.addAttribute(getOriginAttrName(result.name), origins);
  result.addAttribute(getCalleeAttrName(result.name), callee);
  result.addTypes(type.getResults());
  return success();
}

void FragmentCallOp::print(OpAsmPrinter &printer) {
  printer << "<mesh=";
  printer.printString(getMeshName());
  printer << ", origin=";
  printOriginList(printer, getOrigin());
  printer << "> ";
  printer.printAttributeWithoutType(getCalleeAttr());
  printer << "(";
  printer.printOperands(getTensors());
  printer << ")";
  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getMeshNameAttrName(), getOriginAttrName(), getCalleeAttrName()});
  printer << " : ";
  printer.printFunctionalType(getOperandTypes(), getResultTypes());
}

LogicalResult FragmentCallOp::verify() {
  if (failed(verifyMeshInTopology(*this, getMeshName(), "fragment_call")) ||
      failed(verifyAllOnMesh(*this, getOperandTypes(), getMeshName(),
                             "operand")))
    return failure();
  return verifyAllOnMesh(*this, getResultTypes(), getMeshName(), "result");
}

LogicalResult
FragmentCallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls @" << getCallee()
                         << ", which is not a func.func in this module";
  FunctionType calleeType = callee.getFunctionType();
  SmallVector<Type> inputs = globalTypes(getOperandTypes());
  auto constants =
      (*this)->getAttrOfType<ArrayAttr>(MpmdDialect::kConstantArgsAttrName);
  if (constants) {
    for (Attribute constant : constants) {
      auto typed = dyn_cast<TypedAttr>(constant);
      if (!typed)
        return emitOpError() << "has constant argument " << constant
                             << " without a type";
      inputs.push_back(typed.getType());
    }
  }
  if (failed(verifyTypesMatch(*this, inputs, calleeType.getInputs(),
                              constants ? "operand or constant argument"
                                        : "global type of operand",
                              "callee argument")))
    return failure();
  return verifyTypesMatch(*this, globalTypes(getResultTypes()),
                          calleeType.getResults(), "global type of result",
                          "callee result");
}

//===----------------------------------------------------------------------===//
// TransferOp, AssignOp, UnassignOp
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kMemoryKindAttrName = "mhlo.memory_kind";

/// Where Shardy:MPMD's transfer verifier looks for an `mhlo.memory_kind`
/// attribute of the value `value`: on the function argument it is, or in
/// the `res_attrs` of the fragment, fragment_call, call or loop that
/// returns it. (Shardy also looks at a producing transfer's attribute, which
/// that transfer's own check refuses first.) Returns the attribute and, in
/// `where`, what carries it.
static StringAttr getMemoryKindAttr(Value value, std::string &where) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto func =
        dyn_cast_or_null<func::FuncOp>(argument.getOwner()->getParentOp());
    if (!func || argument.getOwner() != &func.getBody().front())
      return {};
    where = ("argument " + Twine(argument.getArgNumber()) + " of @" +
             func.getSymName())
                .str();
    return func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                             kMemoryKindAttrName);
  }
  Operation *def = value.getDefiningOp();
  if (!isa<FragmentOp, FragmentCallOp, CallOp, ForOp>(def))
    return {};
  unsigned index = cast<OpResult>(value).getResultNumber();
  where = ("res_attrs of result " + Twine(index) + " of the " +
           def->getName().getStringRef() + " producing it")
              .str();
  auto resAttrs = def->getAttrOfType<ArrayAttr>("res_attrs");
  if (!resAttrs || index >= resAttrs.size())
    return {};
  auto dict = dyn_cast<DictionaryAttr>(resAttrs[index]);
  return dict ? dict.getAs<StringAttr>(kMemoryKindAttrName) : StringAttr();
}

/// Whether `kind` says pinned host memory, the memory kind Shardy:MPMD's
/// transfers refuse to read from an attribute.
static bool isPinnedHost(StringAttr kind) {
  return kind && kind.getValue() == "pinned_host";
}

/// `type` in pinned host memory, as text (for diagnostics, unquoted).
static std::string hostTypeText(MeshTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << MeshTensorType::get(type.getContext(), type.getMeshName(),
                            type.getGlobalTensorType(), type.getSharding(),
                            StringAttr::get(type.getContext(), "pinned_host"));
  return text;
}

LogicalResult TransferOp::verify() {
  MeshTensorType from = getTensor().getType(), to = getResult().getType();
  // Shardy:MPMD's rules for memory kinds given as attributes: a value in
  // pinned host memory by its attribute cannot be transferred, nor can a
  // transfer put its result there by an attribute. Other memory kinds as
  // attributes ("device", "unpinned_host") are accepted, as there.
  std::string where;
  if (isPinnedHost(getMemoryKindAttr(getTensor(), where)))
    return emitOpError() << "moves a value that an 'mhlo.memory_kind' "
                            "attribute (on "
                         << where
                         << ") puts in pinned host memory; a transfer reads "
                            "the memory kind from the type only (as in "
                            "Shardy:MPMD): drop the attribute and give the "
                            "kind in the type, e.g. "
                         << hostTypeText(from);
  if (isPinnedHost((*this)->getAttrOfType<StringAttr>(kMemoryKindAttrName)))
    return emitOpError() << "has 'mhlo.memory_kind = \"pinned_host\"'; a "
                            "transfer takes its destination memory kind from "
                            "the result type only (as in Shardy:MPMD): drop "
                            "the attribute and give the kind in the result "
                            "type, e.g. "
                         << hostTypeText(to);
  if (from.getGlobalTensorType() != to.getGlobalTensorType())
    return emitOpError() << "must keep the global type, but transfers "
                         << from.getGlobalTensorType() << " to "
                         << to.getGlobalTensorType();
  if (failed(verifyMeshInTopology(*this, from.getMeshName(), "source")))
    return failure();
  return verifyMeshInTopology(*this, to.getMeshName(), "destination");
}

OpFoldResult TransferOp::fold(FoldAdaptor) {
  // A transfer to the very same type is a no-op; so is a transfer back to
  // where the value came from, except a trip to host memory and back on
  // one mesh: that is an offload, made to free device memory in between.
  if (getTensor().getType() == getType())
    return getTensor();
  if (auto previous = getTensor().getDefiningOp<TransferOp>())
    if (previous.getTensor().getType() == getType() && !isHostReload())
      return previous.getTensor();
  return {};
}

LogicalResult AssignOp::verify() {
  MeshTensorType type = getResult().getType();
  if (type.getGlobalTensorType() != getTensor().getType())
    return emitOpError() << "result global type " << type.getGlobalTensorType()
                         << " must equal the operand type "
                         << getTensor().getType();
  return verifyMeshInTopology(*this, type.getMeshName(), "result");
}

OpFoldResult AssignOp::fold(FoldAdaptor) {
  if (auto unassign = getTensor().getDefiningOp<UnassignOp>())
    if (unassign.getTensor().getType() == getType())
      return unassign.getTensor();
  return {};
}

LogicalResult UnassignOp::verify() {
  MeshTensorType type = getTensor().getType();
  if (type.getGlobalTensorType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " must equal the operand's global type "
                         << type.getGlobalTensorType();
  return verifyMeshInTopology(*this, type.getMeshName(), "operand");
}

OpFoldResult UnassignOp::fold(FoldAdaptor) {
  if (auto assign = getTensor().getDefiningOp<AssignOp>())
    return assign.getTensor();
  return {};
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

LogicalResult CallOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (!isa_and_nonnull<func::FuncOp, ForOp>(parent))
    return emitOpError() << "calling @" << getCallee()
                         << " must be directly inside a func.func or "
                            "mpmd.for, but is inside "
                         << (parent ? parent->getName().getStringRef()
                                    : StringRef("nothing"));
  auto func = (*this)->getParentOfType<func::FuncOp>();
  if (func && func->hasAttr(MpmdDialect::kTopologyAttrName) &&
      func.isPrivate())
    return emitOpError() << "calls @" << getCallee() << " from @"
                         << func.getSymName()
                         << ", a private function with a topology; only "
                            "entry (public) functions may call";
  if (Attribute counter = (*this)->getAttr(MpmdDialect::kCallCounterAttrName)) {
    auto intAttr = dyn_cast<IntegerAttr>(counter);
    if (!intAttr || !intAttr.getType().isUnsignedInteger(32)) {
      InFlightDiagnostic diag =
          emitOpError() << "call_counter must be a ui32 integer, e.g. "
                           "{call_counter = 0 : ui32}, got ";
      if (auto typed = dyn_cast<TypedAttr>(counter))
        diag << typed.getType();
      else
        diag << counter;
      return diag;
    }
  }
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls @" << getCallee()
                         << ", which is not a func.func in this module";
  FunctionType calleeType = callee.getFunctionType();
  if (failed(verifyTypesMatch(*this, getOperandTypes(), calleeType.getInputs(),
                              "operand", "callee argument")))
    return failure();
  return verifyTypesMatch(*this, getResultTypes(), calleeType.getResults(),
                          "result", "callee result");
}

//===----------------------------------------------------------------------===//
// ForOp
//===----------------------------------------------------------------------===//

ParseResult ForOp::parse(OpAsmParser &parser, OperationState &result) {
  if (parseRegionOpBody(parser, result, /*functionalType=*/false))
    return failure();
  ForOp::ensureTerminator(*result.regions.front(), parser.getBuilder(),
                          result.location);
  return success();
}

void ForOp::print(OpAsmPrinter &printer) {
  printRegionOpBody(printer, *this, {}, /*functionalType=*/false);
}

LogicalResult ForOp::verify() {
  uint32_t iterations = getIterations();
  if (iterations == 0)
    return emitOpError() << "must run at least one iteration";
  if (std::optional<uint32_t> unroll = getUnrollFactor()) {
    if (*unroll == 0 || iterations % *unroll != 0)
      return emitOpError() << "unroll factor " << *unroll
                           << " must be positive and divide the iteration "
                              "count "
                           << iterations;
  }
  Block &block = getRegion().front();
  SmallVector<Type> expected(getOperandTypes());
  Builder builder(getContext());
  expected.push_back(RankedTensorType::get({}, builder.getIntegerType(
                                                   32, /*isSigned=*/false)));
  if (failed(verifyTypesMatch(*this, block.getArgumentTypes(), expected,
                              "block argument",
                              "operand type (then the tensor<ui32> index)")))
    return failure();
  return verifyTypesMatch(*this, terminatorOf(getRegion())->getOperandTypes(),
                          getResultTypes(), "returned value", "result");
}

//===----------------------------------------------------------------------===//
// BroadcastOp and ReduceOp
//===----------------------------------------------------------------------===//

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getTensor().getDefiningOp<BroadcastOp>())
    return getTensor();
  return {};
}

LogicalResult ReduceOp::verify() {
  ReductionType kind = getReductionType();
  if (getTensors().empty())
    return emitOpError() << "needs at least one operand";
  if (kind == ReductionType::kNone && getTensors().size() != 1)
    return emitOpError() << "with reduction 'none' takes exactly one operand, "
                            "got "
                         << getTensors().size();
  if (kind == ReductionType::kOr || kind == ReductionType::kAnd) {
    Type element = getType().getElementType();
    if (!element.isInteger())
      return emitOpError() << "reduction '" << stringifyReductionType(kind)
                           << "' needs integer or boolean elements, got "
                           << element;
  }
  return success();
}
