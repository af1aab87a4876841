"""`mpmd.jit` and its stages (jit -> lower -> compile -> call) for MPMD.

    lowered = mpmd.jit(step, config).lower(params, batch)
    print(lowered.as_text())            # the MPMD program
    compiled = lowered.compile()
    params, loss = compiled(params, batch)

Lowering traces with `jax.jit`, hands JAX's StableHLO (with the topology) to
the compiler's import and export pipelines, and keeps the exported program
with its execution plan. Compiling builds one XLA executable per distinct
program and mesh; calling runs the plan on jax.Arrays.

This module holds the stage classes; what they use lives beside it: `lower`
(the lowering driver), `lowering` (the configuration and the traced program
on their way into the compiler), `arguments` (tracing, naming, keying and
checking arguments), `shardings` (user shardings resolved on meshes),
`diagnostics` (errors and warnings in the user's terms); the runtime's
`PlanExecutable` under `Compiled`.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax

from mpmd import arguments, auto_assign, lowering, program_io
from mpmd.config import (ConfigError, FunctionIOMeshAssignment, MpmdConfig,
                         require_devices)
from mpmd.errors import MpmdError
from mpmd.runtime.executable import (InputError, PlanExecutable,
                                     estimated_cost, groups, stacked_array)
from mpmd.runtime.executor import sharding_for
from mpmd.runtime.memory import MemoryTable
from mpmd.runtime.plan import ExecutionPlan, format_layout
from mpmd.runtime.simulate import simulate
from mpmd.runtime.profile import ProfileError, check_source
from mpmd.runtime.trace import Trace

__all__ = ["Compiled", "InputError", "Lowered", "MpmdFunction",
           "NamedShardings", "Traced", "jit"]


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


class Lowered:
    """A function lowered to an MPMD program (not compiled yet)."""

    def __init__(self, config: MpmdConfig, mpmd_text: str | Callable[[], str],
                 plan: ExecutionPlan, in_tree: Any, out_tree: Any,
                 jax_text: str, static_argnums: frozenset[int] = frozenset(),
                 jax_module: Any = None):
        self.config = config
        self.plan = plan
        # The module's text, or a function printing it when first asked
        # (`mpmd.lowering.partition`'s): nothing on the way to running it
        # needs the text.
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
        # The plan as the compiler wrote it (JSON text, or mpmd.lowering's
        # PlanText, whose str() is), where lowering kept it: what
        # `mpmd.export` stores.
        self.plan_json: Any = None
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
        self.io = program_io.ProgramIO.plain(len(plan.inputs),
                                             len(plan.outputs))
        self.program_paths: tuple[list[str], list[str]] | None = None
        self.stacks: dict[str, Any] = {}

    def _module_text(self) -> str:
        self._mpmd_text = lowering.module_text(self._mpmd_text)
        return self._mpmd_text

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
            return self._module_text()
        if kind == "ifrt":
            if self._ifrt_text is None:
                from mpmd.compiler import lower_to_ifrt  # noqa: PLC0415

                self._ifrt_text = lower_to_ifrt(self._module_text())
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
            return ir.Module.parse(parse(self._module_text(), generic=True))

    def cost_analysis(self) -> dict[str, float]:
        """XLA's estimate (before compiling) of one call: each program's
        cost analysis times the number of times the plan calls it, summed
        (`flops`, `bytes accessed`, ...)."""
        topology = dict(self.config.topology)
        require_devices(topology, "estimate costs")
        return estimated_cost(self.plan, topology)

    @property
    def function_named_shardings(self) -> NamedShardings:
        """Where each argument and result lives: a NamedSharding of its
        mesh; for a stack split over meshes, one over their devices
        (`docs/stacks.md`), or None where there is none."""
        meshes = dict(self.config.topology)
        return NamedShardings(*self._io_trees(
            lambda spec: sharding_for(spec, meshes),
            lambda io, specs, _: stacked_array(io, specs, meshes,
                                                None).sharding))

    def stacked_arrays(self, move: Callable[..., Any] | None = None
                       ) -> list[tuple[str, Any]]:
        """(path, `StackedArray`) of each argument and result held in
        pieces by the program: how it crosses a call (its `sharding` over
        the meshes' devices, or None where there is none)."""
        topology = dict(self.config.topology)
        paths = (self.argument_paths or arguments.leaf_paths(self.in_tree),
                 ["result" + p for p in arguments.leaf_paths(self.out_tree)])
        return [(path, stacked_array(leaf, group, topology, move))
                for leaves, specs, names in (
                    (self.io.inputs, self.plan.inputs, paths[0]),
                    (self.io.outputs, self.plan.outputs, paths[1]))
                for leaf, group, path in zip(leaves, groups(leaves, specs),
                                             names)
                if leaf.stack is not None]

    def _user_specs(self, specs: Sequence[Any], leaves: Sequence[Any],
                    leaf: Callable[[Any], Any],
                    stacked: Callable[[Any, Any, list[Any]], Any]
                    ) -> list[Any]:
        """`leaf` of each argument's (result's) program value, `stacked`
        of those held in pieces (the LeafIO and the pieces' specs)."""
        out = []
        for io, group in zip(leaves, groups(leaves, specs)):
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
                plan = lowering.execution_plan(
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
        require_devices(topology, "compile")
        # Processes agree on the plan's JSON where lowering kept it (it
        # holds every program and step), without printing the module.
        executable = PlanExecutable.compile(
            self.plan, topology, str(self.plan_json)
            if self.plan_json is not None else self._module_text(),
            f"function {self.function_name!r}", io=self.io,
            describe=arguments.describe_argument(self.argument_paths), error=InputError)
        compiled = Compiled(self, executable)
        compiled.timings = dict(self.timings,
                                compile=time.perf_counter() - start)
        return compiled


class Compiled:
    """A compiled MPMD program: call it with the function's arguments.

    A thin wrapper over the runtime's `PlanExecutable` (as
    `jax.stages.Compiled` is over its executable): it flattens the
    arguments' pytree, checks its structure against the lowered one, names
    arguments by their pytree paths in messages, and unflattens results."""

    def __init__(self, lowered: Lowered, executable: PlanExecutable):
        self.lowered = lowered
        self.executable = executable
        self.executor = executable.executor
        self._boundary = executable.boundary
        self._expected = executable.expected
        self._input_shardings = [sharding for _, _, sharding in
                                 self._expected]
        self._relabelled = executable.relabelled
        self._static = bool(lowered.static_argnums)
        self._out_tree = lowered.out_tree
        self._run = executable.run_placed
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
        return self.executable.as_text()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost analysis of one call: each compiled program's times
        the number of times the plan calls it, summed."""
        return self.executable.cost_analysis()

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
        placed = self._place_inputs(self._dynamic(args), kwargs)
        try:
            results, trace = self.executable.run_traced(placed, source)
        except ProfileError as error:
            if error.results is not None:  # as a call returns them
                error.results = self._unflatten(self._out_tree,
                                                error.results)
            raise
        return self._unflatten(self._out_tree, results), trace

    def run_with_memory(self, *args: Any,
                        **kwargs: Any) -> tuple[Any, MemoryTable]:
        """Runs like calling, and returns the results with a `MemoryTable`:
        per mesh, the peak bytes per device the plan predicts
        (`predict_peaks`) beside those measured between steps from the
        arrays really alive (`MemoryRecorder`, `docs/runtime.md#memory`).
        The inputs are placed before the measurement starts, so they count
        in its `total` and `start`, not in its `step`. Every step is waited
        for, as in `run_traced`. One process only."""
        args = self._dynamic(args)
        leaves = self._leaves(args, kwargs)
        results, table = self.executable.run_with_memory(leaves)
        return self._unflatten(self._out_tree, results), table

    def _leaves(self, args: Sequence[Any], kwargs: dict[str, Any]
                ) -> list[Any]:
        """The flat arguments, or InputError naming the paths where their
        pytree is not the lowered one."""
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self.lowered.in_tree or len(leaves) != len(self._expected):
            raise InputError(arguments.describe_mismatch(
                self.lowered.in_tree, (tuple(args), kwargs),
                self.lowered.argument_paths, self._expected,
                function=self.lowered.function_name))
        return leaves

    def _place_inputs(self, args: Sequence[Any],
                      kwargs: dict[str, Any]) -> list[jax.Array]:
        """The flat arguments, checked and put on their meshes. Arrays
        already on their mesh are passed through without a copy; nothing
        here waits for an array to be ready."""
        return self.executable.place(self._leaves(args, kwargs))


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
        if not callable(fn):
            raise ConfigError(f"mpmd.jit partitions a function; got "
                              f"{type(fn).__name__} {fn!r}")
        self.fn = fn
        self.config = config
        self.static_argnums = arguments.check_argnums(static_argnums,
                                                      "static_argnums")
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.donate_argnums = arguments.check_argnums(
            () if donate_argnums is None else donate_argnums,
            "donate_argnums")
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
        dynamic, fixed = arguments.split_static(args, static)
        for value in fixed:  # unhashable: a ConfigError, as a call gives
            arguments.static_key(value)
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
        with lowering.tracing(self.config) as splits:
            traced = jitted.trace(*call_args, **abstract_kwargs)
        result = Traced(self, traced, leaves, paths, static, start, splits)
        result._call = (args, kwargs)
        return result

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Traces and partitions the function for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def _lower_traced(self, traced: "Traced") -> Lowered:
        from mpmd.lower import lower_traced  # noqa: PLC0415 - it needs Lowered

        return lower_traced(self, traced)

    def _reusable(self, key: tuple, leaves: Sequence[Any]
                  ) -> "Compiled | None":
        """A program already compiled for these arguments' structure whose
        inputs are laid out as these committed arrays are: the second call
        of a training loop passes the first call's results, committed where
        the first program put them, and runs that program again instead of
        compiling one for the same layouts."""
        for (tree, static, _), compiled in self._cache.items():
            if tree == key[0] and static == key[1] and compiled._expected \
                    is not None and arguments.fits(leaves, compiled._expected):
                return compiled
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        last = self._last  # (a loop across meshes has no _expected)
        if last is not None and last[1]._expected is not None:
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
        if not isinstance(override_func_name, str):
            raise ConfigError(
                f"jit: override_func_name must be a str, got "
                f"{override_func_name!r} of type "
                f"{type(override_func_name).__name__}")
        fn = _renamed(fn, override_func_name)
    return MpmdFunction(fn, config, static_argnums, in_shardings,
                        out_shardings, donate_argnums)


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
