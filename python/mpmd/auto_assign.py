"""Automatic stage assignment: `make_config(topology, "auto")`.

The compiler measures each named computation of the traced program per
microbatch (FLOPs of its forward and backward, bytes of its parameters, of
the activations a microbatch keeps for its backward and of what it sends
on; `mpmd-auto-assign`, `lib/Transforms/Import/AutoAssign.cpp`) and splits
them, in program order, into contiguous stages (one per mesh in topology
order, or two per mesh for schedules that hold several: `stage_layout`)
that minimizes the busiest stage's FLOPs, under
`partitioning_options["auto_memory_limit_bytes"]` per mesh. Hand-assigned
names stay where they are. This module asks for that split, turns it into
the assignment the partitioner takes, and reports it next to the split by
count, with the project's pipeline simulator.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from mpmd.config import AssignmentError, MpmdConfig

__all__ = ["AutoChoice", "choose"]

# Stages per mesh where a schedule places several in rounds (interleaved
# 1F1B, circular): mesh r holds stages r, r + p, ...
ROUNDS_PER_MESH = 2


def stage_layout(schedule: Any, meshes: tuple[str, ...]) -> tuple[str, ...]:
    """The mesh of each stage under `schedule`: one stage per mesh, or, for
    schedules that place several, two per mesh in rounds (interleaved-1f1b,
    circular: stage s on mesh s mod p) or in a V (zero-bubble-v,
    dualpipe-v: stages r and 2p-1-r on mesh r)."""
    from mpmd.schedules import registry  # noqa: PLC0415

    schedules = registry.PIPELINE_SCHEDULES
    p = len(meshes)
    if schedule is schedules["ZERO_BUBBLE_V"] or \
            schedule is schedules["DUALPIPE_V"]:
        return tuple(meshes) + tuple(reversed(meshes))
    if schedule == "interleaved-1f1b" or schedule is schedules["CIRCULAR"] \
            or schedule is schedules["CIRCULAR_WITH_REVERSED_BACKWARD"]:
        return tuple(meshes[s % p] for s in range(ROUNDS_PER_MESH * p))
    return tuple(meshes)


@dataclass(frozen=True)
class AutoChoice:
    """What the automatic assignment saw and chose."""
    # The mesh of each stage, in stage order.
    meshes: tuple[str, ...]
    # Per named computation, in program order: name, forward_flops,
    # backward_flops, parameter_bytes, activation_bytes, output_bytes.
    costs: tuple[dict[str, Any], ...]
    microbatches: int
    # Per stage (mesh): microbatches in flight under the schedule.
    inflight: tuple[int, ...]
    # {stage_of, flops, memory} of the chosen split and of the split by
    # count.
    chosen: dict[str, Any]
    by_count: dict[str, Any]

    def assignment_of(self, split: dict[str, Any]) -> dict[str, tuple[str, int]]:
        return {cost["name"]: (self.meshes[stage], stage)
                for cost, stage in zip(self.costs, split["stage_of"])}


def choose(config: MpmdConfig, partitioner: Any,
           computations: set[str]) -> tuple[MpmdConfig, AutoChoice]:
    """`config` with the named computations it leaves out assigned by cost
    (stages laid out by `stage_layout`), and what was chosen. Raises
    AssignmentError when no split fits (a memory limit nothing fits, more
    stages than names, a hand assignment out of program order or without
    the stage its mesh needs)."""
    options = config.partitioning_options
    schedule = options.pipeline_schedule
    layout = stage_layout(schedule, tuple(config.topology))
    per_mesh = len(layout) // len(config.topology)
    fixed = []
    for name, (mesh, stage) in config.assignment.items():
        if name not in computations:
            continue
        stages = [s for s, m in enumerate(layout) if m == mesh]
        if stage is None and len(stages) == 1:
            stage = stages[0]
        if stage is None or stage not in stages:
            raise AssignmentError(
                f"assignment[{name!r}] is {mesh!r}"
                + (f" with stage {stage}" if stage is not None else "")
                + f", but with this schedule mesh {mesh!r} holds stages "
                f"{stages}; assign it ({mesh!r}, stage) with one of those")
        fixed.append((name, stage))
    limit = options.auto_memory_limit_bytes or 0
    result = partitioner.auto_assign(
        stages=len(layout), fixed=fixed,
        # The limit is per mesh; its stages share it evenly.
        memory_limit=limit // per_mesh if limit else 0,
        gpipe=schedule == "gpipe")
    if "error" in result:
        culprit = result.get("culprit")
        raise AssignmentError(
            "automatic stage assignment: " + result["error"]
            + (f" (named computation {culprit!r})" if culprit else ""))
    choice = AutoChoice(layout, tuple(result["costs"]), result["microbatches"],
                        tuple(result["inflight"]), result["auto"],
                        result.get("by_count", result["auto"]))
    assignment = dict(config.assignment)
    assignment.update(choice.assignment_of(choice.chosen))
    return dataclasses.replace(config, assignment=assignment), choice


def report(choice: AutoChoice,
           simulate_split: Callable[[dict[str, Any]], Any]) -> str:
    """Per mesh (per stage, `mesh:s<k>`, where a mesh holds several): its
    names, estimated FLOPs and memory, and the mesh's simulated busy and
    idle time, for the chosen split and for the split by count.
    `simulate_split(split)` returns the project simulator's result for the
    step partitioned with that split (`choice.assignment_of(split)`)."""
    lines = []
    columns = (f"{'mesh':<6} {'names':<34} {'MFLOP':>10} {'memory MiB':>11} "
               f"{'busy':>10} {'idle':>10}")
    for title, split in (("auto", choice.chosen), ("by count", choice.by_count)):
        simulation = simulate_split(split)
        busiest = max(split["flops"]) if split["flops"] else 0.0
        lines.append(f"{title}: busiest mesh {busiest / 1e6:.3f} MFLOP per "
                     f"microbatch; simulated step {simulation.step_time / 1e6:.3f}"
                     f" MFLOP-time, bubble {simulation.bubble_fraction:.3f} "
                     "(busy and idle in MFLOP-time: each call costs its FLOPs)")
        lines.append(columns)
        several = len(set(choice.meshes)) < len(choice.meshes)
        for stage, mesh in enumerate(choice.meshes):
            names = [cost["name"] for cost, s in
                     zip(choice.costs, split["stage_of"]) if s == stage]
            shown = ", ".join(names)
            if len(shown) > 34:
                shown = f"{names[0]} .. {names[-1]} ({len(names)})"
            busy = simulation.busy.get(mesh, 0.0)
            label = f"{mesh}:s{stage}" if several else mesh
            lines.append(
                f"{label:<6} {shown:<34} {split['flops'][stage] / 1e6:10.3f} "
                f"{split['memory'][stage] / 2**20:11.3f} {busy / 1e6:10.3f} "
                f"{(simulation.step_time - busy) / 1e6:10.3f}")
        lines.append("")
    return "\n".join(lines).rstrip()


def flop_costs(choice: AutoChoice) -> Callable[[Any], float]:
    """A simulator cost per call: the FLOPs of the named computations it
    runs (forward or backward), inferred work and transfers free."""
    forward = {c["name"]: c["forward_flops"] for c in choice.costs}
    backward = {c["name"]: c["backward_flops"] for c in choice.costs}

    def cost(step: Any) -> float:
        total = 0.0
        for origin in step.origins:
            table = backward if origin.is_backward else forward
            total += table.get(origin.name, 0.0)
        return total

    return cost


def stack_layers(config: MpmdConfig, partitioner: Any,
                 computations: set[str], splits: dict[str, Any]
                 ) -> dict[str, Any] | None:
    """For stacks split with `layers="auto"` (`mpmd.StackSplit`): the
    layer counts that balance the meshes' estimated work, each mesh's
    other named computations included (an embedding on the first mesh, a
    head on the last), as the config's `stacks` with those counts; None
    when the traced (even) split is already that. The compiler measures
    every named computation of the program traced with the even split
    (mpmd-auto-assign, forward and backward FLOPs per microbatch); each
    layer of a stack costs the same."""
    meshes = list(config.topology)
    stage_of = {mesh: index for index, mesh in enumerate(meshes)}
    fixed = [(name, stage_of[mesh]) for name, (mesh, _)
             in config.assignment.items() if name in computations]
    result = partitioner.auto_assign(stages=len(meshes), fixed=fixed)
    if "error" in result:
        raise AssignmentError(
            "automatic layer counts: the compiler could not measure the "
            f"program: {result['error']}")
    flops = {cost["name"]: cost["forward_flops"] + cost["backward_flops"]
             for cost in result["costs"]}
    stacks = dict(config.stacks)
    changed = False
    for name, record in splits.items():
        split = record.split
        if not split.auto:
            continue
        if len(set(split.meshes)) != len(split.meshes):
            raise AssignmentError(
                f"not supported yet: automatic layer counts for {name!r}, "
                f"split over {list(split.meshes)} with a mesh twice; give "
                "the counts (mpmd.StackSplit(meshes, layers=[...]))")
        pieces = set(record.pieces)
        per_layer = sum(flops.get(piece, 0.0) for piece in pieces) / \
            record.length
        other = {mesh: 0.0 for mesh in meshes}
        for piece, (mesh, _) in config.assignment.items():
            if piece in computations and piece not in pieces:
                other[mesh] += flops.get(piece, 0.0)
        counts = balanced_counts([other[m] for m in split.meshes],
                                 per_layer, record.length)
        stacks[name] = split.with_layers(counts)  # no longer "auto"
        changed |= tuple(hi - lo for lo, hi in record.bounds) != \
            tuple(counts)
    return stacks if changed else None


def balanced_counts(other: list[float], per_layer: float,
                    length: int) -> list[int]:
    """Layers per mesh (at least one each, `length` in all) minimizing the
    busiest mesh's work, mesh j doing `other[j]` besides its layers."""
    counts = [1] * len(other)
    for _ in range(length - len(other)):
        j = min(range(len(other)),
                key=lambda i: (other[i] + (counts[i] + 1) * per_layer, i))
        counts[j] += 1
    return counts
