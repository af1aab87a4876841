//===- SinkTokensIntoFragments.cpp - Tokens stay inside fragments ---------===//
//
// A token operand of a fragment becomes a `stablehlo.create_token` at the
// top of its body; once no fragment reads a token, the token results are
// dropped. Ordering between the side effects of two programs is not kept
// (each program orders its own), which is what Shardy:MPMD's export does.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_SINKTOKENSINTOFRAGMENTSPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// The entries of `values` whose bit in `drop` is unset.
template <typename RangeT>
SmallVector<Attribute> without(RangeT values, const llvm::BitVector &drop) {
  SmallVector<Attribute> kept;
  for (auto [index, value] : llvm::enumerate(values))
    if (!drop.test(index))
      kept.push_back(value);
  return kept;
}

/// `attr` (an array attribute: arg_attrs, res_attrs) without the entries of
/// `drop`; a null attribute stays null.
ArrayAttr withoutEntries(ArrayAttr attr, const llvm::BitVector &drop) {
  if (!attr || attr.size() != drop.size())
    return attr;
  return ArrayAttr::get(attr.getContext(), without(attr.getValue(), drop));
}

sdy::TensorShardingPerValueAttr
withoutEntries(sdy::TensorShardingPerValueAttr shardings,
               const llvm::BitVector &drop) {
  if (!shardings || shardings.getShardings().size() != drop.size())
    return shardings;
  SmallVector<sdy::TensorShardingAttr> kept;
  for (auto [index, sharding] : llvm::enumerate(shardings.getShardings()))
    if (!drop.test(index))
      kept.push_back(sharding);
  return sdy::TensorShardingPerValueAttr::get(shardings.getContext(), kept);
}

/// Each token operand of `fragment` becomes a token created inside it.
void sinkTokenOperands(FragmentOp fragment) {
  Block &body = fragment.getRegion().front();
  llvm::BitVector tokens(fragment->getNumOperands());
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (OpOperand &operand : fragment->getOpOperands()) {
    if (!stablehlo::isTokenType(operand.get().getType()))
      continue;
    unsigned index = operand.getOperandNumber();
    auto token = stablehlo::CreateTokenOp::create(
        builder, fragment.getLoc(), operand.get().getType());
    body.getArgument(index).replaceAllUsesWith(token.getResult());
    tokens.set(index);
  }
  if (tokens.none())
    return;
  if (auto shardings = fragment.getInShardingsAttr())
    fragment.setInShardingsAttr(withoutEntries(shardings, tokens));
  if (auto argAttrs = fragment->getAttrOfType<ArrayAttr>("arg_attrs"))
    fragment->setAttr("arg_attrs", withoutEntries(argAttrs, tokens));
  fragment->eraseOperands(tokens);
  body.eraseArguments(tokens);
}

/// Drops the token results of `fragment`, which nothing may read any more;
/// an error on the fragment if something still does.
LogicalResult dropTokenResults(FragmentOp fragment) {
  llvm::BitVector tokens(fragment->getNumResults());
  for (OpResult result : fragment->getResults()) {
    if (!stablehlo::isTokenType(result.getType()))
      continue;
    if (!result.use_empty()) {
      Operation *user = *result.getUsers().begin();
      return fragment.emitOpError()
             << "not supported yet: token result " << result.getResultNumber()
             << " is read by " << user->getName()
             << " outside any fragment; an exported program exchanges "
                "tensors only, so tokens can only pass between fragments "
                "(each then creates its own)";
    }
    tokens.set(result.getResultNumber());
  }
  if (tokens.none())
    return success();
  Operation *terminator = fragment.getRegion().front().getTerminator();
  terminator->eraseOperands(tokens);
  SmallVector<Type> resultTypes;
  for (OpResult result : fragment->getResults())
    if (!tokens.test(result.getResultNumber()))
      resultTypes.push_back(result.getType());
  OpBuilder builder(fragment);
  auto replacement = FragmentOp::create(builder, fragment.getLoc(),
                                        resultTypes, fragment.getInputs(),
                                        fragment->getAttrs());
  if (auto shardings = fragment.getOutShardingsAttr())
    replacement.setOutShardingsAttr(withoutEntries(shardings, tokens));
  if (auto resAttrs = fragment->getAttrOfType<ArrayAttr>("res_attrs"))
    replacement->setAttr("res_attrs", withoutEntries(resAttrs, tokens));
  replacement.getRegion().takeBody(fragment.getRegion());
  unsigned next = 0;
  for (OpResult result : fragment->getResults())
    if (!tokens.test(result.getResultNumber()))
      result.replaceAllUsesWith(replacement->getResult(next++));
  fragment.erase();
  return success();
}

struct SinkTokensIntoFragmentsPass
    : public EntryFunctionPass<
          SinkTokensIntoFragmentsPass,
          mlir::mpmd::impl::SinkTokensIntoFragmentsPassBase> {
  LogicalResult runOnEntryFunction(func::FuncOp entry) {
    Block &block = entry.getBody().front();
    // Operands first: then a token result is read by fragments no more.
    for (auto fragment : block.getOps<FragmentOp>())
      sinkTokenOperands(fragment);
    for (auto fragment : llvm::make_early_inc_range(block.getOps<FragmentOp>()))
      if (failed(dropTokenResults(fragment)))
        return failure();
    return success();
  }
};

} // namespace
