"""The lowering driver: a function traced for MPMD, partitioned.

    lowered = lower_traced(mpmd.jit(step, config), traced)

`MpmdFunction.lower` (`stages.py`) traces and hands the trace here: JAX
lowers it (after `frontend.stack_rewrite` holds split stacks in pieces),
the arguments' and results' placements go on the entry function (from
committed arrays, `in_shardings`/`out_shardings` and the io mesh
assignments, spread over the program's values by `program_io`), the
compiler partitions it (`lowering.partition`, or the persistent cache
`partition_cache`), and the plan comes back as a `stages.Lowered`. What
this uses lives in `lowering.py`; the stage classes in `stages.py`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from mpmd import arguments, auto_assign, diagnostics, lowering, program_io
from mpmd.compiler import Partitioner
from mpmd.config import (AssignmentError, ConfigError, is_abstract,
                         split_memory_kind)
from mpmd.errors import CompilerError
from mpmd.partition_cache import partition_cached
from mpmd.runtime.executor import require_memory_kind
from mpmd.shardings import (add_entry_shardings, flat_prefix,
                            input_placements, output_placements)
from mpmd.stages import Lowered

if TYPE_CHECKING:
    from mpmd.stages import MpmdFunction, Traced

__all__ = ["lower_program", "lower_traced"]


def lower_traced(function: "MpmdFunction", traced: "Traced") -> Lowered:
    """The traced function partitioned: JAX lowers it (the program with
    split stacks in pieces, where a stack was split), the entry function
    gets the topology and the placements of its inputs and results, the
    compiler partitions it (or the persistent cache gives the result), and
    the plan is read."""
    from mpmd import while_loops  # noqa: PLC0415

    loop = while_loops.loop_across_meshes(traced.jaxpr)
    if loop is not None:  # cut at the loop: pieces, each its own program
        return while_loops.LoopLowered(function, traced, loop)
    start, leaves, paths, static = (traced._start, traced._leaves,
                                    traced._paths, traced._static)
    topology = dict(function.config.topology)
    config = function.config
    # The user's arguments and results; the program's may differ
    # (typed keys as their data, split stacks in pieces: program_io).
    in_tree, out_tree = traced._jax.in_tree, traced._jax.out_tree
    in_avals, out_avals = traced._jax.jaxpr.in_avals, \
        traced._jax.jaxpr.out_avals
    lowered, program = lower_program(function, traced)
    io = program_io.build(
        in_avals, out_avals, program and program.inputs,
        program and program.outputs,
        {name: split.meshes for name, split in config.stacks.items()})
    config = lowering.stacks_assigned(config, traced._splits)
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
    given_in = flat_prefix(function.in_shardings, args_tree, num_positional,
                           "in_shardings")
    given_in += [None] * (num_inputs - num_positional)
    out_flat = jax.tree_util.tree_flatten_with_path(traced.out_info)[0]
    out_paths = ["result" + arguments.path_text(path)
                 for path, _ in out_flat]
    given_out = flat_prefix(function.out_shardings, out_tree, num_outputs,
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
    kinds_in = io.expand_input_dict(kinds_in, lowering.piece_kind)
    out_shapes = io.expand_outputs(
        [tuple(a.shape) for a in out_avals],
        lambda shape, leaf, j: program_io.piece_shape(
            jax.ShapeDtypeStruct(shape, np.float32), leaf, j))
    out_paths = io.expand_outputs(out_paths, program_io.piece_path)
    given_out = io.expand_outputs(given_out, piece_sharding)
    assigned_out = io.expand_output_dict(assigned_out,
                                         program_io.piece_mesh)
    kinds_out = io.expand_output_dict(kinds_out, lowering.piece_kind)
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
    lowering.check_splits(config, traced._splits, computations)
    if any(r.split.auto for r in traced._splits.values()):
        chosen = auto_assign.stack_layers(config, partitioner,
                                          computations, traced._splits)
        if chosen is not None:  # trace again with those layer counts
            function = type(function)(
                function.fn, dataclasses.replace(function.config,
                                                 stacks=chosen),
                function.static_argnums, function.in_shardings,
                function.out_shardings, function.donate_argnums)
            again = function.trace(*traced._call[0], **traced._call[1])
            again._start = start
            return lower_traced(function, again)
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
    plan = lowering.execution_plan(plan_json)
    lowering.warn_moved_arguments(plan, committed, paths)
    lowering.warn_idle_meshes(plan, config)
    lowered_mpmd = Lowered(config, mpmd_text, plan, in_tree,
                           out_tree, text, static, module)
    lowered_mpmd.argument_paths = user_paths
    lowered_mpmd.plan_json = plan_json
    lowered_mpmd.io = io
    lowered_mpmd.program_paths = (paths, out_paths)
    lowered_mpmd.stacks = dict(traced._splits)
    if io.stacked:
        lowering.warn_stack_layouts(lowered_mpmd.stacked_arrays(),
                                    user_paths, user_out_paths)
    lowered_mpmd.function_name = getattr(function.fn, "__name__",
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


def lower_program(function: "MpmdFunction", traced: "Traced"
                  ) -> tuple[Any, Any]:
    """JAX's lowering of the traced function, and None; or, when a stack
    was split, of the program with its stacked values in pieces
    (`stack_rewrite`), and that program."""
    if not traced._splits:
        with lowering.tracing(function.config):
            return traced._jax.lower(), None
    from mpmd.frontend import stack_rewrite  # noqa: PLC0415

    program = stack_rewrite.rewrite(traced._jax.jaxpr)
    lowered_fn = program.function
    lowered_fn.__name__ = getattr(function.fn, "__name__", "function")
    donated = [leaf.donated for leaf in jax.tree_util.tree_leaves(
        traced._jax.args_info)]
    donate = [i for i, d in enumerate(program_io.expand_flags(
        donated, program.inputs)) if d]
    with lowering.tracing(function.config):
        lowered = jax.jit(lowered_fn, keep_unused=True,
                          donate_argnums=donate).trace(
            *program.input_specs()).lower()
    return lowered, program
