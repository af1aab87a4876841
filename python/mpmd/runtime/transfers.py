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

__all__ = ["TransferError", "transfer"]


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


@functools.lru_cache(maxsize=1024)
def _reshard(target: NamedSharding) -> Any:
    """A jitted identity whose output has `target` (runs on the input's devices
    when they are the target's; XLA inserts the collectives/slices)."""

    def identity(a: jax.Array) -> jax.Array:
        return a

    return jax.jit(identity, out_shardings=target)
