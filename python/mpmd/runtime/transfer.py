"""Moving jax.Arrays between meshes without a host round trip.

`jax.device_put(x, sharding)` copies device to device only when the source
and target shardings lay the data out the same way (same HLO sharding, same
number of devices); any other reshard reads the whole array back to the host
(`x._value`) and uploads it again. `transfer` avoids that: the layout change
runs as an XLA program on one side (a cached jitted identity), and the move
between device sets is always a same-layout `device_put`.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError

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
    try:
        sharding.shard_shape(x.shape)
    except ValueError as e:
        raise TransferError(f"cannot lay out {x.dtype.name}{list(x.shape)} as {sharding}: {e}") from None

    if _same_layout(src, sharding, ndim):
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

    # Different device counts: gather on the source side (one copy per source
    # device), copy the full array to every target device, then slice there.
    replicated_src = NamedSharding(_mesh_of(src, src_devices), PartitionSpec())
    gathered = x if src.is_fully_replicated else _reshard(replicated_src)(x)
    replicated_dst = NamedSharding(dst_mesh, PartitionSpec(), memory_kind=sharding.memory_kind)
    moved = jax.device_put(gathered, replicated_dst)
    if sharding == replicated_dst:
        return moved
    return _reshard(sharding)(moved)


def _same_layout(a: Any, b: NamedSharding, ndim: int) -> bool:
    """True when `device_put` from `a` to `b` copies shards one to one."""
    if len(a.device_set) != len(b.device_set):
        return False
    try:
        return a._to_xla_hlo_sharding(ndim) == b._to_xla_hlo_sharding(ndim)
    except Exception:  # noqa: BLE001 - shardings without an HLO form
        return False


def _mesh_of(sharding: Any, devices: tuple[Any, ...]) -> Mesh:
    mesh = getattr(sharding, "mesh", None)
    if isinstance(mesh, Mesh):
        return mesh
    return Mesh(np.array(devices, dtype=object), ("_mpmd_src",))


@functools.lru_cache(maxsize=1024)
def _reshard(target: NamedSharding) -> Any:
    """A jitted identity whose output has `target` (runs on the input's devices
    when they are the target's; XLA inserts the collectives/slices)."""

    def identity(a: jax.Array) -> jax.Array:
        return a

    return jax.jit(identity, out_shardings=target)
