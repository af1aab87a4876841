"""Run an exported MPMD module: ours, or one the real Shardy:MPMD partitioned.

    run = mpmd.runtime.compile_module(text, topology)
    results = run(*arguments)          # main's flat arguments, in order

`text` is an MPMD module as partitioning leaves it: `main` carries the
topology and calls outlined SPMD programs with `mpmd.fragment_call`, moving
values between meshes with `mpmd.transfer` (what `as_text("mpmd")` prints,
`mpmd.jit`'s or Shardy:MPMD's). `topology` maps each mesh name of the
module to a `jax.sharding.Mesh` of the declared axes.

The compiler reads the execution plan off the module (the plan `mpmd.jit`
runs, `mpmd.runtime.plan`); every distinct program is compiled once for its
mesh and the plan runs on the runtime `Compiled` uses
(`PlanExecutor`). In a job of several processes every process calls
`compile_module` and the module the same way: each runs the programs of the
meshes it holds devices of and its part of the transfers.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.errors import CompilerError, MpmdError
from mpmd.runtime import processes
from mpmd.runtime.executor import PlanExecutor
from mpmd.runtime.plan import (_DTYPES, _ML_DTYPES, CallStep, ExecutionPlan,
                               MeshSpec, TensorSpec, total_cost)

__all__ = ["CompiledModule", "ModuleError", "ModuleInputError",
           "compile_module"]


class ModuleError(MpmdError, ValueError):
    """The module or the topology given to `compile_module` cannot run as
    given (a mesh missing or of another shape, meshes sharing devices, a
    topology that is not a mapping of meshes)."""


class ModuleInputError(ModuleError):
    """A call's arguments do not match the module's `main`."""


# What compile_module needs, for messages that refuse a module.
_EXPORTED = (
    "compile_module runs an exported MPMD module, as `as_text(\"mpmd\")` of "
    "mpmd.jit or of Shardy:MPMD prints it: a public `main` with a "
    "`topology` attribute whose arguments and results are "
    "!mpmd.mesh_tensor values, and whose body only calls outlined programs "
    "(mpmd.fragment_call) and moves values between meshes (mpmd.transfer); "
    "a module still holding mpmd.fragment, mpmd.named_computation or "
    "mpmd.call ops in main has not been partitioned and exported")

# The empty pass pipeline: the module is read as it is.
_NO_PASSES = "builtin.module()"


def compile_module(text: str, topology: Mapping[str, Mesh], *,
                   source_name: str = "<module>") -> "CompiledModule":
    """Compiles an exported MPMD module for `topology` and returns a
    `CompiledModule`: call it with `main`'s arguments, flat and in order
    (`jax.Array`s, numpy arrays or Python scalars), and it returns `main`'s
    results as a list of `jax.Array`s.

    `topology` maps every mesh name of the module's topology to a
    `jax.sharding.Mesh` with the declared axis names and sizes, in order
    (`<"m1" : <["data"=2, "model"=2]>>` takes `Mesh(devices.reshape(2, 2),
    ("data", "model"))`), no two of them sharing a device; other meshes
    in it are ignored. `source_name` names the text in the compiler's
    messages.

    Raises `CompilerError` when the compiler cannot read the module or
    build its plan (its diagnostics name the op), `ModuleError` when the
    topology does not fit the module, `ProgramCompileError` when XLA cannot
    compile a program, `UnsupportedMemoryKindError` when a value is to live
    in a memory its mesh's devices lack, and `ProcessError` when the
    processes of a job compiled different modules or topologies.
    """
    start = time.perf_counter()
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if not isinstance(text, str):
        raise ModuleError(
            f"compile_module takes the module as text (str), got "
            f"{type(text).__name__}; pass str(module) or "
            "lowered.as_text(\"mpmd\")")
    meshes = _check_topology_type(topology)
    try:
        module_text, plan_json = _compile_to_plan(text, source_name)
    except CompilerError as error:
        raise _refused(error) from None
    plan = ExecutionPlan.from_json(plan_json)
    read = time.perf_counter()
    meshes = _module_meshes(plan, meshes)
    # Every process of a job must run the same plan on the same devices,
    # or they would wait for each other's transfers forever.
    processes.agree_on_plan(processes.plan_fingerprint(module_text, meshes),
                            f"module @{plan.function} ({source_name})")
    executor = PlanExecutor.compile(plan, meshes)
    compiled = CompiledModule(module_text, plan, executor)
    compiled.timings = {"plan": read - start,
                        "compile": time.perf_counter() - read}
    return compiled


def _compile_to_plan(text: str, source_name: str) -> tuple[str, str]:
    from mpmd.compiler import compile_to_plan  # noqa: PLC0415

    return compile_to_plan(text, _NO_PASSES, source_name=source_name)


def _refused(error: CompilerError) -> CompilerError:
    """The compiler's error with its first diagnostic as the headline (the
    op or argument at fault, where in the text) and, where the plan could
    not be built, what an exported module is; the compiler's text is kept
    as a note."""
    first = next(iter(error.errors), None)
    message = first.message if first is not None else error.summary
    where = (f" (at {first.location})"
             if first is not None and first.location else "")
    notes: list[str] = []
    if error.summary.startswith("failed to parse"):
        headline = (f"compile_module: the module does not parse or verify: "
                    f"{message}{where}")
    elif message.startswith("not supported yet"):
        # An exported module using what the runtime does not run yet.
        headline = f"compile_module: {message}{where}"
    else:
        headline = (f"compile_module: the module is not an exported MPMD "
                    f"module: {message}{where}")
        notes = [f"note: {_EXPORTED}"]
    return CompilerError(headline, error.diagnostics, notes=notes,
                         retold=True)


def _check_topology_type(topology: Any) -> dict[str, Mesh]:
    if not isinstance(topology, Mapping):
        raise ModuleError(
            "compile_module takes the topology as a mapping of mesh name to "
            f"jax.sharding.Mesh, got {type(topology).__name__}")
    for name, mesh in topology.items():
        if not isinstance(mesh, Mesh):
            raise ModuleError(
                f"topology[{name!r}] is a {type(mesh).__name__}, not a "
                "jax.sharding.Mesh")
    return dict(topology)


def _declared(spec: MeshSpec) -> str:
    """A mesh as the module's topology declares it: `<["x"=2]>`."""
    axes = ", ".join(f'"{axis}"={size}' for axis, size in spec.axes)
    return f"<[{axes}]>"


def _mesh_axes(mesh: Mesh) -> tuple[tuple[str, int], ...]:
    return tuple((str(axis), int(size))
                 for axis, size in zip(mesh.axis_names, mesh.devices.shape))


def _module_meshes(plan: ExecutionPlan,
                   topology: dict[str, Mesh]) -> dict[str, Mesh]:
    """The topology's meshes of the module, each checked against the
    module's declaration."""
    names = [spec.name for spec in plan.meshes]
    missing = [name for name in names if name not in topology]
    if missing:
        quoted = ", ".join(repr(name) for name in missing)
        raise ModuleError(
            f"the topology has no mesh {quoted}: the module's main runs on "
            f"meshes {', '.join(map(repr, names))}, and the topology given "
            f"has {', '.join(map(repr, topology)) or 'none'}; add "
            + "; ".join(f"{spec.name!r}: a Mesh of axes {_declared(spec)}"
                        for spec in plan.meshes if spec.name in missing))
    meshes = {}
    for spec in plan.meshes:
        mesh = topology[spec.name]
        if spec.device_ids is not None:
            raise ModuleError(
                f"not supported yet: mesh {spec.name!r} of the module's "
                f"topology lists device ids {list(spec.device_ids)}; "
                "compile_module lays each mesh out as the jax Mesh given "
                "for it")
        if _mesh_axes(mesh) != spec.axes:
            given = ", ".join(f'"{axis}"={size}'
                              for axis, size in _mesh_axes(mesh))
            shape = tuple(size for _, size in spec.axes)
            axis_names = tuple(axis for axis, _ in spec.axes)
            raise ModuleError(
                f"mesh {spec.name!r} of the topology has axes <[{given}]>, "
                f"but the module declares {spec.name!r} as "
                f"{_declared(spec)}: give a Mesh of shape {shape} with axis "
                f"names {axis_names}")
        meshes[spec.name] = mesh
    # A transfer between meshes on the same devices may hand over the very
    # buffers a program of either mesh then donates.
    owner: dict[int, str] = {}
    for name, mesh in meshes.items():
        for device in mesh.devices.flat:
            if device.id in owner:
                raise ModuleError(
                    f"meshes {owner[device.id]!r} and {name!r} of the "
                    f"topology share device {device.id}; each device "
                    "belongs to one mesh of the module")
            owner[device.id] = name
    return meshes


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
    """

    def __init__(self, module_text: str, plan: ExecutionPlan,
                 executor: PlanExecutor):
        self.module_text = module_text
        self.plan = plan
        self.executor = executor
        self.meshes: dict[str, Mesh] = dict(executor.meshes)
        self.input_shardings: tuple[NamedSharding, ...] = tuple(
            executor.input_shardings())
        self.output_shardings: tuple[NamedSharding, ...] = tuple(
            executor.output_shardings())
        # What an argument passed as is must match, per flat input.
        self._expected = tuple(
            (spec.shape, spec.dtype, sharding) for spec, sharding in
            zip(plan.inputs, self.input_shardings))
        self.donated_inputs: tuple[int, ...] = _donated_inputs(plan)
        # Seconds spent reading the plan and compiling the programs.
        self.timings: dict[str, float] = {}

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
        return "\n".join(
            f"// program {name} on mesh {self.plan.programs[name].mesh}\n"
            f"{program.compiled.as_text()}"
            for name, program in self.executor.programs.items())

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost analysis of one call: each compiled program's times
        the number of times the plan calls it, summed."""
        return total_cost(self.plan, {
            name: program.compiled.cost_analysis()
            for name, program in self.executor.programs.items()})

    def __call__(self, *args: Any) -> list[jax.Array]:
        from mpmd.arguments import as_placed  # noqa: PLC0415

        # The common case first: every argument already in place.
        placed = as_placed(args, self._expected)
        if placed is None:
            placed = self.place(*args)
        return self.executor.run(placed)

    def place(self, *args: Any) -> list[jax.Array]:
        """`main`'s arguments checked and put on their meshes, in the
        layouts `main` takes, without running anything: what a call does
        first. Placing once and calling with the placed arrays spares the
        copies in a loop."""
        inputs = self.plan.inputs
        if len(args) != len(inputs):
            raise ModuleInputError(
                f"@{self.function} takes {len(inputs)} arguments "
                f"(flat, in order), got {len(args)}")
        placed = []
        for index, (value, spec, sharding) in enumerate(
                zip(args, inputs, self.input_shardings)):
            placed.append(self.executor.place(
                self._checked(index, value, spec), sharding))
        return placed

    def _checked(self, index: int, value: Any, spec: TensorSpec) -> Any:
        """`value` as argument `index` takes it, or ModuleInputError."""
        if isinstance(value, (bool, int, float, complex)) and not \
                isinstance(value, np.generic):
            # A Python number takes the argument's dtype where it fits it
            # (as jax.jit's weak types do).
            fits = np.can_cast(np.dtype(type(value)), spec.dtype,
                               "same_kind")
            try:
                value = np.asarray(value, spec.dtype if fits else None)
            except OverflowError:  # an int too large for the dtype
                value = np.asarray(value)
        elif not hasattr(value, "shape") or not hasattr(value, "dtype"):
            try:
                array = np.asarray(value)
            except Exception:  # noqa: BLE001 - anything not array-like
                array = None
            if array is None or array.dtype.kind in "OUSV":
                raise ModuleInputError(
                    f"argument {index} of @{self.function} is a "
                    f"{type(value).__name__}, not an array; "
                    f"{self._takes(spec)}")
            value = array
        if isinstance(value, jax.Array):
            if value.is_deleted():
                raise ModuleInputError(
                    f"argument {index} of @{self.function} was deleted "
                    "(donated to an earlier call?); pass a live array")
            dtype = np.dtype(value.dtype)
        else:
            # Host data is put on devices as jax.device_put puts it:
            # float64 becomes float32 unless 64-bit types are enabled.
            dtype = np.dtype(jax.dtypes.canonicalize_dtype(value.dtype))
        shape = tuple(value.shape)
        if shape != spec.shape or dtype != spec.dtype:
            raise ModuleInputError(
                f"argument {index} of @{self.function} has type "
                f"{_tensor_type(shape, dtype)}, but "
                f"{self._takes(spec)}")
        if not isinstance(value, jax.Array) and dtype != value.dtype:
            value = np.asarray(value, dtype)
        return value

    def _takes(self, spec: TensorSpec) -> str:
        return (f"@{self.function} takes {_mesh_tensor_type(spec)} there: "
                f"pass an array of shape {spec.shape} and dtype "
                f"{spec.dtype.name}")

    def __repr__(self) -> str:
        return (f"<CompiledModule @{self.function}: "
                f"{len(self.plan.inputs)} inputs, {len(self.plan.outputs)} "
                f"outputs, {len(self.plan.programs)} programs on meshes "
                f"{', '.join(self.meshes)}>")


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
