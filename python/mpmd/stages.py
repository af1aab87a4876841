"""`mpmd.jit` and its stages (jit -> lower -> compile -> call) for MPMD.

    lowered = mpmd.jit(step, config).lower(params, batch)
    print(lowered.as_text())            # the MPMD program
    compiled = lowered.compile()
    params, loss = compiled(params, batch)

Lowering traces with `jax.jit`, hands JAX's StableHLO (with the topology) to
the compiler's import and export pipelines, and keeps the exported program
with its execution plan. Compiling builds one XLA executable per distinct
program and mesh; calling runs the plan on jax.Arrays.
"""

from __future__ import annotations

import inspect
import json
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.compiler import compile_to_plan
from mpmd.config import ConfigError, MpmdConfig
from mpmd.errors import CompilerError, MpmdError
from mpmd.runtime import processes
from mpmd.runtime.executor import PlanExecutor, sharding_for
from mpmd.runtime.plan import ExecutionPlan, format_layout
from mpmd.runtime.trace import Trace, TraceRecorder
from mpmd.shardings import (ShardingError, add_entry_shardings, flat_prefix,
                            input_placements, output_placements)

__all__ = ["Compiled", "InputError", "Lowered", "MpmdFunction",
           "NamedShardings", "jit"]


class InputError(MpmdError):
    """A call's arguments do not match what the program was lowered for."""


@dataclass(frozen=True)
class NamedShardings:
    """Where the function's inputs and outputs live, as pytrees of
    NamedShardings shaped like the arguments and the results."""

    inputs: Any
    outputs: Any


_ORIGIN = re.compile(r'#mpmd\.user_origin<"((?:[^"\\]|\\.)*)"')
_NAMED_TENSOR = re.compile(
    r'"mpmd\.named_tensor"\([^)]*\)\s*<\{name\s*=\s*"((?:[^"\\]|\\.)*)"')


def _used_names(module_text: str) -> tuple[set[str], set[str]]:
    return set(_ORIGIN.findall(module_text)), set(
        _NAMED_TENSOR.findall(module_text))


def _flat_io_assignment(spec: Any, tree: Any, count: int,
                        which: str) -> dict[int, str]:
    """Flat index -> mesh from a pytree of mesh names or {index: mesh}."""
    if spec is None:
        return {}
    if isinstance(spec, dict) and all(isinstance(k, int) for k in spec):
        for index in spec:
            if not 0 <= index < count:
                raise ConfigError(f"{which} index {index} is out of range: "
                                  f"the function has {count} flat values")
        return {k: v for k, v in spec.items() if v is not None}
    leaves, spec_tree = jax.tree_util.tree_flatten(
        spec, is_leaf=lambda x: x is None)
    if spec_tree != tree:
        raise ConfigError(f"{which} must have the structure of the "
                          f"function's {'arguments' if 'input' in which else 'results'}"
                          f": expected {tree}, got {spec_tree}")
    return {i: mesh for i, mesh in enumerate(leaves) if mesh is not None}


def _import_pipeline(config: MpmdConfig, inputs: dict[int, str],
                     outputs: dict[int, str]) -> str:
    assignment = ",".join(
        f"{name}={mesh}" + (f":{stage}" if stage is not None else "")
        for name, (mesh, stage) in config.assignment.items())
    options = []
    if assignment:
        options.append(f"assignment={assignment}")
    if inputs:
        options.append("input-assignment=" +
                       ",".join(f"{i}={m}" for i, m in sorted(inputs.items())))
    if outputs:
        options.append("output-assignment=" +
                       ",".join(f"{i}={m}" for i, m in sorted(outputs.items())))
    opts = config.partitioning_options
    options.append(f"infer-transfers={str(opts.infer_transfers).lower()}")
    options.append("infer-cross-mesh-reductions="
                   f"{str(opts.infer_cross_mesh_reductions).lower()}")
    passes = [f"mpmd-import{{{' '.join(options)}}}"]
    if opts.split_backward or opts.pipeline_schedule == "zero-bubble-h1":
        passes.append("mpmd-split-backward")
    return ",".join(passes)


def _optimize_pipeline(config: MpmdConfig,
                       order: dict[str, list[str]] | None,
                       merge_rules: list[str]) -> str:
    """Schedule and merges (the program is already imported)."""
    opts = config.partitioning_options
    passes = []
    if order is not None:
        entries = ",".join(f"{mesh}={'|'.join(keys)}"
                           for mesh, keys in order.items())
        passes.append(f"mpmd-schedule{{schedule=explicit order={entries}}}")
    elif isinstance(opts.pipeline_schedule, str):
        passes.append(f"mpmd-schedule{{schedule={opts.pipeline_schedule}}}")
    merge = []
    if merge_rules:
        merge.append(f"rules={','.join(merge_rules)}")
    if opts.merge_last_stage:
        merge.append("merge-last-stage=true")
    if merge:
        passes.append(f"mpmd-merge-fragments{{{' '.join(merge)}}}")
    passes.append("mpmd-sharding")
    passes.append("mpmd-export")
    return ",".join(passes)


def _partition(config: MpmdConfig, text: str, inputs: dict[int, str],
               outputs: dict[int, str]) -> tuple[str, str]:
    """Runs import, schedule, merges and export; returns the exported module
    and its plan. Tables, comparators and merge predicates are evaluated
    over the imported program's fragments in between."""
    from mpmd.compiler import run_and_list_fragments  # noqa: PLC0415
    from mpmd.schedules import (  # noqa: PLC0415
        FragmentInfo, explicit_order, merge_pairs)

    opts = config.partitioning_options
    schedule = opts.pipeline_schedule
    rules = opts.fragment_merge_rules
    needs_fragments = (schedule is not None and not isinstance(schedule, str)) \
        or callable(rules)
    import_pipeline = _import_pipeline(config, inputs, outputs)
    if not needs_fragments:
        return compile_to_plan(
            text, import_pipeline + "," + _optimize_pipeline(
                config, None, merge_pairs(rules or (), [])),
            source_name="<jax>")
    imported, fragments_json = run_and_list_fragments(
        text, import_pipeline, source_name="<jax>")
    fragments = FragmentInfo.list_from_json(fragments_json)
    order = (explicit_order(schedule, fragments)
             if schedule is not None and not isinstance(schedule, str)
             else None)
    return compile_to_plan(
        imported, _optimize_pipeline(config, order,
                                     merge_pairs(rules or (), fragments)),
        source_name="<imported>")


def _add_topology(module: Any, topology: str) -> Any:
    """Marks JAX's public entry function with the topology, in JAX's own
    MLIR context; returns that function. `module` is a builtin.module op."""
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    with module.context:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name != "func.func":
                continue
            visibility = op.attributes["sym_visibility"] \
                if "sym_visibility" in op.attributes else None
            if visibility is None or str(visibility) == '"public"':
                op.attributes["topology"] = ir.Attribute.parse(topology)
                return op
    raise MpmdError("JAX's lowered module has no public entry function")


def _abstract(value: Any) -> Any:
    """What JAX traces for an argument: its shape and dtype only. Arrays on
    different meshes cannot be traced together by `jax.jit`; their layouts
    reach the compiler as `sdy.sharding` attributes instead."""
    if isinstance(value, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(value.shape, value.dtype,
                                    weak_type=value.weak_type)
    aval = jax.typeof(value)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype,
                                weak_type=getattr(aval, "weak_type", False))


def _split_static(args: Sequence[Any], static: frozenset[int]
                  ) -> tuple[list[Any], list[Any]]:
    dynamic = [a for i, a in enumerate(args) if i not in static]
    fixed = [a for i, a in enumerate(args) if i in static]
    return dynamic, fixed


def _normalize_argnums(argnums: Sequence[int] | int, count: int
                       ) -> frozenset[int]:
    if isinstance(argnums, int):
        argnums = (argnums,)
    return frozenset(i % count if count else i for i in argnums)


class Lowered:
    """A function lowered to an MPMD program (not compiled yet)."""

    def __init__(self, config: MpmdConfig, mpmd_text: str,
                 plan: ExecutionPlan, in_tree: Any, out_tree: Any,
                 jax_text: str, static_argnums: frozenset[int] = frozenset()):
        self.config = config
        self.plan = plan
        self._mpmd_text = mpmd_text
        self._jax_text = jax_text
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

    def as_text(self) -> str:
        """The exported MPMD program (main function plus one function per
        distinct SPMD program)."""
        return self._mpmd_text

    def jax_text(self) -> str:
        """What JAX lowered, before partitioning (generic form)."""
        return self._jax_text

    @property
    def function_named_shardings(self) -> NamedShardings:
        meshes = dict(self.config.topology)
        ins = [sharding_for(spec, meshes) for spec in self.plan.inputs]
        outs = [sharding_for(spec, meshes) for spec in self.plan.outputs]
        args_tree = self.in_tree.children()[0] if self.in_tree.num_leaves else self.in_tree
        try:
            inputs = jax.tree_util.tree_unflatten(args_tree, ins)
        except ValueError:
            inputs = jax.tree_util.tree_unflatten(self.in_tree, ins)
        return NamedShardings(inputs,
                              jax.tree_util.tree_unflatten(self.out_tree, outs))

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
        paths_in = self.argument_paths or _leaf_paths(self.in_tree)
        paths_out = ["result" + p for p in _leaf_paths(self.out_tree)]
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


class Compiled:
    """A compiled MPMD program: call it with the function's arguments."""

    def __init__(self, lowered: Lowered, executor: PlanExecutor):
        self.lowered = lowered
        self.executor = executor
        self._input_shardings = executor.input_shardings()
        self.timings: dict[str, float] = dict(lowered.timings)

    @property
    def plan(self) -> ExecutionPlan:
        return self.lowered.plan

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._dynamic(args)
        results = self.executor.run(self._place_inputs(args, kwargs))
        return jax.tree_util.tree_unflatten(self.lowered.out_tree, results)

    def _dynamic(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The arguments without the static ones (fixed at lowering)."""
        if not self.lowered.static_argnums:
            return tuple(args)
        return tuple(_split_static(args, self.lowered.static_argnums)[0])

    def run_traced(self, *args: Any, **kwargs: Any) -> tuple[Any, Trace]:
        """Runs like calling, and returns the results with a `Trace` of the
        run. Every step is waited for to time it, so the meshes do not
        overlap: a traced run is slower than an untraced one. In a
        multi-process job every process records its own steps from a common
        start (a barrier), and each returns the merged trace of all."""
        args = self._dynamic(args)
        placed = jax.block_until_ready(self._place_inputs(args, kwargs))
        recorder = TraceRecorder.for_plan(self.plan)
        processes.barrier("trace")
        recorder.start()
        results = jax.block_until_ready(
            self.executor.run(placed, recorder=recorder))
        trace = recorder.finish()
        if processes.is_multiprocess():
            trace = Trace.merge([
                Trace.from_dict(json.loads(text)) for text in
                processes.all_gather_text("trace",
                                          json.dumps(trace.to_dict()))])
        return (jax.tree_util.tree_unflatten(self.lowered.out_tree, results),
                trace)

    def _place_inputs(self, args: Sequence[Any],
                      kwargs: dict[str, Any]) -> list[jax.Array]:
        """The flat arguments, checked and put on their meshes. Arrays
        already on their mesh are passed through without a copy; nothing
        here waits for an array to be ready."""
        leaves = jax.tree_util.tree_leaves((tuple(args), kwargs))
        plan = self.lowered.plan
        if len(leaves) != len(plan.inputs):
            raise InputError(f"expected {len(plan.inputs)} array arguments "
                             f"(flattened), got {len(leaves)}")
        placed = []
        for index, (value, spec, sharding) in enumerate(
                zip(leaves, plan.inputs, self._input_shardings)):
            if not hasattr(value, "dtype"):
                value = np.asarray(value)
            if tuple(value.shape) != spec.shape or value.dtype != spec.dtype:
                raise InputError(
                    f"argument {self._where(args, kwargs, index)} has shape "
                    f"{tuple(value.shape)} and dtype {np.dtype(value.dtype).name}"
                    f", but the program was lowered for shape {spec.shape} and"
                    f" dtype {spec.dtype.name}; lower again for new shapes")
            if isinstance(value, jax.Array) and value.sharding == sharding:
                placed.append(value)  # already on its mesh: no copy
            elif isinstance(value, jax.Array) and value._committed:
                # Device to device, resharding on device where needed.
                placed.append(self.executor.move(value, sharding))
            else:
                placed.append(jax.device_put(value, sharding))  # host data
        return placed

    @staticmethod
    def _where(args: Sequence[Any], kwargs: dict[str, Any], index: int) -> str:
        """The pytree path of flat argument `index`, for error messages."""
        paths = jax.tree_util.tree_flatten_with_path((tuple(args), kwargs))[0]
        return jax.tree_util.keystr(paths[index][0]) or f"[{index}]"


class MpmdFunction:
    """The result of `mpmd.jit`: lower it, or call it (lowered and compiled
    once per argument signature: shapes, dtypes, the layouts of committed
    arrays and the static arguments)."""

    def __init__(self, fn: Callable, config: MpmdConfig,
                 static_argnums: Sequence[int] | int = (),
                 in_shardings: Any = None, out_shardings: Any = None,
                 donate_argnums: Sequence[int] | int = ()):
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
            donate_argnums, int) else tuple(donate_argnums))
        self._cache: dict[Any, Compiled] = {}

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        from mpmd.frontend import (  # noqa: PLC0415
            emit_named_computations, named_computation_meshes, traced_bodies)

        start = time.perf_counter()
        static = _normalize_argnums(self.static_argnums, len(args))
        dynamic, _ = _split_static(args, static)
        flat, tree = jax.tree_util.tree_flatten_with_path(
            (tuple(dynamic), kwargs))
        leaves = [leaf for _, leaf in flat]
        paths = _argument_paths(self.fn, static, len(args),
                                [path for path, _ in flat])
        abstract_args, abstract_kwargs = jax.tree_util.tree_unflatten(
            tree, [_abstract(leaf) for leaf in leaves])
        abstract = iter(abstract_args)
        call_args = [a if i in static else next(abstract)
                     for i, a in enumerate(args)]

        topology = dict(self.config.topology)
        meshes = {name: topology[mesh].abstract_mesh
                  for name, (mesh, _) in self.config.assignment.items()}
        jitted = jax.jit(self.fn, keep_unused=True,
                         static_argnums=self.static_argnums,
                         donate_argnums=self.donate_argnums)
        with emit_named_computations(), named_computation_meshes(meshes), \
                traced_bodies():
            try:
                lowered = jitted.lower(*call_args, **abstract_kwargs)
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
        # JAX caches its lowering and hands out the same module again: the
        # attributes are added to a copy.
        module = lowered.compiler_ir("stablehlo").operation.clone()
        entry = _add_topology(module, self.config.topology_attr())

        in_tree, out_tree = lowered.in_tree, lowered.out_tree
        num_inputs, num_outputs = in_tree.num_leaves, out_tree.num_leaves
        args_tree = in_tree.children()[0] if in_tree.children() else in_tree
        assigned_in = _flat_io_assignment(
            self.config.input_mesh_assignment, args_tree, num_inputs,
            "input_mesh_assignment")
        assigned_out = _flat_io_assignment(
            self.config.output_mesh_assignment, out_tree, num_outputs,
            "output_mesh_assignment")
        num_positional = args_tree.num_leaves
        given_in = flat_prefix(self.in_shardings, args_tree, num_positional,
                               "in_shardings")
        given_in += [None] * (num_inputs - num_positional)
        in_placements = input_placements(leaves, paths, given_in,
                                         assigned_in, topology)
        out_flat = jax.tree_util.tree_flatten_with_path(lowered.out_info)[0]
        out_placements = output_placements(
            [tuple(info.shape) for _, info in out_flat],
            ["result" + _path_text(path) for path, _ in out_flat],
            flat_prefix(self.out_shardings, out_tree, num_outputs,
                        "out_shardings"),
            assigned_out, topology)
        add_entry_shardings(module, entry, in_placements, out_placements,
                            topology)
        text = module.get_asm(print_generic_op_form=True,
                              enable_debug_info=True)
        computations, tensors = _used_names(text)
        missing = sorted(computations - set(self.config.assignment))
        if missing:
            raise ConfigError(
                f"named_computation {missing[0]!r} is not assigned to a mesh;"
                f" add it to the assignment, e.g. {{{missing[0]!r}: "
                f"{self.config.mesh_names[0]!r}}}")
        unused = sorted(set(self.config.assignment) - computations - tensors)
        if unused:
            warnings.warn(f"assignment entries {unused} match no "
                          "named_computation or named_tensor", stacklevel=2)
        inputs = {i: p.mesh for i, p in in_placements.items()}
        outputs = {i: p.mesh for i, p in out_placements.items()}
        traced = time.perf_counter()
        try:
            mpmd_text, plan_json = _partition(self.config, text, inputs,
                                              outputs)
        except CompilerError as error:
            pinned = [f"{paths[i]} on {p.mesh!r}"
                      for i, p in in_placements.items()
                      if i not in assigned_in
                      and isinstance(leaves[i], (jax.Array,
                                                 jax.ShapeDtypeStruct))]
            if not pinned:
                raise
            raise CompilerError(
                error.summary + "\nnote: these arguments are on the meshes "
                "their committed shardings name: " + ", ".join(pinned) +
                "; put each on the mesh that uses it, or pass host data and "
                "let mesh inference place it", error.diagnostics) from None
        partitioned = time.perf_counter()
        plan = ExecutionPlan.from_json(plan_json)
        lowered_mpmd = Lowered(self.config, mpmd_text, plan, in_tree,
                               out_tree, text, static)
        lowered_mpmd.argument_paths = paths
        lowered_mpmd.function_name = getattr(self.fn, "__name__",
                                             plan.function)
        lowered_mpmd.timings = {"trace": traced - start,
                                "partition": partitioned - traced,
                                "plan": time.perf_counter() - partitioned}
        return lowered_mpmd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        static = _normalize_argnums(self.static_argnums, len(args))
        dynamic, fixed = _split_static(args, static)
        leaves, tree = jax.tree_util.tree_flatten((tuple(dynamic), kwargs))
        key = (tree, tuple(_static_key(x) for x in fixed),
               tuple(_leaf_key(x) for x in leaves))
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self.lower(*args, **kwargs).compile()
            self._cache[key] = compiled
        return compiled(*args, **kwargs)


def _static_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise ConfigError(f"static argument {value!r} is not hashable; static"
                          " arguments must be hashable, as in jax.jit") from None
    return (type(value), value)


def _leaf_key(value: Any) -> Any:
    """What of an argument decides the lowering: shape, dtype, and the
    layout of a committed array (a fixed point of sharding propagation)."""
    layout = None
    if isinstance(value, jax.Array) and getattr(value, "_committed", False):
        sharding = value.sharding
        layout = sharding
        if isinstance(sharding, NamedSharding):
            # P("x", None) and P("x") lay the array out alike.
            spec = list(sharding.spec)
            while spec and spec[-1] is None:
                spec.pop()
            layout = (sharding.mesh, tuple(spec), sharding.memory_kind)
    return (np.shape(value), str(getattr(value, "dtype", type(value))),
            layout)


def _argument_paths(fn: Callable, static: frozenset[int], count: int,
                    paths: Sequence[Any]) -> list[str]:
    """`params['w1']` for key 'w1' of the parameter named `params`: the
    pytree path of each flat argument, led by the parameter's name (as the
    signature of `fn` gives it; `args[i]` where it does not)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(count):
        param = params[i] if i < len(params) else None
        if param is None or param.kind in (param.VAR_POSITIONAL,
                                           param.VAR_KEYWORD):
            names.append(f"args[{i}]")
        else:
            names.append(param.name)
    dynamic_names = [n for i, n in enumerate(names) if i not in static]
    texts = []
    for path in paths:
        head, rest = path[0], tuple(path[1:])
        if getattr(head, "idx", None) == 0 and rest:  # positional
            index = rest[0].idx
            texts.append(dynamic_names[index] + _path_text(rest[1:]))
        elif rest:  # keyword
            texts.append(str(getattr(rest[0], "key", rest[0]))
                         + _path_text(rest[1:]))
        else:
            texts.append(_path_text(path))
    return texts


def _path_text(path: Any) -> str:
    """`[0]['w1']` for the first positional argument's key 'w1'."""
    return jax.tree_util.keystr(tuple(path))


def _leaf_paths(tree: Any) -> list[str]:
    dummy = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    return [_path_text(path)
            for path, _ in jax.tree_util.tree_flatten_with_path(dummy)[0]]


def jit(fn: Callable, config: MpmdConfig, *,
        in_shardings: Any = None, out_shardings: Any = None,
        static_argnums: Sequence[int] | int = (),
        donate_argnums: Sequence[int] | int = ()) -> MpmdFunction:
    """Partitions `fn` into an MPMD program according to `config`.

    `in_shardings` / `out_shardings` are as in `jax.jit`: a pytree prefix of
    the positional arguments / the results with `NamedSharding`s on topology
    meshes, `PartitionSpec`s (resolved on the mesh the value is assigned
    to) or None. Committed `jax.Array` arguments keep their own
    `NamedSharding`. Everything else is laid out by sharding propagation.
    `donate_argnums` as in `jax.jit`: the buffers of those arguments (all
    leaves of each) may be reused by the program that reads them last, and
    are deleted by the call when they were passed already on their mesh
    (host data, or arrays the call has to move, are copied first, and the
    copy is donated).
    """
    return MpmdFunction(fn, config, static_argnums, in_shardings,
                        out_shardings, donate_argnums)
