"""The partition result (MPMD module and plan) in the user's persistent
cache: a second lower of the same program and configuration reads it, with
the partitioner's warnings given again; another option, or a schedule given
as code, partitions again."""

from __future__ import annotations

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from meshes import MESHES, four_meshes, transformer_data


@pytest.fixture
def cache_dir(tmp_path):
    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        yield tmp_path
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)


def _transformer(schedule):
    import models

    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": schedule})
    return mpmd.jit(models.transformer_microbatched_step, config)


def test_a_second_lower_reads_the_partition(cache_dir):
    args = transformer_data(4, 4)
    first = _transformer("1f1b").lower(*args)
    assert not first.partition_cached
    entries = os.listdir(cache_dir / "mpmd-partition")
    assert len(entries) == 1
    second = _transformer("1f1b").lower(*args)
    assert second.partition_cached
    assert second.as_text() == first.as_text()
    assert second.plan == first.plan
    got = second.compile()(*args)
    want = first.compile()(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))

    other = _transformer("gpipe").lower(*args)
    assert not other.partition_cached
    assert len(os.listdir(cache_dir / "mpmd-partition")) == 2


def test_no_cache_without_the_users_cache_dir():
    assert not jax.config.jax_compilation_cache_dir
    args = transformer_data(2, 4)
    _transformer("1f1b").lower(*args)
    assert not _transformer("1f1b").lower(*args).partition_cached


def test_a_schedule_given_as_code_is_not_cached(cache_dir):
    import models

    def before(a, b):  # GPipe: microbatch order, forwards first
        return (a.kind != "forward", a.call_counter) < (
            b.kind != "forward", b.call_counter)

    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": before})
    args = transformer_data(2, 4)
    step = models.transformer_microbatched_step
    mpmd.jit(step, config).lower(*args)
    assert not mpmd.jit(step, config).lower(*args).partition_cached
    assert not (cache_dir / "mpmd-partition").exists()


def test_the_partitioners_warnings_are_given_again(cache_dir):
    topology = four_meshes()
    config = mpmd.make_config(topology, {"f": "m1", "g": "m2"},
                              partitioning_options={"pipeline_schedule": "1f1b"})

    def step(x):
        y = mpmd.named_computation(jnp.tanh, name="f")(x)
        return mpmd.named_computation(jnp.sin, name="g")(y)

    x = jnp.ones((4, 4))
    for cached in (False, True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lowered = mpmd.jit(step, config).lower(x)
        assert lowered.partition_cached == cached
        messages = [str(w.message) for w in caught]
        assert any("has nothing to order" in m for m in messages), messages
        # At the user's line, as when partitioned.
        assert all(w.filename == __file__ for w in caught
                   if "has nothing to order" in str(w.message))
