//===- StableHloOps.td - StableHLO compat ops --------------*- tablegen -*-===//
//
// The modelled StableHLO ops. Op names, operands and inherent attributes
// (their property names) equal upstream StableHLO's, because generic text
// printed by JAX has to parse into these ops and print back unchanged. The
// pretty forms follow upstream's printer byte for byte. They are declarative,
// with the pieces ODS cannot express as shared custom directives
// (AssemblyFormat.h); only constant and reduce, whose forms depend on the
// op's contents, are written in C++ (AssemblyFormat.cpp).
//
// Each `` in a format suppresses the space ODS would print before the next
// element: the modelled enum attributes print their own leading space, and
// some directives print their own leading comma.
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD
#define MPMD_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mpmd/Dialect/StableHlo/IR/StableHloBase.td"
include "mpmd/Dialect/StableHlo/IR/StableHloAttrs.td"

class StableHlo_Op<string mnemonic, list<Trait> traits = []>
    : Op<StableHlo_Dialect, mnemonic, traits> {
  let hasVerifier = 1;
}

// Marker traits read by the op catalog (OpCatalog.h); see
// StableHloDialect.h for their meaning.
def StableHlo_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::mlir::stablehlo::trait";
}
def StableHlo_CheapToClone : NativeOpTrait<"CheapToClone"> {
  let cppNamespace = "::mlir::stablehlo::trait";
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// `stablehlo.op %a, %b : T` when every operand type equals the result type,
// `stablehlo.op %a, %b : (T0, T1) -> T2` otherwise.
class StableHlo_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : StableHlo_Op<mnemonic,
                   !listconcat([Pure, StableHlo_Elementwise], traits)> {
  // Whether operand and result element types must be equal (not for
  // convert, whose purpose is to change it).
  string checkElementType = "true";
  let results = (outs AnyTensor:$result);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() {
      return ::mlir::stablehlo::detail::verifyElementwise(
          getOperation(), /*sameElementType=*/}] # checkElementType # [{);
    }
  }];
}

class StableHlo_BinaryOp<string mnemonic, list<Trait> traits = []>
    : StableHlo_ElementwiseOp<mnemonic, traits> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict
      `:` custom<SameOperandsAndResultType>(type($lhs), type($rhs),
                                            type($result))
  }];
}

defvar StableHlo_UnaryFormat = [{
  $operand attr-dict
    `:` custom<SameOperandsAndResultType>(type($operand), type($result))
}];

class StableHlo_UnaryOp<string mnemonic, list<Trait> traits = []>
    : StableHlo_ElementwiseOp<mnemonic, traits> {
  let arguments = (ins AnyTensor:$operand);
  let assemblyFormat = StableHlo_UnaryFormat;
}

// Transcendental ops carry an optional `result_accuracy`; the pretty form
// leaves it out when it is the default, as upstream does (attr-dict elides
// attributes equal to their default).
class StableHlo_UnaryAccuracyOp<string mnemonic, list<Trait> traits = []>
    : StableHlo_ElementwiseOp<mnemonic, traits> {
  let arguments = (ins
    AnyTensor:$operand,
    DefaultValuedOptionalAttr<StableHlo_ResultAccuracyAttr,
        "\"result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>\"">
        :$result_accuracy);
  let assemblyFormat = StableHlo_UnaryFormat;
}

def StableHlo_AddOp : StableHlo_BinaryOp<"add", [Commutative]> {
  let summary = "Elementwise addition";
}
def StableHlo_SubtractOp : StableHlo_BinaryOp<"subtract"> {
  let summary = "Elementwise subtraction";
}
def StableHlo_MulOp : StableHlo_BinaryOp<"multiply", [Commutative]> {
  let summary = "Elementwise multiplication";
}
def StableHlo_DivOp : StableHlo_BinaryOp<"divide"> {
  let summary = "Elementwise division";
}
def StableHlo_MaxOp : StableHlo_BinaryOp<"maximum", [Commutative]> {
  let summary = "Elementwise maximum";
}
def StableHlo_MinOp : StableHlo_BinaryOp<"minimum", [Commutative]> {
  let summary = "Elementwise minimum";
}
def StableHlo_PowOp : StableHlo_BinaryOp<"power"> {
  let summary = "Elementwise exponentiation";
}
def StableHlo_RemOp : StableHlo_BinaryOp<"remainder"> {
  let summary = "Elementwise remainder";
}
def StableHlo_AndOp : StableHlo_BinaryOp<"and", [Commutative]> {
  let summary = "Elementwise logical/bitwise and";
}
def StableHlo_OrOp : StableHlo_BinaryOp<"or", [Commutative]> {
  let summary = "Elementwise logical/bitwise or";
}
def StableHlo_XorOp : StableHlo_BinaryOp<"xor", [Commutative]> {
  let summary = "Elementwise logical/bitwise xor";
}
def StableHlo_Atan2Op : StableHlo_BinaryOp<"atan2"> {
  let summary = "Elementwise two-argument arctangent";
}
def StableHlo_ShiftLeftOp : StableHlo_BinaryOp<"shift_left"> {
  let summary = "Elementwise left shift";
}
def StableHlo_ShiftRightArithmeticOp
    : StableHlo_BinaryOp<"shift_right_arithmetic"> {
  let summary = "Elementwise arithmetic right shift";
}
def StableHlo_ShiftRightLogicalOp : StableHlo_BinaryOp<"shift_right_logical"> {
  let summary = "Elementwise logical right shift";
}

def StableHlo_NegOp : StableHlo_UnaryOp<"negate"> {
  let summary = "Elementwise negation";
}
def StableHlo_AbsOp : StableHlo_UnaryOp<"abs"> {
  let summary = "Elementwise absolute value";
}
def StableHlo_FloorOp : StableHlo_UnaryOp<"floor"> {
  let summary = "Elementwise floor";
}
def StableHlo_CeilOp : StableHlo_UnaryOp<"ceil"> {
  let summary = "Elementwise ceiling";
}
def StableHlo_SignOp : StableHlo_UnaryOp<"sign"> {
  let summary = "Elementwise sign";
}
def StableHlo_NotOp : StableHlo_UnaryOp<"not"> {
  let summary = "Elementwise logical/bitwise not";
}
def StableHlo_RoundOp : StableHlo_UnaryOp<"round_nearest_afz"> {
  let summary = "Elementwise rounding, ties away from zero";
}
def StableHlo_RoundNearestEvenOp : StableHlo_UnaryOp<"round_nearest_even"> {
  let summary = "Elementwise rounding, ties to even";
}
def StableHlo_PopulationCountOp : StableHlo_UnaryOp<"popcnt"> {
  let summary = "Elementwise count of set bits";
}
def StableHlo_ClzOp : StableHlo_UnaryOp<"count_leading_zeros"> {
  let summary = "Elementwise count of leading zero bits";
}
def StableHlo_IsFiniteOp : StableHlo_UnaryOp<"is_finite"> {
  let summary = "Elementwise test for finite values (i1 result)";
  let checkElementType = "false";
}
def StableHlo_ExpOp : StableHlo_UnaryAccuracyOp<"exponential"> {
  let summary = "Elementwise exponential";
}
def StableHlo_Expm1Op : StableHlo_UnaryAccuracyOp<"exponential_minus_one"> {
  let summary = "Elementwise exp(x) - 1";
}
def StableHlo_LogOp : StableHlo_UnaryAccuracyOp<"log"> {
  let summary = "Elementwise natural logarithm";
}
def StableHlo_Log1pOp : StableHlo_UnaryAccuracyOp<"log_plus_one"> {
  let summary = "Elementwise log(1 + x)";
}
def StableHlo_TanhOp : StableHlo_UnaryAccuracyOp<"tanh"> {
  let summary = "Elementwise hyperbolic tangent";
}
def StableHlo_SqrtOp : StableHlo_UnaryAccuracyOp<"sqrt"> {
  let summary = "Elementwise square root";
}
def StableHlo_RsqrtOp : StableHlo_UnaryAccuracyOp<"rsqrt"> {
  let summary = "Elementwise reciprocal square root";
}
def StableHlo_LogisticOp : StableHlo_UnaryAccuracyOp<"logistic"> {
  let summary = "Elementwise logistic sigmoid";
}
def StableHlo_SineOp : StableHlo_UnaryAccuracyOp<"sine"> {
  let summary = "Elementwise sine";
}
def StableHlo_CosineOp : StableHlo_UnaryAccuracyOp<"cosine"> {
  let summary = "Elementwise cosine";
}
def StableHlo_TanOp : StableHlo_UnaryAccuracyOp<"tan"> {
  let summary = "Elementwise tangent";
}
def StableHlo_CbrtOp : StableHlo_UnaryAccuracyOp<"cbrt"> {
  let summary = "Elementwise cube root";
}

def StableHlo_ConvertOp : StableHlo_UnaryOp<"convert"> {
  let summary = "Elementwise element-type conversion";
  let checkElementType = "false";
}

//===----------------------------------------------------------------------===//
// Other ops
//===----------------------------------------------------------------------===//

def StableHlo_ConstantOp : StableHlo_Op<"constant",
    [ConstantLike, Pure, StableHlo_CheapToClone,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "A tensor constant";
  let description = [{
    `%cst = stablehlo.constant dense<1.0> : tensor<f32>`. When the result type
    differs from the value's type (quantized results), the form is
    `stablehlo.constant() {value = ...} : () -> T`. Written in C++ because
    the form depends on the two types.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let hasCustomAssemblyFormat = 1;
  let hasFolder = 1;
}

def StableHlo_CompareOp
    : StableHlo_Op<"compare", [Pure, StableHlo_Elementwise]> {
  let summary = "Elementwise comparison";
  let description = [{
    `stablehlo.compare GT, %a, %b, FLOAT : (T, T) -> tensor<...xi1>`; the
    comparison type is optional.
  }];
  let arguments = (ins
    AnyTensor:$lhs,
    AnyTensor:$rhs,
    StableHlo_ComparisonDirectionAttr:$comparison_direction,
    OptionalAttr<StableHlo_ComparisonTypeAttr>:$compare_type);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    `` $comparison_direction `,` $lhs `,` $rhs (`,` `` $compare_type^)?
      attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_SelectOp
    : StableHlo_Op<"select", [Pure, StableHlo_Elementwise]> {
  let summary = "Elementwise choice between two tensors";
  let description = [{
    `stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>` when both
    branches have the result type, the functional form otherwise. The
    predicate is either a scalar or has the result's shape.
  }];
  let arguments = (ins AnyTensor:$pred, AnyTensor:$on_true,
                       AnyTensor:$on_false);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict
      `:` custom<SelectOpType>(type($pred), type($on_true), type($on_false),
                               type($result))
  }];
}

def StableHlo_BroadcastInDimOp
    : StableHlo_Op<"broadcast_in_dim", [Pure, StableHlo_CheapToClone]> {
  let summary = "Broadcast a tensor into a larger shape";
  let description = [{
    `stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<4xf32>) ->
    tensor<2x4xf32>`: operand dimension i becomes result dimension dims[i].
  }];
  let arguments = (ins AnyTensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $broadcast_dimensions attr-dict
      `:` functional-type(operands, results)
  }];
}

def StableHlo_ReshapeOp : StableHlo_Op<"reshape", [Pure]> {
  let summary = "Reshape a tensor keeping its elements";
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_TransposeOp : StableHlo_Op<"transpose", [Pure]> {
  let summary = "Permute the dimensions of a tensor";
  let description = [{
    `stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) ->
    tensor<3x2xf32>`: result dimension i is operand dimension dims[i].
  }];
  let arguments = (ins AnyTensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $permutation attr-dict
      `:` functional-type(operands, results)
  }];
}

def StableHlo_DotGeneralOp : StableHlo_Op<"dot_general", [Pure]> {
  let summary = "General tensor contraction";
  let description = [{
    `stablehlo.dot_general %a, %b, batching_dims = [0] x [0],
    contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (...) -> T`.
    The result dimensions are the batch dimensions, then the remaining lhs
    dimensions, then the remaining rhs dimensions.
  }];
  let arguments = (ins
    AnyTensor:$lhs,
    AnyTensor:$rhs,
    StableHlo_DotDimensionNumbersAttr:$dot_dimension_numbers,
    OptionalAttr<StableHlo_PrecisionConfigAttr>:$precision_config,
    OptionalAttr<StableHlo_DotAlgorithmAttr>:$algorithm);
  let results = (outs AnyTensor:$result);
  // The directives print their own leading commas.
  let assemblyFormat = [{
    $lhs `,` $rhs `` custom<DotDimensionNumbers>($dot_dimension_numbers)
      `` custom<PrecisionConfigAndAlgorithm>($precision_config, $algorithm)
      attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_ReduceOp : StableHlo_Op<"reduce",
    [RecursiveMemoryEffects, SameVariadicOperandSize]> {
  let summary = "Reduce tensors along dimensions with a reducer region";
  let description = [{
    Compact form when the reducer is one commutative binary op of this
    dialect applied to the block arguments in order:
    `stablehlo.reduce(%x init: %zero) applies stablehlo.add
    across dimensions = [0] : (...) -> T` (on one line).
    Otherwise the region form:
    `stablehlo.reduce(%x init: %zero) across dimensions = [0] : (...) -> T`
    followed by `reducer(%elt: tensor<f32>, %acc: tensor<f32>) { ... }`.
    Written in C++ because the form depends on the region's contents.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                       Variadic<AnyTensor>:$init_values,
                       DenseI64ArrayAttr:$dimensions);
  let results = (outs Variadic<AnyTensor>);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
}

def StableHlo_IotaOp : StableHlo_Op<"iota", [Pure, StableHlo_CheapToClone]> {
  let summary = "Tensor counting up along one dimension";
  let arguments = (ins I64Attr:$iota_dimension);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "`dim` `=` $iota_dimension attr-dict `:` type($output)";
}

def StableHlo_ConcatenateOp : StableHlo_Op<"concatenate", [Pure]> {
  let summary = "Concatenate tensors along a dimension";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$dimension);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    custom<VariadicOperandWithAttribute>($inputs) `` `dim` `=` $dimension
      attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_SliceOp : StableHlo_Op<"slice", [Pure]> {
  let summary = "Static strided slice";
  let description = [{
    `stablehlo.slice %x [0:2, 1:3:2] : (...) -> T`: per dimension
    `start:limit` with an optional `:stride` (left out when 1).
  }];
  let arguments = (ins AnyTensor:$operand,
                       DenseI64ArrayAttr:$start_indices,
                       DenseI64ArrayAttr:$limit_indices,
                       DenseI64ArrayAttr:$strides);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand custom<SliceRanges>($start_indices, $limit_indices, $strides)
      attr-dict `:` functional-type(operands, results)
  }];
}

// The start indices are scalar integer tensors, one per operand dimension;
// each start is clamped so that the slice stays inside the operand.
def StableHlo_DynamicSliceOp : StableHlo_Op<"dynamic_slice", [Pure]> {
  let summary = "Slice of static sizes at start indices known at run time";
  let description = [{
    `stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (tensor<4x4xf32>,
    tensor<i64>, tensor<i64>) -> tensor<2x2xf32>`: the result has the shape
    `sizes`, read from the operand at the (clamped) starts.
  }];
  let arguments = (ins AnyTensor:$operand,
                       Variadic<AnyTensor>:$start_indices,
                       DenseI64ArrayAttr:$slice_sizes);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` custom<VariadicOperandWithAttribute>($start_indices)
      `` `sizes` `=` $slice_sizes attr-dict
      `:` functional-type(operands, results)
  }];
}

def StableHlo_DynamicUpdateSliceOp
    : StableHlo_Op<"dynamic_update_slice", [Pure]> {
  let summary = "Writes a tensor into another at start indices known at run time";
  let description = [{
    `stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<4x4xf32>,
    tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>`: the
    operand with `update` written at the (clamped) starts.
  }];
  let arguments = (ins AnyTensor:$operand, AnyTensor:$update,
                       Variadic<AnyTensor>:$start_indices);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_ReturnOp
    : StableHlo_Op<"return", [Pure, Terminator, ReturnLike]> {
  let summary = "Terminator of stablehlo regions";
  let arguments = (ins Variadic<AnyType>:$results);
  let hasVerifier = 0;
  let assemblyFormat = "$results attr-dict (`:` type($results)^)?";
}

//===----------------------------------------------------------------------===//
// Ops with effects, regions or tokens
//===----------------------------------------------------------------------===//

// Every property upstream defines, each optional and printed whenever it is
// present (JAX writes the defaults, e.g. `has_side_effect = false`, and the
// pretty form must keep them: purity depends on that flag).
def StableHlo_CustomCallOp : StableHlo_Op<"custom_call",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Calls a target the compiler does not see into";
  let description = [{
    `stablehlo.custom_call @target(%a, %b) {has_side_effect = true,
    backend_config = "..."} : (T0, T1) -> R`. The op has every effect unless
    it carries `has_side_effect = false`, as upstream defines.
  }];
  let arguments = (ins
    Variadic<AnyType>:$inputs,
    StrAttr:$call_target_name,
    OptionalAttr<BoolAttr>:$has_side_effect,
    OptionalAttr<AnyAttrOf<[StrAttr, DictionaryAttr]>>:$backend_config,
    OptionalAttr<I32Attr>:$api_version,
    OptionalAttr<ArrayAttr>:$called_computations,
    OptionalAttr<ArrayAttr>:$operand_layouts,
    OptionalAttr<ArrayAttr>:$result_layouts,
    OptionalAttr<ArrayAttr>:$output_operand_aliases);
  let results = (outs Variadic<AnyType>);
  let assemblyFormat = [{
    custom<CustomCallTarget>($call_target_name) `(` $inputs `)`
      attr-dict `:` functional-type(operands, results)
  }];
}

def StableHlo_WhileOp : StableHlo_Op<"while", [RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmBlockArgumentNames"]>]> {
  let summary = "Loops while the cond region returns true";
  let description = [{
    ```mlir
    %r:2 = stablehlo.while(%iterArg = %a, %iterArg_0 = %b) : tensor<i32>, T
    cond {
      ...
      stablehlo.return %p : tensor<i1>
    } do {
      ...
      stablehlo.return %x, %y : tensor<i32>, T
    }
    ```
    Both regions take the carried values; results have the operand types.
    Written in C++ because the block arguments are named in the operand list.
  }];
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>);
  let regions = (region SizedRegion<1>:$cond, SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
}

def StableHlo_OptimizationBarrierOp
    : StableHlo_Op<"optimization_barrier", [Pure]> {
  let summary = "Keeps the compiler from moving work across it";
  let description = [{
    `stablehlo.optimization_barrier %a, %t : tensor<4xf32>, !stablehlo.token`
    (results have the operand types), `stablehlo.optimization_barrier()`
    without operands.
  }];
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>:$result);
  let assemblyFormat = [{
    attr-dict ($operand^ `:` custom<PairwiseOpType>(type($operand),
                                                    type($result))):(`(` `)`)?
  }];
}

def StableHlo_CreateTokenOp : StableHlo_Op<"create_token", [Pure]> {
  let summary = "Creates a token to order side effects";
  let results = (outs AnyType:$output);
  let assemblyFormat = "attr-dict `:` type(results)";
}

#endif // MPMD_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD
