"""Moving jax.Arrays between meshes without a host round trip.

`jax.device_put(x, sharding)` copies device to device only when the source
and target shardings lay the data out the same way (same HLO sharding, same
number of devices); any other reshard reads the whole array back to the host
(`x._value`) and uploads it again. `transfer` avoids that: a layout change
runs as an XLA program on one side (a cached jitted identity), and the data
crosses between device sets as same-layout copies: a batched `device_put`
when both sides have as many devices, otherwise one copy per target device
of the piece it needs. No array is gathered on one device or read back to
the host on the way.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime.placement import equivalent, relabel, same_layout

__all__ = ["TransferError", "Mover", "in_host_memory", "transfer",
           "transfer_in_host_memory"]


class TransferError(MpmdError):
    """An array cannot be moved to the requested sharding."""


def transfer(x: jax.Array, sharding: NamedSharding) -> jax.Array:
    """`x` laid out as `sharding` (typically on another mesh), copied device
    to device and dispatched asynchronously.

    Returns `x` itself when it already has that sharding. The source stays
    valid; drop the last reference to it to free its buffers (after the
    copy, which holds them while it runs). There is no `donate`: in jaxlib
    0.10.2, `jax.device_put(..., donate=True)` across devices crashes.
    """
    if not isinstance(sharding, NamedSharding):
        raise TransferError(f"target sharding must be a NamedSharding, got {sharding!r}")
    if not isinstance(x, jax.Array):
        raise TransferError(
            f"transfer takes a jax.Array, got {type(x).__name__}; use jax.device_put for host data"
        )
    if x.is_deleted():
        raise TransferError(f"cannot transfer a deleted (donated?) array {x.dtype.name}{list(x.shape)}")
    src = x.sharding
    if src == sharding and getattr(x, "_committed", True):
        return x
    ndim = x.ndim
    if getattr(x, "_committed", True) and equivalent(src, sharding, ndim):
        return relabel(x, sharding)
    try:
        sharding.shard_shape(x.shape)
    except ValueError as e:
        raise TransferError(f"cannot lay out {x.dtype.name}{list(x.shape)} as {sharding}: {e}") from None

    if same_layout(src, sharding, ndim):
        # Straight device-to-device copy of each shard (or no-op on the same devices).
        return jax.device_put(x, sharding)

    src_devices = tuple(src._device_assignment)
    if src_devices == tuple(sharding._device_assignment):
        # Same devices: an on-device reshard.
        return _reshard(sharding)(x)
    if set(src_devices) == set(sharding._device_assignment):
        # Same devices in another order: JAX reshards on device.
        return jax.device_put(x, sharding)

    dst_mesh = sharding.mesh
    if len(src_devices) == dst_mesh.size:
        # Lay the data out on the source devices as the target mesh will hold
        # it, then copy shard by shard.
        staging_mesh = Mesh(
            np.array(src_devices, dtype=object).reshape(dst_mesh.devices.shape),
            dst_mesh.axis_names,
            axis_types=dst_mesh.axis_types,
        )
        staged = _reshard(NamedSharding(staging_mesh, sharding.spec))(x)
        return jax.device_put(staged, sharding)
    return _transfer_by_shards(x, sharding, src_devices)


class Mover:
    """`transfer(x, target)` for the arrays one plan step moves, call after
    call. The step's source layout is the same every call (a program's
    output), so the route is decided once per source sharding: when the
    layouts match (the usual move of an activation or cotangent between
    meshes), the shards are copied by the runtime's batched device-to-device
    copy (what `jax.device_put` ends in) without `device_put`'s Python
    layers: about 7 us a move on one CPU device against about 50 us.
    Anything else, and any failure there, goes through `transfer`."""

    __slots__ = ("target", "_source", "_fast", "_devices")

    def __init__(self, target: NamedSharding) -> None:
        self.target = target
        self._source: Any = None
        self._fast = False
        self._devices = (target._internal_device_list
                         if _COPY is not None else None)

    def __call__(self, x: jax.Array, _target: Any = None) -> jax.Array:
        """`x` moved to the target (`_target`: the same, as the step loop
        passes it to a transfer)."""
        source = getattr(x, "sharding", None)
        if source is not self._source:
            self._source = source
            self._fast = self.copies_shards(x)
        if self._fast and not x.is_deleted():  # (a deleted one crashes it)
            try:
                return _COPY([x], [self._devices], [self.target],
                             [_REUSE])[0]
            except Exception:  # noqa: BLE001 - the slow route says why
                self._source = None
        return transfer(x, self.target)

    def copies_shards(self, x: Any) -> bool:
        """Whether `x` moves by copying its shards one to one (the fast
        route): same layout on as many devices, all in this process."""
        target = self.target
        return (_COPY is not None and isinstance(x, jax.Array)
                and getattr(x, "_committed", True)
                and x.sharding != target
                and x.is_fully_addressable and target.is_fully_addressable
                and not jax.dtypes.issubdtype(x.dtype, jax.dtypes.extended)
                and getattr(x.sharding, "memory_kind", None)
                == target.memory_kind
                and not equivalent(x.sharding, target, x.ndim)
                and same_layout(x.sharding, target, x.ndim))


def _batched_copy() -> tuple[Any, Any]:
    """jaxlib's batched device-to-device copy and its copy semantics, or
    (None, None) where this jaxlib has them elsewhere."""
    try:
        from jax._src.lib import _jax  # noqa: PLC0415

        return (_jax.batched_copy_array_to_devices_with_sharding,
                _jax.ArrayCopySemantics.REUSE_INPUT)
    except (ImportError, AttributeError):
        return None, None


_COPY, _REUSE = _batched_copy()


def _transfer_by_shards(x: jax.Array, target: NamedSharding,
                        src_devices: tuple[Any, ...]) -> jax.Array:
    """Between meshes of different sizes. The data crosses as the pieces of
    an intermediate layout L that both sides can hold: each target device
    receives the one L piece it needs, copied device to device. L is the
    target layout made coarse enough for the source devices to hold one
    piece each (the source reshards to L, the target only slices), or the
    source layout made coarse enough for the target devices (the target
    reshards from L); whichever has more, hence smaller, pieces."""
    ndim = x.ndim
    n_src, dst_mesh = len(src_devices), target.mesh
    dst_devices = tuple(target._device_assignment)
    spec_a = _coarsen(target.spec, dict(dst_mesh.shape), n_src, ndim)
    pieces_a = _piece_count(spec_a, dict(dst_mesh.shape))
    src = x.sharding
    pieces_b = 0
    if isinstance(src, NamedSharding) and isinstance(src.mesh, Mesh):
        spec_b = _coarsen(src.spec, dict(src.mesh.shape), len(dst_devices),
                          ndim)
        pieces_b = _piece_count(spec_b, dict(src.mesh.shape))
    if pieces_b > pieces_a:
        # Source pieces move as they are (after coarsening on the source, if
        # the target cannot hold them one per device); the target reshards.
        if spec_b != src.spec:
            x = _reshard(NamedSharding(src.mesh, spec_b))(x)
        staging = NamedSharding(
            _staging_mesh(dst_devices, spec_b, dict(src.mesh.shape)), spec_b,
            memory_kind=target.memory_kind)
        return _reshard(target)(_assemble(x, staging))
    # Target pieces (coarsened) are cut on the source; the target slices.
    staged = _reshard(NamedSharding(
        _staging_mesh(src_devices, spec_a, dict(dst_mesh.shape)), spec_a))(x)
    landed = NamedSharding(dst_mesh, spec_a, memory_kind=target.memory_kind)
    moved = _assemble(staged, landed)
    return moved if landed == target else _reshard(target)(moved)


def _spec_axes(spec: PartitionSpec, ndim: int) -> list[tuple[str, ...]]:
    entries = list(spec) + [None] * (ndim - len(spec))
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e)
            for e in entries]


def _coarsen(spec: PartitionSpec, sizes: dict[str, int], devices: int,
             ndim: int) -> PartitionSpec:
    """`spec` with the minor axes of its dimensions dropped until its number
    of pieces divides `devices`."""
    kept_entries: list[Any] = []
    pieces = 1
    for axes in _spec_axes(spec, ndim):
        kept = []
        for axis in axes:
            if devices % (pieces * sizes[axis]):
                break
            pieces *= sizes[axis]
            kept.append(axis)
        kept_entries.append(None if not kept else
                            kept[0] if len(kept) == 1 else tuple(kept))
    return PartitionSpec(*kept_entries)


def _piece_count(spec: PartitionSpec, sizes: dict[str, int]) -> int:
    return int(np.prod([sizes[a] for axes in _spec_axes(spec, len(spec))
                        for a in axes], dtype=np.int64))


def _staging_mesh(devices: tuple[Any, ...], spec: PartitionSpec,
                  sizes: dict[str, int]) -> Mesh:
    """`devices` (in their order) as a mesh with the axes `spec` uses, of
    the given sizes, and one more axis over which the pieces repeat."""
    used = [a for axes in _spec_axes(spec, len(spec)) for a in axes]
    shape = [sizes[a] for a in used]
    repeat = len(devices) // int(np.prod(shape, dtype=np.int64))
    return Mesh(np.array(devices, dtype=object).reshape(*shape, repeat),
                (*used, "_mpmd_repeat"))


def _index_key(index: tuple[slice, ...], shape: tuple[int, ...]) -> tuple:
    return tuple(s.indices(n) for s, n in zip(index, shape))


def _assemble(x: jax.Array, dest: NamedSharding) -> jax.Array:
    """`x` laid out as `dest` on other devices, where each piece of `dest`
    is a piece of `x`: one device-to-device copy per target device."""
    shape = tuple(x.shape)
    pieces: dict[tuple, list[jax.Array]] = {}
    for shard in x.addressable_shards:
        pieces.setdefault(_index_key(shard.index, shape), []).append(shard.data)
    used: dict[tuple, int] = {}
    arrays = []
    for device, index in dest.addressable_devices_indices_map(shape).items():
        key = _index_key(index, shape)
        candidates = pieces[key]
        turn = used.get(key, 0)
        used[key] = turn + 1
        # Spread the copies of one piece over the devices that hold it.
        arrays.append(jax.device_put(candidates[turn % len(candidates)],
                                     device))
    return jax.make_array_from_single_device_arrays(shape, dest, arrays)


def in_host_memory(x: jax.Array, target: NamedSharding) -> bool:
    """Whether `x` and `target` live in this process's host memory: CPU
    devices only, all addressable here, default memory kinds (where
    `transfer_in_host_memory` applies)."""
    source = x.sharding
    devices = (*source.device_set, *target.device_set)
    return (all(d.platform == "cpu" for d in devices)
            and not jax.dtypes.issubdtype(x.dtype, jax.dtypes.extended)
            and source.is_fully_addressable and target.is_fully_addressable
            and _default_memory(source) and _default_memory(target))


def _default_memory(sharding: Any) -> bool:
    kind = getattr(sharding, "memory_kind", None)
    return kind is None or kind == "device"


def transfer_in_host_memory(x: jax.Array, target: NamedSharding
                            ) -> jax.Array:
    """`x` laid out as `target` when both are on CPU devices (whose memory
    is the host's, `in_host_memory`): each distinct piece of the target
    layout is cut once from the source shards, read in place, into a new
    buffer (one memory copy of its bytes), and the target devices that
    hold that piece share it, as `jax.device_put` shares a host array
    between CPU devices. No program is compiled and no buffer of `x` is
    shared with the result (a later donation of `x` stays a donation).
    Waits for `x` to be ready; `transfer` dispatches asynchronously."""
    if x.is_deleted():
        raise TransferError(f"cannot transfer a deleted (donated?) array "
                            f"{x.dtype.name}{list(x.shape)}")
    shape = tuple(x.shape)
    sources: dict[tuple, np.ndarray] = {}
    for shard in x.addressable_shards:
        key = _index_key(shard.index, shape)
        if key not in sources:
            sources[key] = np.asarray(shard.data)
    pieces: dict[tuple, np.ndarray] = {}
    placed, devices = [], []
    for device, index in target.addressable_devices_indices_map(
            shape).items():
        key = _index_key(index, shape)
        piece = pieces.get(key)
        if piece is None:
            piece = pieces[key] = _cut(sources, key, x.dtype)
        placed.append(piece)
        devices.append(device)
    arrays = jax.device_put(placed, devices)  # one batch
    return jax.make_array_from_single_device_arrays(shape, target, arrays)


def _cut(sources: dict[tuple, np.ndarray], key: tuple, dtype: Any
         ) -> np.ndarray:
    """The block `key` (a (start, stop, step) per dimension) of the array
    whose shards are `sources`, copied into a new array."""
    out = _aligned_empty(tuple(stop - start for start, stop, _ in key), dtype)
    for source_key, data in sources.items():
        into, take = [], []
        for (start, stop, _), (s_start, s_stop, _) in zip(key, source_key):
            low, high = max(start, s_start), min(stop, s_stop)
            if low >= high:
                break
            into.append(slice(low - start, high - start))
            take.append(slice(low - s_start, high - s_start))
        else:
            out[tuple(into)] = data[tuple(take)]
    return out


def _aligned_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialized array whose data starts on a 64-byte boundary: the
    CPU client then holds it as a device buffer without copying it (a
    buffer NumPy allocates starts 16 bytes into a page, and is copied)."""
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = np.empty(size + _ALIGNMENT, np.uint8)
    offset = -raw.ctypes.data % _ALIGNMENT
    return raw[offset:offset + size].view(dtype).reshape(shape)


_ALIGNMENT = 64


@functools.lru_cache(maxsize=1024)
def _reshard(target: NamedSharding) -> Any:
    """A jitted identity whose output has `target` (runs on the input's devices
    when they are the target's; XLA inserts the collectives/slices)."""

    def identity(a: jax.Array) -> jax.Array:
        return a

    return jax.jit(identity, out_shardings=target)
