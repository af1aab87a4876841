//===- SpecializeConstantArgs.cpp - A function per call's constants -----===//
//
// A fragment_call that passes `mpmd.constant_args` to a shared program calls
// instead a function made for those constants: it takes the call's
// operands, makes each constant, and calls the program with all of them.
// The exported module then follows Shardy:MPMD's rule that a fragment_call
// passes every argument of its callee, while the execution plan, reading
// `mpmd.specializes`, still compiles the shared program once.
//
//===----------------------------------------------------------------------===//

#include "mpmd/Transforms/Common/EntryFunctionPass.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::mpmd {
#define GEN_PASS_DEF_SPECIALIZECONSTANTARGSPASS
#include "mpmd/Transforms/Export/Passes.h.inc"
} // namespace mlir::mpmd

using namespace mlir;
using namespace mlir::mpmd;

namespace {

/// Function attributes the specialization keeps from its program (the mesh
/// it runs on, as Shardy and the plan read it).
constexpr StringLiteral kKeptFunctionAttrs[] = {"mesh_shape", "mpmd.mesh"};

struct SpecializeConstantArgsPass
    : public EntryFunctionPass<
          SpecializeConstantArgsPass,
          mlir::mpmd::impl::SpecializeConstantArgsPassBase> {
  LogicalResult runOnEntryFunctions(ModuleOp module,
                                    ArrayRef<func::FuncOp> entries) {
    SymbolTable symbols(module);
    // (program, constants) -> its specialization, made once.
    llvm::DenseMap<std::pair<Operation *, Attribute>, func::FuncOp> made;
    llvm::DenseMap<Operation *, unsigned> count;
    // Specializations follow their program, in the order they are made.
    llvm::DenseMap<Operation *, Operation *> last;
    for (func::FuncOp entry : entries) {
      for (auto call : entry.getBody().getOps<FragmentCallOp>()) {
        auto constants =
            call->getAttrOfType<ArrayAttr>(MpmdDialect::kConstantArgsAttrName);
        if (!constants)
          continue;
        auto program = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!program)
          return call.emitOpError()
                 << "calls @" << call.getCallee()
                 << ", which is not a func.func in this module";
        func::FuncOp &specialized = made[{program, constants}];
        if (!specialized) {
          Operation *&after = last[program];
          FailureOr<func::FuncOp> built = specialize(
              program, constants, count[program]++,
              after ? after : program.getOperation(), symbols);
          if (failed(built))
            return failure();
          specialized = *built;
          after = specialized;
        }
        call.setCalleeAttr(FlatSymbolRefAttr::get(specialized));
        call->removeAttr(MpmdDialect::kConstantArgsAttrName);
      }
    }
    return success();
  }

  /// `@<program>.c<index>(operands...)`: the constants made inside, the
  /// program called with the operands and them.
  FailureOr<func::FuncOp> specialize(func::FuncOp program, ArrayAttr constants,
                                     unsigned index, Operation *after,
                                     SymbolTable &symbols) {
    FunctionType type = program.getFunctionType();
    if (constants.size() > type.getNumInputs())
      return program.emitOpError()
             << "is called with " << constants.size()
             << " constant arguments but takes " << type.getNumInputs();
    unsigned numOperands = type.getNumInputs() - constants.size();
    OpBuilder builder(program);
    builder.setInsertionPointAfter(after);
    auto function = func::FuncOp::create(
        builder, program.getLoc(),
        (program.getSymName() + ".c" + Twine(index)).str(),
        builder.getFunctionType(type.getInputs().take_front(numOperands),
                                type.getResults()));
    function.setPrivate();
    for (StringRef name : kKeptFunctionAttrs)
      if (Attribute value = program->getAttr(name))
        function->setAttr(name, value);
    function->setAttr(MpmdDialect::kSpecializesAttrName,
                      FlatSymbolRefAttr::get(program));
    function->setAttr(MpmdDialect::kConstantArgsAttrName, constants);
    // The boundary is the program's: layouts and donations, as Shardy and
    // XLA read them on a function.
    for (unsigned arg = 0; arg < numOperands; ++arg)
      function.setArgAttrs(arg, program.getArgAttrDict(arg));
    for (unsigned result = 0; result < type.getNumResults(); ++result)
      function.setResultAttrs(result, program.getResultAttrDict(result));

    Block *body = function.addEntryBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    SmallVector<Value> operands(body->getArguments());
    for (Attribute constant : constants) {
      auto elements = dyn_cast<DenseElementsAttr>(constant);
      if (!elements)
        return program.emitOpError()
               << "is called with constant argument " << constant
               << ", which is not a dense elements attribute";
      operands.push_back(stablehlo::ConstantOp::create(
          inner, program.getLoc(), elements.getType(), elements));
    }
    auto call = func::CallOp::create(inner, program.getLoc(), program,
                                     operands);
    func::ReturnOp::create(inner, program.getLoc(), call.getResults());
    // Renamed on collision with an existing symbol; stays where it is.
    symbols.insert(function, function->getIterator());
    return function;
  }
};

} // namespace
