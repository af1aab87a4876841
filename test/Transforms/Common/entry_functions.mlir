// What every mpmd pass checks when it collects the entry functions (the
// functions with a `topology`), each a finding of mpmd-fuzz:
// - a function named `@""`, entry function or not: MLIR verifies it but
//   prints it as `@<<INVALID EMPTY SYMBOL>>`, which does not parse back;
// - an entry function without a body (a declaration), or one whose body
//   ends in another terminator than func.return (`func.func` verifies only
//   func.return against the signature): the passes cannot work on them.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-cleanup
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics --mpmd-import="assignment=f=m1"
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-export

// expected-error @+1 {{function has an empty name; give it a name, e.g. func.func @main}}
func.func @""(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// -----

func.func @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  func.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}

// A helper without a topology is refused too: it would print unparseable.
// expected-error @+1 {{function has an empty name}}
func.func private @""(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  func.return %arg0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry function @declared (it has a topology) has no body; give it one, or drop its 'topology' attribute}}
func.func private @declared(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>}

// -----

// expected-error @+1 {{entry function @other_terminator must end with func.return, which returns its results}}
func.func @other_terminator(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  stablehlo.return %arg0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
}
