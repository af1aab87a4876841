"""Memory per mesh: the plan walk's prediction against the arrays really
alive between the steps of a run (mpmd.runtime.memory), on the two-stage
MLP training step over 2 meshes of 4 CPU devices.

The rule checked: per mesh, the measured peak of the arrays the step makes
equals the predicted one (bytes per device and number of arrays); the
measured total differs from it only by what was alive before the run
(the caller's arrays), less the donated inputs."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

import meshes as _meshes  # noqa: F401  (puts examples/ on the path)
import models  # noqa: E402

from mpmd.config import make_config  # noqa: E402
from mpmd.errors import MpmdError  # noqa: E402
from mpmd.runtime.memory import (  # noqa: E402
    MemoryProfileError, MemoryRecorder, MemoryTable, predict_peaks,
    shard_bytes)
from mpmd.stages import jit  # noqa: E402

MESHES = ("m1", "m2")
FEW, MANY = 4, 16  # microbatches


def two_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def data(microbatches: int):
    """Parameters and stacked microbatches of `models.two_stage_mlp_step`
    (dim 8, hidden 16, out 4, batch 4) as NumPy arrays: generating them
    with jax.random would compile a kernel per shape."""
    rng = np.random.default_rng(microbatches)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    params = {"stage0": {"w1": normal(8, 16), "w2": normal(16, 8)},
              "stage1": {"w3": normal(8, 16), "w4": normal(16, 4)}}
    return params, normal(microbatches, 4, 8), normal(microbatches, 4, 4)


_COMPILED: dict[tuple, object] = {}


def compiled_step(schedule: str, microbatches: int, donate: bool = False):
    """The step lowered and compiled once per (schedule, m, donate), with
    its arguments placed on their meshes."""
    key = (schedule, microbatches, donate)
    if key not in _COMPILED:
        config = make_config(two_meshes(), {"stage0": "m1", "stage1": "m2"},
                             partitioning_options={
                                 "pipeline_schedule": schedule})
        args = data(microbatches)
        lowered = jit(models.two_stage_mlp_step, config,
                      donate_argnums=(0,) if donate else ()).lower(*args)
        _COMPILED[key] = (lowered.compile(),
                          lowered.function_named_shardings.inputs)
    return _COMPILED[key]


def placed_args(schedule: str, microbatches: int, donate: bool = False):
    compiled, shardings = compiled_step(schedule, microbatches, donate)
    args = jax.block_until_ready(jax.device_put(data(microbatches),
                                                tuple(shardings)))
    return compiled, args


@pytest.fixture(scope="module")
def tables():
    """(schedule, m) -> MemoryTable of one run."""
    result = {}
    for schedule in ("gpipe", "1f1b"):
        for m in (FEW, MANY):
            compiled, args = placed_args(schedule, m)
            _, result[schedule, m] = compiled.run_with_memory(*args)
    return result


# ------------------------------------------------- prediction = measurement

@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("m", [FEW, MANY])
def test_measured_step_peak_equals_the_prediction(tables, schedule, m):
    table = tables[schedule, m]
    assert table.meshes == MESHES
    for row in table:
        assert row.measured.step_bytes > 0
        assert row.measured.step_bytes == row.predicted.step_bytes, row
        assert row.measured.step_arrays == row.predicted.step_arrays, row


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_total_is_the_step_plus_what_was_alive_before(tables, schedule):
    """Nothing is donated: every array alive at the start (the placed
    inputs, and whatever else the process holds on these devices) stays
    alive, so the total peak is the start plus the step's peak (every
    device of a mesh holds the same shard sizes)."""
    for row in tables[schedule, MANY]:
        measured = row.measured
        assert measured.start_bytes > 0  # at least the placed inputs
        assert measured.bytes == measured.start_bytes + measured.step_bytes
        assert measured.arrays > measured.step_arrays


def test_the_plan_peak_counts_the_inputs_too(tables):
    for row in tables["1f1b", FEW]:
        assert row.predicted.bytes > row.predicted.step_bytes
        assert row.predicted.arrays > row.predicted.step_arrays


# -------------------------------------------------- schedules against m

def test_1f1b_peak_does_not_grow_with_microbatches_gpipe_does(tables):
    for mesh in MESHES:
        one_few = tables["1f1b", FEW][mesh].measured.step_bytes
        one_many = tables["1f1b", MANY][mesh].measured.step_bytes
        gpipe_few = tables["gpipe", FEW][mesh].measured.step_bytes
        gpipe_many = tables["gpipe", MANY][mesh].measured.step_bytes
        assert one_many == one_few, mesh  # at most 2 stages in flight
        assert gpipe_many > gpipe_few, mesh  # every forward before a backward
        assert one_many < gpipe_many, mesh


def test_gpipe_peak_grows_by_a_whole_microbatch_per_microbatch(tables):
    """GPipe keeps every microbatch's activations until its backward: from
    m to m' microbatches the peak grows by at least (m' - m) times what one
    microbatch sends from m1 to m2 (the hidden state m2 keeps)."""
    compiled, _ = compiled_step("gpipe", FEW)
    moved = [s for s in compiled.plan.steps if not hasattr(s, "program")
             and s.source == "m1"]
    per_microbatch = max(
        shard_bytes(s.type.shape, s.type.dtype, jax.sharding.NamedSharding(
            two_meshes()[s.target], jax.sharding.PartitionSpec()))
        for s in moved)
    grown = (tables["gpipe", MANY]["m2"].measured.step_bytes
             - tables["gpipe", FEW]["m2"].measured.step_bytes)
    assert grown >= (MANY - FEW) * per_microbatch


# ------------------------------------------------------ sampling details

def test_sampling_without_waiting_sees_the_same_arrays():
    """Which arrays are alive is Python's business: waiting for each step
    changes timing, not the samples."""
    compiled, args = placed_args("1f1b", FEW)
    flat = jax.tree.leaves(args)
    series = []
    for block in (True, False):
        recorder = MemoryRecorder.for_executor(compiled.executor, block=block)
        recorder.start()
        jax.block_until_ready(compiled.executor.run(flat, recorder=recorder))
        recorder.finish()
        series.append([(s.step, s.step_bytes, s.step_arrays)
                       for s in recorder.samples])
    assert len(series[0]) == len(compiled.plan.steps) + 1
    assert series[0] == series[1]


def test_donated_inputs_are_deleted_and_counted_once():
    compiled, args = placed_args("1f1b", FEW, donate=True)
    params = args[0]
    donated = {mesh: 0 for mesh in MESHES}
    for leaf in jax.tree.leaves(params):
        mesh = next(name for name, m in two_meshes().items()
                    if set(m.devices.flat) == leaf.sharding.device_set)
        donated[mesh] += shard_bytes(leaf.shape, leaf.dtype, leaf.sharding)
    assert all(donated.values())

    (new_params, _), table = compiled.run_with_memory(*args)
    assert all(leaf.is_deleted() for leaf in jax.tree.leaves(params))
    assert not any(x.is_deleted() for x in args[1:])
    last = table.samples[-1]
    for row in table:
        assert row.measured.step_bytes == row.predicted.step_bytes
        # After the last step the donated parameters are gone: what is left
        # of the start is the start less their bytes, and their buffers
        # count once, as the new parameters' (made by the step).
        assert (last.total_bytes[row.mesh] - last.step_bytes[row.mesh]
                == row.measured.start_bytes - donated[row.mesh]), row.mesh
    del new_params


def test_memory_stats_where_the_backend_has_them():
    """The largest `bytes_in_use` over the samples and the mesh's devices
    (a fake backend whose use grows by 1000 per sample)."""
    compiled, args = placed_args("1f1b", FEW)

    def stats(device):
        return {"bytes_in_use": 1000 * len(recorder.samples) + device.id}

    recorder = MemoryRecorder.for_executor(compiled.executor, stats=stats)
    recorder.start()
    jax.block_until_ready(compiled.executor.run(jax.tree.leaves(args),
                                                recorder=recorder))
    peaks = recorder.finish()
    last = len(compiled.plan.steps)  # samples: the start and every step
    for name, mesh in two_meshes().items():
        top = max(d.id for d in mesh.devices.flat)
        assert peaks[name].in_use_bytes == 1000 * last + top
        assert recorder.samples[0].in_use_bytes[name] == top


def test_no_memory_stats_says_so():
    compiled, args = placed_args("1f1b", FEW)
    recorder = MemoryRecorder.for_executor(
        compiled.executor,
        stats=lambda d: None if d.id == jax.devices()[5].id else
        {"bytes_in_use": 1})
    recorder.start()
    jax.block_until_ready(compiled.executor.run(jax.tree.leaves(args),
                                                recorder=recorder))
    peaks = recorder.finish()
    assert peaks["m1"].in_use_bytes == 1
    assert peaks["m2"].in_use_bytes is None  # one device had none
    if jax.devices()[0].memory_stats() is None:  # the CPU backend
        _, table = compiled.run_with_memory(*args)
        assert not table.stats_available
        assert all(row.measured.in_use_bytes is None for row in table)
        assert "not available on this backend" in table.text()


# --------------------------------------------------------------- errors

def test_asking_a_mesh_not_in_the_plan(tables):
    table = tables["1f1b", FEW]
    assert isinstance(table, MemoryTable)
    with pytest.raises(MemoryProfileError, match=r"'m9' is not in the plan"):
        table["m9"]
    assert issubclass(MemoryProfileError, MpmdError)


def test_recorder_misuse_names_the_step():
    compiled, _ = placed_args("1f1b", FEW)
    first, second = compiled.plan.steps[:2]
    recorder = MemoryRecorder.for_executor(compiled.executor)
    with pytest.raises(MemoryProfileError, match="finished before it started"):
        recorder.finish()
    with pytest.raises(MemoryProfileError,
                       match=rf"{first.label()}.* ended without starting"):
        recorder.after(first, [])
    recorder.before(first)
    with pytest.raises(MemoryProfileError, match="started before step"):
        recorder.before(second)
    with pytest.raises(MemoryProfileError, match="never ended"):
        recorder.finish()
    recorder.after(first, [])
    recorder.finish()
    with pytest.raises(MemoryProfileError, match="after finish"):
        recorder.before(second)
    with pytest.raises(MemoryProfileError, match="started twice"):
        recorder.start()


def test_prediction_without_a_program_names_it():
    compiled, _ = placed_args("1f1b", FEW)
    executor = dataclasses.replace(compiled.executor, programs={})
    first = compiled.plan.calls()[0]
    with pytest.raises(MemoryProfileError,
                       match=rf"program '{first.program}' on mesh "
                             rf"'{first.mesh}' is not compiled"):
        predict_peaks(executor)
