"""A pipeline as the schedulers built from costs see it: meshes holding
stages (`Placement`: a chain, interleaved, a V), microbatches, and each
stage's forward F, input-gradient backward B and weight-gradient backward
W (`Op`); orders of ops per mesh, their simulation with costs
(`simulate_orders`, `PipelineRun`) and their memory (`peak_in_flight`);
and the orders of any `PipelineSchedule` on such a pipeline (`orders_of`).
`mpmd.schedules.list_schedule` builds orders from costs; see its
docstring for the problem's rules.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from mpmd.runtime.simulate import Costs
from mpmd.schedules import rules as pipeline
from mpmd.schedules.core import ScheduleError

__all__ = ["Op", "OpCost", "Pipeline", "PipelineRun", "Placement",
           "orders_of", "peak_in_flight", "program_fragments",
           "simulate_orders"]

# A cost: a `Costs`, or the cost of one op (`Pipeline.cost_of` makes one).
OpCost = Callable[["Op"], float]


class Op(NamedTuple):
    """One unit of work: kind "F" (forward), "B" (input gradient, or the
    whole backward where it is not split) or "W" (weight gradient) of
    `stage` for `microbatch`."""

    kind: str
    stage: int
    microbatch: int

    def __str__(self) -> str:
        return f"{self.kind}{self.microbatch}s{self.stage}"


@dataclass(frozen=True)
class Placement:
    """Which mesh (0 .. num_meshes - 1) holds each stage, in stage order."""

    stage_mesh: tuple[int, ...]
    num_meshes: int

    def __post_init__(self) -> None:
        if not self.stage_mesh or sorted(set(self.stage_mesh)) != list(
                range(self.num_meshes)):
            raise ScheduleError(f"a placement puts stages on every mesh "
                                f"0 .. {self.num_meshes - 1}; got "
                                f"{list(self.stage_mesh)}")

    @classmethod
    def chain(cls, p: int) -> "Placement":
        """One stage per mesh: stage s on mesh s."""
        return cls(tuple(range(p)), p)

    @classmethod
    def interleaved(cls, p: int, v: int) -> "Placement":
        """v stages per mesh, in rounds: stage s on mesh s mod p."""
        return cls(tuple(s % p for s in range(v * p)), p)

    @classmethod
    def v_shape(cls, p: int) -> "Placement":
        """Two stages per mesh in a V: stages r and 2p - 1 - r on mesh r."""
        return cls(tuple(list(range(p)) + list(reversed(range(p)))), p)

    @property
    def num_stages(self) -> int:
        return len(self.stage_mesh)

    def stages_on(self, mesh: int) -> tuple[int, ...]:
        return tuple(s for s, r in enumerate(self.stage_mesh) if r == mesh)


@dataclass(frozen=True)
class Pipeline:
    """A pipelined step to schedule: a placement, m microbatches, and which
    stages have a backward (`backward[s]`; a forward-only stage keeps no
    activations) and a separate weight gradient (`weight[s]`: the backward
    is split into B and W)."""

    placement: Placement
    microbatches: int
    backward: tuple[bool, ...]
    weight: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.microbatches, int) or self.microbatches < 1:
            raise ScheduleError(f"a pipeline needs at least one microbatch; "
                                f"got m = {self.microbatches!r}")
        stages = self.placement.num_stages
        if len(self.backward) != stages or len(self.weight) != stages:
            raise ScheduleError("backward and weight need a flag per stage")

    @classmethod
    def of(cls, placement: Placement, m: int, *, split: bool = True
           ) -> "Pipeline":
        """Every stage with a backward, split into B and W if `split`."""
        stages = placement.num_stages
        return cls(placement, m, (True,) * stages, (split,) * stages)

    @classmethod
    def chain(cls, p: int, m: int, *, split: bool = True) -> "Pipeline":
        return cls.of(Placement.chain(p), m, split=split)

    @property
    def num_meshes(self) -> int:
        return self.placement.num_meshes

    def ops(self) -> list[Op]:
        out = []
        for s in range(self.placement.num_stages):
            kinds = "F" + ("B" if self.backward[s] else "") + (
                "W" if self.backward[s] and self.weight[s] else "")
            out += [Op(k, s, i) for k in kinds
                    for i in range(self.microbatches)]
        return out

    def dependencies(self, op: Op) -> tuple[Op, ...]:
        """The ops whose results `op` reads."""
        kind, s, i = op
        if kind == "F":
            return (Op("F", s - 1, i),) if s > 0 else ()
        if kind == "W":
            return (Op("B", s, i),)
        later = next((t for t in range(s + 1, self.placement.num_stages)
                      if self.backward[t]), None)
        if later is None:
            last = self.placement.num_stages - 1
            return (Op("F", s, i),) if last == s else (
                Op("F", s, i), Op("F", last, i))
        return (Op("F", s, i), Op("B", later, i))

    def cost_of(self, costs: Costs | OpCost) -> OpCost:
        """`costs` as the cost of one op: a `Costs` gives each kind its
        time (F: forward, B: backward, W: weight_gradient; a backward left
        whole counts backward + weight_gradient), a function is used as it
        is."""
        if not isinstance(costs, Costs):
            return costs

        def cost(op: Op) -> float:
            if op.kind == "F":
                return costs.forward
            if op.kind == "W":
                return costs.weight_gradient
            whole = not self.weight[op.stage]
            return costs.backward + (costs.weight_gradient if whole else 0.0)
        return cost

    def units(self, mesh: int) -> int:
        """The activations one microbatch holds on `mesh`, in stages."""
        return sum(1 for s in self.placement.stages_on(mesh)
                   if self.backward[s])


def _transfer_of(costs: Costs | OpCost, transfer: float | None) -> float:
    if transfer is not None:
        return float(transfer)
    return costs.transfer if isinstance(costs, Costs) else 0.0


# -- Simulation of given orders. --------------------------------------------

@dataclass(frozen=True)
class PipelineRun:
    """Per mesh, (op, start, end) of each op in order; and the measures."""

    timeline: tuple[tuple[tuple[Op, float, float], ...], ...]

    @property
    def step_time(self) -> float:
        return max((line[-1][2] for line in self.timeline if line),
                   default=0.0)

    @property
    def busy(self) -> tuple[float, ...]:
        return tuple(sum(e - s for _, s, e in line) for line in self.timeline)

    @property
    def spans(self) -> tuple[float, ...]:
        """Per mesh: from its first op's start to its last op's end."""
        return tuple(line[-1][2] - line[0][1] if line else 0.0
                     for line in self.timeline)

    @property
    def bubble_fraction(self) -> float:
        """Idle share of the meshes over one step (time 0 to the last op)."""
        step = self.step_time
        if not step:
            return 0.0
        return 1.0 - sum(self.busy) / (len(self.timeline) * step)

    @property
    def stage_bubble_fraction(self) -> float:
        """The Zero Bubble paper's bubble rate: 1 - the busiest mesh's work
        / the longest mesh span; what a step idles when each mesh starts
        its next step as soon as it is done."""
        span = max(self.spans, default=0.0)
        if not span:
            return 0.0
        return 1.0 - max(self.busy) / span


def simulate_orders(pipeline_: Pipeline, orders: Sequence[Sequence[Op]],
                    costs: Costs | OpCost = Costs(forward=1, backward=1),
                    transfer: float | None = None) -> PipelineRun:
    """Runs per-mesh sequences of ops: each starts when its mesh is free
    and what it reads has arrived (`transfer` later from another mesh;
    default: the Costs' transfer). Raises ScheduleError if an op is
    missing or repeated, on the wrong mesh, or the sequences wait on each
    other."""
    cost = pipeline_.cost_of(costs)
    move = _transfer_of(costs, transfer)
    mesh_of = pipeline_.placement.stage_mesh
    _check_orders(pipeline_, orders)
    end: dict[Op, float] = {}
    free = [0.0] * len(orders)
    cursor = [0] * len(orders)
    timeline: list[list[tuple[Op, float, float]]] = [[] for _ in orders]
    remaining = sum(len(seq) for seq in orders)
    while remaining:
        progressed = False
        for r, seq in enumerate(orders):
            while cursor[r] < len(seq):
                op = seq[cursor[r]]
                start = free[r]
                for dep in pipeline_.dependencies(op):
                    done = end.get(dep)
                    if done is None:
                        break
                    start = max(start, done + (
                        move if mesh_of[dep.stage] != r else 0.0))
                else:
                    finish = start + cost(op)
                    end[op] = finish
                    free[r] = finish
                    timeline[r].append((op, start, finish))
                    cursor[r] += 1
                    remaining -= 1
                    progressed = True
                    continue
                break
        if not progressed:
            stuck = [f"mesh {r}: {seq[cursor[r]]}"
                     for r, seq in enumerate(orders) if cursor[r] < len(seq)]
            raise ScheduleError("the per-mesh orders wait on each other: "
                                + "; ".join(stuck[:8]))
    return PipelineRun(tuple(tuple(line) for line in timeline))


def _check_orders(pipeline_: Pipeline, orders: Sequence[Sequence[Op]]) -> None:
    if len(orders) != pipeline_.num_meshes:
        raise ScheduleError(f"{len(orders)} orders for "
                            f"{pipeline_.num_meshes} meshes")
    expected = collections.Counter(pipeline_.ops())
    seen: collections.Counter = collections.Counter()
    for r, seq in enumerate(orders):
        for op in seq:
            if pipeline_.placement.stage_mesh[op.stage] != r:
                raise ScheduleError(f"mesh {r} runs {op}, a stage of mesh "
                                    f"{pipeline_.placement.stage_mesh[op.stage]}")
            seen[op] += 1
    if seen != expected:
        extra = sorted(str(op) for op in seen - expected)
        missing = sorted(str(op) for op in expected - seen)
        raise ScheduleError(f"the orders run ops twice or not at all: extra "
                            f"{extra[:6]}, missing {missing[:6]}")


def peak_in_flight(pipeline_: Pipeline, orders: Sequence[Sequence[Op]],
                   weight_memory: float = 1.0) -> tuple[float, ...]:
    """Per mesh, the most activations held at once, in microbatches (a
    microbatch's activations for all its stages on the mesh count 1): F
    adds a stage's share, B frees it but `weight_memory` of it where a W
    follows, W frees the rest."""
    peaks = []
    for r, seq in enumerate(orders):
        units = pipeline_.units(r) or 1
        held = peak = 0.0
        for op in seq:
            if not pipeline_.backward[op.stage]:
                continue
            split = pipeline_.weight[op.stage]
            held += {"F": 1.0, "B": -(1.0 - weight_memory) if split
                     else -1.0, "W": -weight_memory}[op.kind]
            peak = max(peak, held)
        peaks.append(peak / units)
    return tuple(peaks)


def program_fragments(pipeline_: Pipeline) -> list:
    """The fragments a pipelined step of `pipeline_` reports to schedules
    (`mpmd.schedules.FragmentInfo`), in program order: each microbatch's
    forwards through the stages, then its backwards back, each B followed
    by its W; stage s is the named computation `s<s>` on mesh `m<r>`."""
    from mpmd.compiler import FragmentKind  # noqa: PLC0415
    from mpmd.runtime.origins import Origin  # noqa: PLC0415
    from mpmd.schedules.core import FragmentInfo  # noqa: PLC0415

    kinds = {"F": FragmentKind.FORWARD, "B": FragmentKind.BACKWARD,
             "W": FragmentKind.WEIGHT_GRADIENT}
    present = set(pipeline_.ops())
    stages = pipeline_.placement.num_stages
    fragments = []
    for i in range(pipeline_.microbatches):
        walk = [Op("F", s, i) for s in range(stages)]
        for s in reversed(range(stages)):
            walk += [Op("B", s, i), Op("W", s, i)]
        for op in walk:
            if op not in present:
                continue
            count = 0 if op.kind == "F" else 1
            label = f"s{op.stage}" + ("(1)" if count else "") + (
                "[w]" if op.kind == "W" else "")
            fragments.append(FragmentInfo(
                (Origin(f"s{op.stage}", count),), op.stage, i,
                f"m{pipeline_.placement.stage_mesh[op.stage]}",
                kinds[op.kind], label, f"{label}#{i}"))
    return fragments


def orders_of(schedule: pipeline.PipelineSchedule, pipeline_: Pipeline
              ) -> list[list[Op]]:
    """Per mesh, the order a `PipelineSchedule` (a registry schedule, or
    `cost_driven`'s) gives a pipelined step of `pipeline_`: exactly what
    the compiler applies, evaluated by `mpmd.pipeline.to_mpmd` over the
    step's fragments (`program_fragments`)."""
    fragments = program_fragments(pipeline_)
    split = any(pipeline_.weight)
    order, _ = pipeline.to_mpmd(schedule, fragments, pipeline_.num_meshes,
                                split)
    by_key = {f.key: f for f in fragments}
    result: list[list[Op]] = []
    for r in range(pipeline_.num_meshes):
        keys = order[f"m{r}"] if order else [
            f.key for f in fragments if f.mesh == f"m{r}"]
        seq = []
        for key in keys:
            f = by_key[key]
            kind = "F" if f.transpose_count == 0 else (
                "W" if key.split("#")[0].endswith("[w]") else "B")
            seq.append(Op(kind, f.stage, f.call_counter))
        result.append(seq)
    return result


