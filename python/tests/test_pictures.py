"""Honest pictures: a trace shows the traced step alone, from its first
dispatch. Work launched before it (an untraced step still running, as
every call returns before its work is done) is waited for before the trace
starts; an executor's first step is warmed up when the plan allows it, and
otherwise marked.

The bound on when the first slice may start comes from measurements on
XLA:CPU with the 4-mesh MLP below (width 256, batch 256, 2 CPU devices a
mesh): a traced step right after an untraced one, before the fix, opened
on a gap of 37-93 ms; after it, the first slice starts 0.36-0.57 ms after
the trace's start (the dispatch of the first call). With host timestamps
the wait went into the first call's slice: 6.7-11.5 ms after one untraced
step against 1.4-2.4 ms alone, before the fix; no longer than alone after.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from meshes import MESHES, four_meshes
import models  # noqa: E402  (examples/, put on the path by meshes)

from mpmd.config import make_config  # noqa: E402
from mpmd.runtime.trace import (CallEvent, Trace,  # noqa: E402
                                TraceRecorder, prepare_traced_run,
                                settle_devices)
from mpmd.stages import jit  # noqa: E402

WIDTH = BATCH = 256
FIRST_SLICE_BOUND_US = 5000.0


def mlp_data():
    params = models.init_mlp(jax.random.PRNGKey(0), [WIDTH] * 5)
    x = jax.random.normal(jax.random.PRNGKey(1), (BATCH, WIDTH))
    y = jax.random.normal(jax.random.PRNGKey(2), (BATCH, WIDTH))
    return params, x, y


def compile_mlp(donate: bool = False):
    """A fresh compile of the MLP training step over m1..m4 (a new
    executor: it has never run)."""
    params, x, y = mlp_data()
    config = make_config(four_meshes(),
                         {f"layer{i}": (MESHES[i], i) for i in range(4)})
    compiled = jit(models.mlp_train_step, config,
                   donate_argnums=(0,) if donate else ()).lower(
        params, x, y).compile()
    return compiled, (params, x, y)


def counting_runs(monkeypatch, executor) -> list[bool]:
    """Records every `executor.run`: True where it was given a recorder
    (the profiled step runs with one that annotates its steps)."""
    runs: list[bool] = []
    original = executor.run

    def run(inputs, recorder=None):
        runs.append(recorder is not None)
        return original(inputs, recorder=recorder)

    monkeypatch.setattr(executor, "run", run)
    return runs


def test_first_traced_step_after_compile_starts_at_its_first_dispatch():
    compiled, args = compile_mlp()
    plain = compiled(*args)  # not waited for: still running on the devices
    traced, trace = compiled.run_traced(*args, source="profiler")
    first, last = trace.step_window()
    assert first < FIRST_SLICE_BOUND_US, (
        f"the trace opens on {first:.0f} us without a call")
    assert last > first
    assert not trace.first_run
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_host_timestamps_do_not_count_earlier_work_in_the_first_call():
    compiled, args = compile_mlp()
    placed = jax.block_until_ready(compiled._place_inputs(args, {}))
    executor = compiled.executor
    jax.block_until_ready(executor.run(placed))  # a first step, waited for

    def traced_call_us() -> float:
        """The first call's slice in a host trace of one step."""
        recorder = TraceRecorder.for_plan(executor.plan)
        prepare_traced_run(executor, placed)
        recorder.start()
        jax.block_until_ready(executor.run(placed, recorder=recorder))
        return recorder.finish().calls[0].end_us

    alone = traced_call_us()
    for _ in range(3):  # untraced steps still running
        executor.run(placed)
    after_other_work = traced_call_us()
    assert after_other_work < 2 * alone + 2000, (
        f"the first call took {after_other_work:.0f} us after untraced "
        f"steps, {alone:.0f} us alone")


def test_a_first_step_is_warmed_up_when_the_plan_donates_nothing(
        monkeypatch):
    compiled, args = compile_mlp()
    runs = counting_runs(monkeypatch, compiled.executor)
    _, trace = compiled.run_traced(*args, source="profiler")
    assert runs == [False, True]  # the warm-up, then the profiled step
    assert not trace.first_run
    assert "first run" not in trace.to_svg()
    runs.clear()
    compiled.run_traced(*args, source="profiler")
    assert runs == [True]  # warm already


def test_a_first_step_that_donates_runs_once_and_says_so(monkeypatch):
    compiled, (params, x, y) = compile_mlp(donate=True)
    params = jax.tree.map(jnp.copy, params)
    runs = counting_runs(monkeypatch, compiled.executor)
    _, trace = compiled.run_traced(params, x, y, source="profiler")
    assert runs == [True]
    assert trace.first_run
    assert "first run after compiling" in trace.to_svg()
    assert trace.to_chrome_json()["otherData"]["first_run"] is True
    assert trace.from_dict(trace.to_dict()).first_run


def test_settle_devices_waits_for_work_launched_before():
    meshes = four_meshes()
    mesh = meshes["m1"]
    a = jax.device_put(jnp.ones((512, 512)),
                       NamedSharding(mesh, P("x")))

    @jax.jit
    def slow(a):
        return jax.lax.fori_loop(0, 40, lambda _, b: jnp.tanh(b @ a.T), a)

    jax.block_until_ready(slow(a))  # compiled
    result = slow(a)
    settle_devices(list(meshes.values()))
    assert result.is_ready()


def test_overlap_counts_time_with_two_meshes_busy():
    def call(mesh, start, end):
        return CallEvent(mesh, "f", "p", (), 0, None, start, end)

    trace = Trace(("m1", "m2", "m3"), [
        call("m1", 0, 10), call("m1", 10, 20),   # one busy run 0-20
        call("m2", 15, 30), call("m3", 18, 40),  # m2 and m3 overlap 18-30
    ], total_us=40)
    # Two or more busy: 15-30 (m1 with m2 to 20, m2 with m3 from 18).
    assert trace.overlap_us() == pytest.approx(15.0)
    turns = Trace(("m1", "m2"), [call("m1", 0, 5), call("m2", 5, 9),
                                 call("m1", 9, 12)], total_us=12)
    assert turns.overlap_us() == 0.0
