"""Claims the docs make, checked: every Shardy:MPMD spelling of a pipeline
schedule is accepted under both keys (`pipeline_schedule` and
`mpmd_pipeline_schedule`) and as `make_config(pipeline_schedule=)`, and
gives the schedule our spelling gives (docs/shardy.md)."""

from __future__ import annotations

import pytest

from meshes import MESHES, four_meshes

from mpmd import pipeline_registry  # noqa: E402
from mpmd.config import ConfigError, make_config  # noqa: E402
from mpmd.schedules.spellings import (  # noqa: E402
    _SHARDY_REGISTRY_SCHEDULES, _SHARDY_SCHEDULES)

ASSIGNMENT = {f"layer{i}": (MESHES[i], i) for i in range(4)}
# Shardy's name -> what our spelling of it gives.
OURS = {"None": None, "1F1B": "1f1b", "GPipe": "gpipe",
        "ZeroBubbleH1": "zero-bubble-h1", "ZeroBubbleV": "zero-bubble-v",
        "DualPipeV": "dualpipe-v"}


def config(**kwargs):
    return make_config(four_meshes(), ASSIGNMENT, **kwargs)


def ours(name: str):
    """The schedule our own spelling of Shardy's `name` gives."""
    if name in OURS:
        return config(partitioning_options={
            "pipeline_schedule": OURS[name]}).partitioning_options
    return config(partitioning_options={
        "pipeline_schedule": pipeline_registry.get_pipeline_schedule(
            _SHARDY_REGISTRY_SCHEDULES[name])}).partitioning_options


def test_the_table_covers_every_shardy_name():
    assert set(_SHARDY_SCHEDULES) <= set(OURS)
    assert set(OURS) <= {*_SHARDY_SCHEDULES, *_SHARDY_REGISTRY_SCHEDULES}


@pytest.mark.parametrize("name", sorted([*_SHARDY_SCHEDULES,
                                         *_SHARDY_REGISTRY_SCHEDULES]))
def test_each_shardy_schedule_name_is_accepted_by_both_keys(name):
    expected = ours(name)
    by_shardy_key = config(partitioning_options={
        "mpmd_pipeline_schedule": name}).partitioning_options
    by_our_key = config(partitioning_options={
        "pipeline_schedule": name}).partitioning_options
    by_argument = config(pipeline_schedule=name).partitioning_options
    both = config(partitioning_options={"pipeline_schedule": name,
                                        "mpmd_pipeline_schedule": name})
    for options in (by_shardy_key, by_our_key, by_argument,
                    both.partitioning_options):
        assert options == expected
    if name in ("GPipe", "1F1B", "ZeroBubbleH1"):
        assert by_our_key.pipeline_schedule == OURS[name]


def test_the_same_schedule_in_two_spellings_is_not_a_conflict():
    options = config(pipeline_schedule="GPipe",
                     partitioning_options={"pipeline_schedule": "gpipe"})
    assert options.partitioning_options.pipeline_schedule == "gpipe"
    with pytest.raises(ConfigError, match="given twice"):
        config(pipeline_schedule="GPipe",
               partitioning_options={"pipeline_schedule": "1F1B"})


def test_an_unknown_name_lists_ours_and_shardys():
    with pytest.raises(ConfigError, match=r"unknown pipeline_schedule "
                       r"'Zigzag'.*'1f1b'.*Shardy's names.*'GPipe'"):
        config(partitioning_options={"pipeline_schedule": "Zigzag"})
