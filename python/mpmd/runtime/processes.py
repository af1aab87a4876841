"""Running a plan as one process of a multi-controller JAX job.

Every process runs the same script and the same plan (`agree_on_plan`
checks it through JAX's coordination service). A process executes the calls
of the meshes it holds devices for and skips the others; a transfer between
meshes whose devices are not all its own runs as a compiled program over the
union of the two meshes (`cross_process_transfer`), in which every process
holding a device of either mesh takes part.

Why a program and not `jax.device_put`: on CPU (jaxlib 0.10.2) the backend
has no cross-host transfer server, so `device_put` to another process's
devices raises "does not support cross-host device transfers"; a
collective-permute works over gloo on CPU (GPUs would run it over NCCL: not
checked here, no GPU).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import os
import sys
import threading
from typing import Any, Iterable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime.transfer import (_coarsen, _index_key, _reshard,
                                   _same_layout as same_layout,
                                   _staging_mesh)

__all__ = ["ProcessError", "agree_on_plan", "cross_process_transfer",
           "empty_array", "fully_addressable", "holds", "is_multiprocess",
           "plan_fingerprint", "report_failure", "watch_failures",
           "all_gather_text", "barrier"]


class ProcessError(MpmdError):
    """The processes of a multi-controller job disagree or one failed."""


def is_multiprocess() -> bool:
    return jax.process_count() > 1


def holds(mesh: Mesh) -> bool:
    """True when this process holds at least one device of `mesh`."""
    me = jax.process_index()
    return any(d.process_index == me for d in mesh.devices.flat)


def fully_addressable(devices: Iterable[Any]) -> bool:
    me = jax.process_index()
    return all(d.process_index == me for d in devices)


def empty_array(shape: tuple[int, ...], dtype: Any,
                sharding: NamedSharding) -> jax.Array:
    """A global array of which this process holds no shard (its mesh is
    another process's)."""
    return jax.make_array_from_single_device_arrays(
        tuple(shape), sharding, [], dtype=np.dtype(dtype))


# --- Transfers across processes --------------------------------------------

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
    process, `runtime/transfer.py`): the source reshards to L, each target
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
        if not _same_layout(x.sharding, staging, len(shape)):
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


def _same_layout(a: Any, b: NamedSharding, ndim: int) -> bool:
    """The same pieces on the same devices, in the same order."""
    return (tuple(a._device_assignment) == tuple(b._device_assignment)
            and same_layout(a, b, ndim))


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


# --- Agreement between processes -------------------------------------------

_compiles = itertools.count()
# How long a compile waits for the other processes to reach it.
AGREE_TIMEOUT_S = 300.0
_barriers = itertools.count()


def plan_fingerprint(module_text: str, meshes: dict[str, Mesh]) -> str:
    """What every process must have compiled the same: the partitioned
    module (programs, steps) and the devices of each mesh."""
    digest = hashlib.sha256(module_text.encode())
    for name in sorted(meshes):
        mesh = meshes[name]
        digest.update(f"{name}:{mesh.axis_names}:{mesh.devices.shape}:"
                      f"{[d.id for d in mesh.devices.flat]};".encode())
    return digest.hexdigest()[:16]


def _client() -> Any:
    from jax._src import distributed  # noqa: PLC0415 - JAX's own client

    client = distributed.global_state.client
    if client is None:
        raise ProcessError(
            f"this is process {jax.process_index()} of "
            f"{jax.process_count()}, but jax.distributed is not initialized;"
            " call jax.distributed.initialize (or "
            "mpmd.distributed.initialize) first")
    return client


def barrier(name: str, timeout_s: float = 300.0) -> None:
    """Waits until every process gets here (no-op in one process)."""
    if is_multiprocess():
        _client().wait_at_barrier(f"mpmd/{name}/{next(_barriers)}",
                                  int(timeout_s * 1000))


def all_gather_text(name: str, text: str,
                    timeout_s: float = 300.0) -> list[str]:
    """Every process's `text`, in process order, on every process."""
    if not is_multiprocess():
        return [text]
    client = _client()
    key = f"mpmd/{name}/{next(_barriers)}"
    client.key_value_set(f"{key}/{jax.process_index()}", text)
    return [client.blocking_key_value_get(f"{key}/{other}",
                                          int(timeout_s * 1000))
            for other in range(jax.process_count())]


def agree_on_plan(fingerprint: str, what: str,
                  timeout_s: float | None = None) -> None:
    """Checks through the coordination service that every process compiled
    the same plan (the n-th compile of each process is compared). Raises
    `ProcessError` on every process on a mismatch, or when a process does
    not get there within `timeout_s`."""
    if not is_multiprocess():
        return
    client = _client()
    watch_failures()
    timeout_s = AGREE_TIMEOUT_S if timeout_s is None else timeout_s
    count = next(_compiles)
    me, n = jax.process_index(), jax.process_count()
    client.key_value_set(f"mpmd/plan/{count}/{me}", fingerprint)
    seen = {}
    for other in range(n):
        if other == me:
            seen[other] = fingerprint
            continue
        try:
            seen[other] = client.blocking_key_value_get(
                f"mpmd/plan/{count}/{other}", int(timeout_s * 1000))
        except Exception as error:  # noqa: BLE001 - XLA status errors
            raise ProcessError(
                f"process {other} has not compiled {what} (compile #{count}"
                f" of this process) within {timeout_s:g} s: every process "
                f"must run the same script and compile the same functions in"
                f" the same order ({type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else ''})") \
                from None
    if len(set(seen.values())) > 1:
        listing = ", ".join(f"process {p}: {f}" for p, f in sorted(seen.items()))
        raise ProcessError(
            f"the processes compiled different plans for {what} ({listing}):"
            " every process must run the same script with the same "
            "configuration, topology (device order) and argument shapes")


# --- Failures ----------------------------------------------------------------
#
# A step that fails on one process leaves the others waiting in a transfer
# for data that will never come (gloo notices only a closed connection, and
# the failed process is still alive, unwinding). So the failed process
# publishes its error through the coordination service, and every process
# watches for one: a process that sees another's failure prints it and
# exits, as JAX itself stops every process when one stops sending
# heartbeats.

_FAILURE_KEY = "mpmd/failure"
_watcher: threading.Thread | None = None
_stopping = threading.Event()


def report_failure(message: str) -> None:
    """Tells every process of the job that this one failed (the first
    report wins)."""
    if not is_multiprocess():
        return
    try:
        _client().key_value_set(
            _FAILURE_KEY, f"process {jax.process_index()}: {message}")
    except Exception:  # noqa: BLE001 - already reported, or no service
        pass


def watch_failures(poll_s: float = 0.5) -> None:
    """Starts (once) the thread that stops this process when another one
    reports a failure."""
    global _watcher
    if _watcher is not None or not is_multiprocess():
        return
    client = _client()
    me = jax.process_index()

    def watch() -> None:
        while not _stopping.wait(poll_s):
            try:
                failure = client.key_value_try_get(_FAILURE_KEY)
            except Exception:  # noqa: BLE001 - not set yet (NOT_FOUND)
                continue
            if failure.startswith(f"process {me}:"):
                return  # ours: this process raises it itself
            sys.stderr.write(
                f"mpmd: stopping process {me} because {failure}\n")
            sys.stderr.flush()
            os._exit(1)

    _watcher = threading.Thread(target=watch, name="mpmd-failure-watch",
                                daemon=True)
    _watcher.start()
    # Stopped before JAX's own exit handler shuts the client down.
    atexit.register(_stopping.set)
