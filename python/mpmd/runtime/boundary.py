"""A call's boundary: the user's arrays on one side, the program's inputs
and results on the other.

    boundary = Boundary([None, StackedArray(...), KeyArray(impl)], outputs)
    program_inputs = boundary.inputs(user_leaves)
    user_results = boundary.results(program_results)

Most arrays cross as they are (None). Two kinds are held otherwise by the
program: typed PRNG keys (`jax.random.key`), which its programs take as
their key data (`KeyArray`), and the values of a layer stack split over
meshes (`StackedArray`), which it takes as one piece per mesh.

## Stacked arrays

    layout = StackedArray(bounds, shardings, move)
    layout.sharding          # NamedSharding over the meshes' devices, or None
    pieces = layout.split(params_blocks)    # one array per piece, no copy
    blocks = layout.join(pieces)            # one array again, no copy

A program that splits a scanned layer stack over meshes takes (and returns)
each stacked value as pieces, rows [lo, hi) of the stack on the mesh of
that range. The user keeps one array: its layer axis sharded over the union
of the meshes' devices, an outer axis `stage` (one entry per mesh) before
the meshes' own axes, so that each mesh's devices hold exactly its rows. A
piece is then that array's shards on its mesh, wrapped with
`jax.make_array_from_single_device_arrays` (no copy), and the results are
wrapped back the same way.

When the pieces do not line up with such a layout (uneven layer counts, a
mesh holding two ranges as V schedules do), the user's array keeps the even
layout ("slots" of L/n rows per mesh) and each piece is gathered from the
slots that hold its rows: only the rows that differ cross meshes. Meshes
of different shapes, or layer counts the meshes do not divide, have no such
layout: the stack then crosses the boundary whole on the first mesh (a
copy each call; `Lowered` warns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["Boundary", "KeyArray", "KeyImpl", "LeafIO", "ProgramIO",
           "StackPiece", "StackedArray", "is_key", "stack_sharding",
           "union_mesh"]

try:  # the concrete array class, to wrap buffers without checks
    from jax._src.array import ArrayImpl as _ArrayImpl
except ImportError:  # another JAX: make_array_from_single_device_arrays
    _ArrayImpl = None

Bounds = tuple[tuple[int, int], ...]


def union_mesh(meshes: Sequence[Mesh]) -> Mesh | None:
    """A mesh over the devices of `meshes` (distinct, of one shape and axis
    names) with an outer axis, "stage", one entry per mesh; None when they
    differ in shape or names."""
    first = meshes[0]
    if any(m.devices.shape != first.devices.shape
           or m.axis_names != first.axis_names for m in meshes):
        return None
    name = "stage"
    while name in first.axis_names:
        name += "_"
    return Mesh(np.stack([m.devices for m in meshes]),
                (name, *first.axis_names),
                axis_types=(first.axis_types[0], *first.axis_types)
                if first.axis_types else None)


# One object per layout: the arguments and the results of a program (and
# of the next call) then share it, and a sharding compares by identity
# first (equal meshes compare their devices, tens of microseconds).
_LAYOUTS: dict[tuple, NamedSharding] = {}


def _interned(sharding: NamedSharding) -> NamedSharding:
    key = (tuple(d.id for d in sharding.mesh.devices.flat),
           sharding.mesh.devices.shape, sharding.mesh.axis_names,
           tuple(sharding.spec), sharding.memory_kind)
    return _LAYOUTS.setdefault(key, sharding)


def _mesh_shards(x: jax.Array, mesh: Mesh) -> list[Any]:
    """The single-device arrays of `x` on `mesh`'s devices (this process's),
    in the mesh's device order."""
    order = {d.id: i for i, d in enumerate(mesh.devices.flat)}
    shards = [s for s in x.addressable_shards if s.device.id in order]
    shards.sort(key=lambda s: order[s.device.id])
    return [s.data for s in shards]


class StackedArray:
    """How one stacked value crosses a call's boundary.

    `bounds[j]` are the rows of piece j, laid out on `meshes[j]` as
    `shardings[j]` (a NamedSharding of that mesh)."""

    def __init__(self, bounds: Bounds, shardings: Sequence[NamedSharding],
                 move: Callable[[jax.Array, NamedSharding], jax.Array]):
        self.bounds = tuple(bounds)
        self.shardings = [_interned(s) for s in shardings]
        self.move = move
        self.length = self.bounds[-1][1]
        meshes = []
        for sharding in self.shardings:
            if not any(sharding.mesh is m or sharding.mesh == m
                       for m in meshes):
                meshes.append(sharding.mesh)
        self.slot_meshes = meshes
        self.sharding = self._union_sharding()
        self.exact = self.sharding is not None and len(meshes) == len(
            self.bounds) and all(
            hi - lo == self.length // len(meshes) for lo, hi in self.bounds)
        # The exact layout's buffers in each side's device order, made on
        # first use (`_wrap`).
        self._orders: tuple[list[list[int]], list[tuple[int, int]]] | None \
            = None
        self._avals: dict[Any, Any] = {}

    @classmethod
    def abstract(cls, bounds: Bounds) -> "StackedArray":
        """The layout of a stack over meshes without devices (an abstract
        topology): none to speak of."""
        array = cls.__new__(cls)
        array.bounds = tuple(bounds)
        array.shardings, array.move, array.slot_meshes = [], None, []
        array.length = array.bounds[-1][1]
        array.sharding, array.exact = None, False
        array._orders, array._avals = None, {}
        return array

    def _union_sharding(self) -> NamedSharding | None:
        meshes = self.slot_meshes
        if self.length % len(meshes):
            return None
        specs = {tuple(s.spec) for s in self.shardings}
        kinds = {s.memory_kind for s in self.shardings}
        union = union_mesh(meshes)
        if union is None or len(specs) != 1 or len(kinds) != 1:
            return None
        spec = list(self.shardings[0].spec)
        first = spec[0] if spec else None
        head = (union.axis_names[0],) + (
            () if first is None else
            (first,) if isinstance(first, str) else tuple(first))
        return _interned(NamedSharding(union, PartitionSpec(head, *spec[1:]),
                                       memory_kind=kinds.pop()))

    def describe(self) -> str:
        if self.sharding is None:
            return ("whole on the first mesh (the meshes differ in shape or "
                    f"do not divide its {self.length} layers)")
        if self.exact:
            return f"{self.sharding.spec} over the meshes' devices, no copy"
        return (f"{self.sharding.spec} over the meshes' devices; each call "
                "moves the rows whose mesh differs")

    # --- user array -> pieces -------------------------------------------

    def _slots(self, x: jax.Array) -> list[jax.Array]:
        """`x` (laid out as `self.sharding`) as one array per slot mesh."""
        rows = self.length // len(self.slot_meshes)
        spec = PartitionSpec(*self.shardings[0].spec)
        out = []
        for mesh in self.slot_meshes:
            shape = (rows, *x.shape[1:])
            out.append(jax.make_array_from_single_device_arrays(
                shape, NamedSharding(mesh, spec,
                                     memory_kind=self.sharding.memory_kind),
                _mesh_shards(x, mesh)))
        return out

    def split(self, x: Any) -> list[jax.Array]:
        """The pieces of `x` (one array of the whole stack), each laid out
        as its mesh takes it."""
        if self.sharding is None:
            return [self.move(_rows(x, lo, hi), sharding) if isinstance(
                x, jax.Array) else jax.device_put(
                np.asarray(x)[lo:hi], sharding)
                for (lo, hi), sharding in zip(self.bounds, self.shardings)]
        if not (isinstance(x, jax.Array) and x.sharding == self.sharding):
            x = self.move(x, self.sharding) if isinstance(x, jax.Array) and \
                getattr(x, "_committed", False) else \
                jax.device_put(x, self.sharding)
        if self.exact:
            fast = self._cut_buffers(x)
            if fast is not None:
                return fast
        slots = self._slots(x)
        if self.exact:
            return slots
        return [self._gather(slots, lo, hi, sharding)
                for (lo, hi), sharding in zip(self.bounds, self.shardings)]

    def _gather(self, slots: list[jax.Array], lo: int, hi: int,
                sharding: NamedSharding) -> jax.Array:
        """Rows [lo, hi) from the slots that hold them, on `sharding`."""
        rows = self.length // len(slots)
        parts = []
        for s, slot in enumerate(slots):
            a, b = max(lo, s * rows), min(hi, (s + 1) * rows)
            if a >= b:
                continue
            part = slot if (a, b) == (s * rows, (s + 1) * rows) else \
                _rows(slot, a - s * rows, b - s * rows)
            parts.append(self.move(part, sharding))
        return parts[0] if len(parts) == 1 else _concat(parts, sharding)

    # --- the exact layout's fast path: buffers rewrapped, no checks -------

    def _buffer_orders(self) -> tuple[list[list[int]], list[tuple[int, int]]]:
        """Per piece, the positions in the whole array's buffers (in its
        sharding's device order) of the piece's buffers (in the piece's);
        per buffer of the whole array, (piece, position)."""
        if self._orders is None:
            union = [d.id for d in
                     self.sharding._addressable_device_assignment]  # noqa: SLF001
            at = {device: i for i, device in enumerate(union)}
            pieces, owner = [], {}
            for j, sharding in enumerate(self.shardings):
                ids = [d.id for d in
                       sharding._addressable_device_assignment]  # noqa: SLF001
                pieces.append([at[d] for d in ids])
                owner.update({d: (j, k) for k, d in enumerate(ids)})
            self._orders = (pieces, [owner[d] for d in union])
        return self._orders

    def _cut_buffers(self, x: jax.Array) -> list[jax.Array] | None:
        """The pieces of `x` (laid out as `self.sharding`) as its own
        buffers rewrapped: what `make_array_from_single_device_arrays`
        does, in a few microseconds instead of about 20 per piece. None
        where this JAX has no such internals (the public way then)."""
        if _ArrayImpl is None:
            return None
        try:
            buffers = x._arrays  # noqa: SLF001
            orders, _ = self._buffer_orders()
            avals = self._avals.get(x.aval)
            if avals is None:
                avals = self._avals[x.aval] = [
                    _aval((hi - lo, *x.shape[1:]), x.dtype, sharding)
                    for (lo, hi), sharding in zip(self.bounds,
                                                  self.shardings)]
            return [_ArrayImpl(aval, sharding, [buffers[i] for i in order],
                               committed=True, _skip_checks=True)
                    for aval, sharding, order in zip(avals, self.shardings,
                                                     orders)]
        except (AttributeError, TypeError):
            return None

    def _join_buffers(self, pieces: Sequence[jax.Array]) -> jax.Array | None:
        if _ArrayImpl is None:
            return None
        try:
            buffers = [p._arrays for p in pieces]  # noqa: SLF001
            _, owners = self._buffer_orders()
            first = pieces[0].aval
            aval = self._avals.get(first)
            if aval is None:
                aval = self._avals[first] = _aval(
                    (self.length, *first.shape[1:]), first.dtype,
                    self.sharding)
            return _ArrayImpl(aval, self.sharding,
                              [buffers[j][k] for j, k in owners],
                              committed=True, _skip_checks=True)
        except (AttributeError, TypeError):
            return None

    # --- pieces -> user array -------------------------------------------

    def join(self, pieces: Sequence[jax.Array]) -> jax.Array:
        """One array of the whole stack from its pieces."""
        if self.sharding is None:
            first = self.shardings[0]
            return _concat([self.move(p, first) for p in pieces], first)
        if self.exact:
            fast = self._join_buffers(pieces)
            if fast is not None:
                return fast
            slots = list(pieces)
        else:
            rows = self.length // len(self.slot_meshes)
            spec = PartitionSpec(*self.shardings[0].spec)
            slots = []
            for s, mesh in enumerate(self.slot_meshes):
                target = NamedSharding(mesh, spec,
                                       memory_kind=self.sharding.memory_kind)
                parts = []
                for (lo, hi), piece in zip(self.bounds, pieces):
                    a, b = max(lo, s * rows), min(hi, (s + 1) * rows)
                    if a < b:
                        part = piece if (a, b) == (lo, hi) else \
                            _rows(piece, a - lo, b - lo)
                        parts.append((a, self.move(part, target)))
                parts.sort(key=lambda p: p[0])
                values = [p for _, p in parts]
                slots.append(values[0] if len(values) == 1
                             else _concat(values, target))
        shards = [shard for slot in slots for shard in
                  (s.data for s in slot.addressable_shards)]
        shape = (self.length, *pieces[0].shape[1:])
        return jax.make_array_from_single_device_arrays(shape, self.sharding,
                                                        shards)


def _aval(shape: tuple[int, ...], dtype: Any, sharding: NamedSharding) -> Any:
    """The abstract value of an array of `shape` laid out as `sharding`
    (what `jax.make_array_from_single_device_arrays` gives it)."""
    from jax._src import core  # noqa: PLC0415

    return core.update_aval_with_sharding(
        core.ShapedArray(shape, dtype, weak_type=False), sharding)


def _rows(x: Any, lo: int, hi: int) -> Any:
    """Rows [lo, hi) of `x`, computed where `x` lives."""
    if not isinstance(x, jax.Array):
        return np.asarray(x)[lo:hi]
    return _slicer(lo, hi)(x)


_SLICERS: dict[tuple[int, int], Any] = {}


def _slicer(lo: int, hi: int) -> Any:
    fn = _SLICERS.get((lo, hi))
    if fn is None:
        fn = _SLICERS[(lo, hi)] = jax.jit(
            lambda x: jax.lax.slice_in_dim(x, lo, hi, axis=0))
    return fn


def _concat(parts: Sequence[jax.Array], sharding: NamedSharding) -> jax.Array:
    return _concatenate(sharding)(*parts)


_CONCATS: dict[Any, Any] = {}


def _concatenate(sharding: NamedSharding) -> Any:
    fn = _CONCATS.get(sharding)
    if fn is None:
        fn = _CONCATS[sharding] = jax.jit(
            lambda *xs: jax.numpy.concatenate(xs, axis=0),
            out_shardings=sharding)
    return fn


# --- how each argument and result crosses: the program's IO -----------------

@dataclass(frozen=True)
class StackPiece:
    """How one input or result of the program is held: as the pieces of
    stack `stack` (one per layer range of `bounds`, in order)."""

    stack: str
    bounds: Bounds


def is_key(aval: Any) -> bool:
    """Whether `aval` (or a dtype) is a typed PRNG key array's."""
    dtype = getattr(aval, "dtype", aval)
    try:
        return bool(jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key))
    except TypeError:
        return False


@dataclass(frozen=True)
class LeafIO:
    """How one flat argument (or result) of the user's function is held by
    the program: `count` values; the pieces of split stack `stack` on
    `meshes` (one per piece), or the data of a typed key of `key_impl`."""

    count: int = 1
    stack: StackPiece | None = None
    meshes: tuple[str, ...] = ()
    key_impl: Any = None

    @property
    def plain(self) -> bool:
        return self.stack is None and self.key_impl is None

    def piece_text(self, j: int) -> str:
        """`[0:2]`: the rows piece j holds (empty for one value)."""
        if self.stack is None:
            return ""
        lo, hi = self.stack.bounds[j]
        return f"[{lo}:{hi}]"


@dataclass(frozen=True)
class ProgramIO:
    inputs: tuple[LeafIO, ...]
    outputs: tuple[LeafIO, ...]

    @classmethod
    def plain(cls, inputs: int, outputs: int) -> "ProgramIO":
        """Every argument and result one program value, as it is."""
        return cls(tuple(LeafIO() for _ in range(inputs)),
                   tuple(LeafIO() for _ in range(outputs)))

    @property
    def identity(self) -> bool:
        return all(leaf.plain for leaf in (*self.inputs, *self.outputs))

    @property
    def stacked(self) -> bool:
        return any(leaf.stack is not None
                   for leaf in (*self.inputs, *self.outputs))

    @staticmethod
    def _expand(values: Sequence[Any], leaves: Sequence[LeafIO],
                piece: Callable[[Any, LeafIO, int], Any]) -> list[Any]:
        out: list[Any] = []
        for value, leaf in zip(values, leaves):
            if leaf.plain:
                out.append(value)
            else:
                out += [piece(value, leaf, j) for j in range(leaf.count)]
        return out

    def expand_inputs(self, values: Sequence[Any],
                      piece: Callable[[Any, LeafIO, int], Any]) -> list[Any]:
        """One value per program input from one per argument: `piece(value,
        leaf, j)` for the program values of arguments not held as they are."""
        return self._expand(values, self.inputs, piece)

    def expand_outputs(self, values: Sequence[Any],
                       piece: Callable[[Any, LeafIO, int], Any]) -> list[Any]:
        return self._expand(values, self.outputs, piece)

    @staticmethod
    def _expand_dict(values: Mapping[int, Any], leaves: Sequence[LeafIO],
                     piece: Callable[[Any, LeafIO, int], Any]
                     ) -> dict[int, Any]:
        out: dict[int, Any] = {}
        at = 0
        for index, leaf in enumerate(leaves):
            for j in range(leaf.count):
                value = piece(values.get(index), leaf, j) if not leaf.plain \
                    else values.get(index)
                if value is not None:
                    out[at + j] = value
            at += leaf.count
        return out

    def expand_input_dict(self, values: Mapping[int, Any],
                          piece: Callable[[Any, LeafIO, int], Any]
                          ) -> dict[int, Any]:
        """{program input: value} from {argument: value}."""
        return self._expand_dict(values, self.inputs, piece)

    def expand_output_dict(self, values: Mapping[int, Any],
                           piece: Callable[[Any, LeafIO, int], Any]
                           ) -> dict[int, Any]:
        return self._expand_dict(values, self.outputs, piece)

    def input_of(self, program_index: int) -> tuple[int, int]:
        """(argument, piece) of a program input."""
        return _owner(self.inputs, program_index)

    def output_of(self, program_index: int) -> tuple[int, int]:
        return _owner(self.outputs, program_index)


def _owner(leaves: Sequence[LeafIO], index: int) -> tuple[int, int]:
    at = 0
    for i, leaf in enumerate(leaves):
        if index < at + leaf.count:
            return i, index - at
        at += leaf.count
    raise IndexError(index)


@dataclass(frozen=True)
class KeyImpl:
    """A typed key's implementation: its dtype, and the shape of the data
    of one key (`(2,)` for threefry)."""

    dtype: Any
    key_shape: tuple[int, ...]

    @classmethod
    def of(cls, aval: Any) -> "KeyImpl":
        data = jax.eval_shape(jax.random.key_data,
                              jax.ShapeDtypeStruct((), aval.dtype))
        return cls(aval.dtype, tuple(data.shape))



class KeyArray:
    """A typed PRNG key array (`jax.random.key`), which the program takes
    and returns as its key data (uint32, the key's shape plus the
    implementation's trailing dimensions)."""

    def __init__(self, dtype: Any):
        self.dtype = dtype

    def split(self, x: Any) -> list[Any]:
        if isinstance(x, jax.Array) and jax.dtypes.issubdtype(
                x.dtype, jax.dtypes.prng_key):
            return [jax.random.key_data(x)]
        return [x]  # the key's data already, or refused by the checks

    def join(self, values: Sequence[jax.Array]) -> jax.Array:
        # The dtype's implementation: custom ones included.
        return jax.random.wrap_key_data(values[0],
                                        impl=self.dtype._impl)  # noqa: SLF001


class Boundary:
    """Per flat argument and per flat result of the user's function: None
    (one program value, as it is), a `StackedArray` or a `KeyArray`."""

    def __init__(self, inputs: Sequence[Any], outputs: Sequence[Any],
                 in_counts: Sequence[int], out_counts: Sequence[int]):
        self.in_layouts = list(inputs)
        self.out_layouts = list(outputs)
        self.in_counts = list(in_counts)
        self.out_counts = list(out_counts)

    def inputs(self, leaves: Sequence[Any]) -> list[Any]:
        """The program's flat inputs from the user's flat arguments."""
        values: list[Any] = []
        for leaf, layout in zip(leaves, self.in_layouts):
            if layout is None:
                values.append(leaf)
            else:
                values += layout.split(leaf)
        return values

    def results(self, values: Sequence[Any]) -> list[Any]:
        """The user's flat results from the program's."""
        out, at = [], 0
        for layout, count in zip(self.out_layouts, self.out_counts):
            if layout is None:
                out.append(values[at])
            else:
                out.append(layout.join(values[at:at + count]))
            at += count
        return out


def stack_sharding(meshes: Sequence[Mesh],
                   spec: PartitionSpec = PartitionSpec()) -> NamedSharding:
    """The layout of a stack split evenly over `meshes` (distinct, of one
    shape): its layer axis over the union of their devices, mesh j's
    devices holding the j-th run of layers, laid out inside each mesh as
    `spec` says of a piece (`spec[0]`, the layers within a mesh, usually
    None)."""
    union = union_mesh(list(meshes))
    if union is None or len({id(m) for m in meshes}) != len(meshes):
        raise ValueError("a stack is laid out over distinct meshes of one "
                         "shape and axis names")
    entries = list(spec) or [None]
    head = entries[0]
    inner = () if head is None else (head,) if isinstance(head, str) \
        else tuple(head)
    return NamedSharding(union, PartitionSpec((union.axis_names[0], *inner),
                                              *entries[1:]))
