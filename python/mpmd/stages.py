"""`mpmd.jit` and its stages (jit -> lower -> compile -> call) for MPMD.

    lowered = mpmd.jit(step, config).lower(params, batch)
    print(lowered.as_text())            # the MPMD program
    compiled = lowered.compile()
    params, loss = compiled(params, batch)

Lowering traces with `jax.jit`, hands JAX's StableHLO (with the topology) to
the compiler's import and export pipelines, and keeps the exported program
with its execution plan. Compiling builds one XLA executable per distinct
program and mesh; calling runs the plan on jax.Arrays.

This module holds the stage classes; what they use lives beside it:
`lowering` (the configuration and the traced program on their way into the
compiler), `arguments` (tracing, naming, keying and checking arguments),
`shardings` (user shardings resolved on meshes), `diagnostics` (errors and
warnings in the user's terms).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd import arguments, auto_assign, diagnostics, lowering, program_io
from mpmd.compiler import Partitioner
from mpmd.config import (AssignmentError, ConfigError,
                         FunctionIOMeshAssignment, MpmdConfig, is_abstract,
                         split_memory_kind)
from mpmd.errors import CompilerError, MpmdError
from mpmd.partition_cache import partition_cached
from mpmd.runtime import processes
from mpmd.runtime.executor import (PlanExecutor, require_memory_kind,
                                   sharding_for)
from mpmd.runtime.memory import (MemoryProfileError, MemoryRecorder,
                                 MemoryTable, predict_peaks)
from mpmd.runtime.plan import ExecutionPlan, format_layout, total_cost
from mpmd.runtime.simulate import simulate
from mpmd.runtime.profile import (ProfileError, check_source, donates_inputs,
                                  profile_run)
from mpmd.runtime.trace import Trace, TraceRecorder, prepare_traced_run
from mpmd.shardings import (ShardingError, add_entry_shardings, flat_prefix,
                            input_placements, output_placements)

__all__ = ["Compiled", "InputError", "Lowered", "MpmdFunction",
           "NamedShardings", "Traced", "jit"]


class InputError(MpmdError):
    """A call's arguments do not match what the program was lowered for."""


@dataclass(frozen=True)
class NamedShardings:
    """Where the function's inputs and outputs live, as pytrees of
    NamedShardings shaped like the arguments and the results."""

    inputs: Any
    outputs: Any

    # Shardy:MPMD's names for the same pytrees.
    @property
    def input_specs(self) -> Any:
        return self.inputs

    @property
    def output_specs(self) -> Any:
        return self.outputs


def _dialect(dialect: str | None) -> str:
    if dialect in (None, "mpmd"):
        return "mpmd"
    if dialect in ("stablehlo", "ifrt"):
        return dialect
    raise MpmdError(f"not supported yet: dialect {dialect!r}; an MPMD program "
                    "is available as 'mpmd' (the partitioned program), "
                    "'stablehlo' (what JAX lowered) or 'ifrt' (the "
                    "partitioned program as IFRT IR)")


def _require_devices(topology: dict[str, Any], what: str) -> None:
    """Compiling needs devices: a topology of abstract meshes lowers only."""
    abstract = [name for name, mesh in topology.items() if is_abstract(mesh)]
    if abstract:
        raise ConfigError(
            f"cannot {what}: the topology's meshes {abstract} are "
            "jax.sharding.AbstractMesh, which have no devices. An abstract "
            "topology lowers (as_text, function_named_shardings, the plan); "
            "give jax.sharding.Mesh(devices, axis_names) of the same shapes "
            "to compile and run")


def _program_shardings(mesh: Mesh, layouts: Sequence[Any]
                       ) -> list[NamedSharding] | None:
    from mpmd.runtime.executor import partition_spec  # noqa: PLC0415

    return [NamedSharding(mesh, partition_spec(layout))
            for layout in layouts] or None


class Lowered:
    """A function lowered to an MPMD program (not compiled yet)."""

    def __init__(self, config: MpmdConfig, mpmd_text: str,
                 plan: ExecutionPlan, in_tree: Any, out_tree: Any,
                 jax_text: str, static_argnums: frozenset[int] = frozenset(),
                 jax_module: Any = None):
        self.config = config
        self.plan = plan
        self._mpmd_text = mpmd_text
        self._jax_text = jax_text
        self._jax_module = jax_module
        # as_text("ifrt"), made on first use.
        self._ifrt_text: str | None = None
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.static_argnums = static_argnums
        # The pytree path of each flat argument, `params['w1']` style.
        self.argument_paths: list[str] = []
        # The Python function's name, for messages.
        self.function_name = plan.function
        # Seconds spent per phase: "trace" (JAX traces and lowers),
        # "partition" (the mpmd compiler), "plan" (reading the plan);
        # Compiled.timings adds "compile" (XLA, every program).
        self.timings: dict[str, float] = {}
        # True when mpmd.jit read the partition from the persistent cache
        # (see mpmd.partition_cache).
        self.partition_cached = False
        # With an automatic assignment: (what it chose, partition(assignment)
        # of the same program).
        self._auto: tuple[Any, Callable[..., Any]] | None = None
        # How each argument and result is held by the program (typed keys
        # as their data, split stacks in pieces), the program's paths of
        # its inputs and results, and per split computation what tracing
        # found (`mpmd.frontend.stacks.SplitRecord`).
        self.io = program_io.ProgramIO(
            tuple(program_io.LeafIO() for _ in plan.inputs),
            tuple(program_io.LeafIO() for _ in plan.outputs))
        self.program_paths: tuple[list[str], list[str]] | None = None
        self.stacks: dict[str, Any] = {}

    def as_text(self, dialect: str | None = None) -> str:
        """The program as text. `None` or "mpmd": the exported MPMD program
        (main function plus one function per distinct SPMD program);
        "stablehlo": what JAX lowered, with the topology, before
        partitioning (generic form); "ifrt": the exported program as IFRT
        IR (what Shardy:MPMD hands to Pathways and XLA's IFRT IR runtime:
        calls of atom programs on device lists, copies and reshards between
        them; the IFRT ops in generic form)."""
        kind = _dialect(dialect)
        if kind == "mpmd":
            return self._mpmd_text
        if kind == "ifrt":
            if self._ifrt_text is None:
                from mpmd.compiler import lower_to_ifrt  # noqa: PLC0415

                self._ifrt_text = lower_to_ifrt(self._mpmd_text)
            return self._ifrt_text
        return self._jax_text

    def jax_text(self) -> str:
        """What JAX lowered, before partitioning (`as_text("stablehlo")`)."""
        return self._jax_text

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The program as an MLIR module of jaxlib's bindings (as
        `jax.stages.Lowered.compiler_ir`): "stablehlo" is JAX's module with
        the topology; `None` or "mpmd" the partitioned program, parsed with
        the mpmd dialect left opaque (jaxlib does not know it); "ifrt" the
        program as IFRT IR, parsed and verified with jaxlib's own IFRT
        dialect (which needs jaxlib's Shardy:MPMD extension; MpmdError
        without it)."""
        from jax._src.interpreters import mlir as jax_mlir  # noqa: PLC0415
        from jax._src.lib.mlir import ir  # noqa: PLC0415

        kind = _dialect(dialect)
        if kind == "stablehlo":
            return self._jax_module
        if kind == "ifrt":
            from mpmd import jaxlib_dialects  # noqa: PLC0415

            with jaxlib_dialects.context():
                module = ir.Module.parse(self.as_text("ifrt"))
                if not module.operation.verify():
                    raise MpmdError("the IFRT IR program does not verify "
                                    "with jaxlib's IFRT dialect")
                return module
        from mpmd.compiler import parse  # noqa: PLC0415

        context = jax_mlir.make_ir_context()
        context.allow_unregistered_dialects = True
        with context:
            return ir.Module.parse(parse(self._mpmd_text, generic=True))

    def cost_analysis(self) -> dict[str, float]:
        """XLA's estimate (before compiling) of one call: each program's
        cost analysis times the number of times the plan calls it, summed
        (`flops`, `bytes accessed`, ...)."""
        from mpmd.runtime.program import lower_program  # noqa: PLC0415

        topology = dict(self.config.topology)
        _require_devices(topology, "estimate costs")
        costs = {}
        for name, spec in self.plan.programs.items():
            mesh = topology[spec.mesh]
            costs[name] = lower_program(
                spec.module, mesh, name=name,
                in_shardings=_program_shardings(mesh, spec.in_shardings),
                out_shardings=_program_shardings(mesh, spec.out_shardings)
            ).cost_analysis()
        return total_cost(self.plan, costs)

    @property
    def function_named_shardings(self) -> NamedShardings:
        """Where each argument and result lives: a NamedSharding of its
        mesh; for a stack split over meshes, one over their devices
        (`docs/stacks.md`), or None where there is none."""
        meshes = dict(self.config.topology)
        return NamedShardings(*self._io_trees(
            lambda spec: sharding_for(spec, meshes),
            lambda io, specs, _: _stacked_array(io, specs, meshes,
                                                None).sharding))

    def stacked_arrays(self, move: Callable[..., Any] | None = None
                       ) -> list[tuple[str, Any]]:
        """(path, `StackedArray`) of each argument and result held in
        pieces by the program: how it crosses a call (its `sharding` over
        the meshes' devices, or None where there is none)."""
        topology = dict(self.config.topology)
        out = []
        for which, leaves, specs, paths in (
                ("in", self.io.inputs, self.plan.inputs,
                 self.argument_paths or arguments.leaf_paths(self.in_tree)),
                ("out", self.io.outputs, self.plan.outputs,
                 ["result" + p for p in arguments.leaf_paths(
                     self.out_tree)])):
            del which
            for leaf, group, path in zip(leaves, _groups(leaves, specs),
                                         paths):
                if leaf.stack is not None:
                    out.append((path, _stacked_array(leaf, group, topology,
                                                     move)))
        return out

    def _user_specs(self, specs: Sequence[Any], leaves: Sequence[Any],
                    leaf: Callable[[Any], Any],
                    stacked: Callable[[Any, Any, list[Any]], Any]
                    ) -> list[Any]:
        """`leaf` of each argument's (result's) program value, `stacked`
        of those held in pieces (the LeafIO and the pieces' specs)."""
        out = []
        for io, group in zip(leaves, _groups(leaves, specs)):
            out.append(leaf(group[0]) if io.stack is None
                       else stacked(io, group, [leaf(g) for g in group]))
        return out

    def _io_trees(self, leaf: Callable[[Any], Any],
                  stacked: Callable[[Any, Any, list[Any]], Any] | None = None
                  ) -> tuple[Any, Any]:
        """`leaf` of each input and output spec of the plan, as pytrees
        shaped like the arguments and the results (a stacked value gets
        `stacked(leaf_io, specs, leaf of each piece)`, by default the tuple
        of its pieces')."""
        stacked = stacked or (lambda io, specs, values: tuple(values))
        ins = self._user_specs(self.plan.inputs, self.io.inputs, leaf,
                               stacked)
        outs = self._user_specs(self.plan.outputs, self.io.outputs, leaf,
                                stacked)
        args_tree = self.in_tree.children()[0] if self.in_tree.num_leaves else self.in_tree
        try:
            inputs = jax.tree_util.tree_unflatten(args_tree, ins)
        except ValueError:
            inputs = jax.tree_util.tree_unflatten(self.in_tree, ins)
        return inputs, jax.tree_util.tree_unflatten(self.out_tree, outs)

    @property
    def function_mesh_assignment(self) -> FunctionIOMeshAssignment:
        """The mesh of each input and output, as pytrees of mesh names
        shaped like `function_named_shardings` (read from the plan: the
        abstract meshes of an abstract topology may be equal objects)."""
        return FunctionIOMeshAssignment(*self._io_trees(
            lambda spec: spec.mesh))

    @property
    def auto_choice(self) -> Any:
        """What the automatic assignment saw and chose
        (`mpmd.auto_assign.AutoChoice`: per-name costs, the chosen split and
        the split by count), or None for a hand assignment."""
        return None if self._auto is None else self._auto[0]

    @property
    def assignment(self) -> dict[str, tuple[str, int | None]]:
        """Each named computation's (and assigned named tensor's) mesh and
        stage, as partitioned: the automatic assignment's choice included
        (`make_config(topology, "auto")`)."""
        return dict(self.config.assignment)

    def assignment_report(self) -> str:
        """For an automatic assignment: per mesh, its named computations,
        their estimated FLOPs per microbatch (forward and backward) and
        memory (parameters and in-flight activations), and the simulated
        busy and idle time of a step (the project's simulator, each call
        costing its FLOPs), beside the same for the split by count."""
        if self._auto is None:
            raise ConfigError(
                "assignment_report() describes an automatic assignment; "
                "this program was assigned by hand (use "
                "make_config(topology, \"auto\"))")
        choice, repartition = self._auto
        costs = auto_assign.flop_costs(choice)

        def simulated(split: dict[str, Any]) -> Any:
            if split is choice.chosen:
                plan = self.plan
            else:
                plan = ExecutionPlan.from_json(
                    repartition(choice.assignment_of(split))[1])
            return simulate(plan, costs)

        return auto_assign.report(choice, simulated)

    def programs_by_mesh(self) -> dict[str, list[str]]:
        """Per mesh, the distinct programs compiled for it."""
        return self.plan.programs_by_mesh()

    def mesh_order(self) -> dict[str, list[str]]:
        """Per mesh, what runs in order (`layer1`, `layer1(1)`, ...)."""
        return self.plan.mesh_order()

    def schedule_text(self) -> str:
        """Per mesh, the order as `m1: F0 F1 B0 F2 B1 ...`."""
        return self.plan.schedule_text()

    def sharding_text(self) -> str:
        """Per mesh, the layout of the function's inputs and outputs there,
        one line each: `m1  in  params['w1']  f32[16x32] {-, model}`."""
        lines = []
        if self.program_paths is not None:
            paths_in, paths_out = self.program_paths
        else:
            paths_in = self.argument_paths or arguments.leaf_paths(
                self.in_tree)
            paths_out = ["result" + p
                         for p in arguments.leaf_paths(self.out_tree)]
        for mesh in self.plan.meshes:
            for kind, specs, paths in (("in ", self.plan.inputs, paths_in),
                                       ("out", self.plan.outputs, paths_out)):
                for spec, path in zip(specs, paths):
                    if spec.mesh != mesh.name:
                        continue
                    lines.append(f"{mesh.name}  {kind}  {path or '[0]'}  "
                                 f"{spec.short().split('@')[0]} "
                                 f"{format_layout(spec.sharding) or 'replicated'}")
        return "\n".join(lines)

    def compile(self) -> "Compiled":
        start = time.perf_counter()
        topology = dict(self.config.topology)
        _require_devices(topology, "compile")
        # In a multi-controller job, every process must run this same plan
        # (else they wait on each other's transfers forever).
        processes.agree_on_plan(
            processes.plan_fingerprint(self._mpmd_text, topology),
            f"function {self.function_name!r}")
        executor = PlanExecutor.compile(self.plan, topology)
        compiled = Compiled(self, executor)
        compiled.timings = dict(self.timings,
                                compile=time.perf_counter() - start)
        return compiled


def _dtype_name(dtype: Any) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:  # a typed key's dtype (key<fry>)
        return str(dtype)


def _boundary(lowered: Lowered, executor: PlanExecutor) -> Any:
    """The conversions of a call's arguments and results to and from the
    program's values, or None when every one crosses as it is."""
    from mpmd.runtime.boundary import Boundary, KeyArray  # noqa: PLC0415

    io = lowered.io
    if io.identity:
        return None
    meshes = dict(lowered.config.topology)

    def layouts(leaves: Sequence[Any], specs: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for leaf, group in zip(leaves, _groups(leaves, specs)):
            if leaf.stack is not None:
                out.append(_stacked_array(leaf, group, meshes,
                                          executor.place))
            elif leaf.key_impl is not None:
                out.append(KeyArray(leaf.key_impl.dtype))
            else:
                out.append(None)
        return out

    return Boundary(layouts(io.inputs, lowered.plan.inputs),
                    layouts(io.outputs, lowered.plan.outputs),
                    [leaf.count for leaf in io.inputs],
                    [leaf.count for leaf in io.outputs])


def _expected_arguments(lowered: Lowered, executor: PlanExecutor
                        ) -> list[tuple[Any, Any, Any]]:
    """Per flat argument: the shape and dtype the program was lowered for,
    and the sharding it is placed with (a split stack's over its meshes,
    None where it has none)."""
    shardings = executor.input_shardings()
    out = []
    for leaf, group, specs in zip(
            lowered.io.inputs, _groups(lowered.io.inputs, shardings),
            _groups(lowered.io.inputs, lowered.plan.inputs)):
        spec = specs[0]
        if leaf.stack is not None:
            array = _stacked_array(leaf, specs, dict(lowered.config.topology),
                                   None)
            out.append(((array.length, *spec.shape[1:]), spec.dtype,
                        array.sharding))
        elif leaf.key_impl is not None:
            cut = len(leaf.key_impl.key_shape)
            out.append((spec.shape[:len(spec.shape) - cut],
                        leaf.key_impl.dtype, group[0]))
        else:
            out.append((spec.shape, spec.dtype, group[0]))
    return out


def _groups(leaves: Sequence[Any], specs: Sequence[Any]) -> list[list[Any]]:
    """The program's specs grouped per argument (or result)."""
    groups, at = [], 0
    for leaf in leaves:
        groups.append(list(specs[at:at + leaf.count]))
        at += leaf.count
    return groups


def _stacked_array(io: Any, specs: Sequence[Any], meshes: dict[str, Any],
                   move: Callable[..., Any] | None) -> Any:
    """The `StackedArray` of a value held in pieces (`specs` of them)."""
    from mpmd.runtime.boundary import StackedArray  # noqa: PLC0415

    if any(is_abstract(meshes[spec.mesh]) for spec in specs):
        return StackedArray.abstract(io.stack.bounds)
    return StackedArray(io.stack.bounds,
                        [sharding_for(spec, meshes) for spec in specs], move)


class Compiled:
    """A compiled MPMD program: call it with the function's arguments."""

    def __init__(self, lowered: Lowered, executor: PlanExecutor):
        self.lowered = lowered
        self.executor = executor
        # Arguments the program holds otherwise (typed keys as their data,
        # split stacks in pieces) are converted at each call.
        self._boundary = _boundary(lowered, executor)
        # What an argument passed as is must match: (shape, dtype,
        # sharding) per flat argument; the sharding it is placed with.
        self._expected = tuple(_expected_arguments(lowered, executor))
        self._input_shardings = [sharding for _, _, sharding in
                                 self._expected]
        # Per flat input: the last array relabelled for it (an equivalent
        # sharding) and its relabelling, reused while the same array comes.
        self._relabelled: dict[int, tuple[Any, Any]] = {}
        self._static = bool(lowered.static_argnums)
        self._out_tree = lowered.out_tree
        self._run = executor.run
        if self._boundary is not None:
            boundary, run = self._boundary, executor.run
            self._run = lambda placed: boundary.results(
                run(boundary.inputs(placed)))
        self._unflatten = jax.tree_util.tree_unflatten
        self.timings: dict[str, float] = dict(lowered.timings)

    @property
    def in_tree(self) -> Any:
        return self.lowered.in_tree

    @property
    def out_tree(self) -> Any:
        return self.lowered.out_tree

    def as_text(self) -> str:
        """What XLA compiled: each program's optimized HLO, headed by its
        name and mesh (programs of other processes' meshes are left out)."""
        parts = []
        for name, program in self.executor.programs.items():
            parts.append(f"// program {name} on mesh "
                         f"{self.plan.programs[name].mesh}\n"
                         f"{program.compiled.as_text()}")
        return "\n".join(parts)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost analysis of one call: each compiled program's times
        the number of times the plan calls it, summed."""
        return total_cost(self.plan, {
            name: program.compiled.cost_analysis()
            for name, program in self.executor.programs.items()})

    @property
    def plan(self) -> ExecutionPlan:
        return self.lowered.plan

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The common case first, at a few hundred ns: every argument an
        # array already on its mesh (as a training loop passes them).
        if self._static:
            args = self._dynamic(args)
        flat = getattr(self, "_flat_in_tree", None)
        if flat is None:
            # Whether the program was lowered for arrays passed positionally,
            # one per parameter: then `args` of as many arrays has its pytree.
            tree = self.lowered.in_tree
            flat = self._flat_in_tree = tree == jax.tree_util.tree_structure(
                (tuple(range(tree.num_leaves)), {}))
        placed = None if kwargs or not flat else arguments.as_placed(
            args, self._expected, self._relabelled)
        if placed is None:
            leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
            if tree == self.lowered.in_tree:
                placed = arguments.as_placed(leaves, self._expected,
                                             self._relabelled)
            if placed is None:  # something to move, convert or refuse
                placed = self._place_inputs(args, kwargs)
        return self._unflatten(self._out_tree, self._run(placed))

    def _call_placed(self, placed: Sequence[jax.Array]) -> Any:
        """Runs on flat arguments already checked by `_as_placed`."""
        return self._unflatten(self._out_tree, self._run(placed))

    def _program_inputs(self, placed: Sequence[Any]) -> Sequence[Any]:
        """The program's inputs from the placed arguments."""
        return placed if self._boundary is None else \
            self._boundary.inputs(placed)

    def _user_results(self, results: Sequence[Any]) -> Sequence[Any]:
        return results if self._boundary is None else \
            self._boundary.results(results)

    def _dynamic(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The arguments without the static ones (fixed at lowering)."""
        if not self.lowered.static_argnums:
            return tuple(args)
        return tuple(arguments.split_static(
            args, self.lowered.static_argnums)[0])

    def run_traced(self, *args: Any, source: str = "auto",
                   **kwargs: Any) -> tuple[Any, Trace]:
        """Runs like calling, and returns the results with a `Trace` of the
        run (`source` is reserved: the function cannot take an argument
        of that name through `run_traced`).

        `source="profiler"`: the step runs as an untraced one does (the
        meshes overlap as they do untraced) under JAX's profiler, and the
        trace is the device timeline it recorded (`mpmd.runtime.profile`);
        `ProfileError` if the profiler gives nothing usable. `source="host"`: every step is
        waited for and timed on the host, so the meshes do not overlap (a
        serialized run, slower than an untraced one). `source="auto"` (the
        default): the profiler, else host timestamps, the reason in
        `trace.fallback_reason`. A profiled step whose profile cannot be
        used runs again with host timestamps, unless it donated its
        inputs: then `ProfileError` is raised with the results in its
        `results`. A multi-process job uses host timestamps: every process
        records its own steps from a common start (a barrier), and each
        returns the merged trace of all."""
        check_source(source)
        args = self._dynamic(args)
        placed = jax.block_until_ready(self._place_inputs(args, kwargs))
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
                        self.executor, self._program_inputs(placed))
                    results = self._user_results(results)
                except ProfileError as error:
                    if source == "profiler" or (
                            error.results is not None
                            and donates_inputs(self.plan)):
                        if error.results is not None:  # as a call returns
                            error.results = jax.tree_util.tree_unflatten(
                                self.lowered.out_tree, error.results)
                        raise
                    reason = str(error)
                else:
                    return (jax.tree_util.tree_unflatten(
                        self.lowered.out_tree, results), trace)
        placed = self._program_inputs(placed)
        first_run = prepare_traced_run(self.executor, placed)
        recorder = TraceRecorder.for_plan(self.plan)
        processes.barrier("trace")
        recorder.start()
        results = self._user_results(jax.block_until_ready(
            self.executor.run(placed, recorder=recorder)))
        trace = recorder.finish()
        if processes.is_multiprocess():
            trace = Trace.merge([
                Trace.from_dict(json.loads(text)) for text in
                processes.all_gather_text("trace",
                                          json.dumps(trace.to_dict()))])
        trace.fallback_reason = reason
        trace.first_run = trace.first_run or first_run
        return (jax.tree_util.tree_unflatten(self.lowered.out_tree, results),
                trace)

    def run_with_memory(self, *args: Any,
                        **kwargs: Any) -> tuple[Any, MemoryTable]:
        """Runs like calling, and returns the results with a `MemoryTable`:
        per mesh, the peak bytes per device the plan predicts
        (`predict_peaks`) beside those measured between steps from the
        arrays really alive (`MemoryRecorder`, `docs/runtime.md#memory`).
        The inputs are placed before the measurement starts, so they count
        in its `total` and `start`, not in its `step`. Every step is waited
        for, as in `run_traced`. One process only."""
        if processes.is_multiprocess():
            raise MemoryProfileError(
                "run_with_memory measures one process's arrays; it is not "
                "supported in a multi-process job")
        args = self._dynamic(args)
        predicted = predict_peaks(self.executor)
        placed = jax.block_until_ready(self._place_inputs(args, kwargs))
        placed = self._program_inputs(placed)
        recorder = MemoryRecorder.for_executor(self.executor)
        recorder.start()
        results = self._user_results(jax.block_until_ready(
            self.executor.run(placed, recorder=recorder)))
        del placed
        measured = recorder.finish()
        table = MemoryTable.build(predicted, measured, recorder.samples)
        return (jax.tree_util.tree_unflatten(self.lowered.out_tree, results),
                table)

    def _place_inputs(self, args: Sequence[Any],
                      kwargs: dict[str, Any]) -> list[jax.Array]:
        """The flat arguments, checked and put on their meshes. Arrays
        already on their mesh are passed through without a copy; nothing
        here waits for an array to be ready."""
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self.lowered.in_tree or len(leaves) != len(self._expected):
            raise InputError(arguments.describe_mismatch(
                self.lowered.in_tree, (tuple(args), kwargs),
                self.lowered.argument_paths, self._expected,
                function=self.lowered.function_name))
        placed = []
        for index, ((shape, dtype, sharding), leaf) in enumerate(
                zip(self._expected, self.lowered.io.inputs)):
            value = leaves[index]
            if not hasattr(value, "dtype"):
                # A Python scalar, typed as jax.jit types it (float32
                # unless x64 is on).
                value = np.asarray(value)
                value = value.astype(jax.dtypes.canonicalize_dtype(
                    value.dtype))
            if tuple(value.shape) != tuple(shape) or value.dtype != dtype:
                raise InputError(
                    f"argument {self._where(args, kwargs, index)} has shape "
                    f"{tuple(value.shape)} and dtype {_dtype_name(value.dtype)}"
                    f", but the program was lowered for shape {tuple(shape)} "
                    f"and dtype {_dtype_name(dtype)}; lower again for new "
                    "shapes")
            if isinstance(value, jax.Array) and value.is_deleted():
                # Donated to an earlier call (or deleted): its buffers are
                # gone, and the executor's fast path does not look again.
                raise InputError(
                    f"argument {self._where(args, kwargs, index)} was "
                    "deleted (donated to an earlier call?); pass a live "
                    "array")
            if leaf.key_impl is not None:
                # The program takes the key's data (placed as such).
                value = jax.random.key_data(value)
            if sharding is None:  # a stack without a layout: cut as it is
                placed.append(value)
            else:
                placed.append(self.executor.place(value, sharding))
        return placed

    def _where(self, args: Sequence[Any], kwargs: dict[str, Any],
               index: int) -> str:
        """The pytree path of flat argument `index`, for error messages, in
        the user's terms (`params['w1']`) where the lowering named it."""
        named = self.lowered.argument_paths
        if index < len(named):
            return named[index]
        paths = jax.tree_util.tree_flatten_with_path((tuple(args), kwargs))[0]
        return jax.tree_util.keystr(paths[index][0]) or f"[{index}]"


@contextlib.contextmanager
def _frontend(config: MpmdConfig) -> Iterator[dict[str, Any]]:
    """What tracing and lowering for MPMD need: named computations emitted
    as mpmd ops, each seeing its mesh, loop bodies traced once, split
    stacks split (the dict yielded gets what tracing found of each); a
    concrete sharding of several meshes inside becomes a ShardingError."""
    from mpmd.frontend import (  # noqa: PLC0415
        emit_named_computations, named_computation_meshes, stacks,
        traced_bodies)

    topology = dict(config.topology)
    meshes = {name: topology[split_memory_kind(mesh)[0]].abstract_mesh
              for name, (mesh, _) in config.assignment.items()}
    # A split stack's body sees its first mesh (the pieces' meshes have one
    # shape where the stack is laid out over them).
    meshes.update({name: topology[split.meshes[0]].abstract_mesh
                   for name, split in config.stacks.items()})
    with emit_named_computations(), named_computation_meshes(meshes), \
            traced_bodies(), stacks.splitting(config.stacks) as found:
        try:
            yield found
        except ValueError as error:
            if "incompatible devices" not in str(error):
                raise
            raise ShardingError(
                "the function uses concrete shardings of several meshes "
                "inside (with_sharding_constraint or shard_map with a "
                "jax.sharding.Mesh); inside a named computation give a "
                "PartitionSpec (it resolves on the computation's mesh) "
                "or mesh.abstract_mesh instead. JAX said: "
                f"{error}") from None


class Traced:
    """A function traced by JAX for MPMD, not partitioned yet (the shape of
    `jax.stages.Traced`): `jaxpr`, `out_info`, `lower()`."""

    def __init__(self, function: "MpmdFunction", traced: Any,
                 leaves: list[Any], paths: list[str],
                 static: frozenset[int], start: float,
                 splits: dict[str, Any] | None = None):
        self._function = function
        self._jax = traced
        self._leaves = leaves
        self._paths = paths
        self._static = static
        self._start = start
        # Per split named computation: its stack's layers and pieces.
        self._splits = dict(splits or {})
        # The call's arguments, to trace again (automatic layer counts).
        self._call: tuple[tuple, dict] = ((), {})

    @property
    def jaxpr(self) -> Any:
        """The traced program (a ClosedJaxpr) with its named computations."""
        return self._jax.jaxpr

    @property
    def out_info(self) -> Any:
        """Shapes and dtypes of the results, as a pytree."""
        return self._jax.out_info

    @property
    def in_tree(self) -> Any:
        return self._jax.in_tree

    @property
    def fun_name(self) -> str:
        return self._jax.fun_name

    def lower(self) -> "Lowered":
        """Lowers with JAX and partitions with the mpmd compiler."""
        return self._function._lower_traced(self)


class MpmdFunction:
    """The result of `mpmd.jit`: lower it, or call it (lowered and compiled
    once per argument signature: shapes, dtypes, the layouts of committed
    arrays and the static arguments)."""

    def __init__(self, fn: Callable, config: MpmdConfig,
                 static_argnums: Sequence[int] | int = (),
                 in_shardings: Any = None, out_shardings: Any = None,
                 donate_argnums: Sequence[int] | int | None = ()):
        if not isinstance(config, MpmdConfig):
            raise ConfigError("mpmd.jit needs a config from mpmd.make_config,"
                              f" got {type(config).__name__}")
        self.fn = fn
        self.config = config
        self.static_argnums = ((static_argnums,) if isinstance(
            static_argnums, int) else tuple(static_argnums))
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.donate_argnums = ((donate_argnums,) if isinstance(
            donate_argnums, int) else tuple(donate_argnums or ()))
        self._cache: dict[Any, Compiled] = {}
        # The last program called and its argument structure: a call whose
        # arrays are already laid out as its inputs runs it without
        # computing the signature (a training loop's common case).
        self._last: tuple[Any, Compiled] | None = None

    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """Traces the function with JAX for these arguments (as
        `jax.jit(f).trace`); `.lower()` partitions it."""
        start = time.perf_counter()
        static = arguments.normalize_argnums(self.static_argnums, len(args))
        dynamic, _ = arguments.split_static(args, static)
        flat, tree = jax.tree_util.tree_flatten_with_path(
            (tuple(dynamic), kwargs))
        leaves = [leaf for _, leaf in flat]
        paths = arguments.argument_paths(self.fn, static, len(args),
                                         [path for path, _ in flat])
        abstract_args, abstract_kwargs = jax.tree_util.tree_unflatten(
            tree, [arguments.abstract(leaf) for leaf in leaves])
        abstract = iter(abstract_args)
        call_args = [a if i in static else next(abstract)
                     for i, a in enumerate(args)]
        # A new function each time: JAX's trace cache keys on the function
        # and not on mpmd's tracing state, and may hold a trace made under
        # plain jax.jit (labels inline, no split stacks).
        jitted = jax.jit(_afresh(self.fn), keep_unused=True,
                         static_argnums=self.static_argnums,
                         donate_argnums=self.donate_argnums)
        with _frontend(self.config) as splits:
            traced = jitted.trace(*call_args, **abstract_kwargs)
        result = Traced(self, traced, leaves, paths, static, start, splits)
        result._call = (args, kwargs)
        return result

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Traces and partitions the function for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def _lower_traced(self, traced: "Traced") -> Lowered:
        start, leaves, paths, static = (traced._start, traced._leaves,
                                        traced._paths, traced._static)
        topology = dict(self.config.topology)
        config = self.config
        # The user's arguments and results; the program's may differ
        # (typed keys as their data, split stacks in pieces: program_io).
        in_tree, out_tree = traced._jax.in_tree, traced._jax.out_tree
        in_avals, out_avals = traced._jax.jaxpr.in_avals, \
            traced._jax.jaxpr.out_avals
        lowered, program = self._lower_program(traced)
        io = program_io.build(
            in_avals, out_avals, program and program.inputs,
            program and program.outputs,
            {name: split.meshes for name, split in config.stacks.items()})
        config = stacks_assigned(config, traced._splits)
        # JAX caches its lowering and hands out the same module again: the
        # attributes are added to a copy.
        module = lowered.compiler_ir("stablehlo").operation.clone()
        entry = lowering.add_topology(module, config.topology_attr())

        num_inputs, num_outputs = in_tree.num_leaves, out_tree.num_leaves
        args_tree = in_tree.children()[0] if in_tree.children() else in_tree
        assigned_in = lowering.flat_io_assignment(
            config.input_mesh_assignment, args_tree, num_inputs,
            "input_mesh_assignment")
        assigned_out = lowering.flat_io_assignment(
            config.output_mesh_assignment, out_tree, num_outputs,
            "output_mesh_assignment")
        # "m1#pinned_host": the mesh places the value, the memory kind goes
        # to the compiler with it.
        kinds_in = lowering.memory_kinds(assigned_in)
        kinds_out = lowering.memory_kinds(assigned_out)
        num_positional = args_tree.num_leaves
        given_in = flat_prefix(self.in_shardings, args_tree, num_positional,
                               "in_shardings")
        given_in += [None] * (num_inputs - num_positional)
        out_flat = jax.tree_util.tree_flatten_with_path(traced.out_info)[0]
        out_paths = ["result" + arguments.path_text(path)
                     for path, _ in out_flat]
        given_out = flat_prefix(self.out_shardings, out_tree, num_outputs,
                                "out_shardings")
        # Each of those per program value.
        piece_sharding = functools.partial(program_io.piece_sharding,
                                           topology=topology)
        user_paths, user_out_paths = paths, out_paths
        leaves = io.expand_inputs(leaves, functools.partial(
            program_io.piece_leaf, topology=topology))
        paths = io.expand_inputs(paths, program_io.piece_path)
        given_in = io.expand_inputs(given_in, piece_sharding)
        assigned_in = io.expand_input_dict(assigned_in, program_io.piece_mesh)
        kinds_in = io.expand_input_dict(kinds_in, _piece_kind)
        out_shapes = io.expand_outputs(
            [tuple(a.shape) for a in out_avals],
            lambda shape, leaf, j: program_io.piece_shape(
                jax.ShapeDtypeStruct(shape, np.float32), leaf, j))
        out_paths = io.expand_outputs(out_paths, program_io.piece_path)
        given_out = io.expand_outputs(given_out, piece_sharding)
        assigned_out = io.expand_output_dict(assigned_out,
                                             program_io.piece_mesh)
        kinds_out = io.expand_output_dict(kinds_out, _piece_kind)
        in_placements = input_placements(leaves, paths, given_in,
                                         assigned_in, topology)
        out_placements = output_placements(out_shapes, out_paths, given_out,
                                           assigned_out, topology)
        add_entry_shardings(module, entry, in_placements, out_placements,
                            topology)
        text = module.get_asm(print_generic_op_form=True,
                              enable_debug_info=True)
        partitioner = Partitioner(text, source_name="<jax>")
        computations, tensors = map(set, partitioner.named_ops())
        _check_splits(config, traced._splits, computations)
        if any(r.split.auto for r in traced._splits.values()):
            chosen = auto_assign.stack_layers(config, partitioner,
                                              computations, traced._splits)
            if chosen is not None:  # trace again with those layer counts
                function = MpmdFunction(
                    self.fn, dataclasses.replace(self.config, stacks=chosen),
                    self.static_argnums, self.in_shardings,
                    self.out_shardings, self.donate_argnums)
                again = function.trace(*traced._call[0], **traced._call[1])
                again._start = start
                return function._lower_traced(again)
        choice = None
        if config.auto:
            config, choice = auto_assign.choose(config, partitioner,
                                                computations)
        unused = sorted(set(config.assignment) - computations - tensors)
        # A nested named computation left out of the assignment is part of
        # the one around it.
        top_level, nested = lowering.named_computation_nesting(module)
        missing = sorted(top_level - set(config.assignment))
        if missing:
            raise AssignmentError(lowering.unassigned_message(
                missing, unused, config.mesh_names[0]))
        lowering.check_nesting(nested, config.assignment)
        for name in sorted(config.assignment):
            mesh, kind = split_memory_kind(config.assignment[name][0])
            if kind in (None, "device"):
                continue
            if name in computations:
                raise ConfigError(
                    f"assignment[{name!r}] is {mesh + '#' + kind!r}: a "
                    "memory kind says where a value lives, so only named "
                    f"tensors take one, and {name!r} is a named_computation;"
                    f" assign it to {mesh!r}")
            if not is_abstract(topology[mesh]):  # else checked by compile
                require_memory_kind(mesh, topology[mesh], kind,
                                    f"named tensor {name!r} (assigned "
                                    f"{mesh + '#' + kind!r})")
        for name in unused:
            diagnostics.warn(
                f"assignment entry {name!r} matches no named_computation or "
                "named_tensor of the program"
                + diagnostics.did_you_mean(name, computations | tensors))
        inputs = {i: p.mesh for i, p in in_placements.items()
                  if p.mesh is not None}
        outputs = {i: p.mesh for i, p in out_placements.items()
                   if p.mesh is not None}
        # Arguments whose committed sharding chose their mesh.
        committed = [(i, p.mesh) for i, p in sorted(in_placements.items())
                     if i not in assigned_in and p.mesh is not None
                     and isinstance(leaves[i], (jax.Array,
                                                jax.ShapeDtypeStruct))]
        traced_at = time.perf_counter()
        try:
            mpmd_text, plan_json, cached = lowering.warning_at_user(
                partition_cached, config, text,
                (inputs, outputs, kinds_in, kinds_out),
                lambda: lowering.partition(config, partitioner, inputs,
                                           outputs, kinds_in, kinds_out))
        except CompilerError as error:
            raise diagnostics.retell(
                error, arguments=paths, results=out_paths,
                committed=committed) from None
        partitioned = time.perf_counter()
        plan = ExecutionPlan.from_json(plan_json)
        lowering.warn_moved_arguments(plan, committed, paths)
        lowering.warn_idle_meshes(plan, config)
        lowered_mpmd = Lowered(config, mpmd_text, plan, in_tree,
                               out_tree, text, static, module)
        lowered_mpmd.argument_paths = user_paths
        lowered_mpmd.io = io
        lowered_mpmd.program_paths = (paths, out_paths)
        lowered_mpmd.stacks = dict(traced._splits)
        if io.stacked:
            lowering.warn_stack_layouts(lowered_mpmd.stacked_arrays(),
                                        user_paths, user_out_paths)
        lowered_mpmd.function_name = getattr(self.fn, "__name__",
                                             plan.function)
        # Whether the partition came from the persistent cache
        # (mpmd.partition_cache).
        lowered_mpmd.partition_cached = cached
        if choice is not None:
            lowered_mpmd._auto = (choice, lambda assignment: lowering.partition(
                dataclasses.replace(config, assignment=assignment),
                Partitioner(text, source_name="<jax>"), inputs, outputs,
                kinds_in, kinds_out))
        lowered_mpmd.timings = {"trace": traced_at - start,
                                "partition": partitioned - traced_at,
                                "plan": time.perf_counter() - partitioned}
        return lowered_mpmd

    def _lower_program(self, traced: "Traced") -> tuple[Any, Any]:
        """JAX's lowering of the traced function, and None; or, when a
        stack was split, of the program with its stacked values in pieces
        (`stack_rewrite`), and that program."""
        if not traced._splits:
            with _frontend(self.config):
                return traced._jax.lower(), None
        from mpmd.frontend import stack_rewrite  # noqa: PLC0415

        program = stack_rewrite.rewrite(traced._jax.jaxpr)
        function = program.function
        function.__name__ = getattr(self.fn, "__name__", "function")
        donated = [leaf.donated for leaf in jax.tree_util.tree_leaves(
            traced._jax.args_info)]
        donate = [i for i, d in enumerate(program_io.expand_flags(
            donated, program.inputs)) if d]
        with _frontend(self.config):
            lowered = jax.jit(function, keep_unused=True,
                              donate_argnums=donate).trace(
                *program.input_specs()).lower()
        return lowered, program

    def _reusable(self, key: tuple, leaves: Sequence[Any]
                  ) -> "Compiled | None":
        """A program already compiled for these arguments' structure whose
        inputs are laid out as these committed arrays are: the second call
        of a training loop passes the first call's results, committed where
        the first program put them, and runs that program again instead of
        compiling one for the same layouts."""
        for (tree, static, _), compiled in self._cache.items():
            if tree == key[0] and static == key[1] and \
                    arguments.fits(leaves, compiled._expected):
                return compiled
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        last = self._last
        if last is not None and not self.static_argnums:
            leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
            if tree == last[0]:
                placed = arguments.as_placed(leaves, last[1]._expected,
                                             last[1]._relabelled)
                if placed is not None:
                    return last[1]._call_placed(placed)
        static = arguments.normalize_argnums(self.static_argnums, len(args))
        dynamic, fixed = arguments.split_static(args, static)
        leaves, tree = jax.tree_util.tree_flatten((tuple(dynamic), kwargs))
        devices = getattr(self, "_topology_devices", None)
        if devices is None:
            devices = self._topology_devices = arguments.topology_devices(
                self.config.topology)
        # Arrays committed outside the topology lower and move as host data
        # do: they key (and fit a program) as host data.
        leaves = arguments.off_topology_as_host(leaves, devices)
        key = (tree, tuple(arguments.static_key(x) for x in fixed),
               tuple(arguments.leaf_key(x) for x in leaves))
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._reusable(key, leaves)
            if compiled is None:
                compiled = self.lower(*args, **kwargs).compile()
            self._cache[key] = compiled
        if not self.static_argnums:
            self._last = (jax.tree_util.tree_structure((args, kwargs)),
                          compiled)
        return compiled(*args, **kwargs)


def jit(fn: Callable, config: MpmdConfig | None = None, *,
        in_shardings: Any = None, out_shardings: Any = None,
        static_argnums: Sequence[int] | int = (),
        donate_argnums: Sequence[int] | int | None = (),
        keep_unused: bool = True, override_func_name: str | None = None,
        mpmd_config: MpmdConfig | None = None) -> MpmdFunction:
    """Partitions `fn` into an MPMD program according to `config`
    (`mpmd_config=` as Shardy:MPMD names it).

    `in_shardings` / `out_shardings` are as in `jax.jit`: a pytree prefix of
    the positional arguments / the results with `NamedSharding`s on topology
    meshes, `PartitionSpec`s (resolved on the mesh the value is assigned
    to) or None. Committed `jax.Array` arguments keep their own
    `NamedSharding`. Everything else is laid out by sharding propagation.
    `donate_argnums` as in `jax.jit`: the buffers of those arguments (all
    leaves of each) may be reused by the program that reads them last, and
    are deleted by the call when they were passed already on their mesh
    (host data, or arrays the call has to move, are copied first, and the
    copy is donated). `keep_unused` is accepted for Shardy:MPMD's
    signature: arguments the function does not use are always kept (the
    program takes every flat argument). `override_func_name` names the
    function in the lowered programs instead of `fn.__name__`.
    """
    if mpmd_config is not None:
        if config is not None:
            raise ConfigError("give the config once: as the second argument "
                              "or as mpmd_config=, not both")
        config = mpmd_config
    del keep_unused  # every argument is kept; see the docstring
    if override_func_name is not None:
        fn = _renamed(fn, override_func_name)
    return MpmdFunction(fn, config, static_argnums, in_shardings,
                        out_shardings, donate_argnums)


def _piece_kind(kind: Any, leaf: Any, j: int) -> Any:
    """A memory kind asked for a whole stack does not hold for its pieces
    (they are the program's own); a key's data keeps its key's."""
    return None if leaf.stack is not None else kind


def stacks_assigned(config: MpmdConfig, splits: dict[str, Any]
                    ) -> MpmdConfig:
    """`config` with each piece of the split stacks traced assigned to its
    mesh and stage."""
    if not splits:
        return config
    assignment = dict(config.assignment)
    for record in splits.values():
        split = record.split
        for j, piece in enumerate(record.pieces):
            assignment[piece] = (split.meshes[j], split.stages[j])
    return dataclasses.replace(config, assignment=assignment)


def _check_splits(config: MpmdConfig, splits: dict[str, Any],
                  computations: set[str]) -> None:
    """A computation assigned several meshes must have been split."""
    for name in sorted(set(config.stacks) - set(splits)):
        if name in computations:
            raise AssignmentError(
                f"named computation {name!r} is assigned the meshes "
                f"{list(config.stacks[name].meshes)} but was not split: "
                "JAX reused a trace of the function that calls it made "
                "outside mpmd.jit (a jax.jit function traced before for "
                "the same arguments); call that function without jax.jit "
                "inside the step, or define it anew")
        diagnostics.warn(
            f"assignment entry {name!r} matches no named_computation of the "
            "program" + diagnostics.did_you_mean(name, computations))


def _afresh(fn: Callable) -> Callable:
    """`fn` as a new function object (same name and signature)."""
    @functools.wraps(fn)
    def afresh(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return afresh


def _renamed(fn: Callable, name: str) -> Callable:
    """`fn` under another name (JAX names the lowered module after it)."""
    @functools.wraps(fn)
    def renamed(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    renamed.__name__ = renamed.__qualname__ = name
    return renamed
