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
import json
import os
import sys
import threading
import time
from typing import Any, Iterable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.launch import FAILURE_FILE
from mpmd.runtime.transfer import (_coarsen, _index_key, _reshard,
                                   _same_layout as same_layout,
                                   _staging_mesh)

__all__ = ["FetchError", "ProcessError", "add_fetch_note", "agree_on_plan",
           "all_gather_text", "barrier", "cross_process_transfer",
           "empty_array", "fetch", "fully_addressable", "holds",
           "install_failure_handling", "is_multiprocess", "plan_fingerprint",
           "report_failure", "watch_failures"]


class ProcessError(MpmdError):
    """The processes of a multi-controller job disagree or one failed."""


class ProcessLostError(ProcessError):
    """Another process of the job stopped (killed, or ended) while this one
    waited on it in a transfer across processes. `processes`: the ids of
    the processes the transfer waited on; `meshes`: the meshes of the
    transfer they held; `step`: the plan step; `transfer`: the transfer
    ("m2 -> m1 of float32[4x8]@m1"). Raised, from JAX's error, where mpmd
    meets it: a step's call, `mpmd.fetch`, and (for an uncaught error of a
    plain read) the failure report."""

    def __init__(self, message: str, processes: tuple[int, ...],
                 meshes: tuple[str, ...], step: int, transfer: str) -> None:
        super().__init__(message)
        self.processes = processes
        self.meshes = meshes
        self.step = step
        self.transfer = transfer


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
    install_failure_handling()
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
                f" the same order ({_headline(error)})") from None
    if len(set(seen.values())) > 1:
        listing = ", ".join(f"process {p}: {f}" for p, f in sorted(seen.items()))
        raise ProcessError(
            f"the processes compiled different plans for {what} ({listing}):"
            " every process must run the same script with the same "
            "configuration, topology (device order) and argument shapes")


# --- Failures ----------------------------------------------------------------
#
# A process that fails leaves the others waiting: in a transfer for data
# that will never come (gloo notices only a closed connection), or at exit,
# where JAX's `distributed.shutdown` waits for every process. So:
#
# - an uncaught exception (`sys.excepthook`) prints its traceback, publishes
#   "process i: Kind: message" under one key of JAX's coordination service
#   (the first report wins) and ends the process with `os._exit(1)`: no exit
#   handlers, so no wait in JAX's shutdown;
# - every process runs a thread that polls that key and, when another
#   process's report appears, prints it and ends its own process;
# - a process that reaches the end of its script waits at exit until every
#   process has got there (or a report appears) before JAX shuts down.
#
# Process 0 hosts the coordination service: when it stops, the others lose
# the service and JAX ends them with its own message. So process 0, before
# it ends, waits (at most `STOP_WAIT_S`) until every other process has said
# it is stopping too, so that they end with the report instead.

_FAILURE_KEY = "mpmd/failure"
_STOPPED_DIR = "mpmd/stopped/"  # + process id: ending because of a failure
_DONE_DIR = "mpmd/done/"        # + process id: reached the end of its script
# How long process 0 waits for the others to see a failure before it ends.
STOP_WAIT_S = 10.0
# How long a process that finished waits at exit for the others to finish.
EXIT_WAIT_S = 300.0
_POLL_S = 0.5
_watcher: threading.Thread | None = None
_stopping = threading.Event()
_install_lock = threading.Lock()
_stop_lock = threading.Lock()
_previous_hook: Any = None
FETCH_NOTE = (
    "mpmd: this array's devices are not all this process's (in a job of "
    "several processes, a result on another process's mesh has no data "
    "here). To read small results such as a loss on every process, call "
    "mpmd.fetch(x) on every process, in the same order: it returns numpy "
    "arrays.")
FETCH_HINT = "mpmd: read it on every process with mpmd.fetch(x)"


def _job() -> tuple[Any, int, int] | None:
    """(client, this process's id, process count) in a job of several
    processes, else None. Reads JAX's distributed state only: it does not
    start the backend."""
    from jax._src import distributed  # noqa: PLC0415 - JAX's own state

    state = distributed.global_state
    if state.client is None or (state.num_processes or 1) < 2:
        return None
    return state.client, int(state.process_id), int(state.num_processes)


# The latest transfer across processes this process issued: (plan step,
# source mesh, target mesh, type, {peer process: its meshes of the two}).
# A transfer whose peer is gone fails in JAX's collectives with a bare
# "Connection closed by peer", met wherever the result is read; this says
# which process and which step it was.
_last_remote: tuple[int, str, str, str, dict[int, list[str]]] | None = None
_LOST_PEER = ("Connection closed by peer", "Connection reset by peer")
# The processes found gone: nobody waits for them to say they stop.
_lost: set[int] = set()


def note_remote_transfer(step: int, source: str, target: str, what: str,
                         peers: dict[int, list[str]]) -> None:
    """Called by the executor before each transfer across processes."""
    global _last_remote
    _last_remote = (step, source, target, what, peers)


def lost_peer_error(error: BaseException) -> ProcessLostError | None:
    """`error` (or what caused it) as the ProcessLostError it means, when
    it is JAX's error for a transfer whose peer went away (or already one):
    which process went away, the meshes it holds, and the transfer (plan
    step) that was waiting on it; else None. Raise it `from error`."""
    link, seen = error, set()
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, ProcessLostError):
            return link
        if any(mark in str(link) for mark in _LOST_PEER):
            break
        link = link.__cause__ or link.__context__
    if link is None or _last_remote is None:
        return None
    step, source, target, what, peers = _last_remote
    gone = ", ".join(f"process {p} (holding mesh "
                     f"{' and '.join(repr(m) for m in meshes)})"
                     for p, meshes in sorted(peers.items()))
    transfer = f"{source} -> {target} of {what}"
    _lost.update(peers)
    return ProcessLostError(
        f"a transfer across processes lost its peer: {gone} stopped "
        f"(killed, or ended) while step {step} of the plan, the transfer "
        f"{transfer}, was waiting on it",
        tuple(sorted(peers)),
        tuple(dict.fromkeys(m for _, meshes in sorted(peers.items())
                            for m in meshes)),
        step, transfer)


def report_failure(message: str) -> bool:
    """Tells every process of the job that this one failed. The first
    report wins: returns whether this one was stored."""
    job = _job()
    if job is None:
        return False
    client, me, _ = job
    if _reported(client) is not None:
        return False
    # For `python -m mpmd.launch`, which names the process that failed
    # first: written before the report, which may end the others at once.
    path = os.environ.get(FAILURE_FILE)
    if path:
        try:
            with open(path, "w", encoding="utf-8") as file:
                lines = message.strip().splitlines()
                file.write((lines[0] if lines else "")[:2000] + "\n")
        except OSError:
            path = None
    try:
        client.key_value_set(_FAILURE_KEY, f"process {me}: {message}")
        return True
    except Exception:  # noqa: BLE001 - another's came first, or no service
        if path:
            try:
                os.remove(path)
            except OSError:
                pass
        return False


def _reported(client: Any) -> str | None:
    try:
        return client.key_value_try_get(_FAILURE_KEY)
    except Exception:  # noqa: BLE001 - not set yet (NOT_FOUND), no service
        return None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed or replaced streams
            pass


def _end(client: Any, me: int, count: int, code: int = 1) -> None:
    """Ends this process after a failure (this one's or another's): says
    so through the service and, on process 0, which hosts the service,
    first waits for the others to say so too."""
    _flush()
    try:
        client.key_value_set(f"{_STOPPED_DIR}{me}", "1")
    except Exception:  # noqa: BLE001 - the service is gone
        pass
    if me == 0:
        deadline = time.monotonic() + STOP_WAIT_S
        alive = count - len(_lost - {me})
        while time.monotonic() < deadline:
            try:
                if len(client.key_value_dir_get(_STOPPED_DIR)) >= alive:
                    break
            except Exception:  # noqa: BLE001 - the service is gone
                break
            time.sleep(0.05)
    _flush()
    os._exit(code)


def _stop_for(client: Any, me: int, count: int, failure: str,
              own: str | None = None) -> None:
    """Ends this process because another one failed (`failure`: the
    report, "process i: Kind: message")."""
    if not _stop_lock.acquire(blocking=False):
        # Another thread of this process is already ending it.
        while True:
            time.sleep(60)
    text = f"mpmd: stopping process {me} because {failure}\n"
    if own:
        text += f"mpmd: (process {me} raised too: {own})\n"
    try:
        sys.stderr.write(text)
    except Exception:  # noqa: BLE001 - stderr closed
        pass
    _end(client, me, count)


def _frame_of_user(tb: Any) -> str:
    """Where the failing line is: the innermost frame outside JAX and
    mpmd (the user's line), else the innermost."""
    import traceback  # noqa: PLC0415

    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    library = (os.sep + "jax" + os.sep, os.sep + "jaxlib" + os.sep,
               os.sep + "mpmd" + os.sep)
    chosen = next((f for f in reversed(frames)
                   if not any(part in f.filename for part in library)),
                  frames[-1])
    return f" (at {os.path.basename(chosen.filename)}:{chosen.lineno})"


def _headline(error: BaseException) -> str:
    """`Kind: the first line of its message`."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def _summary(error: BaseException, tb: Any) -> str:
    """One line for the other processes: kind, first line, the user's
    line, and the notes."""
    text = _headline(error)
    if len(text) > 600:
        text = text[:600] + " ..."
    text += _frame_of_user(tb)
    for note in getattr(error, "__notes__", ()) or ():
        note = FETCH_HINT if note == FETCH_NOTE else str(note).strip()
        text += f" [{note}]"
    return text


def add_fetch_note(error: BaseException) -> None:
    """Adds `FETCH_NOTE` to JAX's "spans non-addressable devices" error
    (met by `float(x)`, `np.asarray(x)`, `print(x)` of an array whose data
    is not all this process's), or to an error it caused."""
    seen = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if "Fetching value for `jax.Array` that spans non-addressable" in \
                str(link):
            notes = getattr(error, "__notes__", ()) or ()
            if FETCH_NOTE not in notes:
                error.add_note(FETCH_NOTE)
            return
        link = link.__cause__ or link.__context__


def _excepthook(kind: type, error: BaseException, tb: Any) -> None:
    try:
        add_fetch_note(error)
    except Exception:  # noqa: BLE001 - a note is a nicety
        pass
    job = _job()
    previous = _previous_hook or sys.__excepthook__
    if job is None:
        previous(kind, error, tb)
        return
    client, me, count = job
    summary = _summary(error, tb)
    lost_error = lost_peer_error(error)
    lost = None if lost_error is None else str(lost_error)
    if lost_error is not None and lost_error.__cause__ is None and \
            lost_error is not error:
        # JAX's error met outside mpmd's code (a plain read of an array):
        # shown as the mpmd error it means, raised from it.
        summary = f"ProcessLostError: {lost} [{summary}]"
        lost_error.__cause__ = error
        kind, error = type(lost_error), lost_error
    if not report_failure(summary):
        failure = _reported(client)
        if failure is not None and not failure.startswith(f"process {me}:"):
            # Another process failed first; this one's error (a transfer
            # whose peer went away, ...) most likely follows from it.
            _stop_for(client, me, count, failure, own=summary)
    previous(kind, error, tb)
    try:
        if lost is not None:
            sys.stderr.write(f"mpmd: process {me} of {count}: {lost}\n")
        sys.stderr.write(
            f"mpmd: process {me} of {count} failed ({type(error).__name__});"
            " the other processes are told to stop\n")
    except Exception:  # noqa: BLE001 - stderr closed
        pass
    _stop_lock.acquire(blocking=False)
    _end(client, me, count)


def _at_exit() -> None:
    """Before JAX's shutdown: waits until every process has finished its
    script, or ends this one if another reports a failure meanwhile."""
    job = _job()
    if job is None or _stopping.is_set():
        _stop_watching()
        return
    client, me, count = job
    try:
        client.key_value_set(f"{_DONE_DIR}{me}", "1")
    except Exception:  # noqa: BLE001 - the service is gone
        _stop_watching()
        return
    deadline = time.monotonic() + EXIT_WAIT_S
    while True:
        failure = _reported(client)
        if failure is not None:
            if failure.startswith(f"process {me}:"):
                # This process reported a failure and then went on (the
                # error was caught): the others are stopping.
                _stop_lock.acquire(blocking=False)
                _end(client, me, count)
            _stop_for(client, me, count, failure)
        try:
            done = {key.rsplit("/", 1)[-1]
                    for key, _ in client.key_value_dir_get(_DONE_DIR)}
        except Exception:  # noqa: BLE001 - the service is gone
            break
        if len(done) >= count:
            break
        if time.monotonic() > deadline:
            missing = [p for p in range(count) if str(p) not in done]
            sys.stderr.write(
                f"mpmd: process {me} finished its script, but processes "
                f"{missing} did not finish theirs within {EXIT_WAIT_S:g} s;"
                " ending this one (the job is stuck: they may wait for "
                "a step this process did not run)\n")
            report_failure(f"it finished, but processes {missing} did not "
                           f"finish within {EXIT_WAIT_S:g} s of it")
            _stop_lock.acquire(blocking=False)
            _end(client, me, count)
        time.sleep(0.1)
    _stop_watching()


def _stop_watching() -> None:
    _stopping.set()
    watcher = _watcher
    if watcher is not None and watcher is not threading.current_thread():
        watcher.join(timeout=2 * _POLL_S)


def watch_failures(poll_s: float = _POLL_S) -> None:
    """Starts (once) the thread that stops this process when another one
    reports a failure."""
    global _watcher
    job = _job()
    if job is None:
        return
    client, me, count = job
    with _install_lock:
        if _watcher is not None:
            return

        def watch() -> None:
            while not _stopping.wait(poll_s):
                failure = _reported(client)
                if failure is None:
                    continue
                if failure.startswith(f"process {me}:"):
                    return  # ours: this process raises it itself
                _stop_for(client, me, count, failure)

        _watcher = threading.Thread(target=watch, name="mpmd-failure-watch",
                                    daemon=True)
        _watcher.start()


def install_failure_handling() -> None:
    """In a job of several processes (no-op otherwise), once: an uncaught
    exception ends this process promptly and stops the others with a
    message naming it (`sys.excepthook`, chaining the previous hook); a
    thread stops this process when another reports a failure; at exit the
    process waits for the others to finish (see the comment above).
    `mpmd.distributed.initialize`, compiling with `mpmd` and `fetch` call
    it."""
    global _previous_hook
    if _job() is None:
        return
    with _install_lock:
        if _previous_hook is None:
            _previous_hook = sys.excepthook
            sys.excepthook = _excepthook
            # atexit runs handlers last-registered first: this one runs
            # before JAX's own (registered when JAX was imported), which
            # shuts the client down.
            atexit.register(_at_exit)
    watch_failures()


# --- Reading results on every process ----------------------------------------


class FetchError(MpmdError):
    """`fetch` cannot read this value (the same on every process)."""


# The most bytes one array may have to go through the coordination service.
FETCH_LIMIT_BYTES = 256 << 20
# How long a process waits for another to publish a value it fetches.
FETCH_TIMEOUT_S = 600.0
_fetches = itertools.count()


def fetch(tree: Any, *, timeout_s: float | None = None) -> Any:
    """The values of a pytree of `jax.Array`s as NumPy arrays, on every
    process, whichever process holds their data (a loss on the last
    stage's mesh, say): `jax.device_get` that works across processes.

    In one process it is `jax.device_get`. In a job of several, every
    process must call it with the same structure, shapes and dtypes, in
    the same order (as every process runs the same script). A process
    whose devices hold the whole array reads it locally; the lowest such
    process publishes it through JAX's coordination service for the
    others (so it is meant for small values: at most
    `FETCH_LIMIT_BYTES` an array). An array no process holds all of is
    first gathered on its own devices (a program run by the processes
    holding them). Leaves that are not `jax.Array`s are returned as
    `jax.device_get` returns them.
    """
    job = _job()
    if job is None:
        return jax.device_get(tree)
    install_failure_handling()
    client, me, count = job
    timeout_s = FETCH_TIMEOUT_S if timeout_s is None else timeout_s
    number = next(_fetches)
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    for path, leaf in leaves:
        _check_fetchable(jax.tree_util.keystr(path) or "the value", leaf)
    out = []
    try:
        for index, (path, leaf) in enumerate(leaves):
            if not isinstance(leaf, jax.Array):
                out.append(jax.device_get(leaf))
                continue
            out.append(_fetch_array(
                client, me, count, leaf, f"mpmd/fetch/{number}/{index}",
                jax.tree_util.keystr(path) or "the value", number,
                timeout_s))
    except MpmdError:
        raise
    except Exception as error:
        lost = lost_peer_error(error)
        if lost is None:
            raise
        # The other processes would wait for this one.
        report_failure(f"ProcessLostError: {lost}")
        raise lost from error
    return jax.tree_util.tree_unflatten(treedef, out)


def _check_fetchable(where: str, leaf: Any) -> None:
    """Raises the same FetchError on every process for what cannot be
    fetched (decided from global facts only: type, dtype, size)."""
    if isinstance(leaf, jax.core.Tracer):
        raise FetchError(
            f"mpmd.fetch got a traced value at {where}: call it on the "
            "results of a jitted function, outside jax.jit / mpmd.jit")
    if not isinstance(leaf, jax.Array):
        return
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.extended):
        raise FetchError(
            f"mpmd.fetch cannot read {where} of dtype {leaf.dtype}: fetch "
            "jax.random.key_data(x) instead")
    size = int(np.prod(leaf.shape, dtype=np.int64)) * leaf.dtype.itemsize
    if size > FETCH_LIMIT_BYTES:
        raise FetchError(
            f"mpmd.fetch is for small values: {where} has {size} bytes, "
            f"more than {FETCH_LIMIT_BYTES} (mpmd.runtime.processes."
            "FETCH_LIMIT_BYTES); read its shards (x.addressable_shards) on "
            "the processes holding them instead")


def _fetch_array(client: Any, me: int, count: int, x: jax.Array, key: str,
                 where: str, number: int, timeout_s: float) -> np.ndarray:
    shape = tuple(x.shape)
    dtype = np.dtype(x.dtype)
    tiles: dict[int, set] = {}
    for device, index in x.sharding.devices_indices_map(shape).items():
        tiles.setdefault(device.process_index, set()).add(
            _index_key(index, shape))
    whole = set().union(*tiles.values())
    covering = sorted(p for p, keys in tiles.items() if keys == whole)
    if covering:
        owner, local = covering[0], set(covering)
    else:
        # No process holds all of it: the processes holding some gather
        # it on their devices first.
        owner, local = min(tiles), set(tiles)
        if me in local:
            x = _gathered(tuple(x.sharding._device_assignment))(x)
    readers = sorted(set(range(count)) - local)
    header = json.dumps([list(shape), dtype.name]).encode()
    if me in local:
        value = _local_value(x, shape, dtype)
        if me == owner and readers:
            client.key_value_set_bytes(key, header + b"\n" + value.tobytes())
        return value
    try:
        data = client.blocking_key_value_get_bytes(key, int(timeout_s * 1000))
    except Exception as error:  # noqa: BLE001 - XLA status errors
        raise ProcessError(
            f"process {me} waited {timeout_s:g} s in mpmd.fetch (call "
            f"#{number} of this process) for process {owner} to publish "
            f"{where}: every process must call mpmd.fetch on the same values"
            f" in the same order ({_headline(error)})") from None
    theirs, _, payload = data.partition(b"\n")
    if theirs != header:
        raise FetchError(
            f"mpmd.fetch call #{number}: process {owner} published "
            f"{theirs.decode(errors='replace')} (shape, dtype) where process"
            f" {me} reads {where} as {header.decode()}: every process must "
            "call mpmd.fetch on the same values in the same order")
    try:
        if client.key_value_increment(key + "/read", 1) == len(readers):
            # The last reader clears the value from the service.
            client.key_value_delete(key)
            client.key_value_delete(key + "/read")
    except Exception:  # noqa: BLE001 - clearing is housekeeping
        pass
    return np.frombuffer(payload, dtype=dtype).reshape(shape).copy()


def _local_value(x: jax.Array, shape: tuple[int, ...],
                 dtype: np.dtype) -> np.ndarray:
    """The whole of `x` from the shards this process holds (which cover
    it)."""
    if x.is_fully_addressable:
        return np.asarray(jax.device_get(x))
    value = np.empty(shape, dtype)
    for shard in x.addressable_shards:
        value[shard.index] = np.asarray(shard.data)
    return value


@functools.lru_cache(maxsize=64)
def _gathered(devices: tuple[Any, ...]) -> Any:
    """A program replicating an array on its own devices."""
    everywhere = NamedSharding(Mesh(np.array(devices, dtype=object),
                                    ("_mpmd_all",)), PartitionSpec())
    return jax.jit(lambda a: a, out_shardings=everywhere)
