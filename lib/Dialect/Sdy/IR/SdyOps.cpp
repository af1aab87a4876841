//===- SdyOps.cpp - Shardy compat ops -------------------------------------===//
//
// Syntax and verifiers of the sdy ops. Their text is Shardy's:
//   %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
//   sdy.sharding_group %0 group_id=3 : tensor<8x8xf32>
//   %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"a"}, {}]> : T
//   %r = sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...]
//       manual_axes={"a"} (%arg1: tensor<4x8xf32>) { ... } : (T) -> R
// Verifiers check the counts and ranks the passes rely on, not Shardy's
// full rules (e.g. the local shapes of a manual computation).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/Sdy/IR/SdyDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::sdy;

#define GET_OP_CLASSES
#include "mpmd/Dialect/Sdy/IR/SdyOps.cpp.inc"

LogicalResult MeshOp::verify() {
  if (getSymName().empty())
    return emitOpError() << "has an empty name; give the mesh a name, e.g. "
                            "sdy.mesh @mesh = <[\"x\"=2]>";
  return success();
}

namespace {

/// Checks that `sharding` fits a value of type `type` (when ranked).
LogicalResult verifyShardingRank(Operation *op, TensorShardingAttr sharding,
                                 Type type, const Twine &what) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!sharding || !ranked || sharding.getRank() == ranked.getRank())
    return success();
  return op->emitOpError() << what << " has rank " << sharding.getRank()
                           << " but " << type << " has rank "
                           << ranked.getRank();
}

/// `[<@mesh, [{"a"}]>, ...]`, the shardings without their prefix.
ParseResult parseShardingList(OpAsmParser &parser,
                              TensorShardingPerValueAttr &shardings) {
  SmallVector<TensorShardingAttr> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        auto sharding = dyn_cast_or_null<TensorShardingAttr>(
            TensorShardingAttr::parse(parser, Type()));
        if (!sharding)
          return failure();
        list.push_back(sharding);
        return success();
      }))
    return failure();
  shardings = TensorShardingPerValueAttr::get(parser.getContext(), list);
  return success();
}

void printShardingList(OpAsmPrinter &printer,
                       TensorShardingPerValueAttr shardings) {
  printer << "[";
  llvm::interleaveComma(shardings.getShardings(), printer,
                        [&](TensorShardingAttr s) { s.print(printer); });
  printer << "]";
}

} // namespace

//===----------------------------------------------------------------------===//
// ShardingConstraintOp, DataFlowEdgeOp
//===----------------------------------------------------------------------===//

LogicalResult ShardingConstraintOp::verify() {
  return verifyShardingRank(*this, getSharding(), getType(), "sharding");
}

LogicalResult DataFlowEdgeOp::verify() {
  return verifyShardingRank(*this, getShardingAttr(), getType(), "sharding");
}

//===----------------------------------------------------------------------===//
// ManualComputationOp
//===----------------------------------------------------------------------===//

ParseResult ManualComputationOp::parse(OpAsmParser &parser,
                                       OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  TensorShardingPerValueAttr inShardings, outShardings;
  SmallVector<OpAsmParser::Argument> arguments;
  SMLoc operandsLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands, AsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in_shardings") || parser.parseEqual() ||
      parseShardingList(parser, inShardings) ||
      parser.parseKeyword("out_shardings") || parser.parseEqual() ||
      parseShardingList(parser, outShardings) ||
      parser.parseKeyword("manual_axes") || parser.parseEqual())
    return failure();
  auto manualAxes = dyn_cast_or_null<ManualAxesAttr>(
      ManualAxesAttr::parse(parser, Type()));
  if (!manualAxes)
    return failure();
  if (parser.parseArgumentList(arguments, AsmParser::Delimiter::Paren,
                               /*allowType=*/true) ||
      parser.parseRegion(*result.addRegion(), arguments) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  FunctionType type;
  if (parser.parseColonType(type) ||
      parser.resolveOperands(operands, type.getInputs(), operandsLoc,
                             result.operands))
    return failure();
  result.addTypes(type.getResults());
  Properties &properties = result.getOrAddProperties<Properties>();
  properties.in_shardings = inShardings;
  properties.out_shardings = outShardings;
  properties.manual_axes = manualAxes;
  return success();
}

void ManualComputationOp::print(OpAsmPrinter &printer) {
  printer << "(";
  printer.printOperands(getTensors());
  printer << ") in_shardings=";
  printShardingList(printer, getInShardings());
  printer << " out_shardings=";
  printShardingList(printer, getOutShardings());
  printer << " manual_axes=";
  getManualAxes().print(printer);
  printer << " (";
  llvm::interleaveComma(getBody().getArguments(), printer,
                        [&](BlockArgument argument) {
                          printer.printRegionArgument(argument);
                        });
  printer << ") ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/true);
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getInShardingsAttrName(),
                                 getOutShardingsAttrName(),
                                 getManualAxesAttrName()});
  printer << " : ";
  printer.printFunctionalType(getOperandTypes(), getResultTypes());
}

LogicalResult ManualComputationOp::verify() {
  ArrayRef<TensorShardingAttr> ins = getInShardings().getShardings();
  ArrayRef<TensorShardingAttr> outs = getOutShardings().getShardings();
  if (ins.size() != getNumOperands())
    return emitOpError() << "has " << ins.size() << " in_shardings for "
                         << getNumOperands() << " operands";
  if (outs.size() != getNumResults())
    return emitOpError() << "has " << outs.size() << " out_shardings for "
                         << getNumResults() << " results";
  for (auto [index, sharding, type] :
       llvm::enumerate(ins, getOperandTypes()))
    if (failed(verifyShardingRank(*this, sharding, type,
                                  "in_shardings " + Twine(index))))
      return failure();
  for (auto [index, sharding, type] :
       llvm::enumerate(outs, getResultTypes()))
    if (failed(verifyShardingRank(*this, sharding, type,
                                  "out_shardings " + Twine(index))))
      return failure();
  Block &block = getBody().front();
  if (block.getNumArguments() != getNumOperands())
    return emitOpError() << "has " << block.getNumArguments()
                         << " body arguments for " << getNumOperands()
                         << " operands";
  Operation *terminator = block.empty() ? nullptr : &block.back();
  if (!terminator || !isa<ReturnOp>(terminator))
    return emitOpError() << "requires its body to end in sdy.return";
  if (terminator->getNumOperands() != getNumResults())
    return emitOpError() << "body returns " << terminator->getNumOperands()
                         << " values for " << getNumResults() << " results";
  return success();
}
