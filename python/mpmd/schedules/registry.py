"""Shardy:MPMD's registry of pipeline schedules, for use with this compiler.

    from mpmd import pipeline_registry
    schedule = pipeline_registry.get_pipeline_schedule("ONE_FWD_ONE_BWD")
    config = mpmd.make_config(topology, assignment,
                              pipeline_schedule=schedule)
    # or partitioning_options={"pipeline_schedule": schedule}

Each schedule is a `mpmd.pipeline.PipelineSchedule` whose one rule builder
turns a "runs before" predicate over pairs of fragments of a mesh into
schedule rules. The predicates (Shardy keeps them in `schedule_impl`) are
public here under Shardy's names. Notation below: p meshes, F(i) / B(i) the
forward / backward fragment of call counter (microbatch) i, s the stage of
the first fragment of the pair; after the split of backward fragments, Ba(i)
is the input-gradient part and Bw(i) the weight-gradient part. A predicate
orders only "scheduling units" (user fragments with a call counter whose
origins all have transpose count 0, or all 1); the other fragments keep
their place in the program order.

Schedules and what they need here:
- ONE_FWD_ONE_BWD, GPIPE, GPIPE_BUT_1F1B_FOR_LAST_MESH: stage = mesh index.
- ZERO_BUBBLE_H1, ZERO_BUBBLE_H2_{ZERO,HALF,FULL}_TX_LATENCY: split backward
  fragments (required option `mpmd_split_bwd_fragments`).
- CIRCULAR, CIRCULAR_WITH_REVERSED_BACKWARD: several stages per mesh (stage
  k on mesh k mod p); the reversed variant runs backward microbatches last
  to first, which the data flow allows only when gradients accumulate in
  that order (the transpose of a loop over microbatches).
- PARALLEL_PIPELINES_WITH_WRAP_AROUND: forward-only programs with one
  fragment per call counter on each mesh (ValueError otherwise, as in
  Shardy).

Beyond Shardy's registry (`mpmd.v_schedules`): ZERO_BUBBLE_V and DUALPIPE_V
place 2p stages in a V (stages r and 2p - 1 - r on mesh r) and split
backward fragments; `zero_bubble_v_schedule(transfer=..., max_in_flight=...)`
builds ZB-V for a given transfer time and memory bound.
"""

from __future__ import annotations

import functools
import types
from typing import Callable, Mapping

from mpmd.schedules import rules as pipeline
from mpmd.schedules import v as v_schedules
from mpmd.errors import MpmdError
from mpmd.schedules.core import ScheduleError
from mpmd.schedules.from_costs import cost_driven

__all__ = [
    "PIPELINE_SCHEDULES", "UnknownScheduleError",
    "dualpipe_v_schedule", "zero_bubble_v_schedule",
    "circular_schedule_predicate_base", "get_pipeline_schedule",
    "gpipe_schedule_predicate",
    "gpipe_with_1f1b_on_last_mesh_schedule_predicate",
    "latency_hiding_zero_bubble_h2_schedule_predicate",
    "one_fwd_one_bwd_schedule_predicate",
    "parallel_pipelines_with_wraparound_schedule_predicate",
    "zero_bubble_h1_schedule_predicate", "zero_bubble_h2_schedule_predicate",
]

FragmentInfo = pipeline.FragmentInfo
PipelineContext = pipeline.PipelineContext


class UnknownScheduleError(MpmdError, KeyError):
    """No schedule of that name (a KeyError, as Shardy raises)."""

    def __str__(self) -> str:  # KeyError would quote the message.
        return str(self.args[0]) if self.args else ""


def _is_weight_gradient(fragment: FragmentInfo) -> bool:
    return fragment.split_type == pipeline.SplitFragmentType.DROP_TRANSFERRED


# -- Predicates: f1 must run before f2 (same mesh). -------------------------

def gpipe_schedule_predicate(f1: FragmentInfo, f2: FragmentInfo,
                             _: PipelineContext) -> bool:
    """GPipe: every forward before every backward, each in call-counter
    order: (transpose count, call counter) ascending. Needs no stage."""
    t1 = pipeline.maybe_unique_transpose_count(f1)
    t2 = pipeline.maybe_unique_transpose_count(f2)
    if None in (t1, t2, f1.call_counter, f2.call_counter):
        return False
    return (t1, f1.call_counter) < (t2, f2.call_counter)


def one_fwd_one_bwd_schedule_predicate(f1: FragmentInfo, f2: FragmentInfo,
                                       context: PipelineContext) -> bool:
    """1F1B on the mesh of stage s: p - s forwards, then alternately one
    backward and one forward: B(i) before F(i + p - s) and F(i + p - s - 1)
    before B(i); forwards (and backwards) in call-counter order."""
    info = pipeline.get_staged_scheduling_info(f1, f2, "1F1B scheduling")
    if info is None:
        return False
    c1, t1, c2, t2 = info
    p, s = context.num_meshes, f1.stage_id
    if (t1, t2) == (1, 0):
        return c2 == c1 + p - s
    if (t1, t2) == (0, 1):
        return c1 == c2 + p - s - 1
    return t1 == t2 and c1 < c2


def gpipe_with_1f1b_on_last_mesh_schedule_predicate(
        f1: FragmentInfo, f2: FragmentInfo, context: PipelineContext) -> bool:
    """GPipe, except that the last stage (p - 1) runs 1F1B (which there is
    F(i) B(i) F(i + 1) ...)."""
    info = pipeline.get_staged_scheduling_info(
        f1, f2, "GPipe with 1F1B on the last mesh scheduling")
    if info is None:
        return False
    if f1.stage_id == context.num_meshes - 1:
        return one_fwd_one_bwd_schedule_predicate(f1, f2, context)
    return gpipe_schedule_predicate(f1, f2, context)


def circular_schedule_predicate_base(f1: FragmentInfo, f2: FragmentInfo,
                                     context: PipelineContext,
                                     reverse_backward: bool) -> bool:
    """Circular pipelining (several stages per mesh): all forwards, then all
    backwards. Microbatches go in phases of p (phase = call counter // p).
    Forwards: by (phase, stage, call counter) ascending. Backwards: by
    phase ascending, stage descending, call counter ascending; or, with
    `reverse_backward`, by (phase, stage, call counter) descending."""
    info = pipeline.get_staged_scheduling_info(
        f1, f2, "circular pipelining scheduling")
    if info is None:
        return False
    c1, t1, c2, t2 = info
    if t1 != t2:
        return t1 < t2
    p = context.num_meshes
    key1 = (c1 // p, f1.stage_id, c1)
    key2 = (c2 // p, f2.stage_id, c2)
    if t1 == 0:
        return key1 < key2
    if reverse_backward:
        return key1 > key2
    return (key1[0], -key1[1], key1[2]) < (key2[0], -key2[1], key2[2])


def zero_bubble_h1_schedule_predicate(f1: FragmentInfo, f2: FragmentInfo,
                                      context: PipelineContext) -> bool:
    """ZB-H1 (backward split into Ba and Bw): F and Ba in 1F1B order on the
    mesh of stage s (Ba(i) before F(i + p - s), F(i + p - s - 1) before
    Ba(i)); Bw(i) after Ba(i + s), before Ba(i + s + 1), and before
    F(i + p). A backward left whole (e.g. on the first stage) counts as Ba.
    """
    info = pipeline.get_staged_scheduling_info(f1, f2,
                                               "ZeroBubbleH1 scheduling")
    if info is None:
        return False
    c1, t1, c2, t2 = info
    p, s = context.num_meshes, f1.stage_id
    w1, w2 = _is_weight_gradient(f1), _is_weight_gradient(f2)
    if t1 == 1 and t2 == 0:
        # Ba(i) < F(i + p - s); Bw(i) < F(i + p).
        return c2 - c1 == (p if w1 else p - s)
    if t1 == 0 and t2 == 1:
        # F(i + p - s - 1) < Ba(i); nothing ties F to a Bw directly.
        return not w2 and c1 - c2 == p - s - 1
    if t1 == 1 and t2 == 1 and w1 != w2:
        # Ba(i + s) < Bw(i); Bw(i) < Ba(i + s + 1).
        return c2 - c1 == s + 1 if w1 else c1 - c2 == s
    return False


def zero_bubble_h2_schedule_predicate(
        f1: FragmentInfo, f2: FragmentInfo, context: PipelineContext,
        init_fwd_per_stage_fn: Callable[[int], int]) -> bool:
    """ZB-H2: with n = init_fwd_per_stage_fn(s) warm-up forwards on stage s
    and n' = init_fwd_per_stage_fn(p - s - 1) (the schedule is symmetric):
    F(i) before every backward for i < n; then Ba(i) before F(i + n) and
    F(i + n - 1) before Ba(i); Ba(i + n' - 1) before Bw(i) and Bw(i) before
    Ba(i + n')."""
    info = pipeline.get_staged_scheduling_info(f1, f2,
                                               "ZeroBubbleH2 scheduling")
    if info is None:
        return False
    c1, t1, c2, t2 = info
    s = f1.stage_id
    warmup = init_fwd_per_stage_fn(s)
    mirrored = init_fwd_per_stage_fn(context.num_meshes - s - 1)
    w1, w2 = _is_weight_gradient(f1), _is_weight_gradient(f2)
    if t1 == 0 and t2 == 1 and c1 < warmup:
        return True
    if t1 == 1 and not w1 and t2 == 0 and c2 >= warmup:
        return c2 - c1 == warmup
    if t1 == 0 and c1 >= warmup and t2 == 1 and not w2:
        return c1 - c2 == warmup - 1
    if t1 == 1 and t2 == 1 and not w1 and w2:
        return c1 - c2 == mirrored - 1
    if t1 == 1 and t2 == 1 and w1 and not w2:
        return c2 - c1 == mirrored
    return False


def latency_hiding_zero_bubble_h2_schedule_predicate(
        f1: FragmentInfo, f2: FragmentInfo, context: PipelineContext,
        latency_stage_fraction: float) -> bool:
    """ZB-H2 whose warm-up hides transfers: `latency_stage_fraction` (in
    [0, 1], ValueError otherwise) is a transfer's time over a stage's
    compute time. Stage s runs int(2(p - s) - 1 + 2(p - s - 1) * fraction)
    warm-up forwards: the compute and the transfers on the path of the first
    microbatch to its first backward there."""
    if not 0.0 <= latency_stage_fraction <= 1.0:
        raise ValueError("latency_stage_fraction must be between 0.0 and 1.0")
    p = context.num_meshes

    def warmup(stage: int) -> int:
        compute = 2.0 * (p - stage) - 1.0
        transfers = 2.0 * (p - stage - 1)
        return int(compute + transfers * latency_stage_fraction)

    return zero_bubble_h2_schedule_predicate(f1, f2, context, warmup)


def parallel_pipelines_with_wraparound_schedule_predicate(
        f1: FragmentInfo, f2: FragmentInfo, _: PipelineContext) -> bool:
    """Parallel pipelines: microbatch i enters the pipeline at the mesh of
    stage i and wraps around. On the mesh of stage s the order is F(s),
    then the others in descending call counter, wrapping: F(s), F(s - 1),
    ..., F(0), F(n - 1), ..., F(s + 1). Forward fragments only, one per call
    counter (ValueError otherwise)."""
    info = pipeline.get_staged_scheduling_info(
        f1, f2, "parallel pipelines scheduling")
    if info is None:
        return False
    c1, t1, c2, t2 = info
    if t1 != 0 or t2 != 0:
        raise ValueError(
            "Only forward fragments supported for parallel pipelines")
    if c1 == c2:
        raise ValueError(
            "Should not have duplicate call counter in parallel pipelines")
    s = f1.stage_id
    if s in (c1, c2):
        return c1 == s
    if (c1 > s) == (c2 > s):
        return c1 > c2
    return c1 < c2


# -- The registry. ----------------------------------------------------------

def _by_predicate(before_pred, **options) -> pipeline.PipelineSchedule:
    return pipeline.PipelineSchedule(
        schedule_merge_rule_builders=[functools.partial(
            pipeline.build_schedule_rules_from_predicate,
            before_pred=before_pred)],
        required_mpmd_options=types.MappingProxyType(options))


def _zero_bubble_h2(fraction: float) -> pipeline.PipelineSchedule:
    return _by_predicate(
        functools.partial(latency_hiding_zero_bubble_h2_schedule_predicate,
                          latency_stage_fraction=fraction),
        mpmd_split_bwd_fragments=True)


def zero_bubble_v_schedule(*, transfer: float = 0.0,
                           max_in_flight: int | None = None,
                           costs=None, weight_memory: float = 1.0
                           ) -> pipeline.PipelineSchedule:
    """ZB-V (see `mpmd.v_schedules`), its order built for a transfer time
    of `transfer` (in units of one forward of a stage) and at most
    `max_in_flight` microbatches in flight per mesh (default: the number of
    meshes, 1F1B's activation memory). More in flight hides more latency.

    With `costs` (a `mpmd.runtime.simulate.Costs`, its transfer time
    included, or a cost per plan step as `cost_driven` takes), the order
    is built for them by the list scheduler instead
    (`mpmd.schedules.cost_driven` on the assignment's V, with
    `max_in_flight` microbatches per mesh, default p, and
    `weight_memory`, the share of a stage's activations kept between its
    B and its W): the unit-cost order loses to it when F, B and W differ
    (the Zero Bubble paper's 6.2B costs, p = 16: 0.155 against 0.065)."""
    if costs is not None:
        if transfer:
            raise ScheduleError(
                "zero_bubble_v_schedule takes the transfer time from "
                "`costs` when they are given; leave `transfer` out")
        return cost_driven(costs, in_flight=(
            max_in_flight if max_in_flight is not None else _meshes),
            weight_memory=weight_memory)
    if weight_memory != 1.0:
        raise ScheduleError(
            "zero_bubble_v_schedule's weight_memory applies to orders "
            "built from `costs`; give costs too")

    def rules(fragment_infos, context):
        return v_schedules.zero_bubble_v_schedule_rules(
            fragment_infos, context, transfer=transfer,
            max_in_flight=max_in_flight)

    return pipeline.PipelineSchedule(
        schedule_merge_rule_builders=[rules],
        required_mpmd_options=types.MappingProxyType(
            {"mpmd_split_bwd_fragments": True}))


def _meshes(num_meshes: int) -> int:
    """ZB-V's default memory bound: p microbatches per mesh."""
    return num_meshes


def dualpipe_v_schedule() -> pipeline.PipelineSchedule:
    """DualPipe-V (see `mpmd.v_schedules`); needs m >= 2p microbatches."""
    return pipeline.PipelineSchedule(
        schedule_merge_rule_builders=[v_schedules.dualpipe_v_schedule_rules],
        required_mpmd_options=types.MappingProxyType(
            {"mpmd_split_bwd_fragments": True}))


PIPELINE_SCHEDULES: Mapping[str, pipeline.PipelineSchedule] = \
    types.MappingProxyType({
        "ONE_FWD_ONE_BWD": _by_predicate(one_fwd_one_bwd_schedule_predicate),
        "GPIPE": _by_predicate(gpipe_schedule_predicate),
        "GPIPE_BUT_1F1B_FOR_LAST_MESH": _by_predicate(
            gpipe_with_1f1b_on_last_mesh_schedule_predicate),
        "ZERO_BUBBLE_H1": _by_predicate(zero_bubble_h1_schedule_predicate,
                                        mpmd_split_bwd_fragments=True),
        "ZERO_BUBBLE_H2_ZERO_TX_LATENCY": _zero_bubble_h2(0.0),
        "ZERO_BUBBLE_H2_HALF_TX_LATENCY": _zero_bubble_h2(0.5),
        "ZERO_BUBBLE_H2_FULL_TX_LATENCY": _zero_bubble_h2(1.0),
        "PARALLEL_PIPELINES_WITH_WRAP_AROUND": _by_predicate(
            parallel_pipelines_with_wraparound_schedule_predicate),
        "CIRCULAR": _by_predicate(functools.partial(
            circular_schedule_predicate_base, reverse_backward=False)),
        "CIRCULAR_WITH_REVERSED_BACKWARD": _by_predicate(functools.partial(
            circular_schedule_predicate_base, reverse_backward=True)),
        # Ours, beyond Shardy's registry.
        "ZERO_BUBBLE_V": zero_bubble_v_schedule(),
        "DUALPIPE_V": dualpipe_v_schedule(),
    })


def get_pipeline_schedule(schedule_name: str) -> pipeline.PipelineSchedule:
    """The registered schedule of that name; UnknownScheduleError (a
    KeyError and an MpmdError) listing the valid names otherwise."""
    try:
        return PIPELINE_SCHEDULES[schedule_name]
    except KeyError:
        raise UnknownScheduleError(
            f"Unknown pipeline schedule {schedule_name!r}. Valid schedules "
            f"are: {sorted(PIPELINE_SCHEDULES)!r}") from None
