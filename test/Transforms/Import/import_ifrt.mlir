// mpmd-import-ifrt: an IFRT IR program as an exported MPMD module. Device
// lists become meshes (named by ifrt.mesh_name, axes from the atoms'
// sdy.mesh), sharding params become shardings over those axes, calls become
// fragment calls of the hoisted atoms (donations from io_aliases and
// donated_input_indices), copies and reshards become transfers.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-import-ifrt="available-devices=0,1,2,3,4,5,6,7" | FileCheck %s

!x = !ifrt.array<tensor<4x8xf32>, #ifrt.sharding_param<1x2 to [1, 0] on 2x2>, [0, 1, 2, 3]>
!w = !ifrt.array<tensor<8xf32>, #ifrt.sharding_param<1 to [0] on 4>, [0, 1, 2, 3]>
!y = !ifrt.array<tensor<4x8xf32>, #ifrt.sharding_param<1x2 to [1, 0] on 2x2>, [4, 5, 6, 7]>
!h = !ifrt.array<tensor<4x8xf32>, #ifrt.sharding_param<1x2 to [1, 0] on 2x2>, [4, 5, 6, 7], memory_kind = "pinned_host">
!z = !ifrt.array<tensor<4x8xf32>, #ifrt.sharding_param<2x2 to [0, 1] on 2x2>, [4, 5, 6, 7]>

// CHECK-LABEL: module {
// CHECK-DAG: sdy.mesh @mesh_first = <["data"=2, "model"=2]>
// CHECK-DAG: sdy.mesh @mesh_second = <["data"=2, "model"=2]>
// CHECK: func.func @main(%arg0: !mpmd.mesh_tensor<"first", tensor<4x8xf32>, sharding=<@mesh_first, [{}, {"model"}]>> {jax.result_info = "x"},
// CHECK-SAME: %arg1: !mpmd.mesh_tensor<"first", tensor<8xf32>, sharding=<@mesh_first, [{}]>>)
// CHECK-SAME: -> (!mpmd.mesh_tensor<"second", tensor<4x8xf32>, sharding=<@mesh_second, [{"data"}, {"model"}]>>,
// CHECK-SAME: !mpmd.mesh_tensor<"second", tensor<4x8xf32>, sharding=<@mesh_second, [{}, {"model"}]>, memory_kind="pinned_host">)
// CHECK-SAME: attributes {mpmd.mesh_devices = {first = array<i64: 0, 1, 2, 3>, second = array<i64: 4, 5, 6, 7>},
// CHECK-SAME: topology = #mpmd.topology<<"first" : <["data"=2, "model"=2]>>, <"second" : <["data"=2, "model"=2]>>>}
// CHECK-NEXT: %[[A:.*]] = mpmd.fragment_call<mesh="first", origin=[]> @scale(%arg0, %arg1)
// CHECK-NEXT: %[[B:.*]] = mpmd.transfer %[[A]] : {{.*}}"first"{{.*}} -> {{.*}}"second"
// CHECK-NEXT: %[[C:.*]] = mpmd.fragment_call<mesh="second", origin=[]> @double(%[[B]])
// CHECK-NEXT: %[[D:.*]] = mpmd.transfer %[[C]] : {{.*}} -> !mpmd.mesh_tensor<"second", tensor<4x8xf32>, sharding=<@mesh_second, [{"data"}, {"model"}]>>
// CHECK-NEXT: %[[E:.*]] = mpmd.transfer %[[C]] : {{.*}} -> {{.*}}memory_kind="pinned_host">
// CHECK-NEXT: return %[[D]], %[[E]]
// The atoms, hoisted under their modules' names; donations are the calls'.
// CHECK: sdy.mesh @mesh = <["data"=2, "model"=2]>{{$}}
// CHECK: func.func private @scale(%arg0: tensor<4x8xf32> {jax.buffer_donor = true, sdy.sharding
// CHECK: func.func private @double(%arg0: tensor<4x8xf32> {sdy.sharding = {{.*}}, tf.aliasing_output = 0 : i32})
func.func @main(%arg0: !x {jax.result_info = "x"}, %arg1: !w) -> (!z, !h) attributes {ifrt.function} {
  %0, %c0 = ifrt.Call @scale::@main(%arg0, %arg1) on devices [0, 1, 2, 3]
      {ifrt.mesh_name = "first", donated_input_indices = array<i32: 0>} : (!x, !w) -> !x
  %1, %c1 = ifrt.CopyArrays(%0) after %c0 : (!x) -> !y
  %2, %c2 = ifrt.Call @double::@main(%1) on devices [4, 5, 6, 7]
      {ifrt.mesh_name = "second", io_aliases = [array<i32: 0, 0>]} : (!y) -> !y
  %3, %c3 = ifrt.Reshard(%2) : (!y) -> !z
  %4, %c4 = ifrt.CopyArrays(%2) : (!y) -> !h
  return %3, %4 : !z, !h
}
module @scale attributes {sym_visibility = "private"} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                  %w: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>})
      -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) {
    %0 = stablehlo.broadcast_in_dim %w, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %x, %0 : tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}
module @double attributes {sym_visibility = "private"} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>})
      -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) {
    %0 = stablehlo.add %x, %x : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}

// -----

// A program without an `ifrt.function` main.
// expected-error @+1 {{an IFRT IR program has one main function (a func.func with the `ifrt.function` attribute), found 0}}
module {
  func.func @main() {
    return
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [8, 9]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op runs on device 8, which is not a device of this job}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [8, 9] : (!a) -> !a
  return %o : !a
}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.After' op not supported yet: mpmd runs ifrt.Call, ifrt.CopyArrays and ifrt.Reshard in IFRT IR}}
  %c = "ifrt.After"(%arg0) : (!a) -> !ifrt.control
  return %arg0 : !a
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 4>, [0, 1, 2, 3]>
// expected-error @+1 {{'func.func' op argument 0: not supported yet: the sharding #ifrt.sharding_param<2 to [0] on 4> of 'tensor<4xf32>' on devices [0, 1, 2, 3] is no sharding over whole axes of mesh "m" #sdy.mesh<["x"=4]>}}
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1, 2, 3] {ifrt.mesh_name = "m"} : (!a) -> !a
  return %o : !a
}
module @atom attributes {sym_visibility = "private"} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!b = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [1, 2]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] : (!a) -> !a
  // expected-error @+1 {{'ifrt.CopyArrays' op not supported yet: an array on devices [1, 2], which share device 1 with mesh "devices_0_1" (devices [0, 1]); mpmd places each array on a whole mesh}}
  %p, %d = ifrt.CopyArrays(%o) : (!a) -> !b
  return %o : !a
}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
func.func @main(%arg0: !a) -> !a attributes {ifrt.function} {
  // expected-error @+1 {{'ifrt.Call' op runs @atom::@main, whose sdy.mesh #sdy.mesh<["x"=4]> has 4 devices, on 2 devices}}
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] : (!a) -> !a
  return %o : !a
}
module @atom attributes {sym_visibility = "private"} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
// expected-error @+1 {{'func.func' op is the IFRT IR main function but has no body}}
func.func private @main(%arg0: !a) -> !a attributes {ifrt.function}

// -----

// One atom called on two device lists, and with two donation patterns: a
// program per mesh and pattern.
!a = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>
!b = !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>
// CHECK-LABEL: module
// CHECK: mpmd.fragment_call<mesh="m", origin=[]> @atom(
// CHECK: mpmd.fragment_call<mesh="m", origin=[]> @atom.variant(
// CHECK: mpmd.fragment_call<mesh="n", origin=[]> @atom.variant_1(
// CHECK-DAG: func.func private @atom(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: func.func private @atom.variant(%arg0: tensor<4xf32> {jax.buffer_donor = true}) -> tensor<4xf32>
// CHECK-DAG: func.func private @atom.variant_1(%arg0: tensor<4xf32>) -> tensor<4xf32>
func.func @main(%arg0: !a) -> !b attributes {ifrt.function} {
  %o, %c = ifrt.Call @atom::@main(%arg0) on devices [0, 1] {ifrt.mesh_name = "m"} : (!a) -> !a
  %p, %d = ifrt.Call @atom::@main(%o) on devices [0, 1] {ifrt.mesh_name = "m", donated_input_indices = array<i32: 0>} : (!a) -> !a
  %q, %e = ifrt.CopyArrays(%p) : (!a) -> !b
  %r, %f = ifrt.Call @atom::@main(%q) on devices [2, 3] {ifrt.mesh_name = "n"} : (!b) -> !b
  return %r : !b
}
module @atom attributes {sym_visibility = "private"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
