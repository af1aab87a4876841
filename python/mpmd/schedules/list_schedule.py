"""Pipeline schedules built from costs: a list scheduler over a simulation.

    from mpmd.runtime.simulate import Costs
    from mpmd.schedules import list_schedule as ls

    # The Zero Bubble paper's 1.5B GPT, p = 8, m = 24 (its Table 9 times, ms).
    costs = Costs(forward=18.522, backward=18.086, weight_gradient=9.337,
                  transfer=0.601)
    pipeline = ls.Pipeline.chain(8, 24)
    orders = ls.schedule_orders(pipeline, costs, in_flight=16,
                                weight_memory=0.366)
    run = ls.simulate_orders(pipeline, orders, costs)
    print(f"{run.stage_bubble_fraction:.4f}")   # 0.0433 (the paper: 0.0433)

    # As a program's schedule (split backward fragments, stages from the
    # assignment; any placement: a chain, interleaved, a V):
    import mpmd
    schedule = mpmd.schedules.cost_driven(costs, in_flight=16)
    # mpmd.make_config(..., partitioning_options={"pipeline_schedule": schedule})

The problem: p meshes hold S stages (`Placement`: a chain, stage s on mesh
s; interleaved, s on mesh s mod p; a V, stages r and 2p - 1 - r on mesh
r), m microbatches, each stage's forward F, input-gradient backward B and
weight-gradient backward W (`Op`), with their costs and a transfer time
between meshes. F(s, i) reads F(s - 1, i); B(s, i) reads F(s, i) and
B(s + 1, i) (the last stage's reads its forward); W(s, i) reads B(s, i).
Each mesh runs one op at a time. Memory: a microbatch holds a mesh's
activations from its first forward there until its last weight gradient
there; between a stage's B and its W only what W still reads, counted as
`weight_memory` of the stage's activations (the Zero Bubble paper's
M_W / M_B; 1.0, the default, counts it whole). `in_flight` bounds, per
mesh, the microbatches' activations held at once, in microbatches (the
paper's M_limit / M_B: ZB-1p is p, ZB-2p is 2p).

The algorithm (`schedule_orders`): a list scheduler, an event-driven
simulation in which a mesh that becomes free picks its next op by rules
close to the paper's heuristic (its section 3.1):
- a B whose inputs have arrived first (the input-gradient chain is the
  critical path: every mesh upstream waits on it);
- else a forward, if its input has arrived and memory allows it: the
  mesh stays within the bound, and on a mesh with several stages (a V,
  interleaved) room is left for the forwards still due there of the
  microbatches whose forwards there are not all done: of the oldest
  always (so it never waits for memory: what the microbatches done there
  hold, their backwards free), and, as the variant says, of all the
  others, of those whose next forward can arrive before the mesh's next
  B, or of none, the mesh's first stage then running at most as many
  microbatches ahead of its last as there are stages between them (on
  a V, mesh r admits 2(p - r) - 1 microbatches before the first returns,
  the paper's ZB-V warm-up, where room for every return admits only p
  and idles the first mesh for most of the warm-up); on a
  chain a microbatch holds one stage, nothing is left; before a stage's
  first B (warm-up) a forward runs only if it
  ends before the mesh's next B can arrive (a lower bound from the
  simulation: the chain of ops it waits on, each starting no earlier than
  now and than its mesh is free), give or take a slack, except on a
  chain's first mesh, whose Bs feed no one (delaying them delays no one
  else): it runs warm-up forwards up to the memory bound; after it, the
  stage keeps as many forwards ahead of its Bs as the warm-up left
  (steady 1F-1B-1W);
- else the oldest pending W (a stage's in microbatch order, as gradients
  accumulate), which fills the gaps and frees memory; Ws are otherwise
  deferred (the last stages run ahead, so that Bs reach the first ones
  fast: the paper's parallelogram). A W that would delay a B a stage
  before waits on is held, the mesh waiting for that B: on a chain only
  while the mesh's idle time so far plus the wait stays within the
  largest idle time of any mesh (the paper's rule of not letting the
  largest cumulative bubble grow; without it the middle meshes' Ws space
  the last Bs out and the first mesh, its Ws spent, idles between them),
  on meshes with several stages always or as on a chain (variants).
A handful of variants of these rules (the warm-up slack, W before F when
it fits before the next B, the steady cap, and on meshes with several
stages the order of ready Bs, the room left and whether Ws are held) are
each simulated, and the orders of the one with
the shortest longest mesh span (or step) are kept. The result is valid by
construction: every op runs after what it reads, each stage's ops in
microbatch order, no W before its B, within the memory bound
(`peak_in_flight`).

Timings (`bench/zero_bubble.py` prints them; this machine, 2 cores,
Python 3.11): p = 32, m = 256 on a chain (24,576 ops, 8 variants): 7 to
12 s; a V of p = 16 and m = 48 (4,608 ops, 72 variants): about 40 s.

ZB-V from costs (`zero_bubble_v_orders`): this scheduler on the V
placement with ZB-V's memory, p microbatches (2p stage activations) per
mesh, 1F1B's. With the Zero Bubble paper's 6.2B costs at p = 16, m = 48
and its memory model (`weight_memory=0.366`) its bubble rate is 0.0648,
the paper's ZB-V 0.0697; with W holding all of a stage's activations
(`weight_memory=1`, the default) 0.0951. The registry's ZERO_BUBBLE_V
keeps its order built for unit costs (`mpmd.v_schedules`).

Measures (`simulate_orders`): `bubble_fraction`, the idle share of the
meshes over one step (from time 0 to the last op); and
`stage_bubble_fraction`, the paper's bubble rate: 1 - the busiest mesh's
work / the longest span of a mesh from its first op to its last, the idle
share when a mesh starts its next step as soon as it is done.

`cost_driven(costs, in_flight=...)` wraps it as a `PipelineSchedule`
(`mpmd.pipeline`): usable as `pipeline_schedule` and as a loop's schedule;
it orders the fragments of all meshes at once, with the stages of the
assignment and each fragment's cost from `costs` (a `Costs`, or a function
of a `mpmd.runtime.plan.CallStep` such as `costs_from_trace`'s).
"""

from __future__ import annotations

import collections
import heapq
import itertools
from dataclasses import dataclass

from mpmd.runtime.simulate import Costs
from mpmd.schedules.core import ScheduleError
from mpmd.schedules.orders import (Op, OpCost, Pipeline, PipelineRun,
                                   Placement, _transfer_of, orders_of,
                                   peak_in_flight, simulate_orders)

__all__ = ["Op", "Pipeline", "PipelineRun", "Placement", "orders_of",
           "peak_in_flight", "schedule_orders", "simulate_orders",
           "zero_bubble_v_orders"]

# -- The list scheduler. -----------------------------------------------------

@dataclass(frozen=True)
class _Variant:
    # A warm-up F may delay the mesh's next B by this many F costs.
    warmup_slack: float
    # When no B is ready: a W before an F if the W ends before the next B
    # can arrive (else F before W).
    weight_first: bool
    # After a stage's first B: at most as many Fs ahead of its Bs as the
    # warm-up left.
    capped: bool
    # Among ready Bs of a mesh with several stages: the later stage first
    # (else the older microbatch).
    deepest_first: bool
    # On a mesh with several stages, a forward leaves room for the
    # forwards still due there of the microbatches whose forwards there
    # are not all done: "all" of them, or the oldest and those whose next
    # forward can arrive before the mesh's next B ("arriving"); or
    # ("span") room for the oldest's alone, a mesh's first stage running
    # at most as many microbatches ahead of its last stage there as the
    # stages between them (the V's warm-up: 2(p - r) - 1 on mesh r).
    reserve: str = "all"
    # When neither a B nor an F can run: a W only if it ends before the
    # mesh's next B can arrive (else the mesh waits for that B), so that
    # the backward chain is not delayed where a stage before waits on it
    # (the first stage's Bs feed no one: it runs its Ws).
    hold_weights: bool = False
    # With hold_weights: hold the W only while the mesh's idle time so
    # far plus the wait would stay within the largest of any mesh's (the
    # paper's balance of cumulative bubbles); else run it.
    balance: bool = False
    # The mesh of the first stage alone (its Bs feed no one, so delaying
    # them delays no one else) runs warm-up forwards up to the memory
    # bound, not only those that end before its first B can arrive.
    greedy_first: bool = False


def _variants(pipeline_: Pipeline) -> list[_Variant]:
    several = any(len(pipeline_.placement.stages_on(r)) > 1
                  for r in range(pipeline_.num_meshes))
    if not several:
        # Chains: Ws held while the cumulative bubbles stay balanced and
        # the first mesh's warm-up filled to the memory bound, in every
        # variant: never a longer span than without (the paper's twelve
        # setups and random costs), and 0.0348 -> 0.0066 on the 6.2B GPT
        # at m = 24.
        return [_Variant(slack, weight_first, capped, False, "all",
                         hold_weights=True, balance=True, greedy_first=True)
                for capped, slack, weight_first in itertools.product(
                    (True, False), (0.0, 1.0), (False, True))]
    return [_Variant(0.0, weight_first, capped, deepest, reserve, hold,
                     balance)
            for capped, weight_first, deepest, reserve, (hold, balance) in
            itertools.product((True, False), (False, True), (False, True),
                              ("all", "arriving", "span"),
                              ((False, False), (True, False), (True, True)))]


def _list_schedule(pipeline_: Pipeline, cost: OpCost, move: float,
                   limit: float | None, weight_memory: float,
                   variant: _Variant) -> list[list[Op]]:
    placement = pipeline_.placement
    p, m = placement.num_meshes, pipeline_.microbatches
    mesh_of = placement.stage_mesh
    on_mesh = [placement.stages_on(r) for r in range(p)]
    # The stages of each mesh that keep activations (have a backward).
    kept_on = [tuple(s for s in stages if pipeline_.backward[s])
               for stages in on_mesh]
    units = [pipeline_.units(r) for r in range(p)]
    backward, weight = pipeline_.backward, pipeline_.weight
    end: dict[Op, float] = {}
    orders: list[list[Op]] = [[] for _ in range(p)]
    free = [0.0] * p
    held = [0.0] * p
    first: list[float | None] = [None] * p
    busy = [0.0] * p
    n_f = [0] * placement.num_stages
    n_b = [0] * placement.num_stages
    cap: list[int | None] = [None] * placement.num_stages
    pending: list[collections.deque[Op]] = [collections.deque()
                                            for _ in range(p)]
    times = [0.0]
    remaining = len(pipeline_.ops())
    eps = 1e-9

    def arrival(op: Op) -> float | None:
        """When everything `op` reads is on its mesh; None if not done."""
        at = 0.0
        for dep in pipeline_.dependencies(op):
            done = end.get(dep)
            if done is None:
                return None
            at = max(at, done + (move if mesh_of[dep.stage] != mesh_of[
                op.stage] else 0.0))
        return at

    def earliest_end(op: Op, t: float, memo: dict[Op, float]) -> float:
        """A lower bound of when `op` ends: each op not yet placed starts
        no earlier than now, than its mesh is free, than its inputs."""
        done = end.get(op)
        if done is not None:
            return done
        if op in memo:
            return memo[op]
        start = max(t, free[mesh_of[op.stage]])
        for dep in pipeline_.dependencies(op):
            start = max(start, earliest_end(dep, t, memo) + (
                move if mesh_of[dep.stage] != mesh_of[op.stage] else 0.0))
        memo[op] = start + cost(op)
        return memo[op]

    def fits(r: int, s: int, bound: float, t: float, next_b: float,
             memo: dict[Op, float]) -> bool:
        """Whether the next forward of stage s fits on mesh r: within
        `bound` stage activations, and leaving room for the forwards still
        due there of the microbatches whose forwards there are not all
        done: of the oldest always (so that it moves on: what the
        microbatches done there hold, their backwards free), and of the
        next ones as the variant says (`_Variant.reserve`)."""
        if held[r] + 1.0 > bound + eps:
            return False
        kept = kept_on[r]
        if len(kept) == 1:
            return True
        if variant.reserve == "span":
            if s == kept[0] and \
                    n_f[s] + 1 - n_f[kept[-1]] > kept[-1] - kept[0]:
                return False
            oldest = n_f[kept[-1]]
            due = sum(1 for x in kept if n_f[x] <= oldest) - (
                n_f[s] == oldest)
            return held[r] + 1.0 + due <= bound + eps
        if n_f[s] == n_f[kept[-1]] < n_f[kept[0]]:
            return True  # the oldest's: room was left for it
        after = [n_f[x] + (x == s) for x in kept]
        oldest = after[-1]  # later stages trail: the least count
        need = sum(after) - len(after) * oldest
        for i in range(oldest, after[0]):
            due = [x for x, n in zip(kept, after) if n <= i]
            if i > oldest and variant.reserve == "arriving" and \
                    earliest_end_of_inputs(Op("F", due[0], i), t,
                                           memo) > next_b + eps:
                break
            need += len(due)
        return need <= bound + eps

    def choose(r: int, t: float, force: bool) -> Op | None:
        backs = [Op("B", s, n_b[s]) for s in on_mesh[r]
                 if backward[s] and n_b[s] < n_f[s]]
        ready = []
        waiting = []
        for op in backs:
            at = arrival(op)
            (ready if at is not None and at <= t + eps else waiting).append(op)
        if ready:
            if variant.deepest_first:
                return max(ready, key=lambda op: (op.stage, -op.microbatch))
            return min(ready, key=lambda op: (op.microbatch, -op.stage))
        memo: dict[Op, float] = {}
        next_b = min((earliest_end_of_inputs(op, t, memo) for op in waiting),
                     default=float("inf"))
        forward = None
        blocked = False
        for s in sorted(on_mesh[r], key=lambda s: (n_f[s], -s)):
            if n_f[s] >= m:
                continue
            op = Op("F", s, n_f[s])
            at = arrival(op)
            if at is None or at > t + eps:
                continue
            if backward[s] and cap[s] is not None and variant.capped and \
                    n_f[s] - n_b[s] >= cap[s]:
                continue
            if limit is not None and backward[s] and \
                    not fits(r, s, limit * units[r], t, next_b, memo):
                blocked = True
                continue
            if cap[s] is None and not force and not (
                    variant.greedy_first and on_mesh[r] == (0,)) and \
                    t + cost(op) > \
                    next_b + variant.warmup_slack * cost(op) + eps:
                continue
            forward = op
            break
        w = pending[r][0] if pending[r] else None
        if w is not None and variant.weight_first and (
                t + cost(w) <= next_b + eps or blocked):
            return w
        if forward is not None:
            return forward
        if w is not None and variant.hold_weights and not blocked and \
                t + cost(w) > next_b + eps and \
                any(op.stage > 0 for op in waiting):
            if variant.balance:
                mine = t - first[r] - busy[r] + (next_b - t)
                worst = max((max(t, free[x]) - first[x] - busy[x])
                            for x in range(p) if first[x] is not None)
                if mine > worst + eps:
                    return w
            return None  # wait for the B, which a stage before waits on
        return w

    def earliest_end_of_inputs(op: Op, t: float, memo: dict[Op, float]
                               ) -> float:
        at = 0.0
        for dep in pipeline_.dependencies(op):
            at = max(at, earliest_end(dep, t, memo) + (
                move if mesh_of[dep.stage] != mesh_of[op.stage] else 0.0))
        return at

    force = False
    while remaining:
        if not times:
            if force:  # cannot happen: an admitted microbatch always moves
                raise ScheduleError("the list scheduler made no progress")
            # Nothing left to wait for but ops the warm-up rule holds back
            # (it waits on a B that waits on them): run them now.
            times.append(max(free))
            force = True
        t = heapq.heappop(times)
        while times and times[0] <= t + eps:
            heapq.heappop(times)
        for r in range(p):
            if free[r] > t + eps:
                continue
            op = choose(r, t, force)
            if op is None:
                continue
            kind, s, i = op
            if kind == "F":
                n_f[s] += 1
                if backward[s]:
                    held[r] += 1.0
            elif kind == "B":
                if cap[s] is None:
                    cap[s] = n_f[s]
                n_b[s] += 1
                if weight[s]:
                    pending[r].append(Op("W", s, i))
                    held[r] -= 1.0 - weight_memory
                else:
                    held[r] -= 1.0
            else:
                pending[r].popleft()
                held[r] -= weight_memory
            start = max(t, arrival(op) or 0.0)
            finish = start + cost(op)
            end[op] = finish
            free[r] = finish
            if first[r] is None:
                first[r] = start
            busy[r] += cost(op)
            orders[r].append(op)
            heapq.heappush(times, finish)
            if move:
                heapq.heappush(times, finish + move)
            remaining -= 1
            force = False
    # Pending Ws are popped in the order their Bs ran; keep each stage's in
    # microbatch order (gradients accumulate in that order) as they are.
    return orders


def schedule_orders(pipeline_: Pipeline, costs: Costs | OpCost = Costs(
        forward=1, backward=1), *, in_flight: int | None = None,
        weight_memory: float = 1.0, transfer: float | None = None,
        objective: str = "span") -> list[list[Op]]:
    """Per mesh, the order the list scheduler builds (module docstring)
    for `pipeline_` under `costs` (default F = B = W = 1) and a `transfer`
    time between meshes (default: the Costs' transfer), with at most
    `in_flight` microbatches' activations per mesh (None: no bound).
    `objective`: "span" keeps the variant with the shortest longest mesh
    span (the paper's measure), "step" the shortest step; the other
    breaks ties."""
    if objective not in ("span", "step"):
        raise ScheduleError(f"objective is 'span' or 'step'; got "
                            f"{objective!r}")
    if in_flight is not None and (not isinstance(in_flight, int)
                                  or in_flight < 1):
        raise ScheduleError(f"in_flight must be a positive number of "
                            f"microbatches; got {in_flight!r}")
    if not 0.0 <= weight_memory <= 1.0:
        raise ScheduleError(f"weight_memory is a share of a stage's "
                            f"activations, in [0, 1]; got {weight_memory!r}")
    cost = pipeline_.cost_of(costs)
    move = _transfer_of(costs, transfer)
    best = None
    for variant in _variants(pipeline_):
        orders = _list_schedule(pipeline_, cost, move, in_flight,
                                weight_memory, variant)
        run = simulate_orders(pipeline_, orders, cost, move)
        span, step = max(run.spans), run.step_time
        key = (span, step) if objective == "span" else (step, span)
        if best is None or key < best[0]:
            best = (key, orders)
    return best[1]


def zero_bubble_v_orders(p: int, m: int, costs: Costs | OpCost = Costs(
        forward=1, backward=1), *, in_flight: int | None = None,
        weight_memory: float = 1.0, transfer: float | None = None
        ) -> list[list[Op]]:
    """ZB-V built for `costs`: the list scheduler's orders for 2p stages
    in a V over p meshes (`Placement.v_shape`), backwards split, with at
    most `in_flight` microbatches' activations per mesh (default p, ZB-V's
    and 1F1B's memory)."""
    pipeline_ = Pipeline.of(Placement.v_shape(p), m)
    return schedule_orders(pipeline_, costs,
                           in_flight=p if in_flight is None else in_flight,
                           weight_memory=weight_memory, transfer=transfer)


