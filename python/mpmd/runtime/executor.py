"""Executes an execution plan on jax.Arrays.

Every distinct program is compiled once for its mesh. A call dispatches
asynchronously (like `jax.jit`), so the meshes run concurrently while Python
walks the plan; transfers are device-to-device copies into the target mesh;
each value is dropped at its last use so its buffers are freed (or donated,
where the plan says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime.plan import CallStep, ExecutionPlan, Layout, TensorSpec
from mpmd.runtime.program import MeshProgram, transfer
from mpmd.runtime.trace import StepRecorder

__all__ = ["PlanExecutor", "ProgramExecutionError", "partition_spec",
           "sharding_for"]


class ProgramExecutionError(MpmdError):
    """A program of the plan failed while running."""


def partition_spec(layout: Layout | None) -> PartitionSpec:
    """The PartitionSpec of a plan layout (axes per dimension)."""
    if layout is None:
        return PartitionSpec()
    entries = [tuple(axes) if len(axes) > 1 else (axes[0] if axes else None)
               for axes in layout]
    while entries and entries[-1] is None:  # P(None, "x") as users write it
        entries.pop()
    return PartitionSpec(*entries)


def sharding_for(spec: TensorSpec, meshes: dict[str, Mesh]) -> NamedSharding:
    """The NamedSharding a plan tensor has on its mesh."""
    return NamedSharding(meshes[spec.mesh], partition_spec(spec.sharding),
                         memory_kind=spec.memory_kind)


@dataclass
class PlanExecutor:
    plan: ExecutionPlan
    meshes: dict[str, Mesh]
    programs: dict[str, MeshProgram]
    # Per step index, the constant arguments of the call, on its mesh.
    constants: dict[int, list[jax.Array]] = field(default_factory=dict)

    @classmethod
    def compile(cls, plan: ExecutionPlan,
                meshes: dict[str, Mesh]) -> "PlanExecutor":
        programs = {}
        for name, spec in plan.programs.items():
            mesh = meshes[spec.mesh]
            programs[name] = MeshProgram.compile(
                spec.module, mesh, name=name,
                in_shardings=[NamedSharding(mesh, partition_spec(layout))
                              for layout in spec.in_shardings] or None,
                out_shardings=[NamedSharding(mesh, partition_spec(layout))
                               for layout in spec.out_shardings] or None,
                donate_argnums=spec.donated_args)
        # Constant arguments are placed once; equal ones share their arrays.
        placed: dict[tuple, jax.Array] = {}
        constants: dict[int, list[jax.Array]] = {}
        for index, step in enumerate(plan.steps):
            if not isinstance(step, CallStep) or not step.constants:
                continue
            arrays = []
            for value in step.constants:
                key = (step.mesh, value.dtype.str, value.shape, value.tobytes())
                if key not in placed:
                    placed[key] = jax.device_put(value, NamedSharding(
                        meshes[step.mesh], PartitionSpec()))
                arrays.append(placed[key])
            constants[index] = arrays
        return cls(plan, meshes, programs, constants)

    def input_shardings(self) -> list[NamedSharding]:
        return [sharding_for(spec, self.meshes) for spec in self.plan.inputs]

    def output_shardings(self) -> list[NamedSharding]:
        return [sharding_for(spec, self.meshes) for spec in self.plan.outputs]

    def run(self, inputs: Sequence[jax.Array],
            recorder: "StepRecorder | None" = None) -> list[jax.Array]:
        """Runs the plan on inputs already placed on their meshes."""
        env: dict[int, jax.Array] = dict(enumerate(inputs))
        constants = self.constants
        for index, step in enumerate(self.plan.steps):
            if isinstance(step, CallStep):
                args = [env[value] for value in step.inputs]
                if step.constants:
                    args.extend(constants[index])
                if recorder:
                    recorder.before(step)
                try:
                    results = self.programs[step.program](*args)
                except MpmdError:
                    raise
                except Exception as error:  # XLA reports as RuntimeError etc.
                    raise ProgramExecutionError(
                        f"program {step.program} on mesh {step.mesh!r} "
                        f"(origins: {', '.join(step.origins) or 'inferred'}) "
                        f"failed: {error}") from error
                if recorder:
                    recorder.after(step, results)
                env.update(zip(step.outputs, results))
            else:
                target = sharding_for(step.type, self.meshes)
                if recorder:
                    recorder.before(step)
                env[step.output] = transfer(env[step.input], target)
                if recorder:
                    recorder.after(step, [env[step.output]])
            for value in step.free:
                env.pop(value, None)
        return [env[value] for value in self.plan.output_values]

