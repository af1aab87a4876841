"""Which process of a multi-controller JAX job this is, and what it holds.

    if processes.holds(mesh):              # a device of `mesh` is ours
        out = program(*args)               # run it (with the other holders)
    else:
        out = processes.empty_array(shape, dtype, sharding)   # no shard here

Every process runs the same script and the same plan; each executes the
calls of the meshes it holds devices for and skips the others, so a result
on a mesh it holds nothing of is a global array without addressable shards,
as `jax.jit` returns it. This module answers who is who: whether the job
has several processes, whether this one holds a device of a mesh, and the
job itself (`_job`, `_client`: JAX's coordination-service client, its
process id and count), which the modules that act across processes build on:
`coordination` (the plan agreed on, barriers), `remote` (transfers between
processes), `failures` (a failure in one process stops the others) and
`fetch` (reading results on every process).

The errors of a job of several processes (`ProcessError`,
`ProcessLostError`, `FetchError`) are defined here, whichever of those
modules raises them, so that they keep printing as
`mpmd.runtime.processes.ProcessError: ...` in tracebacks and job logs.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.errors import MpmdError

# Re-exports for existing importers: each name of `_MOVED` is imported
# from its home on first use and kept (importing them at load time would
# be a cycle, since their homes import this module).
_MOVED = {
    "agree_on_plan": "mpmd.runtime.coordination",
    "all_gather_text": "mpmd.runtime.coordination",
    "barrier": "mpmd.runtime.coordination",
    "plan_fingerprint": "mpmd.runtime.coordination",
    "cross_process_transfer": "mpmd.runtime.remote",
    "add_fetch_note": "mpmd.runtime.failures",
    "install_failure_handling": "mpmd.runtime.failures",
    "lost_peer_error": "mpmd.runtime.failures",
    "note_remote_transfer": "mpmd.runtime.failures",
    "report_failure": "mpmd.runtime.failures",
    "watch_failures": "mpmd.runtime.failures",
    "fetch": "mpmd.runtime.fetch",
}

__all__ = ["FetchError", "ProcessError", "ProcessLostError", "empty_array",
           "fully_addressable", "holds", "is_multiprocess",
           # Re-exported from their homes for existing importers.
           "add_fetch_note", "agree_on_plan", "all_gather_text", "barrier",
           "cross_process_transfer", "fetch", "install_failure_handling",
           "lost_peer_error", "note_remote_transfer", "plan_fingerprint",
           "report_failure", "watch_failures"]


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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


class FetchError(MpmdError):
    """`fetch` cannot read this value (the same on every process)."""


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


def _job() -> tuple[Any, int, int] | None:
    """(client, this process's id, process count) in a job of several
    processes, else None. Reads JAX's distributed state only: it does not
    start the backend."""
    from jax._src import distributed  # noqa: PLC0415 - JAX's own state

    state = distributed.global_state
    if state.client is None or (state.num_processes or 1) < 2:
        return None
    return state.client, int(state.process_id), int(state.num_processes)


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
