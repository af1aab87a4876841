"""V-shaped pipeline schedules: ZB-V and DualPipe-V.

Both place 2p stages on p meshes in a V: mesh r holds stage r (its chunk 0)
and stage 2p - 1 - r (its chunk 1). A microbatch's forward runs down the
meshes and back up (stages 0 .. p - 1 on meshes 0 .. p - 1, then stages
p .. 2p - 1 on meshes p - 1 .. 0), so the first mesh computes both the first
stage and the loss, and the backward runs the same path in reverse. The
backward of each stage is split into its input-gradient part B and its
weight-gradient part W (`mpmd_split_bwd_fragments`), which the schedules
place independently.

- ZB-V, from "Zero Bubble Pipeline Parallelism" (Qi et al., ICLR 2024):
  built here by a greedy list schedule over a simulation (unit costs F = B
  = W by default, a given transfer time): a free mesh runs a ready B first
  (lowest microbatch), then a ready forward (a new microbatch enters a mesh
  only while at most p are in flight there, the activation memory of
  1F1B's first stage), then the oldest pending W; it idles only when none
  is possible.
- DualPipe-V, the V-shaped ("cut-in-half") DualPipe of DeepSeek-V3's
  report: per mesh r, a fixed sequence of phases, warm-up forwards of chunk
  0, pairs of forwards, then a steady state that pairs a forward of one
  chunk with a backward of the other (DualPipe overlaps each pair's
  computation with the other's communication), and a cool-down whose last
  backwards defer their W to the end. It needs m >= 2p microbatches.

`zero_bubble_v_order(p, m)` and `dualpipe_v_order(p, m)` give the per-mesh
sequences of `VOp`s; `simulate_v` runs such sequences with given costs
(raising ScheduleError if they deadlock) and reports the step time and
bubble; the rule builders map the sequences onto a program's fragments for
`mpmd.pipeline.PipelineSchedule` (see `mpmd.pipeline_registry`:
ZERO_BUBBLE_V, DUALPIPE_V).
"""

from __future__ import annotations

import collections
import functools
import heapq
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Sequence

from mpmd.schedules import rules as pipeline
from mpmd.schedules.core import ScheduleError

__all__ = ["VOp", "VSimulation", "dualpipe_v_order",
           "dualpipe_v_schedule_rules", "simulate_v", "v_mesh_of_stage",
           "zero_bubble_v_order", "zero_bubble_v_schedule_rules"]


class VOp(NamedTuple):
    """One unit of work on a mesh: kind "F" (forward), "B" (input
    gradient) or "W" (weight gradient) of `chunk` (0: stage r, 1: stage
    2p - 1 - r on mesh r) for `microbatch`."""

    kind: str
    chunk: int
    microbatch: int


def v_mesh_of_stage(stage: int, p: int) -> int:
    """The mesh index of `stage` in the V placement of 2p stages."""
    return stage if stage < p else 2 * p - 1 - stage


def _stage(mesh: int, chunk: int, p: int) -> int:
    return mesh if chunk == 0 else 2 * p - 1 - mesh


def _dependencies(op: VOp, mesh: int, p: int) -> list[tuple[int, VOp]]:
    """The (mesh, op) pairs `op` on `mesh` reads results of."""
    kind, chunk, i = op
    if kind == "W":
        return [(mesh, VOp("B", chunk, i))]
    if kind == "F":
        if chunk == 0:
            return [(mesh - 1, VOp("F", 0, i))] if mesh > 0 else []
        if mesh == p - 1:
            return [(mesh, VOp("F", 0, i))]
        return [(mesh + 1, VOp("F", 1, i))]
    deps = [(mesh, VOp("F", chunk, i))]
    if chunk == 1:
        if mesh > 0:
            deps.append((mesh - 1, VOp("B", 1, i)))
    elif mesh == p - 1:
        deps.append((mesh, VOp("B", 1, i)))
    else:
        deps.append((mesh + 1, VOp("B", 0, i)))
    return deps


def _inputs_arrive(end: Mapping[tuple[int, VOp], float], mesh: int,
                   op: VOp, p: int, transfer: float) -> float | None:
    """When everything `op` on `mesh` reads is there (`transfer` after its
    end across meshes), given the end times of the ops done; None if one
    is not done."""
    arrive = 0.0
    for source, dep in _dependencies(op, mesh, p):
        done = end.get((source, dep))
        if done is None:
            return None
        arrive = max(arrive, done + (transfer if source != mesh else 0.0))
    return arrive


def _check_sizes(p: int, m: int, what: str) -> None:
    if not isinstance(p, int) or p < 1:
        raise ScheduleError(f"{what} needs at least one mesh; got p = {p!r}")
    if not isinstance(m, int) or m < 1:
        raise ScheduleError(f"{what} needs at least one microbatch; got "
                            f"m = {m!r}")


def zero_bubble_v_order(p: int, m: int, *, transfer: float = 0.0,
                        costs: Mapping[str, float] | None = None,
                        max_in_flight: int | None = None) -> list[list[VOp]]:
    """ZB-V's per-mesh sequences for p meshes and m microbatches (see the
    module docstring), built for the given `transfer` time between meshes
    and op costs (default F = B = W = 1). `max_in_flight` bounds the
    microbatches in flight on a mesh, at two chunk activations each
    (default p: the activation memory of 1F1B's first stage).

    The greedy runs with two admission rules, and the order whose
    simulated step is shorter is kept: a new microbatch enters a mesh while
    fewer than `max_in_flight` microbatches have Ws left there, or while at
    most 2 * max_in_flight - 2 chunk activations are held there."""
    _check_sizes(p, m, "ZB-V")
    limit = p if max_in_flight is None else max_in_flight
    if not isinstance(limit, int) or limit < 1:
        raise ScheduleError(f"ZB-V needs max_in_flight >= 1; got {limit!r}")
    cost = {"F": 1.0, "B": 1.0, "W": 1.0, **(costs or {})}
    candidates = [_greedy_v(p, m, transfer, cost, limit, by_microbatch)
                  for by_microbatch in (True, False)]
    return min(candidates, key=lambda orders: simulate_v(
        orders, cost, transfer).step_time)


def _greedy_v(p: int, m: int, transfer: float, cost: Mapping[str, float],
              limit: int, by_microbatch: bool) -> list[list[VOp]]:
    end: dict[tuple[int, VOp], float] = {}
    orders: list[list[VOp]] = [[] for _ in range(p)]
    free = [0.0] * p
    next_f = [[0, 0] for _ in range(p)]
    next_b = [[0, 0] for _ in range(p)]
    pending_w: list[collections.deque[VOp]] = [collections.deque()
                                               for _ in range(p)]
    # Chunk activations held per mesh (from F to W), counting the chunk 1
    # forward of each admitted microbatch from its chunk 0 forward on; and
    # per mesh, the microbatches with Ws left (microbatch -> how many).
    held = [0] * p
    open_work = [collections.Counter() for _ in range(p)]
    times = [0.0]  # when something may become possible: ends and arrivals
    remaining = 6 * p * m

    def ready(mesh: int, op: VOp, t: float) -> bool:
        arrive = _inputs_arrive(end, mesh, op, p, transfer)
        return arrive is not None and arrive <= t

    while remaining:
        if not times:  # cannot happen: every op becomes ready in time
            raise ScheduleError(f"ZB-V made no progress for p = {p}, m = {m}")
        t = heapq.heappop(times)
        for r in range(p):
            if free[r] > t:
                continue
            choice = None
            backs = [VOp("B", c, next_b[r][c]) for c in (0, 1)
                     if next_b[r][c] < m]
            backs = [op for op in backs if ready(r, op, t)]
            if backs:
                choice = min(backs, key=lambda op: (op.microbatch, op.chunk))
            if choice is None:
                fwds = []
                if next_f[r][1] < m:
                    fwds.append(VOp("F", 1, next_f[r][1]))
                admit = (len(open_work[r]) < limit if by_microbatch
                         else held[r] + 2 <= 2 * limit)
                if next_f[r][0] < m and admit:
                    fwds.append(VOp("F", 0, next_f[r][0]))
                fwds = [op for op in fwds if ready(r, op, t)]
                if fwds:
                    choice = min(fwds, key=lambda op: op.microbatch)
            if choice is None and pending_w[r]:
                choice = pending_w[r].popleft()
            if choice is None:
                continue
            kind, chunk, i = choice
            if kind == "F":
                next_f[r][chunk] += 1
                if chunk == 0:
                    held[r] += 2
                    open_work[r][i] = 2
            elif kind == "B":
                next_b[r][chunk] += 1
                pending_w[r].append(VOp("W", chunk, i))
            else:
                held[r] -= 1
                open_work[r][i] -= 1
                if not open_work[r][i]:
                    del open_work[r][i]
            orders[r].append(choice)
            finish = t + cost[kind]
            end[(r, choice)] = finish
            free[r] = finish
            heapq.heappush(times, finish)
            if transfer:
                heapq.heappush(times, finish + transfer)
            remaining -= 1
    return orders


def dualpipe_v_order(p: int, m: int) -> list[list[VOp]]:
    """DualPipe-V's per-mesh sequences for p meshes and m >= 2p
    microbatches (see the module docstring). Each backward is followed by
    its W, except the last r + 1 backwards of the two-backward phase and
    the backwards of the phase after it on mesh r, whose Ws run last, oldest
    first."""
    _check_sizes(p, m, "DualPipe-V")
    if m < 2 * p:
        raise ScheduleError(
            f"DualPipe-V needs at least 2p = {2 * p} microbatches for "
            f"p = {p} meshes; got m = {m}")
    orders = []
    for r in range(p):
        seq: list[VOp] = []
        count = {("F", 0): 0, ("F", 1): 0, ("B", 0): 0, ("B", 1): 0}
        deferred: collections.deque[VOp] = collections.deque()

        def forward(chunk: int) -> None:
            seq.append(VOp("F", chunk, count[("F", chunk)]))
            count[("F", chunk)] += 1

        def backward(chunk: int, defer: bool = False) -> None:
            i = count[("B", chunk)]
            count[("B", chunk)] += 1
            seq.append(VOp("B", chunk, i))
            if defer:
                deferred.append(VOp("W", chunk, i))
            else:
                seq.append(VOp("W", chunk, i))

        rest = p - r - 1
        for _ in range(2 * rest):            # warm-up: chunk 0 forwards
            forward(0)
        for _ in range(r + 1):               # forward pairs
            forward(0)
            forward(1)
        for _ in range(rest):                # B W F on chunk 1
            backward(1)
            forward(1)
        for _ in range(m - 2 * p + r + 1):   # steady: (F0 & B1) (F1 & B0)
            forward(0)
            backward(1)
            forward(1)
            backward(0)
        for _ in range(rest):                # B1, then (F1 & B0)
            backward(1)
            forward(1)
            backward(0)
        for k in range(2 * (r + 1)):         # backward pairs, later Ws last
            backward(1 if k % 2 == 0 else 0, defer=k >= r + 1)
        for _ in range(rest):                # an old W, then B0 (deferred)
            seq.append(deferred.popleft())
            backward(0, defer=True)
        seq.extend(deferred)                 # the remaining Ws
        orders.append(seq)
    return orders


@dataclass(frozen=True)
class VSimulation:
    step_time: float
    busy: tuple[float, ...]  # per mesh
    # Per mesh: (op, start, end) in order.
    timeline: tuple[tuple[tuple[VOp, float, float], ...], ...]

    @property
    def bubble_fraction(self) -> float:
        """Idle share of the meshes over the step."""
        if not self.step_time:
            return 0.0
        return 1.0 - sum(self.busy) / (len(self.busy) * self.step_time)


def simulate_v(orders: Sequence[Sequence[VOp]],
               costs: Mapping[str, float] | None = None,
               transfer: float = 0.0) -> VSimulation:
    """Runs per-mesh sequences of VOps: each op starts when its mesh is free
    and what it reads has arrived (`transfer` later across meshes). Costs
    per kind default to F = B = W = 1. Raises ScheduleError naming the
    stuck ops if the sequences wait on each other, or if an op repeats."""
    cost = {"F": 1.0, "B": 1.0, "W": 1.0, **(costs or {})}
    p = len(orders)
    end: dict[tuple[int, VOp], float] = {}
    for r, seq in enumerate(orders):
        if len(set(seq)) != len(seq):
            dup = next(op for op in seq if seq.count(op) > 1)
            raise ScheduleError(f"mesh {r} runs {dup} twice")
    free = [0.0] * p
    cursor = [0] * p
    timeline: list[list[tuple[VOp, float, float]]] = [[] for _ in range(p)]
    remaining = sum(len(seq) for seq in orders)
    while remaining:
        progressed = False
        for r, seq in enumerate(orders):
            while cursor[r] < len(seq):
                op = seq[cursor[r]]
                arrive = _inputs_arrive(end, r, op, p, transfer)
                if arrive is None:
                    break
                start = max(free[r], arrive)
                finish = start + cost[op.kind]
                end[(r, op)] = finish
                free[r] = finish
                timeline[r].append((op, start, finish))
                cursor[r] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            stuck = [f"mesh {r}: {seq[cursor[r]]}"
                     for r, seq in enumerate(orders) if cursor[r] < len(seq)]
            raise ScheduleError("the per-mesh orders wait on each other: "
                                + "; ".join(stuck))
    busy = tuple(sum(e - s for _, s, e in line) for line in timeline)
    return VSimulation(max(free, default=0.0), busy,
                       tuple(tuple(line) for line in timeline))


# -- Rules over a program's fragments. --------------------------------------

def _classify(fragment: pipeline.FragmentInfo) -> str:
    unit = pipeline.get_scheduling_unit_info(fragment)
    assert unit is not None
    if unit[1] == 0:
        return "F"
    if fragment.split_type == pipeline.SplitFragmentType.DROP_TRANSFERRED:
        return "W"
    return "B"


def _v_rules(name: str, fragment_infos: Sequence[pipeline.FragmentInfo],
             context: pipeline.PipelineContext, generate
             ) -> tuple[list[pipeline.FragmentScheduleRule], list]:
    p = context.num_meshes
    units: dict[tuple[int, VOp], list[pipeline.FragmentInfo]] = {}
    mesh_of: dict[str, tuple[int, int]] = {}  # mesh -> (r, a stage there)
    counters: set[int] = set()
    for fragment in fragment_infos:
        if pipeline.get_scheduling_unit_info(fragment) is None:
            continue
        stage = fragment.stage_id
        if stage is None or not 0 <= stage < 2 * p:
            raise ScheduleError(
                f"{name} places 2p = {2 * p} stages on {p} meshes; fragment "
                f"{_name(fragment)} has stage {stage!r}: give every named "
                "computation a stage in name_to_stage_assignment")
        r = v_mesh_of_stage(stage, p)
        known = mesh_of.setdefault(fragment.mesh_name, (r, stage))
        if known[0] != r:
            raise ScheduleError(
                f"{name} needs mesh {fragment.mesh_name!r} to hold one V "
                f"pair of stages (r and 2p - 1 - r = {2 * p - 1 - known[0]}"
                f" for r = {known[0]}); fragment {_name(fragment)} has "
                f"stage {stage}, another on the mesh stage {known[1]}")
        chunk = 0 if stage < p else 1
        op = VOp(_classify(fragment), chunk, fragment.call_counter)
        # Several fragments of one stage (named computations the compiler
        # merges later) keep their program order.
        units.setdefault((r, op), []).append(fragment)
        counters.add(fragment.call_counter)
    if not units:
        return [], []
    pairs = collections.defaultdict(list)
    for mesh, (r, _) in mesh_of.items():
        pairs[r].append(mesh)
    for r, meshes in pairs.items():
        if len(meshes) > 1:
            raise ScheduleError(f"{name} needs stages {r} and {2 * p - 1 - r}"
                                f" on one mesh; they are on {sorted(meshes)}")
    m = max(counters) + 1
    if counters != set(range(m)):
        raise ScheduleError(f"{name} needs call counters 0 .. m - 1; got "
                            f"{sorted(counters)}")
    rules = []
    for r, seq in enumerate(generate(p, m)):
        ordered = [fragment for op in seq for fragment in units.get((r, op),
                                                                    ())]
        if len(ordered) >= 2:
            rules.append(pipeline.FragmentScheduleRule(
                ordered_fragments=ordered))
    return rules, []


def _name(fragment: pipeline.FragmentInfo) -> str:
    names = "+".join(o.computation_name for o in fragment.origins)
    return f"{names!r} (call counter {fragment.call_counter})"


def zero_bubble_v_schedule_rules(
        fragment_infos: Sequence[pipeline.FragmentInfo],
        context: pipeline.PipelineContext, *, transfer: float = 0.0,
        max_in_flight: int | None = None):
    """Schedule rules putting each mesh's fragments in ZB-V order (a
    `schedule_merge_rule_builders` entry of a PipelineSchedule; the options
    as `zero_bubble_v_order`'s). A backward left whole (its results do not
    leave the mesh) takes the place of its B; its W has no fragment of its
    own."""
    return _v_rules("ZB-V", fragment_infos, context, functools.partial(
        zero_bubble_v_order, transfer=transfer, max_in_flight=max_in_flight))


def dualpipe_v_schedule_rules(
        fragment_infos: Sequence[pipeline.FragmentInfo],
        context: pipeline.PipelineContext):
    """Schedule rules putting each mesh's fragments in DualPipe-V order;
    as `zero_bubble_v_schedule_rules`."""
    return _v_rules("DualPipe-V", fragment_infos, context, dualpipe_v_order)
