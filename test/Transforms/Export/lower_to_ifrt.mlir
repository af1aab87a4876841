// mpmd-lower-to-ifrt: an exported MPMD program as IFRT IR, printed in the
// form jaxlib's IFRT dialect parses (the IFRT ops in generic form). The
// expected text is what Shardy's own lowering (jaxlib 0.10.2,
// `_sdy_mpmd.lower_to_ifrt`) makes of the same inputs, up to the printing
// form; python/tests/test_ifrt_export.py compares the two on whole
// programs.
// RUN: mpmd-opt %s -split-input-file -verify-diagnostics -mpmd-lower-to-ifrt | FileCheck %s

// Two meshes of 2 devices: m1 gets devices 0 and 1, m2 2 and 3. Each call
// runs its program's module on its mesh's devices and waits for the
// previous call there; the two transfers after the first call are one copy;
// donation comes from the programs' boundaries (tf.aliasing_output ->
// io_aliases, jax.buffer_donor -> donated_input_indices) and the main
// function's (-> ifrt.donated). A specialization's module holds the shared
// program it calls. The sdy.mesh goes into the modules that name it.
// CHECK-LABEL: module @pipeline {
// CHECK-NEXT: func.func public @main(
// CHECK-SAME: %arg0: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]> {ifrt.donated},
// CHECK-SAME: %arg1: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 2>, [0, 1]>,
// CHECK-SAME: %arg2: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]> {ifrt.donated})
// CHECK-SAME: -> (!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]> {jax.result_info = "result[0]"},
// CHECK-SAME: !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>)
// CHECK-SAME: attributes {ifrt.function} {
// CHECK-NEXT: %[[F0:.*]]:3 = "ifrt.Call"(%arg0, %arg1) {callee = @p0.c0::@main, devices = #ifrt<devices[0, 1]>, donated_input_indices = array<i32>, ifrt.mesh_name = "m1", io_aliases = [], operandSegmentSizes = array<i32: 2, 0>}
// CHECK-SAME: -> (!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>, !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 2>, [0, 1]>, !ifrt.control)
// CHECK-NEXT: %[[C0:.*]]:3 = "ifrt.CopyArrays"(%[[F0]]#0, %[[F0]]#1) {operandSegmentSizes = array<i32: 2, 0>}
// CHECK-SAME: -> (!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [2, 3]>, !ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on 2>, [2, 3]>, !ifrt.control)
// CHECK-NEXT: %[[G:.*]]:2 = "ifrt.Call"(%arg2, %[[C0]]#0, %[[C0]]#1) {callee = @p1::@main, devices = #ifrt<devices[2, 3]>, donated_input_indices = array<i32: 1, 2>, ifrt.mesh_name = "m2", io_aliases = [array<i32: 0, 0>], operandSegmentSizes = array<i32: 3, 0>}
// CHECK-NEXT: %[[C1:.*]]:2 = "ifrt.CopyArrays"(%[[G]]#0) {operandSegmentSizes = array<i32: 1, 0>}
// CHECK-SAME: -> (!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, [0, 1]>, !ifrt.control)
// CHECK-NEXT: %[[F1:.*]]:3 = "ifrt.Call"(%arg0, %[[C1]]#0, %[[F0]]#2) {callee = @p0.c1::@main, devices = #ifrt<devices[0, 1]>, donated_input_indices = array<i32>, ifrt.mesh_name = "m1", io_aliases = [], operandSegmentSizes = array<i32: 2, 1>}
// CHECK-NEXT: return %[[F1]]#0, %[[G]]#0 :
// CHECK-NEXT: }
// CHECK-NEXT: module @p0.c0 attributes {sym_visibility = "private"} {
// CHECK-NEXT: sdy.mesh @mesh = <["x"=2]>
// CHECK-NEXT: func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<4xf32>)
// CHECK-SAME: attributes {mpmd.constant_args = [dense<0> : tensor<i32>], mpmd.mesh = "m1", mpmd.specializes = @p0} {
// CHECK: call @p0(%arg0, %arg1, %{{.*}})
// CHECK: func.func private @p0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32>, %arg2: tensor<i32>)
// CHECK-SAME: attributes {mpmd.mesh = "m1"} {
// CHECK: module @p0.c1 attributes {sym_visibility = "private"} {
// CHECK-NEXT: sdy.mesh @mesh = <["x"=2]>
// CHECK-NEXT: func.func @main(
// CHECK-SAME: mpmd.constant_args = [dense<1> : tensor<i32>]
// CHECK: func.func private @p0(
// CHECK: module @p1 attributes {sym_visibility = "private"} {
// CHECK-NEXT: sdy.mesh @mesh = <["x"=2]>
// CHECK-NEXT: func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg2: tensor<4xf32> {jax.buffer_donor = true})
// CHECK-SAME: attributes {mpmd.mesh = "m2"} {
// CHECK-NOT: func.func private @p
!a = !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
!b = !mpmd.mesh_tensor<"m2", tensor<4xf32>, sharding=<@mesh, [{"x"}]>>
!r = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
module @pipeline {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: !a {tf.aliasing_output = 0 : i32}, %arg1: !r, %arg2: !b {jax.buffer_donor = true})
      -> (!a {jax.result_info = "result[0]"}, !b)
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
    %0:2 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0.c0(%arg0, %arg1) : (!a, !r) -> (!a, !r)
    %1 = mpmd.transfer %0#0 : (!a) -> !b
    %2 = mpmd.transfer %0#1 : (!r) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
    %3 = mpmd.fragment_call<mesh="m2", origin=["g"]> @p1(%arg2, %1, %2) : (!b, !b, !mpmd.mesh_tensor<"m2", tensor<4xf32>>) -> !b
    %4 = mpmd.transfer %3 : (!b) -> !a
    %5:2 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0.c1(%arg0, %4) : (!a, !a) -> (!a, !r)
    return %5#0, %3 : !a, !b
  }
  func.func private @p0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32>, %arg2: tensor<i32>)
      -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<4xf32>) attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.mesh = "m1"} {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0, %arg1 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @p0.c0(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<4xf32>)
      -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<4xf32>) attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.constant_args = [dense<0> : tensor<i32>], mpmd.mesh = "m1", mpmd.specializes = @p0} {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = call @p0(%arg0, %arg1, %c) : (tensor<4xf32>, tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @p0.c1(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<4xf32>)
      -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<4xf32>) attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.constant_args = [dense<1> : tensor<i32>], mpmd.mesh = "m1", mpmd.specializes = @p0} {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0:2 = call @p0(%arg0, %arg1, %c) : (tensor<4xf32>, tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @p1(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, jax.buffer_donor = true}, %arg2: tensor<4xf32> {jax.buffer_donor = true})
      -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) attributes {mesh_shape = #sdy.mesh<["x"=2]>, mpmd.mesh = "m2"} {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.add %0, %arg2 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// Layouts, as XLA's tile assignments make them (axes of a dimension major
// to minor, replicated axes last, merged where the devices stay in order),
// for 2x2 meshes m1 and m2 (devices 0-3 and 4-7) and a mesh m3 of 4
// (devices 8-11). A transfer keeping the sharding param is a copy (also
// between meshes of other shapes: m1's [{"x", "y"}, {}] is m3's [{"a"},
// {}]) or a move between memory kinds; one changing it a reshard. In a run
// of transfers, those between the same meshes and memory kinds share an op,
// placed at the run's start (the copies of %arg0 and %arg6 to m2, of %arg2
// and %arg5 to m3), except that moving what the run moved waits for it.
// Declarations nothing names any more go.
// CHECK-LABEL: module @layouts {
// CHECK-NEXT: func.func @main(
// CHECK-SAME: %arg0: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x2 to [0] on 4>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg1: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x2 to [1, 0] on 2x2>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg2: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<4x1 to [0] on 4>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg3: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<4x1 to [1, 0] on 2x2>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg4: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<1x2 to [0] on 4>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg5: !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 4>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg6: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x1 to [1, 0] on 2x2>, [0, 1, 2, 3]>,
// CHECK-SAME: %arg7: !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<1x1 to [0] on 4>, [0, 1, 2, 3]>)
// CHECK-NEXT: %[[A:.*]]:3 = "ifrt.CopyArrays"(%arg0, %arg6)
// CHECK-SAME: -> (!ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x2 to [0] on 4>, [4, 5, 6, 7]>, !ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x1 to [1, 0] on 2x2>, [4, 5, 6, 7]>, !ifrt.control)
// CHECK-NEXT: %[[B:.*]]:2 = "ifrt.Reshard"(%arg1)
// CHECK-SAME: -> (!ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x2 to [0] on 4>, [4, 5, 6, 7]>, !ifrt.control)
// CHECK-NEXT: %[[C:.*]]:3 = "ifrt.CopyArrays"(%arg2, %arg5)
// CHECK-SAME: -> (!ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<4x1 to [0] on 4>, [8, 9, 10, 11]>, !ifrt.array<tensor<f32>, #ifrt.sharding_param< to [0] on 4>, [8, 9, 10, 11]>, !ifrt.control)
// CHECK-NEXT: %[[D:.*]]:2 = "ifrt.CopyArrays"(%arg3)
// CHECK-SAME: -> (!ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<4x1 to [1, 0] on 2x2>, [4, 5, 6, 7], memory_kind = "pinned_host">, !ifrt.control)
// CHECK-NEXT: %[[E:.*]]:2 = "ifrt.CopyArrays"(%[[A]]#0)
// CHECK-SAME: -> (!ifrt.array<tensor<8x8xf32>, #ifrt.sharding_param<2x2 to [0] on 4>, [4, 5, 6, 7], memory_kind = "pinned_host">, !ifrt.control)
// CHECK-NEXT: return %[[A]]#0, %[[B]]#0, %[[C]]#0, %[[D]]#0, %[[E]]#0, %arg4, %[[C]]#1, %[[A]]#1, %arg7 :
// CHECK-NEXT: }
// CHECK-NEXT: }
!t = tensor<8x8xf32>
module @layouts {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  sdy.mesh @mesh_m3 = <["a"=4]>
  func.func @main(
      %a: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}, {"y"}]>>,
      %b: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y"}, {"x"}]>>,
      %c: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x", "y"}, {}]>>,
      %d: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y", "x"}, {}]>>,
      %e: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {"x"}]>>,
      %f: !mpmd.mesh_tensor<"m1", tensor<f32>>,
      %g: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y"}, {}]>>,
      %h: !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {}], replicated={"x"}>>)
      -> (!mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>,
          !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>,
          !mpmd.mesh_tensor<"m3", !t, sharding=<@mesh_m3, [{"a"}, {}]>>,
          !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y", "x"}, {}]>, memory_kind="pinned_host">,
          !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>, memory_kind="pinned_host">,
          !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {"x"}]>>,
          !mpmd.mesh_tensor<"m3", tensor<f32>>,
          !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y"}, {}]>>,
          !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {}], replicated={"x"}>>)
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2, "y"=2]>>, <"m2" : <["x"=2, "y"=2]>>, <"m3" : <["a"=4]>>>} {
    %0 = mpmd.transfer %a : (!mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x"}, {"y"}]>>) -> !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>
    %1 = mpmd.transfer %b : (!mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y"}, {"x"}]>>) -> !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>
    %6 = mpmd.transfer %g : (!mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y"}, {}]>>) -> !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y"}, {}]>>
    %2 = mpmd.transfer %c : (!mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"x", "y"}, {}]>>) -> !mpmd.mesh_tensor<"m3", !t, sharding=<@mesh_m3, [{"a"}, {}]>>
    %3 = mpmd.transfer %d : (!mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{"y", "x"}, {}]>>) -> !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y", "x"}, {}]>, memory_kind="pinned_host">
    %4 = mpmd.transfer %0 : (!mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>) -> !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>, memory_kind="pinned_host">
    %5 = mpmd.transfer %f : (!mpmd.mesh_tensor<"m1", tensor<f32>>) -> !mpmd.mesh_tensor<"m3", tensor<f32>>
    return %0, %1, %2, %3, %4, %e, %5, %6, %h : !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>, !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>>, !mpmd.mesh_tensor<"m3", !t, sharding=<@mesh_m3, [{"a"}, {}]>>, !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y", "x"}, {}]>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"x"}, {"y"}]>, memory_kind="pinned_host">, !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {"x"}]>>, !mpmd.mesh_tensor<"m3", tensor<f32>>, !mpmd.mesh_tensor<"m2", !t, sharding=<@mesh, [{"y"}, {}]>>, !mpmd.mesh_tensor<"m1", !t, sharding=<@mesh, [{}, {}], replicated={"x"}>>
  }
}

// -----

// Diagnostics, on the op at fault. A module that is not exported: a
// fragment is left in the main function.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @fragment_left(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{'mpmd.fragment' op cannot be lowered to IFRT IR: the main function of an exported program holds only mpmd.fragment_call and mpmd.transfer ops; run mpmd-export first}}
  %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
    mpmd.return %x : tensor<4xf32>
  } : (!m) -> !m
  return %0 : !m
}

// -----

// A shared program's constants not yet specialized (mpmd-export's last
// passes not run).
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @constants_left(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{passes constant arguments (mpmd.constant_args), which an IFRT call cannot; run mpmd-specialize-constant-args (part of mpmd-export) first}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p(%arg0) {mpmd.constant_args = [dense<1> : tensor<i32>]} : (!m) -> !m
  return %0 : !m
}
func.func private @p(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// IFRT IR has one main function.
// expected-error @+1 {{IFRT IR has one main function, but 2 functions have a topology: @a @b}}
module {
  func.func @a() attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    return
  }
  func.func @b() attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    return
  }
}

// -----

// IFRT arrays are tensors.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// expected-error @+1 {{'func.func' op has argument 0 of type '!stablehlo.token'; IFRT IR takes mesh tensors only (not supported yet)}}
func.func @token(%arg0: !stablehlo.token, %arg1: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  return %arg1 : !m
}

// -----

// Layouts IFRT's sharding params do not say here.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>
// expected-error @+1 {{not supported yet in IFRT IR: unreduced axes}}
func.func @unreduced(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  return %arg0 : !m
}

// -----

!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>, sharding=<@mesh, [{"x":(1)2}]>>
// expected-error @+1 {{not supported yet in IFRT IR: sub-axis "x"}}
func.func @sub_axis(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=4]>>>} {
  return %arg0 : !m
}

// -----

// Device ids are consecutive per mesh; a mesh that reorders its devices is
// not supported yet.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
// expected-error @+1 {{not supported yet in IFRT IR: mesh "m1" of the topology has explicit device ids}}
func.func @device_ids(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2], device_ids=[1, 0]>>>} {
  return %arg0 : !m
}

// -----

// A program without a body has nothing to outline.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @external_program(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  // expected-error @+1 {{calls @p, which is not a func.func with a body in this module}}
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p(%arg0: tensor<4xf32>) -> tensor<4xf32>

// -----

// A program's module takes the functions and meshes it names; another
// symbol cannot go along.
!m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
func.func @unknown_symbol(%arg0: !m) -> !m
    attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
  %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p(%arg0) : (!m) -> !m
  return %0 : !m
}
func.func private @p(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{refers to @nowhere, which is neither a func.func nor an sdy.mesh of the module; program @p cannot move into a module of its own}}
  %0 = stablehlo.custom_call @foo(%arg0) {backend_config = "", called_computations = [@nowhere]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
