"""An exported MPMD module, compiled: what `compile_module` returns.

    run = mpmd.runtime.compile_module(text, topology)
    results = run(*arguments)          # main's flat arguments, in order

`compile_module` (`mpmd.module`, above the runtime: it needs the compiler
to read the module's plan) builds a `CompiledModule`, a wrapper over the
runtime's `PlanExecutable` that names arguments by their position in
`main`; this module holds it and its errors, and imports nothing from the
compiler.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.errors import MpmdError
from mpmd.runtime.executable import (ArgumentProblem, InputError,
                                     PlanExecutable)
from mpmd.runtime.plan import (_DTYPES, _ML_DTYPES, CallStep, ExecutionPlan,
                               MeshSpec, TensorSpec)

__all__ = ["CompiledModule", "ModuleError", "ModuleInputError",
           "check_topology_type", "describe_module_argument",
           "meshes_of_devices", "plan_meshes"]


class ModuleError(MpmdError, ValueError):
    """The module or the topology given to `compile_module` cannot run as
    given (a mesh missing or of another shape, meshes sharing devices, a
    topology that is not a mapping of meshes)."""


class ModuleInputError(ModuleError, InputError):
    """A call's arguments do not match the module's `main` (an InputError,
    as through `mpmd.jit`)."""


def _mlir_element(dtype: np.dtype) -> str:
    """MLIR's name of a NumPy dtype (`f32`), or NumPy's name where MLIR has
    none that the plan reads."""
    dtype = np.dtype(dtype)
    for name, numpy_type in _DTYPES.items():
        if np.dtype(numpy_type) == dtype:
            return name
    for name, ml_name in _ML_DTYPES.items():
        if dtype.name == ml_name:
            return name
    return dtype.name


def _tensor_type(shape: Sequence[int], dtype: Any) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_mlir_element(np.dtype(dtype))}>"


def _mesh_tensor_type(spec: TensorSpec) -> str:
    kind = (f', memory_kind="{spec.memory_kind}"'
            if spec.memory_kind not in (None, "device") else "")
    return (f'!mpmd.mesh_tensor<"{spec.mesh}", '
            f"{_tensor_type(spec.shape, spec.dtype)}{kind}>")


class CompiledModule:
    """An exported MPMD module compiled for a topology (`compile_module`).

    Call it with `main`'s arguments, flat and in order; it returns `main`'s
    results as a list of `jax.Array`s, each on its mesh with its layout
    (`output_shardings`). Arguments already on their mesh in the layout
    `main` takes (`input_shardings`) are used as they are; other
    `jax.Array`s are moved there device to device, and host data (numpy
    arrays, Python scalars) is put there. The arguments in
    `donated_inputs` are donated as `jax.jit`'s `donate_argnums` are: a
    `jax.Array` passed for one may be deleted by the call (host data is
    copied to the devices first, and the copy is donated).

    A thin wrapper over the runtime's `PlanExecutable`, as `mpmd.jit`'s
    `Compiled` is: it names arguments by their position in `main`.
    """

    def __init__(self, module_text: str, executable: PlanExecutable):
        self.module_text = module_text
        self.executable = executable
        self.plan: ExecutionPlan = executable.plan
        self.executor = executable.executor
        self.meshes: dict[str, Mesh] = dict(executable.meshes)
        self.input_shardings: tuple[NamedSharding, ...] = \
            executable.input_shardings
        self.output_shardings: tuple[NamedSharding, ...] = \
            executable.output_shardings
        self.donated_inputs: tuple[int, ...] = _donated_inputs(self.plan)
        # Seconds spent reading the plan and compiling the programs.
        self.timings: dict[str, float] = {}

    @classmethod
    def compile(cls, module_text: str, plan: ExecutionPlan,
                meshes: dict[str, Mesh], what: str) -> "CompiledModule":
        """Every process agrees on the module, then its programs compile."""
        return cls(module_text, PlanExecutable.compile(
            plan, meshes, module_text, what,
            describe=describe_module_argument(plan),
            error=ModuleInputError))

    @property
    def function(self) -> str:
        """The name of the entry function (`main`)."""
        return self.plan.function

    @property
    def inputs(self) -> tuple[jax.ShapeDtypeStruct, ...]:
        """Shape, dtype and sharding of each argument of `main`."""
        return tuple(jax.ShapeDtypeStruct(spec.shape, spec.dtype,
                                          sharding=sharding)
                     for spec, sharding in zip(self.plan.inputs,
                                               self.input_shardings))

    @property
    def outputs(self) -> tuple[jax.ShapeDtypeStruct, ...]:
        """Shape, dtype and sharding of each result of `main`."""
        return tuple(jax.ShapeDtypeStruct(spec.shape, spec.dtype,
                                          sharding=sharding)
                     for spec, sharding in zip(self.plan.outputs,
                                               self.output_shardings))

    def input_meshes(self) -> list[str]:
        """The mesh of each argument of `main`."""
        return [spec.mesh for spec in self.plan.inputs]

    def output_meshes(self) -> list[str]:
        """The mesh of each result of `main`."""
        return [spec.mesh for spec in self.plan.outputs]

    def schedule_text(self) -> str:
        """Per mesh, its calls in order, `mesh0: F F B ...`
        (`ExecutionPlan.schedule_text`)."""
        return self.plan.schedule_text()

    def programs_by_mesh(self) -> dict[str, list[str]]:
        """Per mesh, the distinct programs compiled for it."""
        return self.plan.programs_by_mesh()

    def as_text(self) -> str:
        """What XLA compiled: each program's optimized HLO, headed by its
        name and mesh (in a job of several processes, those of this
        process's meshes)."""
        return self.executable.as_text()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost analysis of one call: each compiled program's times
        the number of times the plan calls it, summed."""
        return self.executable.cost_analysis()

    def __call__(self, *args: Any) -> list[jax.Array]:
        return self.executable(args)

    def place(self, *args: Any) -> list[jax.Array]:
        """`main`'s arguments checked and put on their meshes, in the
        layouts `main` takes, without running anything: what a call does
        first. Placing once and calling with the placed arrays spares the
        copies in a loop."""
        return self.executable.place(args)

    def run_traced(self, *args: Any, source: str = "auto"
                   ) -> tuple[list[jax.Array], Any]:
        """Runs like a call, and returns the results with a `Trace` of the
        run (as `mpmd.jit`'s `Compiled.run_traced`)."""
        return self.executable.run_traced(self.executable.place(args),
                                          source)

    def run_with_memory(self, *args: Any) -> tuple[list[jax.Array], Any]:
        """Runs like a call, and returns the results with a `MemoryTable`
        (as `mpmd.jit`'s `Compiled.run_with_memory`)."""
        return self.executable.run_with_memory(args)

    def __repr__(self) -> str:
        return (f"<CompiledModule @{self.function}: "
                f"{len(self.plan.inputs)} inputs, {len(self.plan.outputs)} "
                f"outputs, {len(self.plan.programs)} programs on meshes "
                f"{', '.join(self.meshes)}>")


def describe_module_argument(plan: ExecutionPlan) -> Any:
    """How `compile_module` words a problem with an argument: by its
    position in `main`, and the type `main` declares for it."""
    function = plan.function

    def takes(index: int) -> str:
        spec = plan.inputs[index]
        return (f"@{function} takes {_mesh_tensor_type(spec)} there: pass "
                f"an array of shape {spec.shape} and dtype "
                f"{spec.dtype.name}")

    def describe(problem: ArgumentProblem) -> str:
        if problem.kind == "count":
            return (f"@{function} takes {len(plan.inputs)} arguments (flat, "
                    f"in order), got {problem.index}")
        where = f"argument {problem.index} of @{function}"
        if problem.kind == "deleted":
            return (f"{where} was deleted (donated to an earlier call?); "
                    "pass a live array")
        if problem.kind == "not_array":
            return (f"{where} is a {problem.type_name}, not an array; "
                    f"{takes(problem.index)}")
        return (f"{where} has type {_tensor_type(problem.shape, problem.dtype)}"
                f", but {takes(problem.index)}")

    return describe


def _donated_inputs(plan: ExecutionPlan) -> tuple[int, ...]:
    """The arguments of `main` a program donates (their buffers are reused
    by its results)."""
    count = len(plan.inputs)
    donated = set()
    for step in plan.steps:
        if isinstance(step, CallStep):
            for position in plan.programs[step.program].donated_args:
                if position < len(step.inputs) and \
                        step.inputs[position] < count:
                    donated.add(step.inputs[position])
    return tuple(sorted(donated))


# --- the topology a plan runs on -----------------------------------------------

def check_topology_type(topology: Any, door: str,
                        error: type[MpmdError]) -> dict[str, Mesh]:
    """`topology` as a dict of mesh name to `Mesh`, or `error` saying what
    `door` (`compile_module`, an export's call) takes."""
    if not isinstance(topology, Mapping):
        raise error(
            f"{door} takes the topology as a mapping of mesh name to "
            f"jax.sharding.Mesh, got {type(topology).__name__}")
    for name, mesh in topology.items():
        if not isinstance(mesh, Mesh):
            raise error(
                f"topology[{name!r}] is a {type(mesh).__name__}, not a "
                "jax.sharding.Mesh")
    return dict(topology)


def _declared(spec: MeshSpec) -> str:
    """A mesh as a plan's topology declares it: `<["x"=2]>`."""
    axes = ", ".join(f'"{axis}"={size}' for axis, size in spec.axes)
    return f"<[{axes}]>"


def _mesh_axes(mesh: Mesh) -> tuple[tuple[str, int], ...]:
    return tuple((str(axis), int(size))
                 for axis, size in zip(mesh.axis_names, mesh.devices.shape))


def plan_meshes(plan: ExecutionPlan, topology: dict[str, Mesh], what: str,
                error: type[MpmdError]) -> dict[str, Mesh]:
    """The topology's meshes of the plan, each checked against the plan's
    declaration (`what` names the plan's owner in messages: "the
    module"); `error` otherwise."""
    names = [spec.name for spec in plan.meshes]
    missing = [name for name in names if name not in topology]
    if missing:
        quoted = ", ".join(repr(name) for name in missing)
        raise error(
            f"the topology has no mesh {quoted}: {what}'s main runs on "
            f"meshes {', '.join(map(repr, names))}, and the topology given "
            f"has {', '.join(map(repr, topology)) or 'none'}; add "
            + "; ".join(f"{spec.name!r}: a Mesh of axes {_declared(spec)}"
                        for spec in plan.meshes if spec.name in missing))
    meshes = {}
    for spec in plan.meshes:
        mesh = topology[spec.name]
        if spec.device_ids is not None:
            raise error(
                f"not supported yet: mesh {spec.name!r} of {what}'s "
                f"topology lists device ids {list(spec.device_ids)}; "
                "each mesh is laid out as the jax Mesh given for it")
        if _mesh_axes(mesh) != spec.axes:
            given = ", ".join(f'"{axis}"={size}'
                              for axis, size in _mesh_axes(mesh))
            shape = tuple(size for _, size in spec.axes)
            axis_names = tuple(axis for axis, _ in spec.axes)
            raise error(
                f"mesh {spec.name!r} of the topology has axes <[{given}]>, "
                f"but {what} declares {spec.name!r} as "
                f"{_declared(spec)}: give a Mesh of shape {shape} with axis "
                f"names {axis_names}")
        meshes[spec.name] = mesh
    # A transfer between meshes on the same devices may hand over the very
    # buffers a program of either mesh then donates.
    owner: dict[int, str] = {}
    for name, mesh in meshes.items():
        for device in mesh.devices.flat:
            if device.id in owner:
                raise error(
                    f"meshes {owner[device.id]!r} and {name!r} of the "
                    f"topology share device {device.id}; each device "
                    f"belongs to one mesh of {what}")
            owner[device.id] = name
    return meshes


def meshes_of_devices(plan: ExecutionPlan, topology: dict[str, Mesh] | None,
                      what: str, error: type[MpmdError]) -> dict[str, Mesh]:
    """The meshes of a plan whose meshes name their devices (IFRT IR: each
    device list of the program is a mesh): a `Mesh` per mesh over the jax
    devices at those positions of `jax.devices()`, row-major over its
    axes. A `topology` given is checked against them: the same names, axes
    and devices, in order."""
    # The program's device ids are logical: positions in jax.devices().
    by_id = dict(enumerate(jax.devices()))
    meshes: dict[str, Mesh] = {}
    for spec in plan.meshes:
        if spec.devices is None:
            raise error(f"mesh {spec.name!r} of {what} names no devices")
        unknown = [i for i in spec.devices if i not in by_id]
        if unknown:
            raise error(
                f"mesh {spec.name!r} of {what} runs on devices "
                f"{list(spec.devices)}, but this job has {len(by_id)} "
                f"devices (0 to {len(by_id) - 1})")
        shape = tuple(size for _, size in spec.axes)
        devices = np.array([by_id[i] for i in spec.devices],
                           dtype=object).reshape(shape)
        meshes[spec.name] = Mesh(devices, tuple(a for a, _ in spec.axes))
    if topology is None:
        return meshes
    for name, mesh in meshes.items():
        given = topology.get(name)
        if given is None:
            raise error(
                f"the topology has no mesh {name!r}, which {what} runs on "
                f"devices {[d.id for d in mesh.devices.flat]}; give the "
                "meshes the program names, or no topology")
        if _mesh_axes(given) != _mesh_axes(mesh) or \
                [d.id for d in given.devices.flat] != \
                [d.id for d in mesh.devices.flat]:
            raise error(
                f"mesh {name!r} of the topology is axes "
                f"{dict(_mesh_axes(given))} over devices "
                f"{[d.id for d in given.devices.flat]}, but {what} runs it "
                f"as axes {dict(_mesh_axes(mesh))} over devices "
                f"{[d.id for d in mesh.devices.flat]}")
    return meshes
