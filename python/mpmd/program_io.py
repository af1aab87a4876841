"""The user's flat arguments and results, and the program's.

    io = program_io.build(in_avals, out_avals, stack_inputs, stack_outputs,
                          records)
    io.inputs[3]          # LeafIO(count=4, stack=..., meshes=("m0", ...))
    program_paths = io.expand_inputs(paths, program_io.piece_path)

Most flat arguments are one input of the partitioned program. Two kinds
are not: a typed PRNG key (`jax.random.key`), which JAX lowers to its key
data (uint32, the key's shape and a trailing dimension), and a value of a
layer stack split over meshes (`mpmd.stack_split`), which the program takes
as one piece per mesh. Lowering describes each argument and result here
(`LeafIO`), spreads what the user gave per argument (paths, shardings,
mesh assignments) over the program's values, and the runtime's `Boundary`
(`mpmd.runtime.boundary`) converts the values at every call.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import jax
from jax.sharding import NamedSharding, PartitionSpec

from mpmd.runtime.boundary import (KeyImpl, LeafIO, ProgramIO, StackPiece,
                                   is_key)

__all__ = ["LeafIO", "ProgramIO", "build", "is_key", "piece_leaf",
           "piece_mesh", "piece_path", "piece_shape", "piece_sharding"]


def _leaf(aval: Any, stack: StackPiece | None,
          meshes: Mapping[str, tuple[str, ...]]) -> LeafIO:
    if stack is not None:
        return LeafIO(len(stack.bounds), stack, meshes[stack.stack])
    if is_key(aval):
        return LeafIO(1, key_impl=KeyImpl.of(aval))
    return LeafIO()


def build(in_avals: Sequence[Any], out_avals: Sequence[Any],
          stack_inputs: Sequence[StackPiece | None] | None,
          stack_outputs: Sequence[StackPiece | None] | None,
          meshes: Mapping[str, tuple[str, ...]]) -> ProgramIO:
    """The IO of a program whose arguments and results have `in_avals` and
    `out_avals`; `stack_inputs`/`stack_outputs` give those held as pieces
    (None: no stack was split), `meshes` the mesh of each piece per stack."""
    stack_inputs = stack_inputs or [None] * len(in_avals)
    stack_outputs = stack_outputs or [None] * len(out_avals)
    return ProgramIO(
        tuple(_leaf(a, s, meshes) for a, s in zip(in_avals, stack_inputs)),
        tuple(_leaf(a, s, meshes) for a, s in zip(out_avals, stack_outputs)))


def expand_flags(flags: Sequence[bool],
                 stacks: Sequence[StackPiece | None]) -> list[bool]:
    """Per-argument flags (donation) per program input of a program whose
    inputs `stacks` holds in pieces."""
    out: list[bool] = []
    for flag, stack in zip(flags, stacks):
        out += [flag] * (1 if stack is None else len(stack.bounds))
    return out


# --- what the user gave, per program value ------------------------------------

def piece_path(path: str, leaf: LeafIO, j: int) -> str:
    """`params['blocks'][0:2]` for piece j of a stacked argument."""
    return path + leaf.piece_text(j)


def piece_mesh(mesh: Any, leaf: LeafIO, j: int) -> Any:
    """A piece's mesh: the split's (whatever the user assigned the whole
    to); a key's data goes where the key was assigned."""
    if leaf.stack is not None:
        return leaf.meshes[j]
    return mesh


def piece_shape(aval: Any, leaf: LeafIO, j: int) -> tuple[int, ...]:
    if leaf.stack is not None:
        lo, hi = leaf.stack.bounds[j]
        return (hi - lo, *aval.shape[1:])
    if leaf.key_impl is not None:
        return (*aval.shape, *leaf.key_impl.key_shape)
    return tuple(aval.shape)


def _stage_axis(sharding: NamedSharding, leaf: LeafIO,
                topology: Mapping[str, Any]) -> bool:
    """Whether `sharding` lays a stack out over its meshes: its mesh's first
    axis runs over the split's meshes, each entry one mesh's devices, and
    dimension 0 is sharded over that axis first."""
    mesh = sharding.mesh
    distinct = list(dict.fromkeys(leaf.meshes))
    devices = getattr(mesh, "devices", None)
    if devices is None or devices.shape[0] != len(distinct):
        return False
    for row, name in zip(devices, distinct):
        if [d.id for d in row.flat] != [
                d.id for d in topology[name].devices.flat]:
            return False
    spec = tuple(sharding.spec)
    head = spec[0] if spec else None
    first = head if isinstance(head, str) else (head[0] if head else None)
    return first == mesh.axis_names[0]


def piece_spec(spec: PartitionSpec, stage_axis: str | None) -> PartitionSpec:
    """The PartitionSpec of a piece from that of the whole stack: the
    stage axis taken out of dimension 0."""
    entries = list(spec)
    if entries and stage_axis is not None:
        head = entries[0]
        rest = (() if head is None else (head,) if isinstance(head, str)
                else tuple(head))
        rest = tuple(a for a in rest if a != stage_axis)
        entries[0] = None if not rest else rest[0] if len(rest) == 1 \
            else rest
    return PartitionSpec(*entries)


def piece_sharding(given: Any, leaf: LeafIO, j: int,
                   topology: Mapping[str, Any]) -> Any:
    """What an `in_shardings`/`out_shardings` entry (or a committed
    array's sharding) of a stacked or key value says of one program value:
    a NamedSharding over the stack's meshes gives each piece its mesh's
    part; a PartitionSpec holds for every piece with the stage axis
    ("stage") left out; anything else says nothing of the piece."""
    if given is None or leaf.plain:
        return given
    if leaf.key_impl is not None:
        if isinstance(given, NamedSharding):
            return given  # the key data's extra dimension is replicated
        return given
    if isinstance(given, PartitionSpec):
        return piece_spec(given, "stage")
    if isinstance(given, NamedSharding) and _stage_axis(given, leaf,
                                                        topology):
        return NamedSharding(topology[leaf.meshes[j]],
                             piece_spec(given.spec, given.mesh.axis_names[0]),
                             memory_kind=given.memory_kind)
    return None


def piece_leaf(value: Any, leaf: LeafIO, j: int,
               topology: Mapping[str, Any]) -> Any:
    """A stand-in for the program value of an argument at lowering: its
    shape and dtype, and the sharding of a committed array where the
    argument's sharding says what the piece's is."""
    aval = jax.typeof(value) if not isinstance(
        value, jax.ShapeDtypeStruct) else value
    shape = piece_shape(aval, leaf, j)
    dtype = aval.dtype if leaf.key_impl is None else jax.numpy.uint32
    sharding = getattr(value, "sharding", None)
    committed = getattr(value, "_committed", isinstance(
        value, jax.ShapeDtypeStruct) and sharding is not None)
    piece = piece_sharding(sharding, leaf, j, topology) \
        if committed and isinstance(sharding, NamedSharding) else None
    if isinstance(piece, NamedSharding):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=piece)
    return jax.ShapeDtypeStruct(shape, dtype)
