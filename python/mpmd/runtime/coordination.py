"""Agreement between the processes of a job, through JAX's coordination
service.

    fingerprint = plan_fingerprint(plan_json, topology)
    agree_on_plan(fingerprint, "function 'train_step'")   # same plan on all
    barrier("trace")                                       # all get here
    texts = all_gather_text("trace", json.dumps(mine))     # one per process

Every process of a multi-controller job runs the same script and must run
the same plan: one process that compiled another schedule, other shapes or
another device order would wait forever in a transfer whose peer runs
something else. So each compile publishes a fingerprint of the partitioned
module and of each mesh's devices, and every process compares them before
it runs anything (`agree_on_plan`, which also installs the failure
handling). `barrier` and `all_gather_text` (a common start for traces, and
their gathering) go through the same service. In one process each is a
no-op or returns this process's own value.
"""

from __future__ import annotations

import hashlib
import itertools

import jax
from jax.sharding import Mesh

from mpmd.runtime.failures import _headline, install_failure_handling
from mpmd.runtime.processes import ProcessError, _client, is_multiprocess

__all__ = ["agree_on_plan", "all_gather_text", "barrier", "plan_fingerprint"]

_compiles = itertools.count()
# How long a compile waits for the other processes to reach it.
AGREE_TIMEOUT_S = 300.0
_barriers = itertools.count()


def plan_fingerprint(text: str, meshes: dict[str, Mesh]) -> str:
    """What every process must have compiled the same: the partitioned
    program (`text`: its plan's JSON or its module's text, programs and
    steps) and the devices of each mesh."""
    digest = hashlib.sha256(text.encode())
    for name in sorted(meshes):
        mesh = meshes[name]
        digest.update(f"{name}:{mesh.axis_names}:{mesh.devices.shape}:"
                      f"{[d.id for d in mesh.devices.flat]};".encode())
    return digest.hexdigest()[:16]


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
