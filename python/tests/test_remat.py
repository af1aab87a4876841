"""jax.checkpoint around one named computation, around several and inside
one, with any policy and prevent_cse either way, under every built-in
schedule: the partitioned step equals jax.jit."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd

LAYERS = 4


def layer(i):
    return mpmd.named_computation(lambda w, h: jnp.tanh(h @ w), name=f"l{i}")


def chain(ws, h, first, last):
    for i in range(first, last):
        h = layer(i)(ws[i], h)
    return h


def loss_with(variant):
    def loss(ws, x):
        if variant == "inside":
            h = x
            for i, w in enumerate(ws):
                h = mpmd.named_computation(jax.checkpoint(
                    lambda w, h: jnp.tanh(h @ w)), name=f"l{i}")(w, h)
        elif variant in ("around one", "around one, prevent_cse=False"):
            h = chain(ws, x, 0, 1)
            h = jax.checkpoint(layer(1), prevent_cse="False" not in variant)(
                ws[1], h)
            h = chain(ws, h, 2, LAYERS)
        elif variant == "around two, nothing saveable":
            h = chain(ws, x, 0, 1)
            h = jax.checkpoint(lambda ws, h: chain(ws, h, 1, 3),
                               policy=jax.checkpoint_policies.nothing_saveable
                               )(ws, h)
            h = chain(ws, h, 3, LAYERS)
        else:  # around all, dots saveable
            h = jax.checkpoint(lambda ws, h: chain(ws, h, 0, LAYERS),
                               policy=jax.checkpoint_policies.dots_saveable
                               )(ws, x)
        return jnp.mean(h ** 2)
    return loss


def step_with(loss):
    def step(ws, xs):
        def body(i, acc):
            value, grads = jax.value_and_grad(loss)(ws, xs[i])
            return jax.tree.map(jnp.add, acc, (value, grads))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, ws))
        value, grads = mpmd.fori_loop(0, xs.shape[0], body, zeros)
        return jax.tree.map(lambda w, g: w - 0.1 * g, ws, grads), value
    return step


VARIANTS = ["around one", "around one, prevent_cse=False",
            "around two, nothing saveable", "around all, dots saveable",
            "inside"]
# The V schedules are registry schedules, evaluated in Python over the
# fragments like a table (recomputes are not among them).
SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "zero-bubble-h1",
             "zero-bubble-v", "dualpipe-v"]


@pytest.mark.parametrize("schedule, variant",
                         list(itertools.product(SCHEDULES, VARIANTS)))
def test_checkpoint_with_every_schedule(schedule, variant):
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    topology = {f"m{i}": jax.sharding.Mesh(devices[i], ("x",))
                for i in range(2)}
    if schedule == "interleaved-1f1b":  # layer i is stage i, on mesh i % 2
        assignment = {f"l{i}": (f"m{i % 2}", i) for i in range(LAYERS)}
    elif schedule.endswith("-v"):  # stages 0 and 3 on m0, 1 and 2 on m1
        assignment = {f"l{i}": (f"m{min(i, LAYERS - 1 - i)}", i)
                      for i in range(LAYERS)}
    else:  # two layers per mesh
        assignment = {f"l{i}": (f"m{i // 2}", i // 2) for i in range(LAYERS)}
    config = mpmd.make_config(topology, assignment, partitioning_options={
        "pipeline_schedule": schedule})
    ws = [jax.random.normal(jax.random.PRNGKey(i), (8, 8)) * 0.3
          for i in range(LAYERS)]
    xs = jax.random.normal(jax.random.PRNGKey(9), (4, 4, 8))
    step = step_with(loss_with(variant))
    new_ws, value = mpmd.jit(step, config)(ws, xs)
    ref_ws, ref_value = jax.jit(step)(ws, xs)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for got, want in zip(new_ws, ref_ws):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
