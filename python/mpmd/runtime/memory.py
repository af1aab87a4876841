"""Memory per mesh: what the plan predicts, and what a real step holds.

    results, table = compiled.run_with_memory(params, batch)
    print(table.text())
    table["m1"].predicted.step_bytes, table["m1"].measured.step_bytes

Two independent answers to "how many bytes does each device of a mesh hold
during a step":

- `predict_peaks(executor)` walks the plan as `PlanExecutor.run` walks its
  environment: the inputs first; each step adds its outputs (a call's on its
  mesh, a transfer's on its target mesh); a donated input dies as its call
  starts (its buffers become an output's); each step's `free` list is
  dropped after the step. Sizes come from the shapes and shardings of the
  plan (one shard per device). It never runs anything.

- `MemoryRecorder` is a `StepRecorder`: once before the first step and after
  every step it asks JAX which arrays are alive (`jax.live_arrays()`, every
  `jax.Array` object of the process that is not deleted) and adds up, per
  device, the bytes of the shards each array has there. It knows nothing of
  the plan's `free` lists: an array counts as long as some Python reference
  keeps it, whoever holds it.

The measured numbers are split in two:

- `total`: everything alive on the mesh's devices, including arrays the
  caller holds (parameters, inputs, other models), the executor's constant
  arguments, and anything else of the process;
- `step`: only the arrays made since the run started (arrays alive at
  `start()` are remembered by weak reference), i.e. the outputs of the
  plan's calls and transfers that are still referenced.

The rule tying both together: the measured step peak of a mesh equals the
predicted step peak (`PlanPeak.step_bytes` / `step_arrays`) when the runtime
drops every value at the point the plan says. A larger measured number is a
value kept alive too long; a smaller one, a value the plan thought alive
that is not. `total` is at least `step` and differs from it by what was
alive before the run and is not yet dead (a donated input is deleted, its
buffers counted once, as the output's).

Memory kinds: values the plan keeps in host memory ("pinned_host" or
"unpinned_host": offloaded activations, arguments assigned "m1#pinned_host")
are not device memory. Both answers count them apart, as `host_bytes` per
device of the mesh; `bytes` and `step_bytes` are device memory only, so the
saving of activation offloading shows there.

Samples are taken between steps, so buffers XLA uses inside one program
call (its temporaries) are not seen. Where the backend reports it
(`device.memory_stats()`, e.g. on GPU), the recorder also keeps the largest
`bytes_in_use` of each mesh's devices over the samples; on CPU there are no
such statistics and the table says so.

Blocking: by default `after` waits for the step's results
(`jax.block_until_ready`). Which arrays are alive is decided by Python
references, and waiting changes none of them, so `total` and `step` are the
same either way; what waiting changes is timing (the meshes no longer
overlap, like a traced run) and the allocator's view: without it, the
device may still be running earlier steps whose inputs Python already
dropped, so `bytes_in_use` would lag behind the sample.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh

from mpmd.errors import MpmdError
from mpmd.runtime.executor import HOST_MEMORY_KINDS, sharding_for
from mpmd.runtime.plan import CallStep, Step, TransferStep

__all__ = ["MeasuredPeak", "MemoryProfileError",
           "MemoryRecorder", "MemoryRow", "MemorySample", "MemoryTable",
           "PlanPeak", "device_memory_stats", "predict_peaks", "shard_bytes"]


class MemoryProfileError(MpmdError):
    """A memory recorder was used out of order, or a memory table was asked
    about a mesh it does not have."""


# ------------------------------------------------------------- prediction

@dataclass(frozen=True)
class PlanPeak:
    """The plan walk's peak on one mesh, bytes per device.

    `arrays` / `bytes`: the plan's values (inputs until the plan frees or
    donates them, and the steps' outputs); `step_arrays` / `step_bytes`:
    only the values steps make (what the run adds to the inputs); all
    device memory. `host_bytes`: the plan's values in host memory kinds
    (inputs included). Each is its own maximum over the walk, so the peaks
    may fall on different steps."""

    arrays: int
    bytes: int
    step_arrays: int
    step_bytes: int
    host_bytes: int = 0


def shard_bytes(shape: Sequence[int], dtype: Any, sharding: Any) -> int:
    """Bytes of one device's shard of a global array."""
    shard = sharding.shard_shape(tuple(shape))
    return int(np.prod(shard, dtype=np.int64)) * np.dtype(dtype).itemsize


def predict_peaks(executor: Any) -> dict[str, PlanPeak]:
    """Per mesh of `executor.plan`, the peak of the plan walk (see the
    module docstring). `executor` is a `PlanExecutor`: it gives the inputs'
    shardings and each program's result types and shardings."""
    plan = executor.plan
    meshes = [m.name for m in plan.meshes]
    # value -> (mesh, bytes per device, made by a step, in host memory)
    where: dict[int, tuple[str, int, bool, bool]] = {}
    count = {m: [0, 0] for m in meshes}  # all values, step values
    size = {m: [0, 0] for m in meshes}
    host = dict.fromkeys(meshes, 0)
    peak_count = {m: [0, 0] for m in meshes}
    peak_size = {m: [0, 0] for m in meshes}
    peak_host = dict.fromkeys(meshes, 0)

    def add(value: int, mesh: str, sharding: Any, nbytes: int,
            made: bool) -> None:
        on_host = sharding.memory_kind in HOST_MEMORY_KINDS
        where[value] = (mesh, nbytes, made, on_host)
        if on_host:
            host[mesh] += nbytes
            return
        for kind in ((0, 1) if made else (0,)):
            count[mesh][kind] += 1
            size[mesh][kind] += nbytes

    def drop(value: int) -> None:
        entry = where.pop(value, None)
        if entry is None:
            return
        mesh, nbytes, made, on_host = entry
        if on_host:
            host[mesh] -= nbytes
            return
        for kind in ((0, 1) if made else (0,)):
            count[mesh][kind] -= 1
            size[mesh][kind] -= nbytes

    def note() -> None:
        for mesh in meshes:
            for kind in (0, 1):
                peak_count[mesh][kind] = max(peak_count[mesh][kind],
                                             count[mesh][kind])
                peak_size[mesh][kind] = max(peak_size[mesh][kind],
                                            size[mesh][kind])
            peak_host[mesh] = max(peak_host[mesh], host[mesh])

    for index, (spec, sharding) in enumerate(
            zip(plan.inputs, executor.input_shardings())):
        add(index, spec.mesh, sharding,
            shard_bytes(spec.shape, spec.dtype, sharding), False)
    note()
    for step in plan.steps:
        if isinstance(step, CallStep):
            program = executor.programs.get(step.program)
            if program is None:
                raise MemoryProfileError(
                    f"program {step.program!r} on mesh {step.mesh!r} is not "
                    "compiled in this process: its result sizes are unknown")
            # A donated input's buffers become an output's: it dies as the
            # call starts, and the other inputs and the outputs are alive
            # together.
            for arg in plan.programs[step.program].donated_args:
                drop(step.inputs[arg])
            for value, aval, sharding in zip(step.outputs, program.out_avals,
                                             program.out_shardings):
                add(value, step.mesh, sharding,
                    shard_bytes(aval.shape, aval.dtype, sharding), True)
        else:
            sharding = sharding_for(step.type, executor.meshes)
            add(step.output, step.target, sharding,
                shard_bytes(step.type.shape, step.type.dtype, sharding), True)
        note()
        for value in step.free:
            drop(value)
    return {mesh: PlanPeak(peak_count[mesh][0], peak_size[mesh][0],
                           peak_count[mesh][1], peak_size[mesh][1],
                           peak_host[mesh])
            for mesh in meshes}


# ------------------------------------------------------------ measurement

@dataclass(frozen=True)
class MemorySample:
    """One sample: after step `step` (-1: before the first), per mesh the
    largest per-device bytes over its devices and the arrays alive there."""

    step: int
    label: str
    total_bytes: dict[str, int]
    step_bytes: dict[str, int]
    total_arrays: dict[str, int]
    step_arrays: dict[str, int]
    # Largest `bytes_in_use` over the mesh's devices; None where the
    # backend has no memory statistics.
    in_use_bytes: dict[str, int | None]
    # Arrays in host memory kinds, not counted above.
    host_bytes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class MeasuredPeak:
    """The measured peaks on one mesh, bytes per device (the fullest device
    of the mesh at each sample). Each is its own maximum over the samples.

    `bytes` / `arrays`: every live array with a shard in the device memory
    of the mesh (caller's arrays included); `step_bytes` / `step_arrays`:
    only arrays made since the run started; `start_bytes`: what the mesh
    held before the first step; `in_use_bytes`: the largest `bytes_in_use`
    the backend reported, None where it reports none; `host_bytes`: live
    arrays in the mesh's host memory kinds (counted in none of the
    others)."""

    arrays: int
    bytes: int
    step_arrays: int
    step_bytes: int
    start_bytes: int
    in_use_bytes: int | None
    host_bytes: int = 0


def device_memory_stats(device: Any) -> dict[str, int] | None:
    """`device.memory_stats()`, or None where the backend has none (the CPU
    backend returns None; some raise)."""
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001 - "not implemented" in various forms
        return None
    return stats or None


class MemoryRecorder:
    """Samples live arrays per mesh while `PlanExecutor.run` runs a plan.

    `start()` remembers what is alive before the run (call it after the
    inputs are placed; the first `before` calls it otherwise) and takes the
    first sample; `after` takes one per step; `finish()` returns the peaks.
    `block=False` samples without waiting for each step (see the module
    docstring: the same arrays are alive, only the timing and
    `bytes_in_use` differ). `live` and `stats` replace `jax.live_arrays`
    and `device_memory_stats` (tests)."""

    def __init__(self, meshes: Mapping[str, Mesh], *, block: bool = True,
                 live: Callable[[], Iterable[jax.Array]] = jax.live_arrays,
                 stats: Callable[[Any], dict[str, int] | None]
                 = device_memory_stats):
        self.meshes = tuple(meshes)
        self.block = block
        self._live = live
        self._stats = stats
        self._of_device: dict[Any, list[str]] = {}
        for name, mesh in meshes.items():
            for device in mesh.devices.flat:
                self._of_device.setdefault(device, []).append(name)
        self._devices = {name: list(mesh.devices.flat)
                         for name, mesh in meshes.items()}
        self._baseline: dict[int, weakref.ref] | None = None
        self._pending: Step | None = None
        self._steps = 0
        self._finished = False
        self._sizes: dict[tuple, dict[Any, int]] = {}
        self.samples: list[MemorySample] = []

    @classmethod
    def for_executor(cls, executor: Any, **kwargs: Any) -> "MemoryRecorder":
        """A recorder for the meshes of `executor`'s plan."""
        return cls({m.name: executor.meshes[m.name]
                    for m in executor.plan.meshes}, **kwargs)

    # -- StepRecorder

    def start(self) -> None:
        """Remembers the arrays alive now and takes the first sample."""
        if self._baseline is not None:
            raise MemoryProfileError("memory recorder started twice")
        self._baseline = {id(a): weakref.ref(a) for a in self._live()}
        self._sample(-1, "start")

    def before(self, step: Step) -> None:
        self._check_open(step)
        if self._baseline is None:
            self.start()
        if self._pending is not None:
            raise MemoryProfileError(
                f"step {_describe(step)} started before step "
                f"{_describe(self._pending)} ended")
        self._pending = step

    def after(self, step: Step, results: Sequence[Any]) -> None:
        self._check_open(step)
        if self._pending is not step:
            raise MemoryProfileError(
                f"step {_describe(step)} ended without starting")
        self._pending = None
        if self.block:
            jax.block_until_ready(results)
        self._sample(self._steps, _describe(step))
        self._steps += 1

    def finish(self) -> dict[str, MeasuredPeak]:
        """Per mesh, the peaks over the samples taken."""
        if self._baseline is None:
            raise MemoryProfileError("memory recorder finished before it "
                                     "started: no sample was taken")
        if self._pending is not None:
            raise MemoryProfileError(
                f"step {_describe(self._pending)} never ended")
        self._finished = True
        first = self.samples[0]
        peaks = {}
        for mesh in self.meshes:
            in_use = [s.in_use_bytes[mesh] for s in self.samples]
            peaks[mesh] = MeasuredPeak(
                arrays=max(s.total_arrays[mesh] for s in self.samples),
                bytes=max(s.total_bytes[mesh] for s in self.samples),
                step_arrays=max(s.step_arrays[mesh] for s in self.samples),
                step_bytes=max(s.step_bytes[mesh] for s in self.samples),
                start_bytes=first.total_bytes[mesh],
                in_use_bytes=(None if any(v is None for v in in_use)
                              else max(in_use)),
                host_bytes=max(s.host_bytes.get(mesh, 0)
                               for s in self.samples))
        return peaks

    # -- sampling

    def _check_open(self, step: Step) -> None:
        if self._finished:
            raise MemoryProfileError(
                f"step {_describe(step)} recorded after finish(); use a new "
                "MemoryRecorder per run")

    def _is_baseline(self, array: jax.Array) -> bool:
        ref = self._baseline.get(id(array))
        return ref is not None and ref() is array

    def _device_bytes(self, array: jax.Array) -> dict[Any, int]:
        """Bytes per addressable device of `array` (from its sharding's
        index map, so no shard array is created)."""
        key = (array.sharding, array.shape, array.dtype)
        sizes = self._sizes.get(key)
        if sizes is None:
            itemsize = np.dtype(array.dtype).itemsize
            sizes = {}
            for device, index in \
                    array.sharding.addressable_devices_indices_map(
                        array.shape).items():
                elements = 1
                for dim, part in zip(array.shape, index):
                    elements *= len(range(*part.indices(dim)))
                sizes[device] = sizes.get(device, 0) + elements * itemsize
            self._sizes[key] = sizes
        return sizes

    def _sample(self, step: int, label: str) -> None:
        total = {m: {d: 0 for d in self._devices[m]} for m in self.meshes}
        made = {m: {d: 0 for d in self._devices[m]} for m in self.meshes}
        host = {m: {d: 0 for d in self._devices[m]} for m in self.meshes}
        total_arrays = dict.fromkeys(self.meshes, 0)
        step_arrays = dict.fromkeys(self.meshes, 0)
        for array in self._live():
            if array.is_deleted():
                continue
            if array.sharding.memory_kind in HOST_MEMORY_KINDS:
                for device, nbytes in self._device_bytes(array).items():
                    for mesh in self._of_device.get(device, ()):
                        host[mesh][device] += nbytes
                continue
            new = not self._is_baseline(array)
            touched: set[str] = set()
            for device, nbytes in self._device_bytes(array).items():
                for mesh in self._of_device.get(device, ()):
                    touched.add(mesh)
                    total[mesh][device] += nbytes
                    if new:
                        made[mesh][device] += nbytes
            for mesh in touched:
                total_arrays[mesh] += 1
                if new:
                    step_arrays[mesh] += 1
        in_use: dict[str, int | None] = {}
        for mesh in self.meshes:
            values = []
            for device in self._devices[mesh]:
                stats = self._stats(device)
                values.append(None if stats is None
                              else stats.get("bytes_in_use"))
            in_use[mesh] = (None if any(v is None for v in values)
                            else max(values))
        self.samples.append(MemorySample(
            step, label, {m: max(total[m].values()) for m in self.meshes},
            {m: max(made[m].values()) for m in self.meshes},
            total_arrays, step_arrays, in_use,
            {m: max(host[m].values()) for m in self.meshes}))


def _describe(step: Step) -> str:
    if isinstance(step, CallStep):
        return f"{step.label()} on {step.mesh}"
    if isinstance(step, TransferStep):
        return f"transfer %{step.input} {step.source} -> {step.target}"
    return repr(step)


# ------------------------------------------------------------------ table

@dataclass(frozen=True)
class MemoryRow:
    """One mesh: the plan's prediction beside the measurement."""

    mesh: str
    predicted: PlanPeak
    measured: MeasuredPeak


@dataclass(frozen=True)
class MemoryTable:
    """Predicted and measured peak memory per mesh of one run."""

    rows: tuple[MemoryRow, ...]
    samples: tuple[MemorySample, ...] = field(default=(), repr=False)

    @classmethod
    def build(cls, predicted: Mapping[str, PlanPeak],
              measured: Mapping[str, MeasuredPeak],
              samples: Sequence[MemorySample] = ()) -> "MemoryTable":
        missing = sorted(set(predicted) ^ set(measured))
        if missing:
            raise MemoryProfileError(
                f"mesh {missing[0]!r} is predicted or measured, not both")
        return cls(tuple(MemoryRow(m, predicted[m], measured[m])
                         for m in predicted), tuple(samples))

    @property
    def meshes(self) -> tuple[str, ...]:
        return tuple(row.mesh for row in self.rows)

    def __getitem__(self, mesh: str) -> MemoryRow:
        for row in self.rows:
            if row.mesh == mesh:
                return row
        raise MemoryProfileError(
            f"mesh {mesh!r} is not in the plan; its meshes are "
            f"{', '.join(self.meshes)}")

    def __iter__(self):
        return iter(self.rows)

    @property
    def stats_available(self) -> bool:
        """Whether the backend reported `bytes_in_use` for every mesh."""
        return all(row.measured.in_use_bytes is not None for row in self.rows)

    def text(self) -> str:
        """The table: per mesh, predicted and measured peaks in KiB per
        device (step: values made by the run; total: the plan's values /
        everything alive on the mesh)."""
        header = (f"{'mesh':<8} {'pred step':>10} {'meas step':>10} "
                  f"{'pred plan':>10} {'meas total':>10} {'start':>8} "
                  f"{'in use':>8} {'host p/m':>13}")
        lines = [header, "-" * len(header)]
        for row in self.rows:
            p, m = row.predicted, row.measured
            in_use = ("-" if m.in_use_bytes is None
                      else _kib(m.in_use_bytes))
            lines.append(
                f"{row.mesh:<8} {_kib(p.step_bytes):>10} "
                f"{_kib(m.step_bytes):>10} {_kib(p.bytes):>10} "
                f"{_kib(m.bytes):>10} {_kib(m.start_bytes):>8} {in_use:>8} "
                f"{_kib(p.host_bytes) + '/' + _kib(m.host_bytes):>13}")
        lines.append("KiB per device at the peak; step: arrays made by the "
                     "run; plan: the plan's values with its inputs; total: "
                     "every live array on the mesh; start: alive before the "
                     "first step; host p/m: predicted/measured peak in host "
                     "memory kinds (not in the other columns)")
        if not self.stats_available:
            lines.append("in use: device memory statistics are not "
                         "available on this backend")
        return "\n".join(lines)


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f}"
