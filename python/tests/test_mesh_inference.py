"""Mesh inference on programs Shardy:MPMD partitions without extra options:
fan-out gradients, arguments used on several meshes, an assigned argument
returned on another mesh, named tensors of constants. Each runs with
jax.jit's numbers."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np

import mpmd


def meshes(count: int) -> dict[str, jax.sharding.Mesh]:
    devices = jax.devices()
    return {f"mesh{i + 1}": jax.sharding.Mesh(
        np.array(devices[2 * i:2 * i + 2]), ("x",)) for i in range(count)}


def test_fan_out_gradients_are_summed_on_the_readers_mesh():
    """stage1 feeds stage2 and stage3; JAX adds their gradients outside any
    named computation, and stage1's backward reads the sum: it is made on
    mesh1, each term moved there."""
    def model(w1, w2, w3, x):
        s1 = mpmd.named_computation(lambda a: a @ w1, name="stage1")(x)
        s2 = mpmd.named_computation(lambda a: a @ w2, name="stage2")(s1)
        s3 = mpmd.named_computation(lambda a: a @ w3, name="stage3")(s1)
        return mpmd.named_computation(
            lambda a, b: jnp.sum(a) + jnp.sum(b), name="stage4")(s2, s3)

    f = jax.value_and_grad(model, argnums=[0, 1, 2])
    topology = meshes(4)
    config = mpmd.make_config(topology, {"stage1": "mesh1", "stage2": "mesh2",
                                         "stage3": "mesh3",
                                         "stage4": "mesh4"})
    args = [np.random.default_rng(i).normal(size=shape).astype(np.float32)
            for i, shape in enumerate([(3, 5), (5, 7), (5, 9), (10, 3)])]
    lowered = mpmd.jit(f, config).lower(*args)
    assert lowered.function_mesh_assignment.input_meshes == (
        "mesh1", "mesh2", "mesh3", "mesh1")
    assert lowered.function_mesh_assignment.output_meshes == (
        "mesh4", ("mesh1", "mesh2", "mesh3"))
    text = lowered.as_text()
    # The two gradient terms cross to mesh1; no add is left outside.
    assert len(re.findall(r'mpmd\.transfer %\S+ : \(!mpmd\.mesh_tensor<'
                          r'"mesh[23]", tensor<10x5xf32>>\) -> '
                          r'!mpmd\.mesh_tensor<"mesh1"', text)) == 2
    value, grads = lowered.compile()(*args)
    ref_value, ref_grads = jax.jit(f)(*args)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for actual, expected in zip(grads, ref_grads):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_argument_used_on_two_meshes_moves_without_infer_transfers():
    def f(w, x):
        a = mpmd.named_computation(lambda w, x: x @ w, name="a")(w, x)
        return mpmd.named_computation(lambda w, a: a @ w.T, name="b")(w, a)

    config = mpmd.make_config(meshes(2), {"a": "mesh1", "b": "mesh2"})
    w, x = jnp.ones((4, 4)) * 0.5, jnp.arange(8.0).reshape(2, 4)
    lowered = mpmd.jit(f, config).lower(w, x)
    assert lowered.as_text().count("mpmd.transfer %arg0") == 1
    np.testing.assert_allclose(lowered.compile()(w, x), jax.jit(f)(w, x))


def test_assigned_argument_returned_on_another_mesh():
    config = mpmd.make_config(meshes(2), {},
                              input_mesh_assignment=("mesh1",),
                              output_mesh_assignment=("mesh1", "mesh2"))
    lowered = mpmd.jit(lambda x: (x, x), config).lower(jnp.arange(4.0))
    assert lowered.function_mesh_assignment.output_meshes == ("mesh1",
                                                              "mesh2")
    assert lowered.as_text("mpmd").count("mpmd.transfer") == 1
    first, second = lowered.compile()(jnp.arange(4.0))
    np.testing.assert_array_equal(second, np.arange(4.0))
    assert {d.id for d in second.sharding.device_set} == {2, 3}


def test_named_tensors_of_constants():
    def fn():
        x = mpmd.named_tensor(np.ones((3, 5), np.float32), name="name1")
        y = mpmd.named_tensor(np.full((5, 7), 2, np.float32), name="name2")
        return x, y

    topology = meshes(2)
    lowered = mpmd.jit(fn, mpmd.make_config(
        topology, {"name1": "mesh1", "name2": "mesh2"})).lower()
    specs = lowered.function_named_shardings.output_specs
    assert [s.mesh for s in specs] == [topology["mesh1"], topology["mesh2"]]
    x, y = lowered.compile()()
    np.testing.assert_array_equal(x, np.ones((3, 5)))
    np.testing.assert_array_equal(y, np.full((5, 7), 2))
