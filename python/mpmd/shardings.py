"""User shardings of a function's inputs and outputs, resolved on meshes.

    mpmd.jit(step, config,
             in_shardings=(NamedSharding(m1, P(None, "model")), P("data")),
             out_shardings=None)

What users give, as `jax.jit` takes it: `in_shardings` / `out_shardings` as
a pytree prefix of the arguments / results whose leaves are `NamedSharding`s
on topology meshes, `PartitionSpec`s (resolved on the mesh the value is
assigned to) or None (decided by the partitioner); and committed `jax.Array`
arguments, whose `NamedSharding` is a fixed point too. The result, per flat
value, is a `Placement`: the mesh and the axes of each dimension. The
compiler receives them as `sdy.sharding` attributes of the entry function
(with an `sdy.mesh` per mesh, in JAX's own MLIR context) and keeps them
through its sharding phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError

__all__ = ["Placement", "ShardingError", "add_entry_shardings",
           "flat_prefix", "input_placements", "off_topology",
           "output_placements", "topology_devices"]


class ShardingError(MpmdError, ValueError):
    """A sharding does not fit its value or its mesh; the message names the
    value, the mesh and the axis."""


@dataclass(frozen=True)
class Placement:
    """Where one flat input or output goes: a topology mesh, and the mesh
    axes of each dimension (`None` when the user left the layout open).

    A layout given on an abstract mesh (`NamedSharding(config.sharding_mesh,
    spec)`, as Shardy:MPMD writes in_shardings) names no mesh: `mesh` is
    None, mesh inference places the value, and `abstract` holds the axis
    sizes the layout was stated for ((name, size) pairs); the compiler
    checks them against the mesh the value ends on."""

    mesh: str | None
    axes: tuple[tuple[str, ...], ...] | None = None
    abstract: tuple[tuple[str, int], ...] | None = None

    def spec(self) -> PartitionSpec:
        if self.axes is None:
            return PartitionSpec()
        return PartitionSpec(*[
            None if not dim else (dim[0] if len(dim) == 1 else dim)
            for dim in self.axes])


def _is_sharding_leaf(x: Any) -> bool:
    # PartitionSpec is a tuple: without this it would be flattened.
    return x is None or isinstance(x, (jax.sharding.Sharding, PartitionSpec))


def flat_prefix(prefix: Any, tree: Any, count: int, what: str) -> list[Any]:
    """One entry of `prefix` (a pytree prefix of `tree`, as `jax.jit` takes
    `in_shardings`) per flat value of `tree`."""
    if prefix is None:
        return [None] * count
    if _is_sharding_leaf(prefix):
        return [prefix] * count
    dummy = jax.tree_util.tree_unflatten(tree, [0] * count)
    flat: list[Any] = []
    try:
        jax.tree_util.tree_map(
            lambda leaf, sub: flat.extend(
                [leaf] * len(jax.tree_util.tree_leaves(sub))),
            prefix, dummy, is_leaf=_is_sharding_leaf)
    except (ValueError, TypeError) as error:
        raise ShardingError(
            f"{what} must be a sharding, a PartitionSpec, None, or a pytree "
            f"prefix of the function's {'arguments' if 'in' in what else 'results'}"
            f" with those leaves: {error}") from None
    if len(flat) != count:
        raise ShardingError(f"{what} gives {len(flat)} shardings for {count} "
                            "values; give a pytree prefix of the values")
    return flat


def _mesh_name(mesh: Any, topology: Mapping[str, Mesh]) -> str | None:
    if isinstance(mesh, jax.sharding.AbstractMesh):
        # Abstract meshes of one shape are equal, and JAX may hand out one
        # object for both: a mesh is named only when one entry is it.
        names = [name for name, candidate in topology.items()
                 if mesh is candidate]
        return names[0] if len(names) == 1 else None
    for name, candidate in topology.items():
        if mesh == candidate:
            return name
    return None


def _describe_mesh(mesh: Any) -> str:
    try:
        ids = [d.id for d in mesh.devices.flat]
        axes = ", ".join(f"{n}={s}" for n, s in mesh.shape.items())
        return f"<{axes}> on devices {ids}"
    except (AttributeError, ValueError):  # an AbstractMesh has no devices
        return repr(mesh)


def _axes_of(spec: PartitionSpec, rank: int, where: str) -> tuple[
        tuple[str, ...], ...]:
    if len(spec) > rank:
        raise ShardingError(f"{where}: PartitionSpec {spec} has {len(spec)} "
                            f"entries but the value has rank {rank}")
    axes: list[tuple[str, ...]] = []
    for entry in tuple(spec) + (None,) * (rank - len(spec)):
        if entry is None:
            axes.append(())
        elif entry is PartitionSpec.UNCONSTRAINED:
            raise ShardingError(
                f"{where}: PartitionSpec.UNCONSTRAINED is not supported yet "
                "for inputs and outputs; give None for the whole value "
                "instead")
        elif isinstance(entry, str):
            axes.append((entry,))
        else:
            axes.append(tuple(entry))
    return tuple(axes)


def check_axes(axes: tuple[tuple[str, ...], ...], shape: Sequence[int],
               mesh_name: str, mesh: Mesh, where: str) -> None:
    """Raises ShardingError unless `axes` can lay out `shape` on `mesh`."""
    seen: set[str] = set()
    for dim, dim_axes in enumerate(axes):
        shards = 1
        for axis in dim_axes:
            if axis not in mesh.shape:
                raise ShardingError(
                    f"{where} is sharded along axis {axis!r}, which mesh "
                    f"{mesh_name!r} does not have (its axes: "
                    f"{dict(mesh.shape)}); use one of its axes or place the "
                    "value on a mesh that has it")
            if axis in seen:
                raise ShardingError(f"{where} uses axis {axis!r} of mesh "
                                    f"{mesh_name!r} more than once")
            seen.add(axis)
            shards *= mesh.shape[axis]
        if shape[dim] % shards:
            raise ShardingError(
                f"{where}: dimension {dim} (size {shape[dim]}) is not "
                f"divisible by {shards}, the number of shards along "
                f"{'x'.join(dim_axes)} on mesh {mesh_name!r}")


def _abstract_axes(sharding: Any, topology: Mapping[str, Mesh]
                   ) -> tuple[tuple[str, int], ...] | None:
    """The axis sizes of a NamedSharding on an abstract mesh that is not
    itself a topology mesh, else None."""
    if isinstance(sharding, NamedSharding) and isinstance(
            sharding.mesh, jax.sharding.AbstractMesh) and \
            _mesh_name(sharding.mesh, topology) is None:
        return tuple(sharding.mesh.shape.items())
    return None


def _from_sharding(sharding: Any, topology: Mapping[str, Mesh], rank: int,
                   where: str, given_as: str) -> tuple[str | None,
                                                       tuple]:
    """(mesh name, axes) a sharding states, the mesh None for a bare
    PartitionSpec or a NamedSharding on an abstract mesh (a layout without
    a mesh); raises for a NamedSharding off the topology."""
    if isinstance(sharding, PartitionSpec):
        return None, _axes_of(sharding, rank, where)
    if _abstract_axes(sharding, topology) is not None:
        if sharding.memory_kind not in (None, "device"):
            raise ShardingError(
                f"{where}: not supported yet: {given_as} with memory kind "
                f"{sharding.memory_kind!r}; give the memory kind in the mesh "
                "assignment (input_mesh_assignment / output_mesh_assignment)")
        return None, _axes_of(sharding.spec, rank, where)
    if isinstance(sharding, NamedSharding):
        if sharding.memory_kind not in (None, "device") and \
                given_as != _ARRAY_SHARDING:
            raise ShardingError(
                f"{where}: not supported yet: {given_as} with memory kind "
                f"{sharding.memory_kind!r}; give the memory kind in the mesh "
                "assignment (input_mesh_assignment / output_mesh_assignment)")
        name = _mesh_name(sharding.mesh, topology)
        if name is None:
            raise ShardingError(
                f"{where}: {given_as} is a NamedSharding on mesh "
                f"{_describe_mesh(sharding.mesh)}, which is not in the "
                f"topology; use one of the meshes {sorted(topology)}")
        return name, _axes_of(sharding.spec, rank, where)
    raise ShardingError(
        f"{where}: {given_as} is a {type(sharding).__name__}; give a "
        "NamedSharding on a topology mesh or a PartitionSpec")


# How messages name the sharding of an array passed to lower() or to a
# call (Shardy:MPMD calls those arguments `lowering_args`).
_ARRAY_SHARDING = "the array's sharding (lowering_args)"


def topology_devices(topology: Mapping[str, Any]) -> frozenset:
    """The devices of the topology's meshes (none for abstract meshes)."""
    return frozenset(device for mesh in topology.values()
                     if isinstance(mesh, Mesh) for device in mesh.devices.flat)


def off_topology(sharding: Any, devices: frozenset) -> bool:
    """Whether `sharding` (a concrete one) puts a piece of its array on a
    device outside `devices` (the topology's). Such an argument, committed
    or not, is host data to mpmd: its layout is no fixed point of sharding
    propagation, and each call moves it to its mesh (`docs/runtime.md`)."""
    try:
        return bool(devices) and not sharding.device_set <= devices
    except (AttributeError, TypeError, ValueError):  # abstract, or no devices
        return False


def _committed_placement(value: Any, topology: Mapping[str, Mesh],
                         where: str, devices: frozenset | None = None
                         ) -> tuple[str, tuple] | None:
    """The mesh and axes of a committed array (or a ShapeDtypeStruct with a
    sharding); None for host data and arrays not laid out on a mesh, and
    for arrays on devices outside the topology (moved like host data)."""
    if isinstance(value, jax.ShapeDtypeStruct):
        sharding = value.sharding
    elif isinstance(value, jax.Array) and getattr(value, "_committed", False):
        sharding = value.sharding
    else:
        return None
    if sharding is not None and not isinstance(
            getattr(sharding, "mesh", None), jax.sharding.AbstractMesh) and \
            off_topology(sharding, topology_devices(topology)
                         if devices is None else devices):
        return None
    if isinstance(sharding, NamedSharding):
        if isinstance(sharding.mesh, jax.sharding.AbstractMesh):
            return None
        name, axes = _from_sharding(sharding, topology, len(value.shape),
                                    where, _ARRAY_SHARDING)
        return name, axes
    if sharding is not None and sharding.is_fully_replicated:
        # Replicated on exactly one mesh's devices (a jax.jit result, say).
        devices = set(sharding.device_set)
        for name, mesh in topology.items():
            if isinstance(mesh, jax.sharding.AbstractMesh):
                continue
            if set(mesh.devices.flat) == devices and len(devices) > 1:
                return name, ((),) * len(value.shape)
    return None


def _with_given(given: Any, mesh: str | None, source: str, shape: tuple,
                where: str, option: str,
                topology: Mapping[str, Mesh]) -> tuple[str | None, tuple]:
    """The mesh and axes `given` (an entry of in_/out_shardings) states for a
    value whose mesh `source` already says is `mesh` (or None). The mesh
    stays None for a layout on an abstract mesh that no source places."""
    given_mesh, axes = _from_sharding(given, topology, len(shape), where,
                                      option)
    abstract = _abstract_axes(given, topology)
    if abstract is not None:
        if mesh is not None:
            _check_abstract_fits(abstract, mesh, topology, where, option)
        return mesh, axes
    if given_mesh is not None and mesh is not None and given_mesh != mesh:
        raise ShardingError(f"{where}: {option} puts it on mesh "
                            f"{given_mesh!r}, but {source} says {mesh!r}; "
                            "keep one")
    mesh = given_mesh or mesh
    if mesh is None:
        if len(topology) != 1:
            raise ShardingError(
                f"{where}: {option} gives a PartitionSpec but the value's "
                "mesh is unknown; give a NamedSharding on a topology mesh, or "
                "assign the value in the config's "
                f"{'input' if option == 'in_shardings' else 'output'}"
                "_mesh_assignment")
        mesh = next(iter(topology))
    return mesh, axes


def _check_abstract_fits(abstract: tuple[tuple[str, int], ...], mesh: str,
                         topology: Mapping[str, Mesh], where: str,
                         option: str) -> None:
    """A layout stated on an abstract mesh names the axes (and sizes) of the
    mesh the value is placed on."""
    actual = tuple(topology[mesh].shape.items())
    if dict(abstract) != dict(actual):
        raise ShardingError(
            f"{where}: {option} gives a NamedSharding on an abstract mesh "
            f"with axes {dict(abstract)}, but the value is on mesh {mesh!r}, "
            f"whose axes are {dict(actual)}; use that mesh's axes "
            f"(topology[{mesh!r}].abstract_mesh)")


def _placement(mesh: str | None, axes: tuple | None, shape: tuple,
               where: str, topology: Mapping[str, Mesh],
               abstract: tuple[tuple[str, int], ...] | None = None
               ) -> Placement | None:
    if mesh is None:
        if abstract is None or axes is None:
            return None
        # A layout waiting for mesh inference: checked on the abstract
        # mesh now, on the mesh it ends on by the compiler.
        check_axes(axes, shape, "(abstract)",
                   jax.sharding.AbstractMesh(
                       tuple(size for _, size in abstract),
                       tuple(name for name, _ in abstract)), where)
        return Placement(None, axes, abstract)
    if axes is not None:
        check_axes(axes, shape, mesh, topology[mesh], where)
    return Placement(mesh, axes)


def input_placements(leaves: Sequence[Any], paths: Sequence[str],
                     in_shardings: Sequence[Any],
                     assigned: Mapping[int, str],
                     topology: Mapping[str, Mesh]) -> dict[int, Placement]:
    """Per flat argument with a known mesh or layout, its Placement.

    `assigned` is the input mesh assignment of the config. Conflicts between
    it, the array's own sharding and `in_shardings` are errors naming the
    argument and both meshes or layouts.
    """
    placements: dict[int, Placement] = {}
    devices = topology_devices(topology)
    for index, (value, path, given) in enumerate(
            zip(leaves, paths, in_shardings)):
        where = f"argument {path}"
        shape = tuple(np.shape(value))
        mesh, axes = assigned.get(index), None
        committed = _committed_placement(value, topology, where, devices)
        if committed is not None:
            if mesh is not None and committed[0] != mesh:
                raise ShardingError(
                    f"{where} is an array on mesh {committed[0]!r}, but "
                    f"input_mesh_assignment puts it on {mesh!r}; move it "
                    "there or change the assignment")
            mesh, axes = committed
        abstract = _abstract_axes(given, topology) if mesh is None else None
        if given is not None:
            source = ("the array's own sharding" if committed
                      else "input_mesh_assignment")
            mesh, given_axes = _with_given(given, mesh, source, shape, where,
                                           "in_shardings", topology)
            if committed is not None and axes != given_axes:
                raise ShardingError(
                    f"{where} is given two different shardings: the array is "
                    f"laid out as {Placement(mesh, axes).spec()} on mesh "
                    f"{mesh!r}, in_shardings asks for "
                    f"{Placement(mesh, given_axes).spec()}; reshard the array "
                    "first or drop one")
            axes = given_axes
        placement = _placement(mesh, axes, shape, where, topology, abstract)
        if placement is not None:
            placements[index] = placement
    return placements


def output_placements(shapes: Sequence[tuple[int, ...]],
                      paths: Sequence[str], out_shardings: Sequence[Any],
                      assigned: Mapping[int, str],
                      topology: Mapping[str, Mesh]) -> dict[int, Placement]:
    """Per flat result with a known mesh or layout, its Placement."""
    placements: dict[int, Placement] = {}
    for index, (shape, path, given) in enumerate(
            zip(shapes, paths, out_shardings)):
        where = f"result {path}" if not path.startswith("result") else path
        mesh, axes = assigned.get(index), None
        abstract = _abstract_axes(given, topology) if mesh is None else None
        if given is not None:
            mesh, axes = _with_given(given, mesh, "output_mesh_assignment",
                                     shape, where, "out_shardings", topology)
        placement = _placement(mesh, axes, shape, where, topology, abstract)
        if placement is not None:
            placements[index] = placement
    return placements


def _sharding_text(symbol: str, axes: tuple[tuple[str, ...], ...]) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in dim) + "}"
                     for dim in axes)
    return f"#sdy.sharding<@{symbol}, [{dims}]>"


def add_entry_shardings(module: Any, func_op: Any,
                        inputs: Mapping[int, Placement],
                        outputs: Mapping[int, Placement],
                        topology: Mapping[str, Mesh]) -> None:
    """Writes the layouts as `sdy.sharding` argument / result attributes of
    JAX's entry function `func_op` in `module` (a builtin.module op), each naming an `sdy.mesh` with its mesh's axes (in
    JAX's own MLIR context, as JAX writes `jax.jit`'s shardings)."""
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    def shape_of(placement: Placement) -> tuple[tuple[str, int], ...]:
        if placement.mesh is None:
            return placement.abstract or ()
        return tuple(topology[placement.mesh].shape.items())

    # One sdy.mesh per mesh shape: the compiler resolves a layout on the
    # mesh its value is placed on, and checks the sizes against the
    # declared ones.
    used = {shape_of(p) for p in (*inputs.values(), *outputs.values())
            if p.axes is not None}
    if not used:
        return
    body = module.regions[0].blocks[0]
    with module.context:
        taken = {ir.StringAttr(op.attributes["sym_name"]).value
                 for op in body.operations if "sym_name" in op.attributes}
        symbols: dict[tuple[tuple[str, int], ...], str] = {}
        at_start = ir.InsertionPoint.at_block_begin(body)
        for index, mesh_shape in enumerate(sorted(used)):
            symbol = f"mpmd_mesh_{index}"
            while symbol in taken:
                symbol += "_"
            taken.add(symbol)
            symbols[mesh_shape] = symbol
            axes = ", ".join(f'"{n}"={s}' for n, s in mesh_shape)
            at_start.insert(ir.Operation.parse(
                f"sdy.mesh @{symbol} = <[{axes}]>"))

        def with_shardings(attr_name: str, count: int,
                           placements: Mapping[int, Placement]) -> None:
            old = (ir.ArrayAttr(func_op.attributes[attr_name])
                   if attr_name in func_op.attributes else None)
            dicts = []
            for i in range(count):
                entries = {}
                if old is not None:
                    for named in ir.DictAttr(old[i]):
                        entries[named.name] = named.attr
                placement = placements.get(i)
                if placement is not None and placement.axes is not None:
                    entries["sdy.sharding"] = ir.Attribute.parse(
                        _sharding_text(symbols[shape_of(placement)],
                                       placement.axes))
                dicts.append(ir.DictAttr.get(entries))
            func_op.attributes[attr_name] = ir.ArrayAttr.get(dicts)

        ftype = ir.FunctionType(
            ir.TypeAttr(func_op.attributes["function_type"]).value)
        with_shardings("arg_attrs", len(ftype.inputs), inputs)
        with_shardings("res_attrs", len(ftype.results), outputs)
