"""A pipeline simulator: how long a plan's step takes and how much of it the
meshes sit idle, for given costs.

Each mesh runs its calls in plan order; a call starts when its mesh is free
and all its inputs have arrived; a transfer takes its own time and no mesh's.
Costs default to F=1 per forward fragment, B=2 per backward (transpose)
fragment, W=1 per weight-gradient fragment, 0 for inferred fragments and
transfers; pass a function for others, e.g. measured durations from a trace
(`costs_from_trace`). `replay` re-times a measured trace this way: what the
step looks like where every mesh computes in parallel, on a machine whose
runtime runs the meshes' programs one at a time (XLA's CPU client, for
programs over several devices).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Callable

from mpmd.runtime.plan import CallStep, ExecutionPlan, TransferStep

__all__ = ["Costs", "Simulation", "costs_from_trace", "replay", "simulate"]


@dataclass(frozen=True)
class Costs:
    forward: float = 1.0
    backward: float = 2.0
    weight_gradient: float = 1.0
    inferred: float = 0.0
    transfer: float = 0.0

    def of(self, step: CallStep) -> float:
        if not step.origins:
            return self.inferred
        if step.weight_gradient:
            return self.weight_gradient
        total = 0.0
        for origin in step.origins:
            total += self.backward if origin.is_backward else self.forward
        return total


@dataclass(frozen=True)
class Simulation:
    step_time: float
    busy: dict[str, float]
    # Per mesh: (label, start, end) of each call.
    timeline: dict[str, list[tuple[str, float, float]]]

    @property
    def bubble_fraction(self) -> float:
        """Idle share of the meshes over the step: 1 - busy / (meshes * time)."""
        if self.step_time == 0:
            return 0.0
        total = sum(self.busy.values())
        return 1.0 - total / (len(self.busy) * self.step_time)


def simulate(plan: ExecutionPlan,
             costs: Costs | Callable[[CallStep], float] = Costs(),
             transfer_cost: float | None = None) -> Simulation:
    cost_of = costs.of if isinstance(costs, Costs) else costs
    move = (costs.transfer if isinstance(costs, Costs) else 0.0) \
        if transfer_cost is None else transfer_cost
    ready: dict[int, float] = {i: 0.0 for i in range(len(plan.inputs))}
    free = {mesh.name: 0.0 for mesh in plan.meshes}
    busy = {mesh.name: 0.0 for mesh in plan.meshes}
    timeline: dict[str, list[tuple[str, float, float]]] = {
        mesh.name: [] for mesh in plan.meshes}
    for step in plan.steps:
        if isinstance(step, TransferStep):
            ready[step.output] = ready[step.input] + move
            continue
        start = max([free[step.mesh]] + [ready[v] for v in step.inputs])
        end = start + cost_of(step)
        free[step.mesh] = end
        busy[step.mesh] += end - start
        timeline[step.mesh].append((step.label(), start, end))
        for value in step.outputs:
            ready[value] = end
    step_time = max([0.0, *free.values(),
                     *(ready[v] for v in plan.output_values)])
    return Simulation(step_time, busy, timeline)


def costs_from_trace(trace) -> Callable[[CallStep], float]:
    """Costs measured by a traced run: each call's mean duration by label
    (without the call counter); unknown labels cost nothing."""
    durations: dict[str, list[float]] = {}
    for mesh in trace.meshes:
        for call in trace.calls_on(mesh):
            base = call.label.split("#")[0]
            durations.setdefault(base, []).append(call.end_us - call.start_us)
    means = {label: sum(v) / len(v) for label, v in durations.items()}

    def cost(step: CallStep) -> float:
        return means.get(step.label().split("#")[0], 0.0)

    return cost


def replay(trace, plan: ExecutionPlan):
    """`trace` (a measured `Trace` of `plan`'s step) re-timed by the
    simulator: each call keeps its measured duration, each mesh runs its
    calls in plan order, a call starts when its mesh is free and its inputs
    have arrived, transfers take no time. A `Trace` (source REPLAY, no
    transfers) to write as Chrome JSON or SVG like the measured one. Where
    the runtime ran the meshes one at a time (XLA's CPU client), it shows
    which of them the program lets compute at the same time."""
    from mpmd.runtime.trace import REPLAY, Trace  # noqa: PLC0415

    measured: dict[tuple[str, str], deque] = defaultdict(deque)
    for mesh in trace.meshes:
        for call in trace.calls_on(mesh):
            measured[(mesh, call.label)].append(call)
    matched = {}

    def cost(step: CallStep) -> float:
        queue = measured.get((step.mesh, step.label()))
        if not queue:
            return 0.0
        call = matched[id(step)] = queue.popleft()
        return call.end_us - call.start_us

    result = simulate(plan, cost)
    calls = []
    position = {mesh: 0 for mesh in result.timeline}
    for step in plan.steps:
        if not isinstance(step, CallStep):
            continue
        _, start, end = result.timeline[step.mesh][position[step.mesh]]
        position[step.mesh] += 1
        call = matched.get(id(step))
        if call is not None:
            calls.append(dataclasses.replace(call, start_us=start,
                                             end_us=end))
    return Trace(tuple(trace.meshes), calls, [], result.step_time,
                 source=REPLAY)
