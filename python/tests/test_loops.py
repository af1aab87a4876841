"""Microbatch loops traced once: fori_loop, scan_microbatches and a Python
loop of mpmd.call equal jax.jit for 1, 3, 8 and 64 microbatches under every
built-in schedule, and the number of programs does not grow with the
number of microbatches."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from meshes import assert_trees_close
import models  # noqa: E402  (examples/, put on the path by meshes)

import mpmd  # noqa: E402

DIM, HIDDEN, OUT, BATCH = 8, 16, 4, 4


def loss(params, x, y):
    return models.two_stage_mlp_loss(params, x, y)


def fori_step(fori_loop):
    """The training step accumulating over microbatches with `fori_loop`
    (mpmd's, or jax.lax's for the reference: plain jax.jit would unroll
    mpmd's loops, and compiling 64 copies takes long)."""
    def step(params, xs, ys):
        def body(i, acc):
            value, grads = jax.value_and_grad(loss)(params, xs[i], ys[i])
            return jax.tree.map(jnp.add, acc, (value, grads))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        return sgd(params, *fori_loop(0, xs.shape[0], body, zeros),
                   xs.shape[0])
    return step


def scan_step(scan):
    """The same with `scan` over the stacked microbatches."""
    def step(params, xs, ys):
        def body(acc, xy):
            value, grads = jax.value_and_grad(loss)(params, *xy)
            return jax.tree.map(jnp.add, acc, grads), value
        zeros = jax.tree.map(jnp.zeros_like, params)
        grads, values = scan(body, zeros, (xs, ys))
        return sgd(params, values.sum(), grads, xs.shape[0])
    return step


def with_calls(params, xs, ys):
    def body(acc, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return jax.tree.map(jnp.add, acc, (value, grads))
    acc = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    for i in range(xs.shape[0]):
        acc = mpmd.call(body, call_counter=i)(acc, xs[i], ys[i])
    return sgd(params, *acc, xs.shape[0])


with_fori_loop = fori_step(mpmd.fori_loop)
with_scan = scan_step(mpmd.scan_microbatches)
reference_fori = fori_step(jax.lax.fori_loop)
reference_scan = scan_step(jax.lax.scan)


REFERENCE = {with_fori_loop: reference_fori, with_scan: reference_scan,
             with_calls: reference_fori}


def sgd(params, value, grads, count):
    return (jax.tree.map(lambda p, g: p - 0.1 * g / count, params, grads),
            value / count)


def problem(count: int):
    params = models.init_two_stage_mlp(jax.random.PRNGKey(0), DIM, HIDDEN,
                                       OUT)
    xs = jax.random.normal(jax.random.PRNGKey(1), (count, BATCH, DIM))
    ys = jax.random.normal(jax.random.PRNGKey(2), (count, BATCH, OUT))
    return params, xs, ys


def config_for(schedule: str):
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    topology = {f"m{i}": Mesh(devices[i], ("x",)) for i in range(2)}
    return mpmd.make_config(topology, {"stage0": ("m0", 0),
                                       "stage1": ("m1", 1)},
                            partitioning_options={"pipeline_schedule":
                                                  schedule})


def run_and_compare(step, config, count: int):
    params, xs, ys = problem(count)
    lowered = mpmd.jit(step, config).lower(params, xs, ys)
    # The body reached the compiler once.
    text = lowered.jax_text()
    assert text.count('#mpmd.user_origin<"stage0">') == 1, "traced per call"
    got = lowered.compile()(params, xs, ys)
    want = jax.jit(REFERENCE[step])(params, xs, ys)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    assert_trees_close(got[0], want[0], rtol=1e-5, atol=1e-6)
    return lowered


@pytest.mark.parametrize("count", [1, 3, 8, 64])
@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "zero-bubble-h1"])
def test_fori_loop_every_schedule(schedule, count):
    lowered = run_and_compare(with_fori_loop, config_for(schedule), count)
    assert "m0: F0" in lowered.schedule_text()


@pytest.mark.parametrize("count", [1, 3, 8, 64])
@pytest.mark.parametrize("step", [with_scan, with_calls],
                         ids=["scan_microbatches", "python_loop_of_call"])
def test_scan_and_calls(step, count):
    run_and_compare(step, config_for("1f1b"), count)


def interleaved_loss(ws, x, y):
    h = x
    for i, w in enumerate(ws):
        h = mpmd.named_computation(lambda w, h: jnp.tanh(h @ w),
                                   name=f"l{i}")(w, h)
    return jnp.mean((h - y) ** 2)


@pytest.mark.parametrize("count", [2, 8, 64])
def test_interleaved_schedule(count):
    """Virtual stages need a microbatch count that the mesh count divides."""
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    topology = {f"m{i}": Mesh(devices[i], ("x",)) for i in range(2)}
    config = mpmd.make_config(
        topology, {f"l{i}": (f"m{i % 2}", i) for i in range(4)},
        partitioning_options={"pipeline_schedule": "interleaved-1f1b"})
    ws = [jax.random.normal(jax.random.PRNGKey(i), (DIM, DIM)) * 0.3
          for i in range(4)]
    xs = jax.random.normal(jax.random.PRNGKey(7), (count, BATCH, DIM))
    ys = jax.random.normal(jax.random.PRNGKey(8), (count, BATCH, DIM))

    def step(ws, xs, ys):
        def body(i, acc):
            value, grads = jax.value_and_grad(interleaved_loss)(ws, xs[i],
                                                                ys[i])
            return jax.tree.map(jnp.add, acc, (value, grads))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, ws))
        return sgd(ws, *mpmd.fori_loop(0, count, body, zeros), count)

    def reference(ws, xs, ys):
        def body(i, acc):
            value, grads = jax.value_and_grad(interleaved_loss)(ws, xs[i],
                                                                ys[i])
            return jax.tree.map(jnp.add, acc, (value, grads))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, ws))
        return sgd(ws, *jax.lax.fori_loop(0, count, body, zeros), count)

    got = mpmd.jit(step, config)(ws, xs, ys)
    want = jax.jit(reference)(ws, xs, ys)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    assert_trees_close(got[0], want[0], rtol=1e-5, atol=1e-6)


def program_kinds(lowered) -> dict[str, list[str]]:
    """Per mesh, the programs without their index and microbatch range."""
    return {mesh: sorted(re.sub(r"^p\d+_|_calls\d+to\d+$", "", name)
                         for name in names)
            for mesh, names in lowered.programs_by_mesh().items()}


def test_demo_programs_do_not_grow_with_the_microbatches():
    """The demo's sharded transformer: the same programs for 8 and for 128
    microbatches (only the stacked batch's leading dimension differs)."""
    devices = np.array(jax.devices()[:8])
    topology = {"m1": Mesh(devices[:4].reshape(2, 2), ("data", "model")),
                "m2": Mesh(devices[4:].reshape(2, 2), ("data", "model"))}
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=64, dim=32,
                                     heads=2, layers=4, seq=16)
    assignment = models.transformer_assignment(4, list(topology))
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule":
                                                    "1f1b"})
    params = jax.device_put(params, models.transformer_shardings(
        params, topology, assignment))
    kinds = []
    for count in (8, 128):
        tokens = jnp.zeros((count, 4, 16), jnp.int32)
        lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
            params,
            jax.device_put(tokens, NamedSharding(topology["m1"],
                                                 P(None, "data"))),
            jax.device_put(tokens, NamedSharding(topology["m2"],
                                                 P(None, "data"))))
        kinds.append(program_kinds(lowered))
        assert len(lowered.plan.calls()) >= 8 * count
    assert kinds[0] == kinds[1]
