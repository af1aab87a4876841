"""What the user tells mpmd: meshes, where names go, and how to partition."""

from __future__ import annotations

import collections.abc
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from mpmd.diagnostics import set_text as _set_text
from mpmd.errors import AssignmentError, ConfigError
from mpmd.options import (  # noqa: F401 - re-exported for their importers
    SHARDY_OPTIONS, PartitioningOptions, checked_options,
    validate_and_merge_partitioning_options)
from mpmd.schedules.spellings import (  # noqa: F401 - re-exported
    is_pipeline_schedule, schedule_from_spelling)
from mpmd.stack_split import StackSplit, as_stack_split

__all__ = ["ConfigError", "FunctionIOMeshAssignment", "MpmdConfig",
           "PartitioningOptions", "SHARDY_OPTIONS", "AssignmentError",
           "is_abstract", "make_config", "mesh_names", "require_devices",
           "validate_and_merge_partitioning_options"]

# Mesh names are spelled inside the topology attribute and the programs'
# shardings; keep them simple. Assigned names (of named computations and
# tensors) may be any non-empty string: they reach the compiler typed.
_MESH_NAME = re.compile(r"^[A-Za-z0-9_.\-/()\[\]]+$")

@dataclass(frozen=True)
class MpmdConfig:
    topology: Mapping[str, Any]  # mesh name -> jax.sharding.Mesh
    assignment: Mapping[str, tuple[str, int | None]]
    input_mesh_assignment: Any = None
    output_mesh_assignment: Any = None
    partitioning_options: PartitioningOptions = field(
        default_factory=PartitioningOptions)
    # Meshes of the function's inputs and outputs come from in_shardings /
    # out_shardings (and committed arguments) only.
    read_input_output_mesh_from_shardings: bool = False
    # The compiler assigns the named computations `assignment` leaves out
    # to stages, one per mesh in topology order (make_config(topology,
    # "auto"), or names assigned "auto").
    auto: bool = False
    # Named computations whose scanned layer stack is split over several
    # meshes (assigned a list of meshes, or a StackSplit): mpmd.stack_split.
    stacks: Mapping[str, StackSplit] = field(default_factory=dict)

    @property
    def mesh_names(self) -> list[str]:
        return list(self.topology)

    # Shardy:MPMD's views of the same configuration.

    @property
    def name_to_mesh_assignment(self) -> dict[str, str]:
        return {name: mesh for name, (mesh, _) in self.assignment.items()}

    @property
    def name_to_stage_assignment(self) -> dict[str, int]:
        return {name: stage for name, (_, stage) in self.assignment.items()
                if stage is not None}

    @property
    def mesh_and_stage_assignment(self) -> dict[str, str | tuple[str, int]]:
        return {name: mesh if stage is None else (mesh, stage)
                for name, (mesh, stage) in self.assignment.items()}

    @property
    def pipeline_schedule(self) -> Any:
        return self.partitioning_options.pipeline_schedule

    @property
    def sharding_mesh(self) -> Any:
        """An abstract mesh for sharding annotations inside named
        computations (that of the first mesh)."""
        return next(iter(self.topology.values())).abstract_mesh

    def topology_attr(self) -> str:
        """The topology as the compiler reads it (#mpmd.topology<...>)."""
        meshes = []
        for name, mesh in self.topology.items():
            axes = ", ".join(f'"{axis}"={size}'
                             for axis, size in mesh.shape.items())
            meshes.append(f'<"{name}" : <[{axes}]>>')
        return f"#mpmd.topology<{', '.join(meshes)}>"


def _check_mesh_name(name: Any) -> str:
    rule = "use a non-empty string of letters, digits and _ . - / ( ) [ ]"
    if isinstance(name, str) and "@" in name:
        raise ConfigError(f"{name} uses one of the reserved substrings "
                          f"({{'@'}}). Please rename it: {rule}")
    if isinstance(name, str) and "#" in name and \
            split_memory_kind(name)[1] in MEMORY_KINDS:
        raise ConfigError(
            f"Mesh name {name} (or any name suffixed with #pinned_host or "
            "#device) is reserved for memory_kinds: \"mesh#kind\" names a "
            f"memory of a mesh in assignments. Please rename it: {rule}")
    if not isinstance(name, str) or not _MESH_NAME.match(name):
        raise ConfigError(f"mesh name {name!r} is not a valid name: {rule}")
    return name


def _check_assigned_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigError(f"assigned name {name!r} is not a valid name: "
                          "names are non-empty strings")
    return name


def _check_mesh(name: str, mesh: Any) -> None:
    import jax  # noqa: PLC0415

    if not isinstance(mesh, (jax.sharding.Mesh, jax.sharding.AbstractMesh)):
        raise ConfigError(f"topology[{name!r}] must be a jax.sharding.Mesh "
                          "(or a jax.sharding.AbstractMesh, to lower without "
                          f"devices), got {type(mesh).__name__}")


def is_abstract(mesh: Any) -> bool:
    """Whether a topology mesh is a `jax.sharding.AbstractMesh`: a shape
    without devices, enough to lower but not to compile."""
    import jax  # noqa: PLC0415

    return isinstance(mesh, jax.sharding.AbstractMesh)


def require_devices(topology: Mapping[str, Any], what: str) -> None:
    """Compiling needs devices: a topology of abstract meshes lowers only."""
    abstract = [name for name, mesh in topology.items() if is_abstract(mesh)]
    if abstract:
        raise ConfigError(
            f"cannot {what}: the topology's meshes {abstract} are "
            "jax.sharding.AbstractMesh, which have no devices. An abstract "
            "topology lowers (as_text, function_named_shardings, the plan); "
            "give jax.sharding.Mesh(devices, axis_names) of the same shapes "
            "to compile and run")


def make_config(topology: Mapping[str, Any],
                name_to_mesh_assignment: Mapping[str, str | tuple[str, int]]
                | None = None,
                *,
                name_to_stage_assignment: Mapping[str, int] | None = None,
                input_mesh_assignment: Any = None,
                output_mesh_assignment: Any = None,
                partitioning_options: PartitioningOptions | Mapping[str, Any]
                | None = None,
                read_input_output_mesh_from_shardings: bool = False,
                pipeline_schedule: Any = None,
                assignment: Mapping[str, str | tuple[str, int]] | None = None
                ) -> MpmdConfig:
    """Checks and bundles a partitioning configuration (Shardy:MPMD's
    signature; `assignment=` is accepted for the second argument too).

    - `topology`: mesh name -> `jax.sharding.Mesh`; meshes must not share
      devices.
    - `name_to_mesh_assignment`: name of a `named_computation` /
      `named_tensor` -> mesh name, or (mesh name, pipeline stage); or
      "auto": the compiler assigns every named computation to a stage, one
      stage per mesh in topology order, balancing their estimated cost
      (`partitioning_options={"auto_memory_limit_bytes": N}` bounds each
      mesh's memory). Names mapped to "auto", or left out while others
      are, are placed the same way around the hand-placed ones.
    - `name_to_stage_assignment`: name -> stage, as Shardy:MPMD takes
      stages.
    - `input_mesh_assignment` / `output_mesh_assignment`: where the function's
      arguments / results go: a pytree prefix of the arguments (results)
      with a mesh name or None per leaf (a leaf covers its whole subtree),
      or a dict {flat index: mesh name}; `()` or None assigns nothing.
      Leaves left out are placed by mesh inference.
    - `partitioning_options`: a PartitioningOptions, or a dict of its fields
      and/or Shardy:MPMD's `mpmd_*` keys (see SHARDY_OPTIONS).
    - `read_input_output_mesh_from_shardings`: the inputs' and outputs'
      meshes come from `in_shardings` / `out_shardings` (then the io
      assignments must be empty).
    - `pipeline_schedule`: a built-in name (ours, "gpipe", or Shardy's,
      "GPipe"; registry schedules by Shardy's name, "Circular", or ours,
      "zero-bubble-v"), a table, a comparator, or a
      `mpmd.pipeline.PipelineSchedule` (its required options are merged
      into the partitioning options).
    """
    if not isinstance(topology, Mapping):
        raise ConfigError(
            f"`topology` is a {type(topology).__name__}; give a mapping of "
            "mesh name to jax.sharding.Mesh, e.g. {'m1': "
            "jax.sharding.Mesh(devices, ('x',))}")
    if not topology:
        raise ConfigError("`topology` must have at least one mesh. Give one "
                          "or more, e.g. {'m1': jax.sharding.Mesh(devices, "
                          "('x',))}")
    owner: dict[int, str] = {}
    for name, mesh in topology.items():
        _check_mesh_name(name)
        _check_mesh(name, mesh)
        if is_abstract(mesh):
            continue
        for device in mesh.devices.flat:
            if device.id in owner:
                raise ConfigError(
                    f"meshes {owner[device.id]!r} and {name!r} share device "
                    f"{device.id}; each device belongs to one mesh")
            owner[device.id] = name
    if not isinstance(read_input_output_mesh_from_shardings, bool):
        raise ConfigError(
            "read_input_output_mesh_from_shardings is "
            f"{read_input_output_mesh_from_shardings!r} of type "
            f"{type(read_input_output_mesh_from_shardings).__name__}; give "
            "True or False")
    if name_to_stage_assignment is not None and not isinstance(
            name_to_stage_assignment, Mapping):
        raise ConfigError(
            f"name_to_stage_assignment is a "
            f"{type(name_to_stage_assignment).__name__} "
            f"({name_to_stage_assignment!r}); give a mapping of names to "
            "stages, {name: 0}")
    if assignment is not None:
        if name_to_mesh_assignment is not None:
            raise ConfigError("give the assignment once: as the second "
                              "argument or as assignment=, not both")
        name_to_mesh_assignment = assignment
    if name_to_mesh_assignment is None:
        raise ConfigError("make_config needs the assignment of names to "
                          "meshes (the second argument), or \"auto\"")
    _check_assignment_values(name_to_mesh_assignment, "assignment" if
                             assignment is not None else
                             "name_to_mesh_assignment")
    auto = False
    if isinstance(name_to_mesh_assignment, str):
        if name_to_mesh_assignment != "auto":
            raise ConfigError(
                f"the assignment is {name_to_mesh_assignment!r}: give a "
                "mapping of names to meshes, or \"auto\"")
        name_to_mesh_assignment, auto = {}, True
    elif any(target == "auto" for target in name_to_mesh_assignment.values()):
        name_to_mesh_assignment = {
            name: target for name, target in name_to_mesh_assignment.items()
            if target != "auto"}
        auto = True
    name_to_mesh_assignment, stacks = _stack_splits(name_to_mesh_assignment,
                                                    topology, auto)
    # `()` assigns nothing, as in Shardy (an array compares elementwise).
    if isinstance(input_mesh_assignment, tuple) and not input_mesh_assignment:
        input_mesh_assignment = None
    if isinstance(output_mesh_assignment, tuple) and \
            not output_mesh_assignment:
        output_mesh_assignment = None
    if read_input_output_mesh_from_shardings and (
            input_mesh_assignment is not None
            or output_mesh_assignment is not None):
        raise ConfigError("input_mesh_assignment and output_mesh_assignment "
                          "must be empty when "
                          "read_input_output_mesh_from_shardings is True")
    _check_assigned_meshes(name_to_mesh_assignment, topology)
    stages = dict(name_to_stage_assignment or {})
    negative = [stage for stage in stages.values()
                if isinstance(stage, int) and stage < 0]
    if negative:
        raise ConfigError(
            "Stage ids must be positive integers, but got: "
            f"{','.join(map(str, negative))}. Stages are integers >= 0 "
            "(name_to_stage_assignment: "
            + ", ".join(f"{name!r}: {stage}" for name, stage in stages.items()
                        if isinstance(stage, int) and stage < 0) + ")")
    for name in stages:
        if name in stacks:
            raise ConfigError(
                f"name_to_stage_assignment gives {name!r} a stage, but it is "
                "split over several meshes; give each piece's stage in its "
                "list: [(\"m0\", 0), (\"m1\", 1), ...]")
        if name not in name_to_mesh_assignment:
            raise ConfigError(f"name_to_stage_assignment names {name!r}, "
                              "which name_to_mesh_assignment does not assign "
                              "to a mesh")
    normalized: dict[str, tuple[str, int | None]] = {}
    for name, target in name_to_mesh_assignment.items():
        _check_assigned_name(name)
        stage: int | None = None
        if isinstance(target, tuple):
            if len(target) != 2:
                raise ConfigError(f"assignment[{name!r}] must be a mesh name "
                                  f"or (mesh name, stage), got {target!r}")
            target, stage = target
            if isinstance(stage, bool) or not isinstance(stage, int) or \
                    stage < 0:
                raise ConfigError(f"assignment[{name!r}] has stage {stage!r}; "
                                  "stages are integers >= 0")
        if name in stages:
            if stage is not None and stage != stages[name]:
                raise ConfigError(f"{name!r} has stage {stage} in the "
                                  f"assignment and {stages[name]} in "
                                  "name_to_stage_assignment")
            stage = stages[name]
            if isinstance(stage, bool) or not isinstance(stage, int) or \
                    stage < 0:
                raise ConfigError(f"name_to_stage_assignment[{name!r}] is "
                                  f"{stage!r}; stages are integers >= 0")
        if target not in topology:
            # "m1#pinned_host" (_check_assigned_meshes saw that "m1" is a
            # mesh): a named tensor kept in that memory of the mesh (a named
            # computation with one is refused once the program says which
            # names are computations).
            kind = split_memory_kind(target)[1]
            if kind not in MEMORY_KINDS:
                raise ConfigError(
                    f"assignment[{name!r}] is {target!r}, whose memory "
                    f"kind {kind!r} is not one of {list(MEMORY_KINDS)}")
        normalized[name] = (target, stage)

    options = checked_options(partitioning_options, pipeline_schedule,
                              auto)
    config = MpmdConfig(dict(topology), normalized, input_mesh_assignment,
                        output_mesh_assignment, options,
                        read_input_output_mesh_from_shardings, auto, stacks)
    for which in ("input_mesh_assignment", "output_mesh_assignment"):
        _check_io_meshes(which, getattr(config, which), topology)
    return config


def _stack_splits(assignment: Mapping[str, Any], topology: Mapping[str, Any],
                  auto: bool) -> tuple[dict[str, Any], dict[str, StackSplit]]:
    """The assignment without its stack splits (values that are lists of
    meshes or StackSplits), and those splits, checked against the
    topology."""
    if not isinstance(assignment, collections.abc.Mapping):
        return assignment, {}
    stacks: dict[str, StackSplit] = {}
    for name, target in assignment.items():
        split = as_stack_split(name, target)
        if split is None:
            continue
        _check_assigned_name(name)
        missing = sorted(set(split.meshes) - set(topology))
        if missing:
            raise ConfigError(
                f"assignment[{name!r}] splits a stack over {missing}, not in "
                f"the topology's meshes {sorted(topology)}; list meshes of "
                "the topology")
        if auto:
            raise ConfigError(
                f"not supported yet: assignment[{name!r}] splits a stack "
                "over meshes while other names are assigned \"auto\"; "
                "assign every name by hand (a split's layer counts may be "
                "\"auto\": mpmd.StackSplit(meshes, layers=\"auto\"))")
        stacks[name] = split
    if not stacks:
        return dict(assignment), {}
    return ({name: target for name, target in assignment.items()
             if name not in stacks}, stacks)


def _check_assignment_values(assignment: Any, given_as: str) -> None:
    """The assignment is "auto" or a mapping, and no value is a dict or a
    set (which name no mesh, and would fail unhashable further on); a
    ConfigError names the argument and the key."""
    if isinstance(assignment, str):
        return  # "auto", or an error naming it
    if not isinstance(assignment, collections.abc.Mapping):
        raise ConfigError(
            f"{given_as} is a {type(assignment).__name__} "
            f"({assignment!r}); give a mapping of named computation (and "
            "named tensor) names to mesh names, {name: \"m0\"} or {name: "
            "(\"m0\", stage)}, or \"auto\"")
    for name, target in assignment.items():
        mesh = target[0] if isinstance(target, tuple) and target else target
        if isinstance(mesh, (collections.abc.Mapping, collections.abc.Set)):
            raise ConfigError(
                f"{given_as}[{name!r}] is {target!r}, which holds a "
                f"{type(mesh).__name__}; give a mesh name of the topology, "
                "or (mesh name, stage)")


def _assigned_mesh(target: Any) -> Any:
    """The mesh an assignment value names: "m1" for "m1", "m1#pinned_host"
    and ("m1", stage)."""
    if isinstance(target, tuple) and target:
        target = target[0]
    return split_memory_kind(target)[0] if isinstance(target, str) else target


def _check_assigned_meshes(assignment: Mapping[str, Any],
                           topology: Mapping[str, Any]) -> None:
    """Every mesh the assignment names is in the topology; otherwise one
    error naming all those that are not (Shardy's words first)."""
    missing = {}
    for name, target in assignment.items():
        mesh = _assigned_mesh(target)
        if mesh not in topology:
            missing.setdefault(mesh, name)
    if missing:
        examples = ", ".join(f"assignment[{name!r}] names {mesh!r}"
                             for mesh, name in missing.items())
        raise ConfigError(
            f"Invalid mesh name(s): {_set_text(missing)} not in the "
            f"topology's meshes {sorted(topology)} ({examples}); assign each "
            "name to a mesh of the topology")


# Memory kinds a mesh name may carry in the input and output mesh
# assignments ("m1#pinned_host"), as Shardy:MPMD spells them.
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


def split_memory_kind(name: str) -> tuple[str, str | None]:
    """("m1", "pinned_host") for "m1#pinned_host"; ("m1", None) for "m1"."""
    mesh, sep, kind = name.rpartition("#")
    return (mesh, kind) if sep else (name, None)


def _check_io_meshes(which: str, spec: Any, topology: Mapping[str, Any]) -> None:
    import jax  # noqa: PLC0415

    if spec is None:
        return
    leaves = (list(spec.values()) if isinstance(spec, dict)
              and all(isinstance(k, int) for k in spec)
              else jax.tree_util.tree_leaves(spec))
    for target in leaves:
        if target is not None and not isinstance(target, str):
            raise ConfigError(
                f"{which} holds {target!r} of type {type(target).__name__}; "
                "give a pytree prefix of the values with a mesh name (or "
                "\"mesh#memory_kind\", or None) per leaf, or {flat index: "
                "mesh name}")
    missing = {_assigned_mesh(target) for target in leaves
               if target is not None} - set(topology)
    if missing:
        raise ConfigError(
            f"Invalid mesh name(s) in {which}: {_set_text(missing)} not in "
            f"the topology's meshes {sorted(topology)}; give a mesh of the "
            "topology (or None) for each value")
    for target in leaves:
        if target is None:
            continue
        mesh, kind = (split_memory_kind(target) if isinstance(target, str)
                      else (target, None))
        if kind is not None and kind not in MEMORY_KINDS:
            raise ConfigError(f"{which} names {target!r}: {kind!r} is not a "
                              f"memory kind; use one of {list(MEMORY_KINDS)}"
                              f" (e.g. {mesh + '#pinned_host'!r})")


def mesh_names(pytree: Any, topology: Mapping[str, Any]) -> Any:
    """The name of the topology mesh of each leaf of `pytree` (arrays,
    ShapeDtypeStructs or NamedShardings with a sharding, or meshes), as
    Shardy:MPMD's `mesh_names`; None for an abstract mesh (unless it is
    one mesh of a topology of abstract meshes, and no other: JAX may hand
    out one object for equal abstract meshes). A mesh outside the topology
    is a ConfigError naming it."""
    import jax  # noqa: PLC0415

    def name_of(mesh: Any) -> str | None:
        if isinstance(mesh, jax.sharding.AbstractMesh):
            names = [name for name, candidate in topology.items()
                     if mesh is candidate]
            return names[0] if len(names) == 1 else None
        for name, candidate in topology.items():
            if mesh == candidate:
                return name
        raise ConfigError(f"Mesh {mesh} with devices "
                          f"{[d.id for d in mesh.devices.flat]} is not in the "
                          f"topology; its meshes: {sorted(topology)}")

    def leaf(x: Any) -> str | None:
        if x is None:
            return None
        if isinstance(x, (jax.Array, jax.ShapeDtypeStruct)):
            return leaf(x.sharding)
        if isinstance(x, jax.sharding.NamedSharding):
            return name_of(x.mesh)
        if isinstance(x, (jax.sharding.Mesh, jax.sharding.AbstractMesh)):
            return name_of(x)
        raise ConfigError(f"Unexpected type: {type(x)}: mesh_names takes "
                          "arrays, ShapeDtypeStructs, NamedShardings or "
                          "meshes (or None)")

    return jax.tree_util.tree_map(leaf, pytree, is_leaf=lambda x: x is None)


@dataclass(frozen=True)
class FunctionIOMeshAssignment:
    """The meshes of a lowered function's inputs and outputs, as pytrees of
    mesh names shaped like the arguments and the results."""

    input_meshes: Any
    output_meshes: Any
