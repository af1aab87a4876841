"""A schedule per loop: one program with a 1F1B loop over one model (meshes
m0, m1) and a GPipe loop over another (m2, m3) gives jax.jit's numbers, and
each loop is ordered by its own schedule; forward-only loops are scheduled
too, and schedules a loop cannot have are refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from meshes import four_meshes

M = 4


def mlp_loss(prefix, params, x, y):
    h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                               name=f"{prefix}0")(params[0], x)
    out = mpmd.named_computation(lambda w, h: h @ w,
                                 name=f"{prefix}1")(params[1], h)
    return jnp.mean((out - y) ** 2)


def microbatched(prefix, params, xs, ys, schedule):
    def body(i, acc):
        loss, grads = jax.value_and_grad(
            lambda p: mlp_loss(prefix, p, xs[i], ys[i]))(params)
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    return mpmd.fori_loop(0, M, body, zeros, schedule=schedule)


def two_models(pa, pb, xs, ys):
    la, ga = microbatched("a", pa, xs, ys, "1f1b")
    lb, gb = microbatched("b", pb, xs, ys, "gpipe")
    sgd = lambda p, g: jax.tree.map(lambda p, g: p - 0.1 * g / M, p, g)
    return sgd(pa, ga), sgd(pb, gb), la / M, lb / M


def data():
    keys = jax.random.split(jax.random.PRNGKey(0), 6)
    pa = [jax.random.normal(keys[0], (8, 16)) / 4,
          jax.random.normal(keys[1], (16, 8)) / 4]
    pb = [jax.random.normal(keys[2], (8, 16)) / 4,
          jax.random.normal(keys[3], (16, 8)) / 4]
    xs = jax.random.normal(keys[4], (M, 4, 8))
    ys = jax.random.normal(keys[5], (M, 4, 8))
    return pa, pb, xs, ys


ASSIGNMENT = {"a0": ("m1", 0), "a1": ("m2", 1),
              "b0": ("m3", 0), "b1": ("m4", 1)}


@pytest.fixture(scope="module")
def lowered():
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    return mpmd.jit(two_models, config).lower(*data())


def test_each_loop_is_ordered_by_its_own_schedule(lowered):
    order = dict(line.split(": ", 1)
                 for line in lowered.schedule_text().splitlines())
    first = order["m1"].split()   # the 1F1B loop's first stage
    assert first.index("B0") < first.index(f"F{M - 1}"), order["m1"]
    gpipe = order["m3"].split()   # the GPipe loop's first stage
    assert max(i for i, f in enumerate(gpipe) if f.startswith("F")) < min(
        i for i, f in enumerate(gpipe) if f.startswith("B")), order["m3"]


def test_two_loops_equal_jax_jit(lowered):
    args = data()
    got = lowered.compile()(*args)
    want = jax.jit(two_models)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=2e-5, atol=1e-6)


def test_a_forward_only_loop_is_scheduled():
    """Reference log-probs over microbatches: forwards only, GPipe."""
    def logprobs(pa, xs, ys):
        def body(i, acc):
            return acc + mlp_loss("a", pa, xs[i], ys[i])
        return mpmd.fori_loop(0, M, body, jnp.zeros(()), schedule="1f1b")

    pa, _, xs, ys = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(logprobs, config).lower(pa, xs, ys)
    assert lowered.schedule_text().splitlines()[0] == \
        "m1: " + " ".join(f"F{i}" for i in range(M))
    np.testing.assert_allclose(lowered.compile()(pa, xs, ys),
                               jax.jit(logprobs)(pa, xs, ys), rtol=1e-5)


def test_schedules_a_loop_cannot_have():
    pa, _, xs, ys = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    for schedule, match in [
            ("zero-bubble-h1", "not supported yet: a loop's own schedule "
                               "'zero-bubble-h1'"),
            ({"m1": ["a0#0"]}, "not supported yet: a loop's own schedule "
                               "given as a dict"),
            ("zigzag", "not supported yet: a loop's own schedule 'zigzag'")]:
        def step(pa, xs, ys, schedule=schedule):
            return mpmd.fori_loop(
                0, M, lambda i, acc: acc + mlp_loss("a", pa, xs[i], ys[i]),
                jnp.zeros(()), schedule=schedule)
        with pytest.raises(mpmd.ConfigError, match=match):
            mpmd.jit(step, config).lower(pa, xs, ys)
    with pytest.raises(mpmd.FrontendError, match="needs a call_counter"):
        mpmd.call(jnp.sin, schedule="gpipe")


def test_calls_of_a_python_loop_share_their_schedule():
    """The Python-loop pattern: mpmd.call(..., call_counter=i,
    schedule=...) per microbatch."""
    def step(pa, pb, xs, ys):
        la = lb = 0.0
        for i in range(M):
            la = la + mpmd.call(lambda p: mlp_loss("a", p, xs[i], ys[i]),
                                call_counter=i, schedule="1f1b")(pa)
            lb = lb + mpmd.call(lambda p: mlp_loss("b", p, xs[i], ys[i]),
                                call_counter=i, schedule="gpipe")(pb)
        return la, lb

    pa, pb, xs, ys = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(step, config).lower(pa, pb, xs, ys)
    order = dict(line.split(": ", 1)
                 for line in lowered.schedule_text().splitlines())
    assert order["m3"].split() == [f"F{i}" for i in range(M)]
    got = lowered.compile()(pa, pb, xs, ys)
    for g, w in zip(got, jax.jit(step)(pa, pb, xs, ys)):
        np.testing.assert_allclose(g, w, rtol=1e-5)
