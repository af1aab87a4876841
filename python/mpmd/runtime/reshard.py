"""`mpmd.reshard`: a pytree of arrays moved to new shardings on other meshes.

What a weight sync between roles needs (training meshes to a generation
mesh with another layout): each leaf goes device to device through the
runtime's transfers, never through a gathered host copy. In one process
that is `transfer` (an on-device reshard where the layout changes, then
copies between the device sets) on accelerators, and on CPU devices,
whose memory is the host's, `transfer_in_host_memory` (each target piece
cut once from the source shards in place: one memory copy of its bytes,
no program to compile); a leaf whose layout stays the same is copied
shard for shard (`Mover`); across processes, each process sends and
receives its own shards over JAX's collectives (`cross_process_transfer`),
so every process of the job calls `reshard` with the same tree, as it
calls a jitted function.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding

from mpmd.errors import MpmdError
from mpmd.runtime import processes
from mpmd.runtime.remote import cross_process_transfer
from mpmd.runtime.transfers import (Mover, TransferError, in_host_memory,
                                    transfer, transfer_in_host_memory)

__all__ = ["ReshardError", "reshard"]


class ReshardError(MpmdError):
    """A tree cannot be moved to the shardings given (their structure, a
    sharding that is not a NamedSharding, devices outside the job, a layout
    that does not fit a leaf's shape)."""


def reshard(tree: Any, shardings: Any) -> Any:
    """`tree` with each leaf laid out as its sharding: `shardings` is one
    NamedSharding for every leaf, or a pytree of them shaped like `tree`
    (or a prefix of it: a sharding covers a whole subtree). Arrays move
    device to device (committed `jax.Array`s; host data is placed with
    `jax.device_put`), dispatched asynchronously; the sources stay valid.

    With several processes every process calls it with the same tree
    structure: processes holding a leaf's source shards send them, those
    holding target devices receive theirs; a process holding no target
    device of a leaf gets an array without local shards.

    Raises ReshardError naming the leaf (its pytree path) when the
    shardings do not match the tree, a sharding is not a NamedSharding,
    names devices the job does not have, or does not fit the leaf."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    targets = _targets(tree, shardings, leaves)
    known = {device.id for device in jax.devices()}
    moved = []
    for (path, leaf), target in zip(leaves, targets):
        where = jax.tree_util.keystr(path) or "the tree"
        missing = sorted(d.id for d in target.device_set if d.id not in known)
        if missing:
            raise ReshardError(
                f"leaf {where}: its sharding's mesh has devices {missing}, "
                "which are not devices of this job (jax.devices()); reshard "
                "to a mesh of the job's devices")
        try:
            moved.append(_move(leaf, target))
        except (TransferError, ValueError, TypeError) as error:
            raise ReshardError(f"leaf {where}: {error}") from None
    return jax.tree_util.tree_unflatten(treedef, moved)


def _targets(tree: Any, shardings: Any,
             leaves: list[tuple[Any, Any]]) -> list[NamedSharding]:
    """One NamedSharding per leaf of `tree`."""
    if isinstance(shardings, NamedSharding):
        return [shardings] * len(leaves)
    try:
        expanded = jax.tree_util.tree_map(
            lambda s, sub: [s] * len(jax.tree_util.tree_leaves(sub)),
            shardings, tree,
            is_leaf=lambda x: isinstance(x, NamedSharding) or x is None)
    except (ValueError, TypeError) as error:
        raise ReshardError(
            "the shardings do not match the tree: give one NamedSharding, "
            "or a pytree of them shaped like the tree (a prefix of it); "
            f"{error}") from None
    flat = [s for group in jax.tree_util.tree_leaves(
        expanded, is_leaf=lambda x: isinstance(x, list)) for s in group]
    if len(flat) != len(leaves):
        raise ReshardError(
            f"the shardings cover {len(flat)} leaves but the tree has "
            f"{len(leaves)}; give a sharding for every leaf")
    for (path, _), sharding in zip(leaves, flat):
        if not isinstance(sharding, NamedSharding):
            raise ReshardError(
                f"leaf {jax.tree_util.keystr(path) or 'the tree'}: its "
                f"sharding is {sharding!r}, not a jax.sharding.NamedSharding")
    return flat


def _move(leaf: Any, target: NamedSharding) -> jax.Array:
    if not isinstance(leaf, jax.Array):
        return jax.device_put(np.asarray(leaf), target)
    source = leaf.sharding
    devices = (*source.device_set, *target.device_set)
    if not processes.is_multiprocess() or processes.fully_addressable(devices):
        if leaf.sharding == target and getattr(leaf, "_committed", True):
            return leaf
        mover = Mover(target)
        if mover.copies_shards(leaf):  # shard for shard, device to device
            return mover(leaf)
        if in_host_memory(leaf, target):
            target.shard_shape(leaf.shape)  # a ValueError when it cannot
            return transfer_in_host_memory(leaf, target)
        return transfer(leaf, target)
    me = jax.process_index()
    if not any(d.process_index == me for d in devices):
        return processes.empty_array(leaf.shape, leaf.dtype, target)
    result = cross_process_transfer(
        leaf if leaf.addressable_shards else None, source, target,
        leaf.shape, leaf.dtype)
    return (result if result is not None
            else processes.empty_array(leaf.shape, leaf.dtype, target))
