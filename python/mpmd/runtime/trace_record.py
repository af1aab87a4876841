"""Taking a trace: the host recorder, and readying a step to trace.

    recorder = TraceRecorder.for_plan(plan)
    executor.run(inputs, recorder=recorder)    # a serialized step
    trace = recorder.finish()

`TraceRecorder` is the `StepRecorder` that `PlanExecutor.run` calls around
every step for a trace of source "host": it waits for each step's results
(`jax.block_until_ready`) to know when the step ended, so the run is
serialized: the meshes no longer overlap, and the timeline shows each
step's own cost, not the concurrency of an untraced run. The profiler's
traces (`mpmd.runtime.profile`) are made from the device timeline instead;
both are a `Trace` (`mpmd.runtime.trace`).

`prepare_traced_run` readies a step before it is traced (`profile_run`
calls it before the profiler starts), so that the trace shows that step
alone, from its first dispatch:

- Work launched earlier (an untraced step, asynchronous as every call is)
  may still run on the devices; the traced step's programs would queue
  behind it, and its picture would open on a dead gap as long as that
  work's remainder (24-48 ms after a first untraced call of a 4-mesh MLP
  whose step takes 0.3 ms, measured on XLA:CPU, jaxlib 0.10.2).
  `settle_devices` waits for it: it runs a tiny program over every mesh
  (a device runs its work in launch order, and XLA:CPU runs programs over
  several devices one at a time) and waits for those programs.
- The first execution of the process's programs pays one-time costs
  inside XLA (on XLA:CPU the first dot of the process took about 30 ms,
  in a step of 3 ms). A step of an executor that never ran is therefore
  run once untraced first, when the plan donates none of its inputs (the
  programs are pure: the same inputs give the same results). A plan that
  donates cannot run twice on the same inputs: its trace says
  `first_run` instead, and the SVG's header says that its times include
  those costs.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Callable, Sequence

import jax
import numpy as np

from mpmd.runtime.plan import CallStep, ExecutionPlan, Step, TransferStep
from mpmd.runtime.trace import CallEvent, Trace, TraceError, TransferEvent

__all__ = ["TraceRecorder", "donates_inputs", "prepare_traced_run",
           "settle_devices", "transfer_nbytes"]


# ------------------------------------------------------------------ recorder

class TraceRecorder:
    """Records a Trace while `PlanExecutor.run` executes a plan.

    `after` blocks until the step's results are ready, which serializes the
    run: use it for tracing only. The clock starts at `start()` (or at the
    first step); `finish()` returns the trace.
    """

    def __init__(self, meshes: Sequence[str],
                 clock: Callable[[], int] = time.perf_counter_ns):
        self.meshes = tuple(meshes)
        self._clock = clock
        self._t0: int | None = None
        self._pending: tuple[Step, float] | None = None
        self._trace = Trace(self.meshes)

    @classmethod
    def for_plan(cls, plan: ExecutionPlan, **kwargs: Any) -> "TraceRecorder":
        return cls([mesh.name for mesh in plan.meshes], **kwargs)

    def _now_us(self) -> float:
        if self._t0 is None:
            self.start()
        return (self._clock() - self._t0) / 1000.0

    def start(self) -> None:
        """Starts the clock: times are measured from here."""
        self._t0 = self._clock()

    def before(self, step: Step) -> None:
        if self._pending is not None:
            raise TraceError(f"step {_describe(step)} started before step "
                             f"{_describe(self._pending[0])} ended")
        self._pending = (step, self._now_us())

    def after(self, step: Step, results: Sequence[Any]) -> None:
        if self._pending is None or self._pending[0] is not step:
            raise TraceError(f"step {_describe(step)} ended without starting")
        jax.block_until_ready(results)
        end = self._now_us()
        start = self._pending[1]
        self._pending = None
        if isinstance(step, CallStep):
            self._trace.calls.append(CallEvent(
                step.mesh, step.label(), step.program, step.origins,
                step.stage, step.call_counter, start, end, step.inputs,
                step.outputs))
        else:
            self._trace.transfers.append(TransferEvent(
                step.source, step.target, transfer_nbytes(step),
                step.type.short(),
                step.input, step.output, start, end))

    def finish(self) -> Trace:
        """The trace so far, its total time measured now."""
        if self._pending is not None:
            raise TraceError(f"step {_describe(self._pending[0])} never ended")
        self._trace.total_us = self._now_us()
        return self._trace


# ------------------------------------------------------------------ readying

# Per mesh (its devices and axes), the fence `settle_devices` runs on it: a
# compiled sum over an array with one element per device (a program over
# every device of the mesh, with a collective where it has several).
_FENCES: dict[tuple, tuple[Any, Any]] = {}
# Executors `prepare_traced_run` has seen run a step, by id (a dataclass
# instance is not hashable), each with a weak reference to it.
_RAN: dict[int, "weakref.ref[Any]"] = {}


def settle_devices(meshes: Sequence[Any]) -> None:
    """Returns once every device of `meshes` (`jax.sharding.Mesh`es) has
    finished the work launched on it before the call: runs a tiny program
    over each mesh, which its devices start after that work, and waits for
    them. Meshes with a device of another process are left out."""
    from jax.sharding import NamedSharding, PartitionSpec  # noqa: PLC0415

    me = jax.process_index()
    pending = []
    for mesh in meshes:
        devices = tuple(mesh.devices.flat)
        if any(d.process_index != me for d in devices):
            continue
        key = (tuple(d.id for d in devices), mesh.axis_names,
               mesh.devices.shape)
        fence = _FENCES.get(key)
        if fence is None:
            spread = NamedSharding(mesh, PartitionSpec(mesh.axis_names))
            array = jax.device_put(np.zeros(len(devices), np.float32), spread)
            program = jax.jit(lambda x: x.sum(),
                              out_shardings=NamedSharding(mesh,
                                                          PartitionSpec()))
            fence = _FENCES[key] = (program, array)
        program, array = fence
        pending.append(program(array))
    jax.block_until_ready(pending)


def donates_inputs(plan: ExecutionPlan) -> bool:
    """True when a call of the plan donates one of the plan's inputs: a step
    that ran cannot run again on the same inputs."""
    inputs = len(plan.inputs)
    for step in plan.steps:
        if isinstance(step, CallStep):
            donated = plan.programs[step.program].donated_args
            if any(step.inputs[i] < inputs for i in donated
                   if i < len(step.inputs)):
                return True
    return False


def _has_run(executor: Any) -> bool:
    # The executor builds its C++ step loop at its first untraced run.
    seen = _RAN.get(id(executor))
    return (seen is not None and seen() is executor) or \
        getattr(executor, "_loop", None) is not None


def prepare_traced_run(executor: Any, inputs: Sequence[jax.Array]) -> bool:
    """Readies one step of `executor` (a `PlanExecutor`) on `inputs` (placed
    on their meshes) for tracing, as the module doc explains: runs the step
    once untraced when the executor never ran and the plan donates none of
    its inputs, then waits until the devices have finished everything
    launched before (`settle_devices`). Returns True when the step to trace
    is the executor's first run all the same (the plan donates: the
    trace's `first_run`). The caller then runs the step and records it."""
    first = not _has_run(executor)
    if first and not donates_inputs(executor.plan):
        jax.block_until_ready(executor.run(inputs))
        first = False
    settle_devices(list(executor.meshes.values()))
    key = id(executor)
    _RAN[key] = weakref.ref(executor, lambda _: _RAN.pop(key, None))
    return first


def transfer_nbytes(step: TransferStep) -> int:
    """The bytes a transfer step moves (the whole array)."""
    return int(np.prod(step.type.shape, dtype=np.int64)) * \
        step.type.dtype.itemsize


def _describe(step: Step) -> str:
    if isinstance(step, CallStep):
        return f"{step.label()} on {step.mesh}"
    return f"transfer %{step.input} {step.source} -> {step.target}"
