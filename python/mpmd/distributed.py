"""Joining a multi-controller JAX job (many processes, one per host or more).

`initialize()` is `jax.distributed.initialize` with what `mpmd` needs set:
the coordinator, process id and process count from `python -m mpmd.launch`
(or given), gloo collectives on CPU (transfers between processes run as
collective programs), a heartbeat timeout after which JAX stops every
process of a job one of whose processes died, and mpmd's failure handling
(`mpmd.runtime.failures.install_failure_handling`): an uncaught exception
ends its process at once and stops the others with a message naming it,
and a process that finishes waits at exit for the others. Calling
`jax.distributed.initialize` yourself works too (on CPU set
`jax.config.update("jax_cpu_collectives_implementation", "gloo")` first);
the failure handling is then installed when `mpmd` first compiles a
function or `mpmd.fetch` is called.
"""

from __future__ import annotations

import os
from typing import Any

import jax

from mpmd.errors import MpmdError
from mpmd.launch import COORDINATOR, NUM_PROCESSES, PROCESS_ID

__all__ = ["initialize", "DistributedError"]


class DistributedError(MpmdError):
    """The job's processes cannot be joined as configured."""


def _env_int(name: str) -> int | None:
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise DistributedError(
            f"environment variable {name}={text!r} is not an integer") from None


def initialize(coordinator_address: str | None = None,
               num_processes: int | None = None,
               process_id: int | None = None, *,
               heartbeat_timeout_seconds: int = 30,
               **kwargs: Any) -> None:
    """Joins this process to the job (see the module doc). Arguments left
    None come from the launcher's environment, then from JAX's own cluster
    detection (SLURM, Open MPI, Kubernetes, ...)."""
    coordinator_address = coordinator_address or os.environ.get(COORDINATOR)
    if num_processes is None:
        num_processes = _env_int(NUM_PROCESSES)
    if process_id is None:
        process_id = _env_int(PROCESS_ID)
    if (num_processes is not None and process_id is not None
            and not 0 <= process_id < num_processes):
        raise DistributedError(
            f"process id {process_id} is not in [0, {num_processes})")
    if jax.config.jax_cpu_collectives_implementation in (None, "", "none"):
        # JAX's default in 0.10; older versions had no CPU collectives.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address, num_processes, process_id,
        heartbeat_timeout_seconds=heartbeat_timeout_seconds, **kwargs)
    from mpmd.runtime import failures  # noqa: PLC0415

    failures.install_failure_handling()
