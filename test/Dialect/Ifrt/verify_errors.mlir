// Diagnostics of the IFRT IR subset: on the op, type or attribute at fault.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{sharding param: the permutation must list each axis 0..1 once}}
func.func @f(%a: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0, 0] on 2x1>, [0, 1]>)

// -----

// expected-error @+1 {{sharding param: cannot cut the dimensions into 4 shards over 2 devices}}
func.func @f(%a: !ifrt.array<tensor<4x4xf32>, #ifrt.sharding_param<2x2 to [0] on 2>, [0, 1]>)

// -----

// expected-error @+1 {{the sharding is over 2 devices, but the array is on 3}}
func.func @f(%a: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1, 2]>)

// -----

// expected-error @+1 {{dimension 0 of 'tensor<3xf32>' does not divide into 2 shards}}
func.func @f(%a: !ifrt.array<tensor<3xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>)

// -----

// expected-error @+1 {{device 1 is negative or listed twice in a device list}}
func.func @f(%a: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 2>, [1, 1]>)

// -----

// expected-error @+1 {{not supported yet: the IFRT attribute #ifrt.layout}}
func.func @f(%a: !ifrt.array<tensor<4xf32>, #ifrt.layout<auto>, [0]>)

// -----

// expected-error @+1 {{unknown parameter 'color' of !ifrt.array}}
func.func @f(%a: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 1>, [0], color = "red">)

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!b = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op input 0 is on device 0, which is not one of the call's devices}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [2, 3] : (!a) -> !b
  return %arg0 : !a
}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op calls @nowhere::@main, which is not a func.func of this module}}
  %o, %c = ifrt.Call @nowhere::@main(%arg0) on devices [0, 1] : (!a) -> !a
  return %o : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!c = !ifrt.array<tensor<8xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op output 0 is an array of 'tensor<8xf32>', but @atom::@main returns 'tensor<4xf32>'}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] : (!a) -> !c
  return %arg0 : !a
}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op io_aliases pair [0, 3] is out of range (1 inputs, 1 outputs)}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] {io_aliases = [array<i32: 0, 3>]} : (!a) -> !a
  return %o : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op input 0 is both aliased and donated}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] {io_aliases = [array<i32: 0, 0>], donated_input_indices = array<i32: 0>} : (!a) -> !a
  return %o : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!r = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 2>, [2, 3]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.CopyArrays' op copies input 0 from sharding #ifrt.sharding_param<2 to [0] on 2> to #ifrt.sharding_param<1 to [0] on 2>; a copy keeps the layout (ifrt.Reshard changes it)}}
  %o, %c = ifrt.CopyArrays(%arg0) : (!a) -> !r
  return %arg0 : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!b = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>
!d = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [4, 5]>
func.func @main(%arg0: !a, %arg1: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.CopyArrays' op copies arrays between several device lists or memories (array 1)}}
  %o:2, %c = ifrt.CopyArrays(%arg0, %arg1) : (!a, !a) -> (!b, !d)
  return %arg0 : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!e = !ifrt.array<tensor<8xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Reshard' op moves input 0 of 'tensor<4xf32>' to an array of 'tensor<8xf32>'}}
  %o, %c = ifrt.Reshard(%arg0) : (!a) -> !e
  return %arg0 : !a
}
