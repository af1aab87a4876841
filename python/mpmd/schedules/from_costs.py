"""`cost_driven(costs, in_flight=N)`: a `PipelineSchedule` (`mpmd.pipeline`)
whose order comes from the list scheduler of
`mpmd.schedules.list_schedule`, run on the program's own fragments: the
stages of the assignment, each fragment's cost from `costs` (a `Costs`, or
a function of a `mpmd.runtime.plan.CallStep` such as `costs_from_trace`'s),
all meshes ordered at once. Usable as `pipeline_schedule` and as a loop's
schedule.
"""

from __future__ import annotations

import collections
import types
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

from mpmd.runtime.plan import CallStep
from mpmd.runtime.simulate import Costs
from mpmd.schedules import rules as pipeline
from mpmd.schedules.core import ScheduleError
from mpmd.schedules.list_schedule import schedule_orders
from mpmd.schedules.orders import Op, Pipeline, Placement, _transfer_of

__all__ = ["CostDrivenSchedule", "cost_driven"]

# -- As a PipelineSchedule over a program's fragments. -----------------------

def _kind(fragment: pipeline.FragmentInfo) -> str | None:
    unit = pipeline.get_scheduling_unit_info(fragment)
    if unit is None:
        return None
    if unit[1] == 0:
        return "F"
    if fragment.split_type == pipeline.SplitFragmentType.DROP_TRANSFERRED:
        return "W"
    return "B"


def _step_of(fragment: pipeline.FragmentInfo, kind: str) -> CallStep:
    """A plan step standing for the fragment, for cost functions of plan
    steps (`Costs.of`, `costs_from_trace`): its origins, mesh, stage, call
    counter and whether it is a weight-gradient part."""
    from mpmd.runtime.origins import Origin  # noqa: PLC0415

    return CallStep(
        program="", mesh=fragment.mesh_name, inputs=(), outputs=(),
        origins=tuple(Origin(o.computation_name, o.transpose_count)
                      for o in fragment.origins), free=(),
        call_counter=fragment.call_counter, stage=fragment.stage_id,
        weight_gradient=kind == "W")


class _Program(NamedTuple):
    pipeline: Pipeline
    meshes: tuple[str, ...]                  # mesh index -> name
    fragments: dict[Op, list[pipeline.FragmentInfo]]
    costs: dict[Op, float]


def _program(fragment_infos: Sequence[pipeline.FragmentInfo],
             step_cost: Callable[[CallStep], float],
             whole_extra: float) -> _Program | None:
    """The pipeline the fragments form: stages from their stage ids (or,
    where none is given, the meshes in the order the first microbatch's
    forward visits them), one op per (kind, stage, microbatch) with the
    fragments (program order) and summed costs of each; a backward left
    whole (no W on its stage) costs `whole_extra` more per fragment."""
    units = [(f, _kind(f)) for f in fragment_infos]
    units = [(f, k) for f, k in units if k is not None]
    if not units:
        return None
    if any(f.stage_id is None for f, _ in units):
        visited: list[str] = []
        first = min(f.call_counter for f, _ in units)
        for f, k in units:
            if k == "F" and f.call_counter == first and \
                    (not visited or visited[-1] != f.mesh_name):
                if f.mesh_name in visited:
                    raise ScheduleError(
                        "cost_driven needs the stage of each named "
                        "computation where a mesh holds several: give "
                        "(mesh, stage) in the assignment")
                visited.append(f.mesh_name)
        stage_of = {name: s for s, name in enumerate(visited)}

        def stage(f: pipeline.FragmentInfo) -> int:
            if f.mesh_name not in stage_of:
                raise ScheduleError(
                    f"cost_driven cannot tell the stage of mesh "
                    f"{f.mesh_name!r}: give (mesh, stage) in the assignment")
            return stage_of[f.mesh_name]
    else:
        def stage(f: pipeline.FragmentInfo) -> int:
            return f.stage_id
    stage_ids = sorted({stage(f) for f, _ in units})
    index = {sid: n for n, sid in enumerate(stage_ids)}
    mesh_of_stage: dict[int, str] = {}
    for f, _ in units:
        known = mesh_of_stage.setdefault(index[stage(f)], f.mesh_name)
        if known != f.mesh_name:
            raise ScheduleError(
                f"cost_driven needs each stage on one mesh; stage "
                f"{stage(f)} has fragments on {known!r} and "
                f"{f.mesh_name!r}")
    meshes: list[str] = []
    for s in range(len(stage_ids)):
        if mesh_of_stage[s] not in meshes:
            meshes.append(mesh_of_stage[s])
    counters = sorted({f.call_counter for f, _ in units})
    m = len(counters)
    if counters != list(range(m)):
        raise ScheduleError(f"cost_driven needs call counters 0 .. m - 1; "
                            f"got {counters[:8]}")
    fragments: dict[Op, list[pipeline.FragmentInfo]] = collections.defaultdict(
        list)
    for f, k in units:
        fragments[Op(k, index[stage(f)], f.call_counter)].append(f)
    stages = len(stage_ids)
    has_b = [any((Op("B", s, i) in fragments) for i in range(m))
             for s in range(stages)]
    has_w = [any((Op("W", s, i) in fragments) for i in range(m))
             for s in range(stages)]
    placement = Placement(tuple(meshes.index(mesh_of_stage[s])
                                for s in range(stages)), len(meshes))
    program = Pipeline(placement, m, tuple(has_b), tuple(has_w))
    expected = set(program.ops())
    odd = set(fragments) ^ expected
    if odd:
        sample = sorted(str(op) for op in odd)[:6]
        raise ScheduleError(
            f"cost_driven needs every stage to run each microbatch's "
            f"forward, backward and (where split on one microbatch, on "
            f"all) weight gradient; these are missing or extra: {sample}")
    costs = {}
    for op, frags in fragments.items():
        extra = whole_extra if op.kind == "B" and not has_w[op.stage] else 0.0
        costs[op] = sum(step_cost(_step_of(f, op.kind)) + extra
                        for f in frags)
    return _Program(program, tuple(meshes), dict(fragments), costs)


class _Rules:
    """The rule builder of a cost-driven schedule: orders the fragments of
    every mesh at once (`whole_program`, see `mpmd.pipeline`), caching the
    orders of the last program it saw (the compiler asks for the order and
    for the merges with the same fragments)."""

    whole_program = True

    def __init__(self, schedule: "CostDrivenSchedule"):
        self._schedule = schedule
        self._cache: tuple[Any, list] | None = None

    def __call__(self, fragment_infos: Sequence[pipeline.FragmentInfo],
                 context: pipeline.PipelineContext):
        key = tuple(fragment_infos)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1], []
        schedule = self._schedule
        given = schedule.costs
        if isinstance(given, Costs):
            # Costs' backward is the input-gradient part here; a backward
            # left whole computes the weight gradient too.
            program = _program(fragment_infos, given.of,
                               given.weight_gradient)
        else:
            program = _program(fragment_infos, given, 0.0)
        rules: list[pipeline.FragmentScheduleRule] = []
        if program is not None:
            in_flight = schedule.in_flight
            if callable(in_flight):
                in_flight = in_flight(program.pipeline.num_meshes)
            orders = schedule_orders(
                program.pipeline, program.costs.__getitem__,
                in_flight=in_flight, weight_memory=schedule.weight_memory,
                transfer=_transfer_of(schedule.costs, schedule.transfer),
                objective=schedule.objective)
            for seq in orders:
                ordered = [f for op in seq for f in program.fragments[op]]
                if len(ordered) >= 2:
                    rules.append(pipeline.FragmentScheduleRule(
                        ordered_fragments=ordered))
        self._cache = (key, rules)
        return rules, []


@dataclass(frozen=True, eq=False)
class CostDrivenSchedule(pipeline.PipelineSchedule):
    """A `PipelineSchedule` whose order the list scheduler builds for the
    program's fragments; `cost_driven` makes one. Its fields say how."""

    costs: Costs | Callable[[CallStep], float] = Costs(forward=1, backward=1)
    in_flight: int | Callable[[int], int] | None = None
    weight_memory: float = 1.0
    transfer: float | None = None
    objective: str = "span"


def cost_driven(costs: Costs | Callable[[CallStep], float] = Costs(
        forward=1, backward=1), *, in_flight: int | Callable[[int], int]
        | None, weight_memory: float = 1.0, transfer: float | None = None,
        split_backward: bool = True, objective: str = "span"
        ) -> CostDrivenSchedule:
    """A pipeline schedule built from costs by the list scheduler of
    `mpmd.schedules.list_schedule` (its docstring says how), for
    `pipeline_schedule=` or a loop's `schedule=`.

    `costs`: a `mpmd.runtime.simulate.Costs` (F, B, W and transfer times),
    or the cost of a plan step, e.g. `costs_from_trace(trace)` of a
    measured run: each fragment costs what it returns for a step with the
    fragment's origins, stage, call counter and kind (so measured
    durations by label apply). `in_flight`: at most this many
    microbatches' activations held per mesh (an int, a function of the
    number of meshes, or None for no bound); the Zero Bubble paper's ZB-1p
    is p, ZB-2p 2p. `weight_memory`: the share of a stage's activations
    still held between its B and its W (default 1: all). `transfer`: the
    time of a transfer between meshes (default: the Costs' transfer, or
    0). `split_backward`: order B and W apart (requires the option
    `split_backward`, which the schedule sets); False orders whole
    backwards. `objective`: "span" (default) minimizes the longest mesh
    span (steps back to back, the paper's bubble rate), "step" one step's
    time.

    The stages come from the assignment (interleaved and V placements are
    scheduled as such); a backward left whole where B and W are split
    elsewhere is one op costing B + W under `Costs`."""
    if objective not in ("span", "step"):
        raise ScheduleError(f"objective is 'span' or 'step'; got "
                            f"{objective!r}")
    if not (in_flight is None or callable(in_flight) or (
            isinstance(in_flight, int) and in_flight >= 1)):
        raise ScheduleError(f"in_flight must be a positive number of "
                            f"microbatches; got {in_flight!r}")
    if not 0.0 <= weight_memory <= 1.0:
        raise ScheduleError(f"weight_memory is a share of a stage's "
                            f"activations, in [0, 1]; got {weight_memory!r}")
    schedule = CostDrivenSchedule(
        required_mpmd_options=types.MappingProxyType(
            {"mpmd_split_bwd_fragments": split_backward}),
        costs=costs, in_flight=in_flight, weight_memory=weight_memory,
        transfer=transfer, objective=objective)
    # The builder refers to the schedule, which is frozen: set it after.
    object.__setattr__(schedule, "schedule_merge_rule_builders",
                       (_Rules(schedule),))
    return schedule
