"""make_config(topology, "auto"): named computations assigned to stages by
their cost, one stage per mesh. On a model of uneven blocks and a large
head the busiest mesh is the best contiguous split's and below the split by
count's, the step equals jax.jit, a memory limit changes the choice, and
bad requests name what is wrong."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

import mpmd
from meshes import MESHES, four_meshes

import models  # noqa: E402  (examples/, put on the path by meshes)

MICROBATCHES = 2


def data(microbatches=MICROBATCHES):
    params = models.init_uneven(jax.random.PRNGKey(0))
    shape = (microbatches, 4, 8)
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, 1024)
    targets = jax.random.randint(jax.random.PRNGKey(2), shape, 0, 1024)
    return params, tokens, targets


def lower(assignment, microbatches=MICROBATCHES, **options):
    config = mpmd.make_config(
        four_meshes(), assignment,
        partitioning_options={"pipeline_schedule": "1f1b", **options})
    return mpmd.jit(models.uneven_microbatched_step, config).lower(
        *data(microbatches))


def contiguous_splits(n, stages):
    """Every split of n names into `stages` non-empty runs, as the stage
    of each name."""
    for cuts in itertools.combinations(range(1, n), stages - 1):
        bounds = (0, *cuts, n)
        yield [s for s in range(stages)
               for _ in range(bounds[s + 1] - bounds[s])]


def busiest(costs, stage_of, stages=4):
    flops = [0.0] * stages
    for cost, stage in zip(costs, stage_of):
        flops[stage] += cost["forward_flops"] + cost["backward_flops"]
    return max(flops)


@pytest.fixture(scope="module")
def auto():
    return lower("auto")


def test_busiest_mesh_is_the_best_contiguous_splits(auto):
    choice = auto.auto_choice
    names = [cost["name"] for cost in choice.costs]
    assert names == models.uneven_names()
    best = min(busiest(choice.costs, split)
               for split in contiguous_splits(len(names), 4))
    chosen = busiest(choice.costs, choice.chosen["stage_of"])
    by_count = busiest(choice.costs, choice.by_count["stage_of"])
    assert chosen <= 1.1 * best
    assert chosen < by_count
    # The assignment is contiguous, one stage per mesh in topology order.
    stages = [auto.assignment[name] for name in names]
    assert stages == sorted(stages, key=lambda target: target[1])
    assert {mesh for mesh, _ in stages} == set(MESHES)
    assert all(mesh == MESHES[stage] for mesh, stage in stages)


def test_auto_step_equals_jax_jit(auto):
    args = data()
    got = auto.compile()(*args)
    want = jax.jit(models.uneven_microbatched_step)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=2e-5, atol=1e-6)


def test_report_compares_with_the_split_by_count(auto):
    report = auto.assignment_report()
    lines = report.splitlines()
    auto_line = next(line for line in lines if line.startswith("auto:"))
    count_line = next(line for line in lines if line.startswith("by count:"))
    step = [float(line.split("simulated step ")[1].split()[0])
            for line in (auto_line, count_line)]
    assert step[0] <= step[1], report
    for mesh in MESHES:
        assert sum(line.startswith(mesh + " ") for line in lines) == 2, report


def test_a_memory_limit_changes_the_choice(auto):
    choice = auto.auto_choice
    chosen_memory = max(choice.chosen["memory"])
    # A limit below the chosen split's fullest mesh that another split fits.
    limit = chosen_memory - 1
    limited = lower("auto", auto_memory_limit_bytes=limit)
    assert limited.assignment != auto.assignment
    assert max(limited.auto_choice.chosen["memory"]) <= limit
    # A limit nothing fits names the smallest one that does.
    with pytest.raises(mpmd.AssignmentError,
                       match=r"the smallest limit that fits is (\d+) bytes") \
            as caught:
        lower("auto", auto_memory_limit_bytes=1000)
    smallest = int(caught.value.args[0].split("fits is ")[1].split()[0])
    assert lower("auto", auto_memory_limit_bytes=smallest).auto_choice


def test_hand_assigned_names_stay_and_the_rest_is_placed():
    lowered = lower({"embed": "m1", "block7": "m3", "head": "auto",
                     **{f"block{i}": "auto" for i in range(7)}})
    assignment = lowered.assignment
    assert assignment["embed"] == ("m1", 0)
    assert assignment["block7"] == ("m3", 2)
    assert assignment["head"] == ("m4", 3)
    order = [assignment[name][1] for name in models.uneven_names()]
    assert order == sorted(order)


def test_hand_assignment_out_of_program_order_is_named():
    with pytest.raises(mpmd.AssignmentError,
                       match=r"'block0' \(stage 1\) comes before 'block5' "
                             r"\(stage 0\).*named computation 'block5'"):
        lower({"block0": "m2", "block5": "m1", "embed": "auto"})


def test_more_meshes_than_named_computations():
    config = mpmd.make_config(four_meshes(), "auto")

    def f(x):
        x = mpmd.named_computation(jax.numpy.tanh, name="a")(x)
        return mpmd.named_computation(jax.numpy.sin, name="b")(x)

    with pytest.raises(mpmd.AssignmentError,
                       match="cannot split 2 named computations into 4 "
                             "stages"):
        mpmd.jit(f, config).lower(jax.numpy.ones(4))


def test_bad_requests_are_config_errors():
    topology = four_meshes()
    with pytest.raises(mpmd.ConfigError, match="use it with make_config"):
        mpmd.make_config(topology, {"embed": "m1"},
                         partitioning_options={"auto_memory_limit_bytes": 10})
    with pytest.raises(mpmd.ConfigError, match="positive number of bytes"):
        mpmd.make_config(topology, "auto",
                         partitioning_options={"auto_memory_limit_bytes": 0})
    with pytest.raises(mpmd.ConfigError, match="or \"auto\""):
        mpmd.make_config(topology, "automatic")
    hand = mpmd.jit(models.uneven_microbatched_step, mpmd.make_config(
        topology, {name: "m1" for name in models.uneven_names()})).lower(
            *data())
    with pytest.raises(mpmd.ConfigError, match="assigned by hand"):
        hand.assignment_report()
    assert hand.auto_choice is None


@pytest.mark.parametrize("schedule, mesh_of_stage", [
    # Two stages per mesh in rounds: stage s on mesh s mod 4.
    ("interleaved-1f1b", lambda s: MESHES[s % 4]),
    # In a V: stages r and 7 - r on mesh r.
    ("zero-bubble-v", lambda s: MESHES[s if s < 4 else 7 - s]),
])
def test_schedules_with_several_stages_per_mesh(schedule, mesh_of_stage):
    lowered = lower("auto", microbatches=4, pipeline_schedule=schedule)
    stages = [lowered.assignment[name] for name in models.uneven_names()]
    assert [stage for _, stage in stages] == sorted(
        stage for _, stage in stages)
    assert {stage for _, stage in stages} == set(range(8))
    assert all(mesh == mesh_of_stage(stage) for mesh, stage in stages)
    report = lowered.assignment_report()
    assert "m1:s0" in report and "m1:s" in report.split("m1:s0", 1)[1]
    args = data(4)
    got = lowered.compile()(*args)
    want = jax.jit(models.uneven_microbatched_step)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=2e-5, atol=1e-6)


def test_hand_placement_on_a_mesh_of_several_stages_needs_the_stage():
    with pytest.raises(mpmd.AssignmentError,
                       match=r"assignment\['embed'\] is 'm1', but with this "
                             r"schedule mesh 'm1' holds stages \[0, 4\]"):
        lower({"embed": "m1", **{n: "auto" for n in
                                  models.uneven_names()[1:]}},
              microbatches=4, pipeline_schedule="interleaved-1f1b")
    lowered = lower({"embed": ("m1", 0), **{n: "auto" for n in
                                            models.uneven_names()[1:]}},
                    microbatches=4, pipeline_schedule="interleaved-1f1b")
    assert lowered.assignment["embed"] == ("m1", 0)
