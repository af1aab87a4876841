"""Lowering for `mpmd.jit`: what the configuration and the traced program
become on their way into the compiler, and the compiler's results back.

    text, plan = partition(config, Partitioner(jax_text), inputs, outputs,
                           input_kinds, output_kinds)
    print(text)   # the module is printed when first asked for
    execution_plan(plan)   # its programs' texts too

`partition` runs import, optimize, sharding and export with the config's
options (tables, comparators and merge predicates are evaluated when the
compiler calls back with the program's fragments); the rest resolves the
config's input / output mesh assignments against the arguments and marks
JAX's module with the topology.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings
from typing import Any, Callable, Iterator, Sequence

import jax

from mpmd import diagnostics
from mpmd.compiler import (ImportOptions, OptimizeOptions, Partitioner,
                           ScheduleKind, schedule_kind_spellings)
from mpmd.config import (AssignmentError, ConfigError, MpmdConfig,
                         is_abstract, is_pipeline_schedule, split_memory_kind)
from mpmd.errors import MpmdError
from mpmd.options import compiler_options
from mpmd.runtime.executor import require_memory_kind
from mpmd.runtime.plan import ExecutionPlan
from mpmd.shardings import ShardingError
from mpmd.schedules import FragmentInfo, explicit_order, merge_pairs
from mpmd.schedules import loops as loop_schedules
from mpmd.schedules.rules import to_mpmd

__all__ = ["LazyText", "ModuleText", "PlanText", "add_topology",
           "execution_plan", "flat_io_assignment", "memory_kinds",
           "partition", "unassigned_message", "warn_moved_arguments",
           "warning_at_user"]


class LazyText:
    """Text printed when first used: `str(text)`, `text()`, or any `str`
    method (`text.splitlines()`, `"x" in text`). Subclasses print it in
    `_render`."""

    __slots__ = ("_text",)

    def __init__(self) -> None:
        self._text: str | None = None

    def _render(self) -> str:
        raise NotImplementedError

    def __call__(self) -> str:
        if self._text is None:
            self._text = self._render()
        return self._text

    def __str__(self) -> str:
        return self()

    def __repr__(self) -> str:
        state = "printed" if self._text is not None else "not printed yet"
        return f"{type(self).__name__}({state})"

    def __contains__(self, part: str) -> bool:
        return part in self()

    def __len__(self) -> int:
        return len(self())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyText):
            other = other()
        return self() == other

    def __hash__(self) -> int:
        return hash(self())

    def __getattr__(self, name: str) -> Any:
        # Only str's own methods: a misspelt attribute stays an error.
        if name.startswith("_") or not hasattr(str, name):
            raise AttributeError(name)
        return getattr(self(), name)


class ModuleText(LazyText):
    """The partitioned module's text, printed when first used (printing is
    about a fifth of partitioning a small program, and the runtime needs
    only the plan)."""

    __slots__ = ("_printer",)

    def __init__(self, printer: Callable[[], str]) -> None:
        super().__init__()
        self._printer: Callable[[], str] | None = printer

    def _render(self) -> str:
        text, self._printer = self._printer(), None
        return text


class PlanText(LazyText):
    """The execution plan's JSON, whose programs' texts the compiler prints
    when first asked for: `light` is the plan without them (what `lower()`
    reads: `execution_plan(plan)`), `program_texts()` gives them, and the
    text itself (`str(plan)`) is the whole plan, as the compiler would have
    written it in one go (the cache, exports and the processes' check of
    one plan read that)."""

    __slots__ = ("light", "_program_texts", "_texts")

    def __init__(self, light: str,
                 program_texts: Callable[[], dict[str, str]]) -> None:
        super().__init__()
        self.light = light
        self._program_texts: Callable[[], dict[str, str]] | None = \
            program_texts
        self._texts: dict[str, str] | None = None

    def program_texts(self) -> dict[str, str]:
        if self._texts is None:
            self._texts, self._program_texts = self._program_texts(), None
        return self._texts

    def _render(self) -> str:
        data = json.loads(self.light)
        texts = self.program_texts()
        for name, program in data["programs"].items():
            program["module"] = texts[name]
        return json.dumps(data, indent=2, sort_keys=True)


def execution_plan(plan: str | PlanText) -> ExecutionPlan:
    """The plan `partition` (or the cache) gave; a PlanText's programs
    read their texts when first used."""
    if isinstance(plan, PlanText):
        return ExecutionPlan.from_json(plan.light,
                                       program_texts=plan.program_texts)
    return ExecutionPlan.from_json(plan)


def flat_io_assignment(spec: Any, tree: Any, count: int,
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
    # A pytree prefix of the values: a mesh name (or None) covers its whole
    # subtree, as Shardy:MPMD and jax.jit's in_shardings take it.
    dummy = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    flat: list[Any] = []
    try:
        jax.tree_util.tree_map(
            lambda leaf, sub: flat.extend(
                [leaf] * len(jax.tree_util.tree_leaves(sub))),
            spec, dummy, is_leaf=lambda x: x is None or isinstance(x, str))
    except (ValueError, TypeError):
        raise ConfigError(f"{which} must be a pytree prefix of the "
                          f"function's {'arguments' if 'input' in which else 'results'}"
                          f" with a mesh name or None per leaf: expected a "
                          f"prefix of {tree}") from None
    return {i: mesh for i, mesh in enumerate(flat) if mesh is not None}


def memory_kinds(assigned: dict[int, str]) -> dict[int, str]:
    """Takes the memory kinds out of `assigned` (index -> "mesh#kind"),
    leaving mesh names; returns index -> kind for those that had one other
    than the default "device"."""
    kinds = {}
    for index, target in list(assigned.items()):
        mesh, kind = split_memory_kind(target)
        assigned[index] = mesh
        if kind is not None and kind != "device":
            kinds[index] = kind
    return kinds


def partition(config: MpmdConfig, partitioner: Partitioner,
              inputs: dict[int, str], outputs: dict[int, str],
              input_kinds: dict[int, str], output_kinds: dict[int, str]
              ) -> tuple[ModuleText, PlanText]:
    """Runs import, optimize, sharding and export with the config's options;
    returns the exported module's text and its plan, whose programs' texts
    are printed when first used (the runtime needs them when it compiles;
    printing them was most of the plan's cost). Tables,
    comparators and merge predicates are evaluated when the compiler calls
    back with the program's fragments."""
    opts = config.partitioning_options
    if opts.offload_activations:
        # Before partitioning: a backend without host memory cannot run
        # the program that would come out.
        for name, mesh in config.topology.items():
            if not is_abstract(mesh):  # else checked when compiled
                require_memory_kind(name, mesh, "pinned_host",
                                    "offload_activations")
    schedule = opts.pipeline_schedule
    rules = opts.fragment_merge_rules or ()
    function_order = None
    merge_predicate = None
    # The function's schedule orders the fragments outside every loop with
    # a schedule of its own; those loops are evaluated by mpmd.schedules.
    # loops when their schedule is Python's (a token on the loop).
    outside = loop_schedules.function_fragments
    if schedule is None:
        kind = ScheduleKind.NONE
    elif isinstance(schedule, str):
        kind = schedule_kind_spellings()[schedule]
    elif is_pipeline_schedule(schedule):
        # Shardy:MPMD's rule builders: the order and the merges both come
        # from the rules built over the fragments.
        def evaluate(fragments):
            return to_mpmd(schedule, _fragment_infos(outside(fragments)),
                           len(config.topology), opts.split_backward)

        def function_order(fragments):
            # No schedule rules: every mesh keeps its program order.
            return evaluate(fragments)[0] or \
                _program_order(outside(fragments))

        def merge_predicate(fragments):
            return evaluate(fragments)[1]

        kind = ScheduleKind.EXPLICIT
    else:
        kind = ScheduleKind.EXPLICIT

        def function_order(fragments):
            return explicit_order(schedule,
                                  _fragment_infos(outside(fragments)))
    if callable(rules):
        if merge_predicate is not None:
            raise ConfigError("fragment_merge_rules cannot be a predicate "
                              "when the pipeline schedule is a "
                              "PipelineSchedule (it makes its own merges)")
        predicate, rules = rules, ()

        def merge_predicate(fragments):
            return merge_pairs(predicate, _fragment_infos(fragments))

    # The compiler asks only when the function's schedule is explicit or a
    # loop's schedule is a token.
    def order(fragments):
        result = function_order(fragments) if function_order else {}
        result.update(loop_schedules.loop_orders(fragments, opts))
        return result

    if merge_predicate is not None or loop_schedules.has_registry_schedules():
        function_merges = merge_predicate

        def merge_predicate(fragments):
            found = list(function_merges(fragments)) if function_merges \
                else []
            found += [pair for pair in
                      loop_schedules.loop_merges(fragments, opts)
                      if pair not in found]
            return found
    # The explicit values here; the switches (fields with compiler
    # metadata) as the compiler's option text, named nowhere on this road.
    _, plan = partitioner.partition(
        ImportOptions(config.assignment, inputs, outputs, input_kinds,
                      output_kinds),
        OptimizeOptions(kind, order=order, merge_rules=merge_pairs(rules, []),
                        merge_predicate=merge_predicate,
                        offload_activations=opts.offload_activations),
        compiler_options(opts), print_module=False, print_programs=False)
    return (ModuleText(partitioner.module_text),
            PlanText(plan, partitioner.program_texts))


def module_text(text: str | ModuleText) -> str:
    """`text`, printed when it is `partition`'s module."""
    return text if isinstance(text, str) else text()


def _program_order(fragments: list[dict[str, Any]]) -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for fragment in fragments:
        order.setdefault(fragment["mesh"], []).append(fragment["key"])
    return order


def _fragment_infos(fragments: list[dict[str, Any]]) -> list[FragmentInfo]:
    return [FragmentInfo.from_compiler(entry) for entry in fragments]


def add_topology(module: Any, topology: str) -> Any:
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


def named_computation_nesting(module: Any) -> tuple[set[str],
                                                    list[tuple[str, str]]]:
    """The names of the named computations of JAX's `module` (a
    builtin.module op) that are not inside another one, and a (name, name
    of the one around it) pair for each that is."""
    from jax.extend.mlir.dialects import mpmd as mpmd_dialect  # noqa: PLC0415

    top: set[str] = set()
    nested: list[tuple[str, str]] = []

    def visit(op: Any, parent: str | None) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name != "mpmd.named_computation":
                        visit(inner, parent)
                        continue
                    name = mpmd_dialect.UserOriginAttr(
                        inner.attributes["origin"]).user_name
                    if parent is None:
                        top.add(name)
                    else:
                        nested.append((name, parent))
                    visit(inner, name)

    visit(module.operation if hasattr(module, "operation") else module, None)
    return top, nested


def check_nesting(nested: Sequence[tuple[str, str]],
                  assignment: Any) -> None:
    """A named computation nested in another is assigned to the same mesh
    and stage, or not at all (it is then part of the one around it);
    otherwise AssignmentError (Shardy's words first)."""
    for name, parent in nested:
        if name not in assignment or parent not in assignment or \
                assignment[name] == assignment[parent]:
            continue
        (mesh, stage), (parent_mesh, parent_stage) = (assignment[name],
                                                      assignment[parent])

        def where(mesh: str, stage: int | None) -> str:
            return repr(mesh) if stage is None else \
                f"{mesh!r} (stage {stage})"

        raise AssignmentError(
            f"NamedComputation {name!r} is nested in a NamedComputation "
            f"{parent!r} which has a different mesh or stage assignment: "
            f"{name!r} is assigned to {where(mesh, stage)}, {parent!r} to "
            f"{where(parent_mesh, parent_stage)}. Assign both alike, leave "
            f"{name!r} out of the assignment (it then runs in {parent!r}), "
            "or call it outside")


def unassigned_message(missing: Sequence[str], unused: Sequence[str],
                       mesh: str) -> str:
    """Why lowering stops at a named computation no mesh was given: with
    the assignment keys that match nothing (a typo?) where there are
    some."""
    name = missing[0]
    text = (f"Top-level NamedComputation {name!r} is not assigned to a mesh "
            "in the user-defined named-to-mesh assignment; add it to the "
            f"assignment, e.g. {{{name!r}: {mesh!r}}}")
    if unused:
        text += (f". The assignment's {', '.join(map(repr, unused))} match"
                 f"{'es' if len(unused) == 1 else ''} no name of the program")
        typo = diagnostics.closest(name, unused)
        if typo is not None:
            text += f": is {typo!r} a typo for {name!r}?"
    if len(missing) > 1:
        text += f"; {len(missing) - 1} more unassigned: " + ", ".join(
            map(repr, missing[1:6])) + (" ..." if len(missing) > 6 else "")
    return text


def warning_at_user(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` with the compiler's warnings given once each, at
    the user's line. Those the front end already gave (assignment entries
    matching nothing) are dropped."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return function(*args)
    finally:
        seen = set()
        for record in caught:
            text = str(record.message)
            if text in seen or "matches no named_computation" in text:
                continue
            seen.add(text)
            diagnostics.warn(text, record.category)


def warn_moved_arguments(plan: Any, committed: Sequence[tuple[int, str]],
                         paths: Sequence[str]) -> None:
    """Warns, once per argument, when an array committed to a mesh is read
    only on other meshes: arguments move to the meshes that use them, so
    the program copies it there at every call."""
    from mpmd.runtime.plan import CallStep, TransferStep  # noqa: PLC0415

    for index, mesh in committed:
        read_here = False
        targets: list[str] = []
        for step in plan.steps:
            if isinstance(step, CallStep) and index in step.inputs:
                read_here |= step.mesh == mesh
            elif isinstance(step, TransferStep) and step.input == index:
                if step.target != mesh and step.target not in targets:
                    targets.append(step.target)
        if read_here or not targets:
            continue
        where = ", ".join(repr(t) for t in targets)
        diagnostics.warn(
            f"argument {paths[index]} is committed to mesh {mesh!r}, but only "
            f"{'mesh' if len(targets) == 1 else 'meshes'} {where} "
            f"{'uses' if len(targets) == 1 else 'use'} it: the program moves "
            f"it there at every call; put it on {targets[0]!r} "
            "(jax.device_put with a NamedSharding of that mesh) to save the "
            "copy")



def warn_idle_meshes(plan: Any, config: MpmdConfig) -> None:
    """Warns, naming them, about meshes left without a program when an
    automatic assignment chose the meshes, or when every program runs on
    one mesh of several (a model whose layers are one named computation, a
    scanned stack, placed whole on one mesh). A pipeline that leaves a mesh
    out (one another function of the job uses) is not warned about."""
    from mpmd.runtime.plan import CallStep  # noqa: PLC0415

    busy = {step.mesh for step in plan.steps if isinstance(step, CallStep)}
    idle = [mesh for mesh in config.topology if mesh not in busy]
    if not idle or not busy or not (config.auto or len(busy) == 1):
        return
    diagnostics.warn(
        f"{'mesh' if len(idle) == 1 else 'meshes'} "
        f"{', '.join(map(repr, idle))} of the topology "
        f"{'runs' if len(idle) == 1 else 'run'} no program: "
        + ("the automatic assignment found fewer named computations than "
           "stages" if config.auto else
           f"every program runs on {sorted(busy)[0]!r}")
        + "; label more of the model, or split a scanned stack of layers "
        "over meshes ({name: [mesh, ...]}, docs/stacks.md)")


def warn_stack_layouts(arrays: Sequence[tuple[str, Any]],
                       paths: Sequence[str],
                       out_paths: Sequence[str]) -> None:
    """Warns, once per stacked argument or result, when it cannot be laid
    out over its meshes (each mesh's devices holding its layers): it then
    crosses each call whole."""
    del out_paths
    for path, array in arrays:
        if array is not None and array.shardings and array.sharding is None:
            diagnostics.warn(
                f"{path} is a stack split over meshes that differ in shape "
                f"or do not divide its {array.length} layers: it has no "
                "layout over them, and each call gathers it on the first "
                "mesh and cuts it again; use meshes of one shape and a "
                "layer count they divide")


@contextlib.contextmanager
def tracing(config: MpmdConfig) -> Iterator[dict[str, Any]]:
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


def piece_kind(kind: Any, leaf: Any, j: int) -> Any:
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


def check_splits(config: MpmdConfig, splits: dict[str, Any],
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
