"""The execution plan: what runs where, in which order.

The compiler emits it as JSON next to the exported MPMD module
(`mpmd.compiler.compile_to_plan`); the runtime needs nothing else. Values are
numbered: the program's inputs first, then each step's results.

The JSON carries its format version (`"version"`); this module reads
`PLAN_VERSION` only and refuses other plans with `PlanVersionError`
(docs/runtime.md, "Plan versions", lists the versions and their fields).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from mpmd.errors import MpmdError
from mpmd.runtime.origins import Origin, origins_from

__all__ = ["CallStep", "ExecutionPlan", "Layout", "MeshSpec", "PLAN_VERSION",
           "check_consistency",
           "PlanVersionError", "ProgramSpec", "TensorSpec", "TransferStep",
           "format_layout", "total_cost"]

# The plan format this runtime reads: the compiler's kExecutionPlanVersion
# (lib/Transforms/Export/ExecutionPlan.cpp says what bumps it). Plans are
# read by the build that wrote them, or kept (the partition cache, a user's
# file) and read by a later one: an exact match is the only safe check,
# since a plan of another format would be misread rather than rejected.
PLAN_VERSION = 1


class PlanVersionError(MpmdError, ValueError):
    """An execution plan of a format this runtime does not read (another
    version, or none: written before plans carried one)."""


_DTYPES = {
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
    "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
    "ui64": np.uint64, "f16": np.float16, "f32": np.float32,
    "f64": np.float64, "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
}
# MLIR's names of the element types ml_dtypes adds to NumPy.
_ML_DTYPES = {
    "bf16": "bfloat16", "i4": "int4", "ui4": "uint4", "i2": "int2",
    "ui2": "uint2", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
    "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E5M2FNUZ": "float8_e5m2fnuz",
    "f8E4M3B11FNUZ": "float8_e4m3b11fnuz", "f8E4M3": "float8_e4m3",
    "f8E3M4": "float8_e3m4", "f8E8M0FNU": "float8_e8m0fnu",
    "f4E2M1FN": "float4_e2m1fn",
}


def _dtype(name: str) -> np.dtype:
    if name in _DTYPES:
        return np.dtype(_DTYPES[name])
    if name in _ML_DTYPES:
        import ml_dtypes  # noqa: PLC0415  (ships with jax)

        dtype = getattr(ml_dtypes, _ML_DTYPES[name], None)
        if dtype is not None:
            return np.dtype(dtype)
    raise ValueError(f"unsupported element type in execution plan: {name}")


@dataclass(frozen=True)
class MeshSpec:
    name: str
    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...] | None = None
    # The devices the mesh is made of, row-major over its axes, as logical
    # ids (positions in jax.devices()) where the program names them (IFRT
    # IR); None where the topology given at compile time decides.
    devices: tuple[int, ...] | None = None

    @property
    def size(self) -> int:
        return int(np.prod([size for _, size in self.axes], dtype=np.int64))


@dataclass(frozen=True)
class TensorSpec:
    """A global tensor on a mesh, with its sharding (axes per dimension)."""

    mesh: str
    shape: tuple[int, ...]
    dtype: np.dtype
    sharding: Layout | None = None
    memory_kind: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TensorSpec":
        return cls(data["mesh"], tuple(data["shape"]), _dtype(data["dtype"]),
                   _layout(data.get("sharding")), data.get("memory_kind"))

    def short(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]@{self.mesh}{format_layout(self.sharding)}"


def format_layout(layout: Layout | None) -> str:
    """`{data, -}` style: the axes of each dimension, `-` for none; empty
    when replicated."""
    if layout is None:
        return ""
    return "{" + ", ".join("*".join(axes) or "-" for axes in layout) + "}"


Layout = tuple[tuple[str, ...], ...]


def _layout(data: Any) -> Layout | None:
    """Axes per dimension from the plan's JSON; None when replicated."""
    if data is None or all(not axes for axes in data):
        return None
    return tuple(tuple(axes) for axes in data)


@dataclass(frozen=True)
class ProgramSpec:
    name: str
    mesh: str
    module: str
    donated_args: tuple[int, ...]
    num_calls: int
    # Per argument / result: the axes of each dimension, or None (replicated).
    in_shardings: tuple[Layout | None, ...] = ()
    out_shardings: tuple[Layout | None, ...] = ()
    # Bytes per device other live values of the mesh take while the program
    # runs (the largest over its calls; mpmd-mark-fragment-reserved-memory).
    reserved_bytes: int = 0


@dataclass(frozen=True)
class CallStep:
    program: str
    mesh: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    origins: tuple[Origin, ...]
    free: tuple[int, ...]
    call_counter: int | None = None
    stage: int | None = None
    # The weight-gradient part of a backward split for zero-bubble schedules.
    weight_gradient: bool = False
    # Values passed after the inputs: constants export lifted out of the
    # program (e.g. the microbatch's index into the stacked batch).
    constants: tuple[np.ndarray, ...] = ()
    # A forward recomputed for its backward (jax.checkpoint, or the remat
    # option): `mpmd.remat` on the call.
    recompute: bool = False

    @property
    def kind(self) -> str:
        """"F", "B", "W" (weight gradient), "FB" (merged), "R" (a forward
        recomputed for its backward) or "" (inferred)."""
        if not self.origins:
            return ""
        if self.weight_gradient:
            return "W"
        backward = [origin.is_backward for origin in self.origins]
        if all(backward):
            return "B"
        if any(backward):
            return "FB"
        return "R" if self.recompute else "F"

    def label(self) -> str:
        """`layer1(1)` style: the origins, or the program for inferred code;
        weight-gradient parts end in `[w]`, recomputed forwards in `[r]`."""
        text = ("+".join(map(str, self.origins)) if self.origins
                else self.program)
        if self.weight_gradient:
            text += "[w]"
        if self.kind == "R":
            text += "[r]"
        if self.call_counter is not None:
            text += f"#{self.call_counter}"
        return text


@dataclass(frozen=True)
class TransferStep:
    input: int
    output: int
    source: str
    target: str
    type: TensorSpec
    free: tuple[int, ...]


Step = CallStep | TransferStep


def _program_specs(programs: dict[str, Any],
                   texts: Mapping[str, str] | None) -> dict[str, ProgramSpec]:
    return {name: ProgramSpec(
        name, p["mesh"], p["module"] if texts is None else texts[name],
        tuple(p["donated_args"]), p["num_calls"],
        tuple(_layout(s) for s in p.get("in_shardings", ())),
        tuple(_layout(s) for s in p.get("out_shardings", ())),
        p.get("reserved_bytes", 0))
            for name, p in programs.items()}


class _DeferredPrograms(Mapping):
    """`ExecutionPlan.programs` of a plan written without its programs'
    texts: the specs are made, with the texts, when a program is first
    read."""

    def __init__(self, programs: dict[str, Any],
                 texts: Callable[[], Mapping[str, str]]) -> None:
        self._programs: dict[str, Any] | None = programs
        self._texts: Callable[[], Mapping[str, str]] | None = texts
        self._specs: dict[str, ProgramSpec] | None = None
        self._names = tuple(programs)

    def _resolved(self) -> dict[str, ProgramSpec]:
        if self._specs is None:
            self._specs = _program_specs(self._programs, self._texts())
            self._programs = self._texts = None
        return self._specs

    def __getitem__(self, name: str) -> ProgramSpec:
        return self._resolved()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __repr__(self) -> str:
        return repr(self._resolved())


@dataclass(frozen=True)
class ExecutionPlan:
    function: str
    topology: str
    meshes: tuple[MeshSpec, ...]
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    output_values: tuple[int, ...]
    # A dict, or a Mapping that prints the texts when first read (a plan
    # of mpmd.lowering.partition, see from_json).
    programs: Mapping[str, ProgramSpec]
    steps: tuple[Step, ...] = field(default_factory=tuple)
    # The format version the plan was written in: from_json reads only
    # PLAN_VERSION, so a plan in hand always has it (plans built by hand
    # take it by default).
    version: int = PLAN_VERSION

    @classmethod
    def from_json(cls, text: str,
                  program_texts: Callable[[], Mapping[str, str]] | None = None
                  ) -> "ExecutionPlan":
        """Reads the compiler's JSON. Raises PlanVersionError, before
        reading anything else, when the plan is not of PLAN_VERSION.
        `program_texts`: for a plan written without its programs' texts
        (the compiler's `print_programs=False`), what gives them
        ({program: text}); called when a program is first read."""
        # A plan of 1024 microbatches is ~18k steps, ~17 MB of JSON: the
        # objects it makes hold no cycles, and the cyclic collector's passes
        # over a heap growing with them made reading it superlinear in M.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return cls._from_json(text, program_texts)
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def _from_json(cls, text: str,
                   program_texts: Callable[[], Mapping[str, str]] | None
                   ) -> "ExecutionPlan":
        data = json.loads(text)
        version = _check_version(data)
        steps: list[Step] = []
        for step in data["steps"]:
            if step["op"] == "call":
                steps.append(CallStep(
                    step["program"], step["mesh"], tuple(step["inputs"]),
                    tuple(step["outputs"]), origins_from(step["origins"]),
                    tuple(step["free"]), step.get("call_counter"),
                    step.get("stage"), step.get("weight_gradient", False),
                    tuple(np.asarray(c["data"], _dtype(c["dtype"])).reshape(
                        c["shape"]) for c in step.get("constants", ())),
                    step.get("recompute", False)))
            else:
                steps.append(TransferStep(
                    step["input"], step["output"], step["from"], step["to"],
                    TensorSpec.from_json(step["type"]), tuple(step["free"])))
        return cls(
            function=data["function"],
            topology=data["topology"],
            meshes=tuple(MeshSpec(m["name"], tuple(tuple(a) for a in m["axes"]),
                                  tuple(m["device_ids"]) if "device_ids" in m
                                  else None,
                                  tuple(m["devices"]) if "devices" in m
                                  else None)
                         for m in data["meshes"]),
            inputs=tuple(TensorSpec.from_json(t) for t in data["inputs"]),
            outputs=tuple(TensorSpec.from_json(t) for t in data["outputs"]),
            output_values=tuple(t["value"] for t in data["outputs"]),
            programs=(_program_specs(data["programs"], None)
                      if program_texts is None
                      else _DeferredPrograms(data["programs"],
                                             program_texts)),
            steps=tuple(steps),
            version=version,
        )

    def calls(self) -> list[CallStep]:
        return [s for s in self.steps if isinstance(s, CallStep)]

    def mesh_order(self) -> dict[str, list[str]]:
        """Per mesh, the labels of the calls it runs, in order."""
        order: dict[str, list[str]] = {m.name: [] for m in self.meshes}
        for step in self.calls():
            order[step.mesh].append(step.label())
        return order

    def schedule_text(self) -> str:
        """Per mesh, one line like `m1: F0 F1 B0 F2 B1 ...`: the kind (`F`
        forward, `B` backward, `W` weight gradient, `FB` merged, `R` a
        forward recomputed for its backward) and the
        microbatch of each user fragment, in order; inferred fragments are
        left out. On a mesh that holds several stages (interleaved 1F1B,
        the V schedules) each entry also names its stage: `F0@s4` is the
        forward of microbatch 0 in stage 4. Meshes with one stage keep the
        short form."""
        lines = []
        for mesh in self.meshes:
            steps = [step for step in self.calls()
                     if step.mesh == mesh.name and step.kind]
            stages = {step.stage for step in steps if step.stage is not None}
            items = []
            for step in steps:
                item = step.kind
                if step.call_counter is not None:
                    item += str(step.call_counter)
                if len(stages) > 1 and step.stage is not None:
                    item += f"@s{step.stage}"
                items.append(item)
            lines.append(f"{mesh.name}: {' '.join(items)}")
        return "\n".join(lines)

    def programs_by_mesh(self) -> dict[str, list[str]]:
        """Per mesh, the distinct programs compiled for it."""
        result: dict[str, list[str]] = {m.name: [] for m in self.meshes}
        for program in self.programs.values():
            result[program.mesh].append(program.name)
        return result

    def format(self) -> str:
        """The plan as text: one line per step."""
        lines = [f"plan of @{self.function}: {len(self.inputs)} inputs, "
                 f"{len(self.outputs)} outputs, {len(self.programs)} programs"]
        for index, spec in enumerate(self.inputs):
            lines.append(f"  in  %{index}: {spec.short()}")
        for step in self.steps:
            if isinstance(step, CallStep):
                ins = ", ".join(f"%{i}" for i in step.inputs)
                outs = ", ".join(f"%{i}" for i in step.outputs)
                donated = self.programs[step.program].donated_args
                extra = f"  donates {list(donated)}" if donated else ""
                lines.append(f"  {outs or '()'} = call {step.program} "
                             f"on {step.mesh} ({ins})  [{step.label()}]{extra}")
            else:
                lines.append(f"  %{step.output} = transfer %{step.input} "
                             f"{step.source} -> {step.target}")
        outs = ", ".join(f"%{v}" for v in self.output_values)
        lines.append(f"  return {outs}")
        return "\n".join(lines)


def check_consistency(plan: ExecutionPlan) -> None:
    """Raises ValueError naming the first thing of `plan` that does not
    hold together: a step on a mesh or calling a program the plan does not
    have, a value read before it is made or made twice, a result that is
    no value. Plans the compiler writes always hold together; this is for
    plans read from elsewhere (an export's file)."""
    meshes = {mesh.name for mesh in plan.meshes}
    if len(meshes) != len(plan.meshes):
        raise ValueError("two meshes of the plan have one name")
    for name, program in plan.programs.items():
        if program.mesh not in meshes:
            raise ValueError(f"program {name!r} is on mesh {program.mesh!r}, "
                             "which the plan does not have")
    for what, specs in (("input", plan.inputs), ("output", plan.outputs)):
        for index, spec in enumerate(specs):
            if spec.mesh not in meshes:
                raise ValueError(f"{what} {index} is on mesh {spec.mesh!r}, "
                                 "which the plan does not have")
    defined = set(range(len(plan.inputs)))

    def made(index: int, values: tuple[int, ...]) -> None:
        for value in values:
            if type(value) is not int or value < 0 or value in defined:
                raise ValueError(f"step {index} makes value {value!r}, "
                                 "which is not a new value")
            defined.add(value)

    def read(index: int, values: tuple[int, ...]) -> None:
        for value in values:
            if value not in defined:
                raise ValueError(f"step {index} reads value {value!r} "
                                 "before any step makes it")

    for index, step in enumerate(plan.steps):
        if isinstance(step, CallStep):
            program = plan.programs.get(step.program)
            if program is None:
                raise ValueError(f"step {index} calls program "
                                 f"{step.program!r}, which the plan does "
                                 "not have")
            if step.mesh != program.mesh:
                raise ValueError(f"step {index} calls program "
                                 f"{step.program!r} on mesh {step.mesh!r}, "
                                 f"and the program is on {program.mesh!r}")
            read(index, step.inputs)
            made(index, step.outputs)
        else:
            if step.source not in meshes or step.target not in meshes or \
                    step.type.mesh != step.target:
                raise ValueError(f"step {index} moves a value from mesh "
                                 f"{step.source!r} to {step.target!r} "
                                 f"(typed on {step.type.mesh!r}), which "
                                 "the plan does not have")
            read(index, (step.input,))
            made(index, (step.output,))
        read(index, step.free)
    read(len(plan.steps), plan.output_values)
    if len(plan.output_values) != len(plan.outputs):
        raise ValueError(f"the plan returns {len(plan.output_values)} "
                         f"values for {len(plan.outputs)} outputs")


def _check_version(data: Any) -> int:
    """The plan's version, when it is the one this runtime reads."""
    version = data.get("version")
    # `type(...) is int`: JSON's true would equal 1.
    if type(version) is int and version == PLAN_VERSION:
        return version
    # Whatever wrote the plan is older or newer than this runtime; the fix is
    # the same either way: a plan from the compiler of this build.
    found = ("has no version (it was written before plans carried one)"
             if version is None else f"is of version {version!r}")
    raise PlanVersionError(
        f"this execution plan {found}; this runtime reads execution plan "
        f"version {PLAN_VERSION} only. Partition the program again with "
        "this build (mpmd.jit(...).lower(...), or "
        "mpmd.compiler.compile_to_plan / mpmd.runtime.compile_module for an "
        "exported MPMD module) to get a plan of version "
        f"{PLAN_VERSION}, instead of reusing a stored one")


def total_cost(plan: ExecutionPlan, costs: dict[str, Any]
               ) -> dict[str, float]:
    """One step's cost from XLA's cost analysis of each program (`costs`:
    program name -> its dict, or a list of one dict per device, of which
    the first is used): per key, the sum over programs of the value times
    the number of times the plan calls the program.

    XLA reports an estimate it could not make as a negative number (-1 per
    op it cannot estimate: `optimal_seconds` often, or the `flops` of a
    program that only broadcasts the zeros a gradient sum starts from). Such
    a part counts as nothing; a key no program estimates is left out. Keys
    a program does not report count as nothing for it."""
    total: dict[str, float] = {}
    for name, cost in costs.items():
        if isinstance(cost, (list, tuple)):  # one dict per device
            cost = cost[0] if cost else {}
        calls = plan.programs[name].num_calls
        for key, value in (cost or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if value >= 0:
                total[key] = total.get(key, 0.0) + calls * float(value)
    return total
