"""Reading results on every process of a job: `mpmd.fetch`.

    params, opt_state, loss = step(params, opt_state, xs, ys)
    loss = mpmd.fetch(loss)                # numpy, on every process
    if jax.process_index() == 0:
        print(f"loss {float(loss):.4f}")

A result on a mesh this process holds no device of has no data here, so
`float(loss)` raises JAX's "spans non-addressable devices" error. `fetch`
is `jax.device_get` that works across processes: for each array, the
lowest process whose devices hold all of it publishes it through JAX's
coordination service (key-value store) and the others read it; an array no
process holds all of is first gathered on its own devices. Values cross
through the service (over gRPC, held in process 0's memory until read), so
it is for small values (`FETCH_LIMIT_BYTES`). What cannot be read is
refused the same way on every process, before any process waits for
another.
"""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime.failures import (_headline, install_failure_handling,
                                   lost_peer_error, report_failure)
from mpmd.runtime.processes import FetchError, ProcessError, _job
from mpmd.runtime.transfers import _index_key

__all__ = ["fetch"]

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
    if timeout_s is not None and (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, (int, float, np.integer,
                                          np.floating))
            or not timeout_s > 0):
        raise FetchError(f"mpmd.fetch: timeout_s must be a positive number "
                         f"of seconds or None, got {timeout_s!r}")
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
            f"more than {FETCH_LIMIT_BYTES} (mpmd.runtime.fetch."
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
