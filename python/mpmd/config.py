"""What the user tells mpmd: meshes, where names go, and how to partition."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from mpmd.errors import MpmdError

__all__ = ["ConfigError", "MpmdConfig", "PartitioningOptions", "make_config"]

# Mesh names are spelled inside the topology attribute and the programs'
# shardings; keep them simple. Assigned names (of named computations and
# tensors) may be any non-empty string: they reach the compiler typed.
_MESH_NAME = re.compile(r"^[A-Za-z0-9_.\-/()\[\]]+$")


class ConfigError(MpmdError):
    """The configuration is inconsistent; the message says what to change."""


@dataclass(frozen=True)
class PartitioningOptions:
    """How freely the partitioner may place what the user did not name."""

    # Let mesh inference add transfers where a nameless op needs values from
    # several meshes (otherwise that is an error naming the op).
    infer_transfers: bool = False
    # Turn a sum (max, ...) of values from several meshes into a cross-mesh
    # reduction.
    infer_cross_mesh_reductions: bool = False
    # A built-in name ("gpipe", "1f1b", "interleaved-1f1b",
    # "zero-bubble-h1"), a table {mesh: [fragment, ...]}, or a comparator
    # before(a, b) -> bool over mpmd.schedules.FragmentInfo. None keeps the
    # program order.
    pipeline_schedule: Any = None
    # Pairs of fragment labels to fuse per microbatch, e.g.
    # [("layer3", "layer3(1)")], or a predicate over two FragmentInfo.
    fragment_merge_rules: Any = ()
    # Fuse each microbatch's forward and backward on the last stage.
    merge_last_stage: bool = False
    # Split backward fragments into input- and weight-gradient parts (needed
    # by zero-bubble schedules; implied by "zero-bubble-h1").
    split_backward: bool = False


@dataclass(frozen=True)
class MpmdConfig:
    topology: Mapping[str, Any]  # mesh name -> jax.sharding.Mesh
    assignment: Mapping[str, tuple[str, int | None]]
    input_mesh_assignment: Any = None
    output_mesh_assignment: Any = None
    partitioning_options: PartitioningOptions = field(
        default_factory=PartitioningOptions)

    @property
    def mesh_names(self) -> list[str]:
        return list(self.topology)

    def topology_attr(self) -> str:
        """The topology as the compiler reads it (#mpmd.topology<...>)."""
        meshes = []
        for name, mesh in self.topology.items():
            axes = ", ".join(f'"{axis}"={size}'
                             for axis, size in mesh.shape.items())
            meshes.append(f'<"{name}" : <[{axes}]>>')
        return f"#mpmd.topology<{', '.join(meshes)}>"


def _check_mesh_name(name: Any) -> str:
    if not isinstance(name, str) or not _MESH_NAME.match(name):
        raise ConfigError(
            f"mesh name {name!r} is not a valid name: use a non-empty string "
            "of letters, digits and _ . - / ( ) [ ]")
    return name


def _check_assigned_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigError(f"assigned name {name!r} is not a valid name: "
                          "names are non-empty strings")
    return name


def _check_mesh(name: str, mesh: Any) -> None:
    import jax  # noqa: PLC0415

    if not isinstance(mesh, jax.sharding.Mesh):
        raise ConfigError(f"topology[{name!r}] must be a jax.sharding.Mesh, "
                          f"got {type(mesh).__name__}")


def make_config(topology: Mapping[str, Any],
                assignment: Mapping[str, str | tuple[str, int]],
                *,
                input_mesh_assignment: Any = None,
                output_mesh_assignment: Any = None,
                partitioning_options: PartitioningOptions | Mapping[str, Any]
                | None = None) -> MpmdConfig:
    """Checks and bundles a partitioning configuration.

    - `topology`: mesh name -> `jax.sharding.Mesh`; meshes must not share
      devices.
    - `assignment`: name of a `named_computation` / `named_tensor` -> mesh
      name, or (mesh name, pipeline stage).
    - `input_mesh_assignment` / `output_mesh_assignment`: where the function's
      arguments / results go: a pytree like the arguments (results) with a
      mesh name or None per leaf, or a dict {flat index: mesh name}. Leaves
      left out are placed by mesh inference.
    - `partitioning_options`: a PartitioningOptions or a dict of its fields.
    """
    if not topology:
        raise ConfigError("the topology is empty; give at least one mesh, "
                          "e.g. {'m1': jax.sharding.Mesh(devices, ('x',))}")
    owner: dict[int, str] = {}
    for name, mesh in topology.items():
        _check_mesh_name(name)
        _check_mesh(name, mesh)
        for device in mesh.devices.flat:
            if device.id in owner:
                raise ConfigError(
                    f"meshes {owner[device.id]!r} and {name!r} share device "
                    f"{device.id}; each device belongs to one mesh")
            owner[device.id] = name

    normalized: dict[str, tuple[str, int | None]] = {}
    for name, target in assignment.items():
        _check_assigned_name(name)
        stage: int | None = None
        if isinstance(target, tuple):
            if len(target) != 2:
                raise ConfigError(f"assignment[{name!r}] must be a mesh name "
                                  f"or (mesh name, stage), got {target!r}")
            target, stage = target
            if not isinstance(stage, int) or stage < 0:
                raise ConfigError(f"assignment[{name!r}] has stage {stage!r}; "
                                  "stages are integers >= 0")
        if target not in topology:
            raise ConfigError(
                f"assignment[{name!r}] names mesh {target!r}, which is not in "
                f"the topology; meshes: {sorted(topology)}")
        normalized[name] = (target, stage)

    if partitioning_options is None:
        options = PartitioningOptions()
    elif isinstance(partitioning_options, PartitioningOptions):
        options = partitioning_options
    else:
        known = {f.name for f in fields(PartitioningOptions)}
        unknown = set(partitioning_options) - known
        if unknown:
            raise ConfigError(f"unknown partitioning options {sorted(unknown)};"
                              f" known: {sorted(known)}")
        options = PartitioningOptions(**partitioning_options)

    _check_schedule(options)
    config = MpmdConfig(dict(topology), normalized, input_mesh_assignment,
                        output_mesh_assignment, options)
    for which in ("input_mesh_assignment", "output_mesh_assignment"):
        _check_io_meshes(which, getattr(config, which), topology)
    return config


def _check_schedule(options: PartitioningOptions) -> None:
    from mpmd.schedules import BUILTIN_SCHEDULES  # noqa: PLC0415

    schedule = options.pipeline_schedule
    if isinstance(schedule, str) and schedule not in BUILTIN_SCHEDULES:
        raise ConfigError(f"unknown pipeline_schedule {schedule!r}; built-in "
                          f"schedules: {list(BUILTIN_SCHEDULES)}, or give a "
                          "table {mesh: [fragment, ...]} or a comparator")
    if not (schedule is None or isinstance(schedule, (str, dict))
            or callable(schedule)):
        raise ConfigError("pipeline_schedule must be a built-in name, a "
                          "table {mesh: [fragment, ...]} or a comparator "
                          f"before(a, b) -> bool; got {type(schedule).__name__}")


def _check_io_meshes(which: str, spec: Any, topology: Mapping[str, Any]) -> None:
    import jax  # noqa: PLC0415

    if spec is None:
        return
    leaves = (list(spec.values()) if isinstance(spec, dict)
              and all(isinstance(k, int) for k in spec)
              else jax.tree_util.tree_leaves(spec))
    for mesh in leaves:
        if mesh is not None and mesh not in topology:
            raise ConfigError(f"{which} names mesh {mesh!r}, which is not in "
                              f"the topology; meshes: {sorted(topology)}")
