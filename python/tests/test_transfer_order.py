"""Transfers are issued as soon as their value is made: in the execution
plan each transfer follows its producer directly (mpmd-issue-transfers-early),
so no mesh waits for a transfer queued behind its source mesh's next work."""

from __future__ import annotations

import jax

import mpmd
from mpmd.runtime.plan import CallStep, TransferStep

from meshes import MESHES, four_meshes
import models


def test_every_transfer_follows_its_producer():
    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b"})
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                     heads=2, layers=4, seq=8)
    shape = (4, 2, 8)
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, 32)
    plan = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, tokens).plan
    producer: dict[int, int] = {}
    checked = 0
    for index, step in enumerate(plan.steps):
        if isinstance(step, CallStep):
            for value in step.outputs:
                producer[value] = index
            continue
        assert isinstance(step, TransferStep)
        if step.input not in producer:
            continue  # an argument: issued before any call that follows
        # Between the producer and this transfer: only transfers.
        between = plan.steps[producer[step.input] + 1:index]
        assert all(isinstance(s, TransferStep) for s in between), (
            index, [getattr(s, "program", "transfer") for s in between])
        checked += 1
    # 1F1B over 4 meshes sends each microbatch's activation and gradient
    # across every boundary.
    assert checked >= 2 * 3 * 4
