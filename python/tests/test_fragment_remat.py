"""The remat option (Shardy's mpmd_fragment_remat / mpmd_merge_remat_fragments):
forward fragments recomputed right before their backward. The step equals
jax.jit; the plan recomputes what it says; the residuals no longer live
across the schedule."""

from __future__ import annotations

import collections

import pytest

import mpmd
from mpmd.config import ConfigError

from meshes import (MESHES, assert_trains_like_jit, four_meshes,
                    lower_transformer as lower)
import models


def kinds_per_mesh(plan) -> dict[str, collections.Counter]:
    kinds: dict[str, collections.Counter] = collections.defaultdict(
        collections.Counter)
    for step in plan.calls():
        if step.call_counter is not None:
            kinds[step.mesh][step.kind] += 1
    return kinds


@pytest.mark.parametrize("schedule,merge", [("1f1b", False), ("gpipe", True)])
def test_remat_trains_like_jax_jit(schedule, merge):
    plain, _ = lower(schedule)
    lowered, (params, tokens, targets) = lower(
        schedule, mpmd_fragment_remat=True, mpmd_merge_remat_fragments=merge)
    compiled = lowered.compile()
    assert_trains_like_jit(compiled, models.transformer_microbatched_step,
                           params, tokens, targets)

    before, after = kinds_per_mesh(plain.plan), kinds_per_mesh(lowered.plan)
    # Under 1F1B the last mesh runs each microbatch's forward and backward
    # back to back (no other microbatch in between): nothing to recompute
    # there. Under GPipe every mesh runs all forwards first.
    recomputing = MESHES if schedule == "gpipe" else MESHES[:-1]
    for mesh in MESHES:
        if mesh not in recomputing:
            assert after[mesh] == before[mesh]
        elif merge:
            # Each backward recomputes its forward: F+B programs.
            assert after[mesh]["FB"] == before[mesh]["B"] > 0
            assert after[mesh]["B"] == 0
            assert after[mesh]["F"] == before[mesh]["F"]
        else:
            # Each forward is recomputed once (R).
            assert after[mesh]["F"] == after[mesh]["R"] == before[mesh]["F"]
            assert after[mesh]["B"] == before[mesh]["B"]
    # The memory it saves, measured during a step: the residuals of the
    # microbatches in flight no longer live on the early meshes (1F1B's
    # first mesh holds 4 microbatches' worth without remat).
    _, without = plain.compile().run_with_memory(params, tokens, targets)
    _, with_remat = compiled.run_with_memory(params, tokens, targets)
    for mesh in ("m1", "m2"):
        assert with_remat[mesh].measured.step_bytes < \
            without[mesh].measured.step_bytes
        assert with_remat[mesh].measured.step_bytes == \
            with_remat[mesh].predicted.step_bytes


def test_remat_is_placed_after_the_schedule():
    # 1F1B on m2 (stage 1 of 4): F0 F1 F2 B0 F3 B1 B2 B3; with remat, each
    # backward is preceded by its recomputed forward, the order otherwise
    # unchanged.
    def order(lowered):
        return dict(line.split(": ", 1) for line in
                    lowered.schedule_text().splitlines() if ": " in line)
    plain = order(lower("1f1b")[0])
    remat = order(lower("1f1b", mpmd_fragment_remat=True)[0])
    assert plain["m2"] == "F0 F1 F2 B0 F3 B1 B2 B3"
    assert remat["m2"] == "F0 F1 F2 R0 B0 F3 R1 B1 R2 B2 R3 B3"
    assert remat["m4"] == plain["m4"]


def test_merge_remat_needs_remat():
    with pytest.raises(ConfigError, match=r"merge_remat .* needs remat "
                       r"\(mpmd_fragment_remat\) = True"):
        mpmd.make_config(four_meshes(), {"embed": "m1"},
                         partitioning_options={
                             "mpmd_merge_remat_fragments": True})
    config = mpmd.make_config(four_meshes(), {"embed": "m1"},
                              partitioning_options={"remat": True})
    assert config.partitioning_options["mpmd_fragment_remat"] is True
