"""Automatic stage assignment: `make_config(topology, "auto")`.

The compiler measures each named computation of the traced program per
microbatch (FLOPs of its forward and backward, bytes of its parameters, of
the activations a microbatch keeps for its backward and of what it sends
on; `mpmd-auto-assign`, `lib/Transforms/Import/AutoAssign.cpp`) and splits
them, in program order, into one contiguous stage per mesh (topology order)
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

from mpmd.config import AssignmentError, ConfigError, MpmdConfig

__all__ = ["AutoChoice", "choose"]

# Schedules that put several stages on a mesh: the split here makes one.
_SEVERAL_STAGES_PER_MESH = ("interleaved-1f1b", "circular", "zero-bubble-v",
                            "dualpipe-v")


@dataclass(frozen=True)
class AutoChoice:
    """What the automatic assignment saw and chose."""
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
    (one stage per mesh), and what was chosen. Raises AssignmentError when
    no split fits (a memory limit nothing fits, more meshes than names, a
    hand assignment out of program order)."""
    options = config.partitioning_options
    schedule = options.pipeline_schedule
    if isinstance(schedule, str) and schedule in _SEVERAL_STAGES_PER_MESH:
        raise ConfigError(
            f"not supported yet: the automatic assignment makes one stage "
            f"per mesh, and pipeline_schedule {schedule!r} places several "
            "on each; assign the named computations to (mesh, stage) by "
            "hand for it")
    meshes = tuple(config.topology)
    stage_of_mesh = {mesh: index for index, mesh in enumerate(meshes)}
    fixed = [(name, mesh) for name, (mesh, _) in config.assignment.items()
             if name in computations]
    result = partitioner.auto_assign(
        meshes=list(meshes), fixed=fixed,
        memory_limit=options.auto_memory_limit_bytes or 0,
        gpipe=schedule == "gpipe")
    if "error" in result:
        culprit = result.get("culprit")
        raise AssignmentError(
            "automatic stage assignment: " + result["error"]
            + (f" (named computation {culprit!r})" if culprit else ""))
    choice = AutoChoice(meshes, tuple(result["costs"]), result["microbatches"],
                        tuple(result["inflight"]), result["auto"],
                        result.get("by_count", result["auto"]))
    assignment = dict(config.assignment)
    for name, (mesh, stage) in choice.assignment_of(choice.chosen).items():
        if name in assignment:
            # Hand-placed: its mesh, and the stage of that mesh.
            mesh = assignment[name][0]
            stage = stage_of_mesh[mesh]
        assignment[name] = (mesh, stage)
    return dataclasses.replace(config, assignment=assignment), choice


def report(choice: AutoChoice,
           simulate_split: Callable[[dict[str, Any]], Any]) -> str:
    """Per mesh: its names, estimated FLOPs and memory, and simulated busy
    and idle time, for the chosen split and for the split by count.
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
        for stage, mesh in enumerate(choice.meshes):
            names = [cost["name"] for cost, s in
                     zip(choice.costs, split["stage_of"]) if s == stage]
            shown = ", ".join(names)
            if len(shown) > 34:
                shown = f"{names[0]} .. {names[-1]} ({len(names)})"
            busy = simulation.busy.get(mesh, 0.0)
            lines.append(
                f"{mesh:<6} {shown:<34} {split['flops'][stage] / 1e6:10.3f} "
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
