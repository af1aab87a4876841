"""A compiled plan ready to call: the layer under every front door.

    executable = PlanExecutable.compile(plan, meshes, plan_json,
                                        what="function 'step'")
    results = executable(leaves)              # the arguments, flat
    placed = executable.place(leaves)         # checked, on their meshes
    results, trace = executable.run_traced(placed)

`mpmd.jit`'s `Compiled` and `compile_module`'s `CompiledModule` are thin
wrappers over it, as `jax.stages.Compiled` is over its executable: they
flatten and unflatten pytrees and say how they name an argument; this
layer makes every process agree on the plan, compiles its programs
(`PlanExecutor`), checks and places the arguments, converts those the
program holds otherwise (typed keys, split stacks: `boundary`), runs the
plan, traces or measures a run, and reports what XLA compiled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.errors import MpmdError
from mpmd.runtime import coordination, processes
from mpmd.runtime.boundary import (Boundary, KeyArray, LeafIO, ProgramIO,
                                   StackedArray)
from mpmd.runtime.executor import PlanExecutor, partition_spec, sharding_for
from mpmd.runtime.memory import (MemoryProfileError, MemoryRecorder,
                                 MemoryTable, predict_peaks)
from mpmd.runtime.placement import as_placed
from mpmd.runtime.plan import ExecutionPlan, TensorSpec, total_cost
from mpmd.runtime.profile import (ProfileError, check_source, donates_inputs,
                                  profile_run)
from mpmd.runtime.trace import Trace
from mpmd.runtime.trace_record import TraceRecorder, prepare_traced_run

__all__ = ["ArgumentProblem", "InputError", "PlanExecutable", "dtype_name",
           "estimated_cost", "expected_arguments", "groups", "stacked_array"]


class InputError(MpmdError):
    """A call's arguments do not match what the program was compiled for."""


@dataclass(frozen=True)
class ArgumentProblem:
    """Why flat argument `index` cannot be taken: `kind` is "type" (it has
    `shape` and `dtype`, the program takes `expected`), "deleted" or
    "not_array" (a value of type `type_name`)."""

    kind: str
    index: int
    expected: tuple[Any, Any]
    shape: tuple[int, ...] = ()
    dtype: Any = None
    type_name: str = ""


# How a front door words a problem with an argument (it names arguments
# its own way: `params['w1']`, `argument 3 of @main`).
Describe = Callable[[ArgumentProblem], str]


def dtype_name(dtype: Any) -> str:
    """A dtype's name as errors print it (a typed key's too)."""
    try:
        return np.dtype(dtype).name
    except TypeError:  # a typed key's dtype (key<fry>)
        return str(dtype)


def _default_describe(problem: ArgumentProblem) -> str:
    where = f"argument {problem.index}"
    if problem.kind == "deleted":
        return (f"{where} was deleted (donated to an earlier call?); pass a "
                "live array")
    shape, dtype = problem.expected
    if problem.kind == "not_array":
        return (f"{where} is a {problem.type_name}, not an array; pass an "
                f"array of shape {shape} and dtype {dtype_name(dtype)}")
    return (f"{where} has shape {problem.shape} and dtype "
            f"{dtype_name(problem.dtype)}, but the program takes shape "
            f"{shape} and dtype {dtype_name(dtype)}")


def groups(leaves: Sequence[LeafIO], specs: Sequence[Any]) -> list[list[Any]]:
    """The program's values (`specs`) grouped per argument (or result)."""
    out, at = [], 0
    for leaf in leaves:
        out.append(list(specs[at:at + leaf.count]))
        at += leaf.count
    return out


def stacked_array(io: LeafIO, specs: Sequence[TensorSpec],
                  meshes: dict[str, Any],
                  move: Callable[..., Any] | None) -> StackedArray:
    """The `StackedArray` of a value held in pieces (`specs` of them)."""
    if any(isinstance(meshes[spec.mesh], jax.sharding.AbstractMesh)
           for spec in specs):
        return StackedArray.abstract(io.stack.bounds)
    return StackedArray(io.stack.bounds,
                        [sharding_for(spec, meshes) for spec in specs], move)


def expected_arguments(plan: ExecutionPlan, io: ProgramIO,
                       shardings: Sequence[NamedSharding],
                       meshes: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """Per flat argument: the shape and dtype the program was made for,
    and the sharding it is placed with (a split stack's over its meshes,
    None where it has none)."""
    out = []
    for leaf, placed, specs in zip(io.inputs, groups(io.inputs, shardings),
                                   groups(io.inputs, plan.inputs)):
        spec = specs[0]
        if leaf.stack is not None:
            array = stacked_array(leaf, specs, meshes, None)
            out.append(((array.length, *spec.shape[1:]), spec.dtype,
                        array.sharding))
        elif leaf.key_impl is not None:
            cut = len(leaf.key_impl.key_shape)
            out.append((spec.shape[:len(spec.shape) - cut],
                        leaf.key_impl.dtype, placed[0]))
        else:
            out.append((spec.shape, spec.dtype, placed[0]))
    return out


def _boundary(plan: ExecutionPlan, io: ProgramIO,
              executor: PlanExecutor) -> Boundary | None:
    """The conversions of a call's arguments and results to and from the
    program's values, or None when every one crosses as it is."""
    if io.identity:
        return None
    meshes = executor.meshes

    def layouts(leaves: Sequence[LeafIO], specs: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for leaf, group in zip(leaves, groups(leaves, specs)):
            if leaf.stack is not None:
                out.append(stacked_array(leaf, group, meshes,
                                         executor.place))
            elif leaf.key_impl is not None:
                out.append(KeyArray(leaf.key_impl.dtype))
            else:
                out.append(None)
        return out

    return Boundary(layouts(io.inputs, plan.inputs),
                    layouts(io.outputs, plan.outputs),
                    [leaf.count for leaf in io.inputs],
                    [leaf.count for leaf in io.outputs])


def _python_number(value: Any, dtype: Any) -> np.ndarray:
    """A Python number as an argument of `dtype` takes it: that dtype where
    it fits it (as `jax.jit`'s weak types do), else its own (refused by the
    dtype check)."""
    try:
        fits = np.can_cast(np.dtype(type(value)), np.dtype(dtype),
                           "same_kind")
    except TypeError:  # a typed key's dtype: nothing fits
        fits = False
    try:
        return np.asarray(value, dtype if fits else None)
    except OverflowError:  # an int too large for the dtype
        return np.asarray(value)


class PlanExecutable:
    """A plan compiled for its meshes; call it with the flat arguments.

    `io` says how each argument and result is held by the program (None:
    each is one program value as it is); `describe` words a problem with
    an argument (`ArgumentProblem`) for the front door's user, and
    `error` is the class it raises (an `InputError`)."""

    def __init__(self, plan: ExecutionPlan, executor: PlanExecutor,
                 io: ProgramIO | None = None,
                 describe: Describe = _default_describe,
                 error: type[InputError] = InputError):
        self.plan = plan
        self.executor = executor
        self.io = io or ProgramIO.plain(len(plan.inputs), len(plan.outputs))
        self.describe = describe
        self.error = error
        self.meshes: dict[str, Mesh] = dict(executor.meshes)
        # The program's own values.
        self.input_shardings = tuple(executor.input_shardings())
        self.output_shardings = tuple(executor.output_shardings())
        self.boundary = _boundary(plan, self.io, executor)
        # What an argument passed as is must match: (shape, dtype,
        # sharding) per flat argument; the sharding it is placed with.
        self.expected = tuple(expected_arguments(
            plan, self.io, self.input_shardings, self.meshes))
        # Per flat argument: the last array relabelled for it (an
        # equivalent sharding) and its relabelling, reused while the same
        # array comes.
        self.relabelled: dict[int, tuple[Any, Any]] = {}
        run = executor.run
        if self.boundary is None:
            self.run_placed: Callable[[Sequence[Any]], list[Any]] = run
        else:
            boundary = self.boundary
            self.run_placed = lambda placed: boundary.results(
                run(boundary.inputs(placed)))

    @classmethod
    def compile(cls, plan: ExecutionPlan, meshes: dict[str, Mesh],
                text: str, what: str, **kwargs: Any
                ) -> "PlanExecutable":
        """Every process of a job agrees on the plan (`text`, what
        identifies it: the plan's JSON or the module's text, and the
        meshes, else `ProcessError` naming `what`: they would wait for
        each other's transfers forever), then compiles its programs."""
        coordination.agree_on_plan(
            coordination.plan_fingerprint(text, meshes), what)
        return cls(plan, PlanExecutor.compile(plan, meshes), **kwargs)

    # --- arguments ---------------------------------------------------------

    def as_placed(self, leaves: Sequence[Any]) -> Sequence[Any] | None:
        """`leaves` if every one is already laid out as the program takes
        it (the common call, a few hundred ns), else None."""
        return as_placed(leaves, self.expected, self.relabelled)

    def place(self, leaves: Sequence[Any]) -> list[Any]:
        """The flat arguments, checked and put on their meshes. Arrays
        already on their mesh are passed through without a copy; nothing
        here waits for an array to be ready."""
        if len(leaves) != len(self.expected):
            raise self.error(self.describe(ArgumentProblem(
                "count", len(leaves), (len(self.expected), None))))
        placed = []
        for index, ((shape, dtype, sharding), leaf) in enumerate(
                zip(self.expected, self.io.inputs)):
            value = self._checked(index, leaves[index], shape, dtype)
            if leaf.key_impl is not None:
                # The program takes the key's data (placed as such).
                value = jax.random.key_data(value)
            if sharding is None:  # a stack without a layout: cut as it is
                placed.append(value)
            else:
                placed.append(self.executor.place(value, sharding))
        return placed

    def _checked(self, index: int, value: Any, shape: tuple[int, ...],
                 dtype: Any) -> Any:
        """`value` as argument `index` takes it, or the door's error."""
        expected = (tuple(shape), dtype)
        if isinstance(value, (bool, int, float, complex)) and not \
                isinstance(value, np.generic):
            value = _python_number(value, dtype)
        elif not hasattr(value, "shape") or not hasattr(value, "dtype"):
            try:
                array = np.asarray(value)
            except Exception:  # noqa: BLE001 - anything not array-like
                array = None
            if array is None or array.dtype.kind in "OUSV":
                raise self.error(self.describe(ArgumentProblem(
                    "not_array", index, expected,
                    type_name=type(value).__name__)))
            value = array
        if isinstance(value, jax.Array):
            if value.is_deleted():
                # Donated to an earlier call (or deleted): its buffers are
                # gone, and the fast path does not look again.
                raise self.error(self.describe(ArgumentProblem(
                    "deleted", index, expected)))
            given = value.dtype
        else:
            # Host data is put on devices as jax.device_put puts it:
            # float64 becomes float32 unless 64-bit types are enabled.
            given = np.dtype(jax.dtypes.canonicalize_dtype(value.dtype))
        if tuple(value.shape) != expected[0] or given != dtype:
            raise self.error(self.describe(ArgumentProblem(
                "type", index, expected, tuple(value.shape), given)))
        if not isinstance(value, jax.Array) and given != value.dtype:
            value = np.asarray(value, given)
        return value

    # --- runs --------------------------------------------------------------

    def __call__(self, leaves: Sequence[Any]) -> list[Any]:
        placed = self.as_placed(leaves)
        if placed is None:
            placed = self.place(leaves)
        return self.run_placed(placed)

    def program_inputs(self, placed: Sequence[Any]) -> Sequence[Any]:
        """The program's inputs from the placed arguments."""
        return placed if self.boundary is None else \
            self.boundary.inputs(placed)

    def user_results(self, results: Sequence[Any]) -> list[Any]:
        return list(results) if self.boundary is None else \
            self.boundary.results(results)

    def run_traced(self, placed: Sequence[Any], source: str = "auto"
                   ) -> tuple[list[Any], Trace]:
        """Runs on placed arguments and returns the results with a `Trace`
        of the run (`mpmd.jit`'s `Compiled.run_traced` says what `source`
        chooses). A profile that cannot be used after a run that donated
        its inputs raises `ProfileError` with the flat results in its
        `results`."""
        check_source(source)
        placed = jax.block_until_ready(placed)
        reason = None
        if source != "host":
            if processes.is_multiprocess():
                reason = ("profiled traces of multi-process runs are not "
                          "supported yet")
                if source == "profiler":
                    raise ProfileError(reason)
            else:
                try:
                    results, trace = profile_run(
                        self.executor, self.program_inputs(placed))
                    return self.user_results(results), trace
                except ProfileError as error:
                    if source == "profiler" or (
                            error.results is not None
                            and donates_inputs(self.plan)):
                        if error.results is not None:
                            error.results = self.user_results(error.results)
                        raise
                    reason = str(error)
        inputs = self.program_inputs(placed)
        first_run = prepare_traced_run(self.executor, inputs)
        recorder = TraceRecorder.for_plan(self.plan)
        coordination.barrier("trace")
        recorder.start()
        results = self.user_results(jax.block_until_ready(
            self.executor.run(inputs, recorder=recorder)))
        trace = recorder.finish()
        if processes.is_multiprocess():
            trace = Trace.merge([
                Trace.from_dict(json.loads(text)) for text in
                coordination.all_gather_text("trace",
                                          json.dumps(trace.to_dict()))])
        trace.fallback_reason = reason
        trace.first_run = trace.first_run or first_run
        return results, trace

    def run_with_memory(self, leaves: Sequence[Any]
                        ) -> tuple[list[Any], MemoryTable]:
        """Runs like a call and returns the results with a `MemoryTable`:
        per mesh, the peak bytes per device the plan predicts beside those
        measured between steps (`docs/runtime.md#memory`). The arguments
        are placed before the measurement starts. One process only."""
        if processes.is_multiprocess():
            raise MemoryProfileError(
                "run_with_memory measures one process's arrays; it is not "
                "supported in a multi-process job")
        predicted = predict_peaks(self.executor)
        placed = self.program_inputs(jax.block_until_ready(
            self.place(leaves)))
        recorder = MemoryRecorder.for_executor(self.executor)
        recorder.start()
        results = self.user_results(jax.block_until_ready(
            self.executor.run(placed, recorder=recorder)))
        del placed
        measured = recorder.finish()
        return results, MemoryTable.build(predicted, measured,
                                          recorder.samples)

    # --- what XLA made -----------------------------------------------------

    def as_text(self) -> str:
        """Each program's optimized HLO, headed by its name and mesh
        (programs of other processes' meshes are left out)."""
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


def estimated_cost(plan: ExecutionPlan, meshes: dict[str, Mesh]
                   ) -> dict[str, float]:
    """XLA's estimate of one run before compiling: each program lowered for
    its mesh, its cost analysis times the plan's calls of it, summed."""
    from mpmd.runtime.program import lower_program  # noqa: PLC0415

    costs = {}
    for name, spec in plan.programs.items():
        mesh = meshes[spec.mesh]
        costs[name] = lower_program(
            spec.module, mesh, name=name,
            in_shardings=[NamedSharding(mesh, partition_spec(layout))
                          for layout in spec.in_shardings] or None,
            out_shardings=[NamedSharding(mesh, partition_spec(layout))
                           for layout in spec.out_shardings] or None
        ).cost_analysis()
    return total_cost(plan, costs)
