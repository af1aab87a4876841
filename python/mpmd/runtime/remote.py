"""Transfers between meshes whose devices are not all this process's.

    moved = cross_process_transfer(x if holds(source_mesh) else None,
                                   source, target, shape, dtype)
    # every process holding a device of either mesh calls it, in plan
    # order; it returns the array where this process holds target devices

A transfer whose two meshes lie on different processes runs as one compiled
program over the union of the two meshes, in which every process holding a
device of either mesh takes part: the source side lays the data out as the
target will hold it, then a collective-permute sends each piece from its
source device to its target device (no gather, no host copy). Transfers
within a process keep the single-process path (`runtime/transfers.py`),
whose layout helpers this module shares.

Why a program and not `jax.device_put`: on CPU (jaxlib 0.10.2) the backend
has no cross-host transfer server, so `device_put` to another process's
devices raises "does not support cross-host device transfers"; a
collective-permute works over gloo on CPU (GPUs would run it over NCCL: not
checked here, no GPU).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.runtime.processes import ProcessError
from mpmd.runtime.placement import equivalent
from mpmd.runtime.transfers import (_coarsen, _index_key, _reshard,
                                   _staging_mesh)

__all__ = ["cross_process_transfer"]

_SIDE = "_mpmd_side"


def cross_process_transfer(x: jax.Array | None, source: NamedSharding,
                           target: NamedSharding, shape: tuple[int, ...],
                           dtype: Any) -> jax.Array | None:
    """Moves a global array laid out as `source` to `target`, where the two
    meshes' devices are not all this process's.

    Call it on every process that holds a device of either mesh, in the same
    order (the plan's order): `x` is the array on processes holding source
    devices, None elsewhere. Returns the moved array on processes holding
    target devices, None elsewhere.

    The data is first laid out on the source devices as the target mesh will
    hold it (an on-device reshard, only when it differs); then one program
    over both meshes, with a leading axis telling source from target,
    permutes each piece from the i-th source device to the i-th target
    device (a collective-permute: one copy per piece, no gather).
    """
    src_devices = tuple(source._device_assignment)
    dst_mesh = target.mesh
    shape = tuple(shape)
    if set(src_devices) & set(dst_mesh.devices.flat):
        raise ProcessError(
            "not supported yet: a transfer across processes between meshes "
            "that share devices")
    if len(src_devices) != dst_mesh.size:
        return _transfer_by_pieces(x, src_devices, target, shape, dtype)
    staging = NamedSharding(
        Mesh(np.array(src_devices, dtype=object).reshape(
            dst_mesh.devices.shape), dst_mesh.axis_names,
            axis_types=dst_mesh.axis_types), target.spec)
    union = NamedSharding(
        Mesh(np.stack([staging.mesh.devices, dst_mesh.devices]),
             (_SIDE, *dst_mesh.axis_names)), target.spec)
    return _exchange(x, staging, target, shape, dtype, union, shape,
                     _bridge(union))


def _transfer_by_pieces(x: jax.Array | None, src_devices: tuple[Any, ...],
                        target: NamedSharding, shape: tuple[int, ...],
                        dtype: Any) -> jax.Array | None:
    """`cross_process_transfer` between meshes of different sizes.

    The pieces that cross are those of L, the target layout made coarse
    enough for the source devices to hold one piece each (as within a
    process, `runtime/transfers.py`): the source reshards to L, each target
    device receives the L piece it needs from one source device holding it,
    and the target slices L down to its own layout. A source device may
    feed several target devices, so the copies run as rounds of
    collective-permutes, each source sending at most once per round, in one
    program over the devices of both meshes, whose operand is the pieces
    laid end to end along the first dimension.
    """
    if not shape:
        # A scalar crosses as one element.
        flat = None if x is None else _reshaped(
            NamedSharding(x.sharding.mesh, PartitionSpec()), (1,))(x)
        landed = NamedSharding(target.mesh, PartitionSpec())
        moved = _transfer_by_pieces(flat, src_devices, landed, (1,), dtype)
        return None if moved is None else _reshaped(target, ())(moved)
    dst_mesh = target.mesh
    sizes = dict(dst_mesh.shape)
    spec = _coarsen(target.spec, sizes, len(src_devices), len(shape))
    staging = NamedSharding(_staging_mesh(src_devices, spec, sizes), spec)
    landed = NamedSharding(dst_mesh, spec)
    holders: dict[tuple, list[Any]] = {}
    for device, index in staging.devices_indices_map(shape).items():
        holders.setdefault(_index_key(index, shape), []).append(device)
    union = (*src_devices, *dst_mesh.devices.flat)
    position = {device: i for i, device in enumerate(union)}
    used: dict[tuple, int] = {}
    rounds: list[list[tuple[int, int]]] = []
    for device, index in landed.devices_indices_map(shape).items():
        key = _index_key(index, shape)
        turn = used.get(key, 0)
        used[key] = turn + 1
        sender = holders[key][turn % len(holders[key])]
        pair = (position[sender], position[device])
        for permutation in rounds:
            if all(p[0] != pair[0] for p in permutation):
                permutation.append(pair)
                break
        else:
            rounds.append([pair])
    piece = staging.shard_shape(shape)
    joined = NamedSharding(Mesh(np.array(union), (_SIDE,)),
                           PartitionSpec(_SIDE))
    joined_shape = (piece[0] * len(union), *piece[1:])
    result = _exchange(x, staging, landed, shape, dtype, joined,
                       joined_shape,
                       _rounds(joined, tuple(tuple(r) for r in rounds)))
    if result is None or landed == target:
        return result
    return _reshard(target)(result)


def _exchange(x: jax.Array | None, staging: NamedSharding,
              landed: NamedSharding, shape: tuple[int, ...], dtype: Any,
              joined: NamedSharding, joined_shape: tuple[int, ...],
              program: Any) -> jax.Array | None:
    """Runs `program` (over the source and target devices, as `joined`) on
    this process's pieces: `x` laid out as `staging` on the source devices,
    zeros of `landed`'s pieces on the target devices (the program is SPMD,
    so every device passes a piece of the same shape). Returns the target
    devices' pieces as an array laid out as `landed`, or None where this
    process holds no target device."""
    me = jax.process_index()
    pieces: dict[Any, jax.Array] = {}
    if x is not None and any(d.process_index == me
                             for d in staging.device_set):
        if not equivalent(x.sharding, staging, len(shape)):
            x = _reshard(staging)(x)
        pieces.update((s.device, s.data) for s in x.addressable_shards)
    holds_target = any(d.process_index == me for d in landed.device_set)
    if holds_target:
        pieces.update((s.device, s.data) for s in
                      _zeros(landed, shape, np.dtype(dtype).str)()
                      .addressable_shards)
    operand = jax.make_array_from_single_device_arrays(
        joined_shape, joined,
        [pieces[d] for d in joined.addressable_devices_indices_map(joined_shape)])
    moved = program(operand)
    if not holds_target:
        return None
    by_device = {s.device: s.data for s in moved.addressable_shards}
    return jax.make_array_from_single_device_arrays(
        shape, landed,
        [by_device[d] for d in landed.addressable_devices_indices_map(shape)])


@functools.lru_cache(maxsize=256)
def _rounds(joined: NamedSharding, rounds: tuple[tuple[tuple[int, int], ...], ...]
            ) -> Any:
    def permute(piece: jax.Array) -> jax.Array:
        out = None
        for permutation in rounds:
            moved = jax.lax.ppermute(piece, _SIDE, list(permutation))
            # Every target device receives in exactly one round (zeros in
            # the others).
            out = moved if out is None else (
                out | moved if out.dtype == np.bool_ else out + moved)
        return out

    return jax.jit(jax.shard_map(permute, mesh=joined.mesh,
                                 in_specs=joined.spec, out_specs=joined.spec,
                                 check_vma=False))


@functools.lru_cache(maxsize=256)
def _reshaped(target: NamedSharding, shape: tuple[int, ...]) -> Any:
    return jax.jit(lambda a: a.reshape(shape), out_shardings=target)


@functools.lru_cache(maxsize=256)
def _zeros(target: NamedSharding, shape: tuple[int, ...], dtype: str) -> Any:
    return jax.jit(lambda: jnp.zeros(shape, np.dtype(dtype)),
                   out_shardings=target)


@functools.lru_cache(maxsize=256)
def _bridge(union: NamedSharding) -> Any:
    def permute(piece: jax.Array) -> jax.Array:
        return jax.lax.ppermute(piece, _SIDE, [(0, 1)])

    spec = union.spec
    return jax.jit(jax.shard_map(permute, mesh=union.mesh, in_specs=spec,
                                 out_specs=spec, check_vma=False))
