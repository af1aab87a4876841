"""A microbatched transformer trained 3 steps with each built-in schedule
over 4 meshes of 2 CPU devices equals jax.jit (rtol 1e-5), and the
schedule is what ran."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from meshes import MESHES, assert_trees_close, four_meshes
import models  # noqa: E402  (examples/, put on the path by meshes)

import mpmd  # noqa: E402
from mpmd.compiler import FragmentKind  # noqa: E402
from mpmd.config import ConfigError, make_config  # noqa: E402
from mpmd.schedules import ScheduleError  # noqa: E402
from mpmd.stages import jit  # noqa: E402

M = 4  # microbatches


def data(num_blocks: int):
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                     heads=2, layers=num_blocks, seq=8)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (M, 2, 8), 0, 32)
    targets = jax.random.randint(jax.random.PRNGKey(2), (M, 2, 8), 0, 32)
    return params, tokens, targets


def train_and_compare(config, num_blocks):
    params, tokens, targets = data(num_blocks)
    lowered = jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    compiled = lowered.compile()
    reference = jax.jit(models.transformer_microbatched_step)
    mp, ref = params, params
    for _ in range(3):
        mp, mp_loss = compiled(mp, tokens, targets)
        ref, ref_loss = reference(ref, tokens, targets)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp, ref)
    return lowered


def orders(lowered) -> dict[str, str]:
    return dict(line.split(": ", 1) if ": " in line else (line[:-1], "")
                for line in lowered.schedule_text().splitlines())


@pytest.mark.parametrize("schedule", [None, "gpipe", "1f1b"])
def test_schedules_train_like_jax_jit(schedule):
    config = make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": schedule})
    lowered = train_and_compare(config, 4)
    text = orders(lowered)
    # m1 runs embed and block0, m4 block3 and head: two fragments per
    # microbatch and direction there.
    if schedule == "gpipe":
        assert text["m1"] == ("F0 F0 F1 F1 F2 F2 F3 F3 "
                              "B0 B0 B1 B1 B2 B2 B3 B3")
        assert text["m3"] == "F0 F1 F2 F3 B0 B1 B2 B3"
    if schedule == "1f1b":
        # p - r warm-up forwards on mesh r, then one backward per forward.
        assert text["m2"] == "F0 F1 F2 B0 F3 B1 B2 B3"
        assert text["m3"] == "F0 F1 B0 F2 B1 F3 B2 B3"
        assert text["m4"] == ("F0 F0 B0 B0 F1 F1 B1 B1 "
                              "F2 F2 B2 B2 F3 F3 B3 B3")


def test_interleaved_trains_like_jax_jit():
    config = make_config(
        four_meshes(), models.interleaved_assignment(8, MESHES),
        partitioning_options={"pipeline_schedule": "interleaved-1f1b"})
    train_and_compare(config, 8)


def test_zero_bubble_trains_like_jax_jit():
    config = make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "zero-bubble-h1"})
    lowered = train_and_compare(config, 4)
    text = orders(lowered)
    # Backwards were split: weight-gradient parts (W) run on the later
    # meshes, after their input-gradient part.
    assert "W0" in text["m4"]
    assert text["m4"].split().index("W0") > text["m4"].split().index("B0")


def backward(fragment) -> bool:
    return fragment.kind != FragmentKind.FORWARD


def test_table_and_comparator_schedules():
    config = make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={
            # 1F1B written as the RFC's tuple comparator.
            "pipeline_schedule": lambda a, b: a.mesh == b.mesh and (
                (a.microbatch + (4 - int(a.mesh[1:]) + 1) * backward(a),
                 -backward(a)) <
                (b.microbatch + (4 - int(b.mesh[1:]) + 1) * backward(b),
                 -backward(b)))})
    lowered = train_and_compare(config, 4)
    builtin = make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b"})
    params, tokens, targets = data(4)
    reference = jit(models.transformer_microbatched_step, builtin).lower(
        params, tokens, targets)
    assert lowered.schedule_text() == reference.schedule_text()


def test_merge_last_stage():
    config = make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "merge_last_stage": True})
    lowered = train_and_compare(config, 4)
    last = [s for s in lowered.plan.calls() if s.mesh == "m4" and s.origins]
    assert len(last) == M  # one program call per microbatch
    assert all(s.kind == "FB" for s in last)


def test_unknown_builtin_schedule():
    with pytest.raises(ConfigError, match="unknown pipeline_schedule 'zigzag'"):
        make_config(four_meshes(), {}, partitioning_options={
            "pipeline_schedule": "zigzag"})


def test_table_errors():
    params, tokens, targets = data(4)
    assignment = models.transformer_assignment(4, MESHES)
    missing_mesh = make_config(four_meshes(), assignment, partitioning_options={
        "pipeline_schedule": {"m1": []}})
    with pytest.raises(ScheduleError, match="no order for mesh 'm2'"):
        jit(models.transformer_microbatched_step, missing_mesh).lower(
            params, tokens, targets)
    # A table naming a fragment that does not exist.
    bogus = {mesh: ["nothing#0"] for mesh in MESHES}
    config = make_config(four_meshes(), assignment, partitioning_options={
        "pipeline_schedule": bogus})
    with pytest.raises(mpmd.CompilerError, match=r"names 'nothing#0', which is not a fragment there"):
        jit(models.transformer_microbatched_step, config).lower(
            params, tokens, targets)
