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
import mpmd.schedules
from meshes import four_meshes

M = 4


def mlp_loss(prefix, params, x, y):
    h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                               name=f"{prefix}0")(params[0], x)
    out = mpmd.named_computation(lambda w, h: h @ w,
                                 name=f"{prefix}1")(params[1], h)
    return jnp.mean((out - y) ** 2)


def microbatched(prefix, params, xs, ys, schedule, loss_of=mlp_loss):
    def body(i, acc):
        loss, grads = jax.value_and_grad(
            lambda p: loss_of(prefix, p, xs[i], ys[i]))(params)
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    return mpmd.fori_loop(0, M, body, zeros, schedule=schedule)


def two_loops(schedule_a, schedule_b):
    """A step with loop a (model a) and loop b (model b), each with the
    schedule given (None: none of its own)."""
    def step(pa, pb, xs, ys):
        la, ga = microbatched("a", pa, xs, ys, schedule_a)
        lb, gb = microbatched("b", pb, xs, ys, schedule_b)
        return la, lb, ga, gb
    return step


def two_models(pa, pb, xs, ys):
    la, lb, ga, gb = two_loops("1f1b", "gpipe")(pa, pb, xs, ys)
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
    order = schedule_lines(lowered)
    first = order["m1"].split()   # the 1F1B loop's first stage
    assert first.index("B0") < first.index(f"F{M - 1}"), order["m1"]
    gpipe = order["m3"].split()   # the GPipe loop's first stage
    assert max(i for i, f in enumerate(gpipe) if f.startswith("F")) < min(
        i for i, f in enumerate(gpipe) if f.startswith("B")), order["m3"]


def test_two_loops_equal_jax_jit(lowered):
    assert_equals_jit(lowered, two_models, data())


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
    for schedule, error, match in [
            ("zigzag", mpmd.ConfigError, "unknown loop schedule 'zigzag'"),
            (42, mpmd.ConfigError, "got int"),
            ({"m1": "a0#0"}, mpmd.ConfigError, "maps a mesh name to the list"),
            # Zero bubble fills bubbles with backward work: a forward-only
            # loop has none.
            ("zero-bubble-h1", mpmd.CompilerError,
             "fragment 'a0#0' on mesh \"m1\" is in loop 'for0', whose own "
             "schedule zero-bubble-h1 does not fit it: the loop runs forwards "
             "only")]:
        def step(pa, xs, ys, schedule=schedule):
            return mpmd.fori_loop(
                0, M, lambda i, acc: acc + mlp_loss("a", pa, xs[i], ys[i]),
                jnp.zeros(()), schedule=schedule)
        with pytest.raises(error, match=match):
            mpmd.jit(step, config).lower(pa, xs, ys)
    with pytest.raises(mpmd.FrontendError, match="needs a call_counter"):
        mpmd.call(jnp.sin, schedule="gpipe")


def forwards_first(a, b):
    """A comparator: every forward before any backward (GPipe's order)."""
    if (a.transpose_count == 0) != (b.transpose_count == 0):
        return a.transpose_count == 0
    return a.microbatch < b.microbatch


def schedule_lines(lowered):
    return dict(line.split(": ", 1)
                for line in lowered.schedule_text().splitlines())


def assert_equals_jit(lowered, fn, args):
    got = lowered.compile()(*args)
    want = jax.jit(fn)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=2e-5, atol=1e-6)


def test_a_loop_takes_a_table_and_another_a_comparator():
    """Loop a's table runs microbatch 1 before 0 on m1; loop b's comparator
    runs all forwards first. Each loop gets exactly its own order, and a
    table or comparator given to no loop changes nothing else."""
    table = {"m1": ["a0#1", "a0#0", "a0(1)#1", "a0#3", "a0(1)#0", "a0#2",
                    "a0(1)#3", "a0(1)#2"],
             "m2": ["a1#1", "a1(1)#1", "a1#0", "a1(1)#0", "a1#3",
                    "a1(1)#3", "a1#2", "a1(1)#2"]}

    step = two_loops(table, forwards_first)
    args = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(step, config).lower(*args)
    order = schedule_lines(lowered)
    assert order["m1"].split() == ["F1", "F0", "B1", "F3", "B0", "F2", "B3",
                                   "B2"]
    assert order["m2"].split() == ["F1", "B1", "F0", "B0", "F3", "B3", "F2",
                                   "B2"]
    for mesh in ("m3", "m4"):
        assert order[mesh].split() == [f"F{i}" for i in range(M)] + \
            [f"B{i}" for i in range(M)]
    assert_equals_jit(lowered, step, args)


def test_a_table_or_comparator_that_does_not_fit_its_loop():
    pa, _, xs, ys = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    for schedule, error, match in [
            ({"m9": ["a0#0"]}, mpmd.schedules.ScheduleError,
             r"the schedule of loop 'for0' \(over a0, a1\): the schedule "
             "table names mesh 'm9'"),
            ({"m1": ["a0#0"], "m2": []}, mpmd.CompilerError,
             "the schedule of loop 'for0' of mesh \"m1\" does not place "
             "fragment 'a0\\(1\\)#0'"),
            (lambda a, b: True, mpmd.schedules.ScheduleError,
             "comparator is contradictory on mesh 'm1'")]:
        def step(pa, xs, ys, schedule=schedule):
            return microbatched("a", pa, xs, ys, schedule)
        with pytest.raises(error, match=match):
            mpmd.jit(step, config).lower(pa, xs, ys)


def deep_loss(prefix, params, x, y):
    h = x
    for k, w in enumerate(params):
        h = mpmd.named_computation(lambda w, h: jnp.tanh(h @ w),
                                   name=f"{prefix}{k}")(w, h)
    return jnp.mean((h - y) ** 2)


def deep_microbatched(prefix, params, xs, ys, schedule):
    return microbatched(prefix, params, xs, ys, schedule, deep_loss)


def deep_data():
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    pa = [jax.random.normal(keys[k], (8, 8)) / 3 for k in range(4)]
    pb = [jax.random.normal(keys[4 + k], (8, 8)) / 3 for k in range(2)]
    xs = jax.random.normal(keys[6], (M, 4, 8))
    ys = jax.random.normal(keys[7], (M, 4, 8))
    return pa, pb, xs, ys


# Model a in a V over m1, m2 (stages 0 and 3 on m1, 1 and 2 on m2); model b
# over m3, m4.
V_ASSIGNMENT = {"a0": ("m1", 0), "a1": ("m2", 1), "a2": ("m2", 2),
                "a3": ("m1", 3), "b0": ("m3", 0), "b1": ("m4", 1)}


def test_a_registry_schedule_orders_its_loop_as_it_orders_a_function():
    """zero-bubble-v (a registry schedule) on loop a, 1F1B on loop b: loop
    a's meshes run exactly what zero-bubble-v gives the same model as the
    function's schedule."""
    def step(pa, pb, xs, ys):
        return (deep_microbatched("a", pa, xs, ys, "zero-bubble-v"),
                deep_microbatched("b", pb, xs, ys, "1f1b"))

    def alone(pa, xs, ys):
        return deep_microbatched("a", pa, xs, ys, None)

    pa, pb, xs, ys = deep_data()
    options = {"split_backward": True}
    config = mpmd.make_config(four_meshes(), V_ASSIGNMENT,
                              partitioning_options=options)
    lowered = mpmd.jit(step, config).lower(pa, pb, xs, ys)
    two_meshes = {name: mesh for name, mesh in four_meshes().items()
                  if name in ("m1", "m2")}
    reference = mpmd.jit(alone, mpmd.make_config(
        two_meshes, {k: v for k, v in V_ASSIGNMENT.items()
                     if k.startswith("a")},
        partitioning_options={**options,
                              "pipeline_schedule": "zero-bubble-v"})
    ).lower(pa, xs, ys)
    order, want = schedule_lines(lowered), schedule_lines(reference)
    assert order["m1"] == want["m1"] and order["m2"] == want["m2"], \
        (order, want)
    assert "W0@s3" in order["m1"]
    assert order["m3"].split() == ["F0", "F1", "B0", "F2", "B1", "F3", "B2",
                                   "B3"]
    assert_equals_jit(lowered, step, (pa, pb, xs, ys))


def test_a_registry_schedule_states_the_options_it_needs():
    pa, pb, xs, ys = deep_data()
    config = mpmd.make_config(four_meshes(), V_ASSIGNMENT)

    def step(pa, xs, ys):
        return deep_microbatched("a", pa, xs, ys, "zero-bubble-v")

    with pytest.raises(mpmd.ConfigError,
                       match="the schedule 'zero-bubble-v' of loop 'for0' "
                             r"\(over a0, a1, a2, a3\) needs the "
                             "partitioning option split_backward=True "
                             r"\(Shardy: mpmd_split_bwd_fragments\)"):
        mpmd.jit(step, config).lower(pa, xs, ys)


def test_zero_bubble_h1_on_one_loop_splits_only_its_backwards():
    step = two_loops("zero-bubble-h1", "1f1b")
    args = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(step, config).lower(*args)
    order = schedule_lines(lowered)
    # m2, the zero-bubble loop's last stage: each backward in two parts,
    # the weight-gradient part W after the next forward's B.
    assert order["m2"].split() == ["F0", "B0", "F1", "B1", "W0", "F2", "B2",
                                   "W1", "F3", "B3", "W2", "W3"]
    assert "W" not in order["m4"]
    assert_equals_jit(lowered, step, args)


def python_loop_of_calls(**schedule):
    """The Python-loop pattern over model a: mpmd.call per microbatch,
    with `schedule=` when given."""
    def step(pa, xs, ys):
        la = 0.0
        for i in range(M):
            la = la + mpmd.call(
                lambda p: jax.value_and_grad(
                    lambda p: mlp_loss("a", p, xs[i], ys[i]))(p),
                call_counter=i, **schedule)(pa)[0]
        return la
    return step


def assert_forwards_first_on_m1(step):
    pa, _, xs, ys = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(step, config).lower(pa, xs, ys)
    assert schedule_lines(lowered)["m1"].split()[:M] == \
        [f"F{i}" for i in range(M)]
    assert_equals_jit(lowered, step, (pa, xs, ys))


def test_a_python_loop_of_calls_takes_a_comparator():
    assert_forwards_first_on_m1(
        python_loop_of_calls(schedule=forwards_first))


def test_a_loop_with_a_python_schedule_is_not_cached_across_processes():
    """Its token means nothing to another process."""
    from mpmd import partition_cache  # noqa: PLC0415

    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    placements = ({}, {}, {}, {})
    plain = 'mpmd.for ... {mpmd.loop_schedule = "1f1b"}'
    python = 'mpmd.for ... {mpmd.loop_schedule = "explicit:c0"}'
    assert partition_cache._key(config, plain, placements) is not None
    assert partition_cache._key(config, python, placements) is None


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
    order = schedule_lines(lowered)
    assert order["m3"].split() == [f"F{i}" for i in range(M)]
    got = lowered.compile()(pa, pb, xs, ys)
    for g, w in zip(got, jax.jit(step)(pa, pb, xs, ys)):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_a_block_gives_its_loops_a_schedule():
    """`with mpmd.loop_schedule(...)`: the loops of the block take it, as
    if each named it; a loop naming its own keeps that."""
    def step(pa, pb, xs, ys):
        with mpmd.loop_schedule("gpipe"):
            return two_loops(None, "1f1b")(pa, pb, xs, ys)

    named = two_loops("gpipe", "1f1b")

    args = data()
    config = mpmd.make_config(four_meshes(), ASSIGNMENT)
    lowered = mpmd.jit(step, config).lower(*args)
    order = schedule_lines(lowered)
    assert order == schedule_lines(mpmd.jit(named, config).lower(*args))
    assert order["m1"].split() == [f"F{i}" for i in range(M)] + \
        [f"B{i}" for i in range(M)]
    assert order["m3"].split() == ["F0", "F1", "B0", "F2", "B1", "F3", "B2",
                                   "B3"]
    assert_equals_jit(lowered, step, args)


def test_a_block_gives_the_calls_of_a_python_loop_a_schedule():
    def step(pa, xs, ys):
        with mpmd.loop_schedule(forwards_first):
            return python_loop_of_calls()(pa, xs, ys)

    assert_forwards_first_on_m1(step)
    with pytest.raises(mpmd.ConfigError, match="unknown loop schedule"):
        with mpmd.loop_schedule("zigzag"):
            pass
