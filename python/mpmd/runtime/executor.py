"""Executes an execution plan on jax.Arrays.

Every distinct program is compiled once for its mesh. A call dispatches
asynchronously (like `jax.jit`), so the meshes run concurrently while Python
walks the plan; transfers are device-to-device copies into the target mesh;
each value is dropped at its last use so its buffers are freed (or donated,
where the plan says so).

In a multi-controller job (`jax.process_count() > 1`) every process walks
the same plan: it compiles and calls the programs of the meshes it holds
devices for, skips the others, and takes part in the transfers that touch
its devices (`mpmd.runtime.processes`). Results on meshes it holds no device
of are global arrays without addressable shards, as in `jax.jit`.
"""

from __future__ import annotations

import concurrent.futures
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime import failures, processes, remote
from mpmd.runtime.plan import (CallStep, ExecutionPlan, Layout, TensorSpec,
                               TransferStep)
from mpmd.runtime.program import MeshProgram
from mpmd.runtime.relocation import shape_key
from mpmd.runtime.transfers import Mover, transfer
from mpmd.runtime.trace import StepRecorder

__all__ = ["HOST_MEMORY_KINDS", "PlanExecutor", "native_step_loop", "ProgramExecutionError",
           "UnsupportedMemoryKindError", "check_memory_kinds",
           "device_memory_kinds", "partition_spec", "require_memory_kind",
           "sharding_for"]


class ProgramExecutionError(MpmdError):
    """A program of the plan failed while running."""


class UnsupportedMemoryKindError(MpmdError):
    """A value is to live in a memory kind ("pinned_host", ...) that its
    mesh's devices do not have on this backend."""


# The memory kinds that are host memory: what activation offloading and
# "mesh#pinned_host" assignments use, counted apart from device memory.
HOST_MEMORY_KINDS = frozenset({"pinned_host", "unpinned_host"})


def device_memory_kinds(device: Any) -> frozenset[str]:
    """The memory kinds `device` has ("device", "pinned_host", ...); empty
    where the backend does not say."""
    try:
        return frozenset(memory.kind
                         for memory in device.addressable_memories())
    except Exception:  # noqa: BLE001 - backends without memory spaces
        return frozenset()


def require_memory_kind(mesh_name: str, mesh: Mesh, kind: str,
                        what: str) -> None:
    """Raises UnsupportedMemoryKindError unless every device of `mesh`
    this process holds has memory kind `kind`; `what` says what needs it."""
    me = jax.process_index()
    for device in mesh.devices.flat:
        if device.process_index != me:
            continue
        kinds = device_memory_kinds(device)
        if kind not in kinds:
            raise UnsupportedMemoryKindError(
                f"{what} needs a {kind!r} memory, and device {device.id} "
                f"({device.platform}) of mesh {mesh_name!r} has "
                f"{sorted(kinds) or 'no memory kinds'}: not supported on "
                "this backend")


def check_memory_kinds(plan: ExecutionPlan, meshes: dict[str, Mesh]) -> None:
    """Every memory kind other than the default that the plan keeps a value
    in (inputs, outputs, transfer targets) exists on its mesh's devices."""
    needed: dict[tuple[str, str], str] = {}
    for index, spec in enumerate(plan.inputs):
        needed.setdefault((spec.mesh, spec.memory_kind),
                          f"input {index} of the program")
    for index, spec in enumerate(plan.outputs):
        needed.setdefault((spec.mesh, spec.memory_kind),
                          f"output {index} of the program")
    for step in plan.steps:
        if isinstance(step, TransferStep):
            needed.setdefault(
                (step.type.mesh, step.type.memory_kind),
                "an offloaded activation" if step.source == step.target
                else f"a transfer from mesh {step.source!r}")
    for (mesh, kind), what in needed.items():
        if kind not in (None, "device"):
            require_memory_kind(mesh, meshes[mesh], kind, what)


def partition_spec(layout: Layout | None) -> PartitionSpec:
    """The PartitionSpec of a plan layout (axes per dimension)."""
    if layout is None:
        return PartitionSpec()
    entries = [tuple(axes) if len(axes) > 1 else (axes[0] if axes else None)
               for axes in layout]
    while entries and entries[-1] is None:  # P(None, "x") as users write it
        entries.pop()
    return PartitionSpec(*entries)


def sharding_for(spec: TensorSpec, meshes: dict[str, Mesh]) -> NamedSharding:
    """The NamedSharding a plan tensor has on its mesh."""
    return NamedSharding(meshes[spec.mesh], partition_spec(spec.sharding),
                         memory_kind=spec.memory_kind)


def compile_programs(specs: dict[str, Any], meshes: dict[str, Mesh],
                     workers: int | None = None) -> dict[str, MeshProgram]:
    """Each program of `specs` (name -> the plan's ProgramSpec) compiled for
    its mesh, concurrently: XLA compiles without the GIL, so distinct
    programs compile on as many threads as there are cores (`workers`, or
    the environment's MPMD_COMPILE_WORKERS; 1 compiles one after another).

    A program whose text, shardings and donation equal those of one on
    another mesh of the same shape (the middle stages of a pipeline of
    equal blocks) is compiled once: the other meshes load that executable
    for their devices (`MeshProgram.compile(like=...)`). It is compiled for
    the largest reserved memory among them (`ProgramSpec.reserved_bytes`).

    The result is in `specs`' order whatever finishes first; the first
    error (in that order) is raised."""
    def build(name: str, spec: Any, like: MeshProgram | None = None
              ) -> MeshProgram:
        leader = follows.get(name, name)
        mesh = meshes[spec.mesh]
        return MeshProgram.compile(
            spec.module, mesh, name=name,
            in_shardings=[NamedSharding(mesh, partition_spec(layout))
                          for layout in spec.in_shardings] or None,
            out_shardings=[NamedSharding(mesh, partition_spec(layout))
                           for layout in spec.out_shardings] or None,
            donate_argnums=spec.donated_args, like=like,
            reserved_bytes=reserved[leader])

    # Programs the same but for their mesh: the first one is compiled, the
    # others follow it.
    leader_of: dict[tuple, str] = {}
    follows: dict[str, str] = {}
    for name, spec in specs.items():
        key = (spec.module, shape_key(meshes[spec.mesh]),
               tuple(map(str, spec.in_shardings)),
               tuple(map(str, spec.out_shardings)),
               tuple(spec.donated_args))
        leader = leader_of.setdefault(key, name)
        if leader != name:
            follows[name] = leader
    leaders = {name: spec for name, spec in specs.items()
               if name not in follows}
    # One executable serves the group: it leaves room for the largest
    # reservation among its meshes.
    reserved = {name: spec.reserved_bytes for name, spec in leaders.items()}
    for name, leader in follows.items():
        reserved[leader] = max(reserved[leader], specs[name].reserved_bytes)

    workers = min(len(leaders), workers
                  or int(os.environ.get("MPMD_COMPILE_WORKERS", "0") or 0)
                  or os.cpu_count() or 1)
    if workers <= 1:
        built = {name: build(name, spec) for name, spec in leaders.items()}
        for name, leader in follows.items():
            built[name] = build(name, specs[name], like=built[leader])
        return {name: built[name] for name in specs}
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="mpmd-compile") as pool:
        futures = {name: pool.submit(build, name, spec)
                   for name, spec in leaders.items()}
        # A follower is loaded once its leader is compiled, beside the
        # compiles still running.
        def follow(name: str, leader: str) -> MeshProgram:
            return build(name, specs[name], like=futures[leader].result())

        futures.update({name: pool.submit(follow, name, leader)
                        for name, leader in follows.items()})
        return {name: futures[name].result() for name in specs}


# Whether the C++ step loop can be used: None until first asked.
_native: bool | None = None


def native_step_loop() -> bool:
    """Whether runs use the C++ step loop (`mpmd._mpmd_runtime`). Without
    it (an extension missing, or built for another Python, as where an
    export runs without the build: `mpmd.export`), or with the
    environment's MPMD_PURE_PYTHON=1, the same steps run in a Python loop
    (`runtime/step_loop.py`): the same calls in the same order, so the
    same numbers, at about a microsecond more per step."""
    global _native
    if _native is None:
        if os.environ.get("MPMD_PURE_PYTHON", "") not in ("", "0"):
            _native = False
        else:
            try:
                from mpmd._mpmd_runtime import StepLoop  # noqa: F401, PLC0415
                _native = True
            except ImportError:
                _native = False
    return _native


@dataclass
class PlanExecutor:
    plan: ExecutionPlan
    meshes: dict[str, Mesh]
    programs: dict[str, MeshProgram]
    # Per step index, the constant arguments of the call, on its mesh.
    constants: dict[int, list[jax.Array]] = field(default_factory=dict)
    # Multi-controller only: the meshes this process holds devices for, and
    # per transfer step whose meshes are not all this process's, the
    # source value's sharding.
    held: frozenset[str] | None = None
    remote_transfers: dict[int, NamedSharding] = field(default_factory=dict)
    # run()'s fast path: the plan as a StepLoop, built at the first run.
    _loop: Any = field(default=None, repr=False)
    # Per step of _loop, the index of its (first) plan step.
    _loop_origin: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def compile(cls, plan: ExecutionPlan,
                meshes: dict[str, Mesh]) -> "PlanExecutor":
        check_memory_kinds(plan, meshes)
        held = None
        if processes.is_multiprocess():
            held = frozenset(name for name, mesh in meshes.items()
                             if processes.holds(mesh))
        programs = compile_programs(
            {name: spec for name, spec in plan.programs.items()
             if held is None or spec.mesh in held},  # others: other processes
            meshes)
        # Constant arguments are placed once; equal ones share their arrays.
        placed: dict[tuple, jax.Array] = {}
        constants: dict[int, list[jax.Array]] = {}
        for index, step in enumerate(plan.steps):
            if not isinstance(step, CallStep) or not step.constants:
                continue
            if held is not None and step.mesh not in held:
                continue
            arrays = []
            for value in step.constants:
                key = (step.mesh, value.dtype.str, value.shape, value.tobytes())
                if key not in placed:
                    placed[key] = jax.device_put(value, NamedSharding(
                        meshes[step.mesh], PartitionSpec()))
                arrays.append(placed[key])
            constants[index] = arrays
        remote = _remote_transfers(plan, meshes) if held is not None else {}
        return cls(plan, meshes, programs, constants, held, remote)

    def move(self, x: jax.Array, target: NamedSharding) -> jax.Array:
        """`x` (a global array) laid out as `target`, on every process."""
        if self.held is None:
            return transfer(x, target)
        devices = (*x.sharding.device_set, *target.device_set)
        if processes.fully_addressable(devices):
            return transfer(x, target)
        me = jax.process_index()
        if not any(d.process_index == me for d in devices):
            return processes.empty_array(x.shape, x.dtype, target)
        moved = remote.cross_process_transfer(
            x if x.addressable_shards else None, x.sharding, target,
            x.shape, x.dtype)
        return (moved if moved is not None
                else processes.empty_array(x.shape, x.dtype, target))

    def place(self, value: Any, sharding: NamedSharding) -> jax.Array:
        """A call's argument laid out as `sharding`: an array already so
        is used as it is (no copy), a committed one moves device to device
        (across processes too, resharded on the way where the layouts
        differ), host data is put there."""
        if isinstance(value, jax.Array) and value.sharding == sharding:
            return value
        if isinstance(value, jax.Array) and value._committed:
            return self.move(value, sharding)
        return jax.device_put(value, sharding)

    def input_shardings(self) -> list[NamedSharding]:
        return [sharding_for(spec, self.meshes) for spec in self.plan.inputs]

    def output_shardings(self) -> list[NamedSharding]:
        return [sharding_for(spec, self.meshes) for spec in self.plan.outputs]

    def run(self, inputs: Sequence[jax.Array],
            recorder: "StepRecorder | None" = None) -> list[jax.Array]:
        """Runs the plan on inputs already placed on their meshes."""
        if recorder is None and self.held is None:
            return self._run_fast(inputs)
        if self.held is None:
            return self._walk(inputs, recorder)
        try:
            return self._walk(inputs, recorder)
        except Exception as error:
            lost = failures.lost_peer_error(error)
            failure = error if lost is None else lost
            # The other processes would wait for this one's transfers.
            failures.report_failure(f"{type(failure).__name__}: {failure}")
            if lost is None or lost is error:
                raise
            raise lost from error

    def _run_fast(self, inputs: Sequence[jax.Array]) -> list[jax.Array]:
        """`run` without a recorder, on one process: the plan flattened
        once into a `StepLoop` (`mpmd._mpmd_runtime`, a C++ loop; a
        `PythonStepLoop` where it is missing), which calls each
        program through JAX's C++ dispatch of its executable
        (`MeshProgram.dispatcher`). The inputs the plan reads are its own
        outputs or the placed arguments, so the per-call checks of
        `MeshProgram.__call__` are left out; a failing call is checked
        again to say what went wrong."""
        loop = self._loop
        if loop is None:
            loop = self._loop = self._step_loop()
        try:
            return loop.run(inputs)
        except Exception as error:
            index = loop.failed_step
            if index < 0:
                raise
            step = self.plan.steps[self._loop_origin[index]]
            if not isinstance(step, CallStep):
                raise
            problem = self.programs[step.program]._input_error(
                list(loop.failed_arguments))
            if problem is not None:
                raise problem from error
            raise self._execution_error(step, error) from error

    def _step_loop(self) -> Any:
        if native_step_loop():
            from mpmd._mpmd_runtime import StepLoop  # noqa: PLC0415
        else:
            from mpmd.runtime.step_loop import (  # noqa: PLC0415
                PythonStepLoop as StepLoop)

        steps = []
        self._loop_origin = origin = []
        count = len(self.plan.inputs)
        plan_steps = self.plan.steps
        index = 0
        while index < len(plan_steps):
            step = plan_steps[index]
            origin.append(index)
            if isinstance(step, CallStep):
                program = self.programs[step.program]
                steps.append((True, program.dispatcher(), step.inputs,
                              tuple(self.constants.get(index, ())),
                              step.outputs, step.free, None))
                count = max(count, max(step.outputs, default=-1) + 1)
                index += 1
                continue
            # Moves within one mesh that follow each other (activations
            # going to host memory after a forward, coming back before a
            # backward) are issued as one batch, unless one moves what
            # another made.
            end = index + 1
            made = {step.output}
            while (step.source == step.target and end < len(plan_steps)
                   and isinstance(plan_steps[end], TransferStep)
                   and plan_steps[end].source == plan_steps[end].target
                   and plan_steps[end].input not in made):
                made.add(plan_steps[end].output)
                end += 1
            group = plan_steps[index:end]
            if len(group) == 1:
                target = sharding_for(step.type, self.meshes)
                steps.append((False, Mover(target), (step.input,), (),
                              (step.output,), step.free, target))
            else:
                targets = [sharding_for(s.type, self.meshes) for s in group]
                steps.append((True, _batched_moves(targets),
                              tuple(s.input for s in group), (),
                              tuple(s.output for s in group),
                              tuple(v for s in group for v in s.free), None))
            count = max(count, max(s.output for s in group) + 1)
            index = end
        return StepLoop(steps, count, list(self.plan.output_values))

    def _execution_error(self, step: CallStep,
                         error: Exception) -> "ProgramExecutionError":
        where = (f" on process {jax.process_index()}"
                 if self.held is not None else "")
        return ProgramExecutionError(
            f"program {step.program} on mesh {step.mesh!r} "
            f"(origins: {', '.join(map(str, step.origins)) or 'inferred'}) "
            f"failed{where}: {error}")

    def _call(self, index: int, step: CallStep, env: dict[int, jax.Array],
              recorder: "StepRecorder | None") -> None:
        args = [env[value] for value in step.inputs]
        if step.constants:
            args.extend(self.constants[index])
        if recorder:
            recorder.before(step)
        try:
            results = self.programs[step.program](*args)
        except MpmdError:
            raise
        except Exception as error:  # XLA reports as RuntimeError etc.
            raise self._execution_error(step, error) from error
        if recorder:
            recorder.after(step, results)
        env.update(zip(step.outputs, results))

    def _peers(self, step: Any) -> dict[int, list[str]]:
        return _peers_of(self.meshes, (step.source, step.target))

    def _walk(self, inputs: Sequence[jax.Array],
              recorder: "StepRecorder | None") -> list[jax.Array]:
        """The plan step by step in Python: a traced or measured run
        (`recorder` sees each step), or a run as one process of several,
        which takes the steps of the meshes it holds devices of
        (`self.held`; None: all) and its part of the transfers that cross
        processes (`self.remote_transfers`). A result on another
        process's mesh is an array without addressable shards."""
        held = self.held
        env: dict[int, jax.Array] = dict(enumerate(inputs))
        for index, step in enumerate(self.plan.steps):
            if isinstance(step, CallStep):
                if held is None or step.mesh in held:
                    self._call(index, step, env, recorder)
            elif held is None or step.source in held or step.target in held:
                target = sharding_for(step.type, self.meshes)
                if recorder:
                    recorder.before(step)
                source = self.remote_transfers.get(index)
                if source is None:
                    moved = transfer(env[step.input], target)
                else:
                    failures.note_remote_transfer(
                        index, step.source, step.target, step.type.short(),
                        self._peers(step))
                    moved = remote.cross_process_transfer(
                        env.get(step.input), source, target, step.type.shape,
                        step.type.dtype)
                if moved is not None:
                    env[step.output] = moved
                if recorder:  # the sending side times its part
                    recorder.after(step, [moved] if moved is not None
                                   else [env[step.input]])
                # The env alone holds the value: it is freed at its last
                # use, which a run measuring memory sees.
                moved = None
            for value in step.free:
                env.pop(value, None)
        results = []
        for value, spec in zip(self.plan.output_values, self.plan.outputs):
            array = env.get(value)
            if array is None:  # on another process's mesh
                array = processes.empty_array(
                    spec.shape, spec.dtype, sharding_for(spec, self.meshes))
            results.append(array)
        return results


def _peers_of(meshes: dict[str, Mesh], names: Sequence[str]
              ) -> dict[int, list[str]]:
    """The other processes holding devices of the meshes `names`, with the
    ones of those meshes each holds."""
    me = jax.process_index()
    peers: dict[int, list[str]] = {}
    for name in names:
        for process in sorted({d.process_index
                               for d in meshes[name].devices.flat} - {me}):
            if name not in peers.setdefault(process, []):
                peers[process].append(name)
    return peers


def _batched_moves(targets: list[NamedSharding]) -> Any:
    """A function moving its arguments to `targets` (within their meshes):
    those whose layout stays the same (a change of memory kind) in one
    batched `jax.device_put`, the others by `transfer`."""

    def move(*arrays: jax.Array) -> list[jax.Array]:
        moved: list[Any] = [None] * len(arrays)
        batch = []
        for position, (array, target) in enumerate(zip(arrays, targets)):
            source = array.sharding
            if isinstance(source, NamedSharding) and \
                    source.mesh == target.mesh and source.spec == target.spec:
                batch.append(position)
            else:
                moved[position] = transfer(array, target)
        if batch:
            done = jax.device_put([arrays[p] for p in batch],
                                  [targets[p] for p in batch])
            for position, array in zip(batch, done):
                moved[position] = array
        return moved

    return move


def _remote_transfers(plan: ExecutionPlan,
                      meshes: dict[str, Mesh]) -> dict[int, NamedSharding]:
    """Per transfer step between meshes whose devices are not all this
    process's: the source value's sharding (a process holding only the
    target has no array to read it from)."""
    shardings: dict[int, NamedSharding] = {
        value: sharding_for(spec, meshes)
        for value, spec in enumerate(plan.inputs)}
    remote: dict[int, NamedSharding] = {}
    for index, step in enumerate(plan.steps):
        if isinstance(step, CallStep):
            program = plan.programs[step.program]
            mesh = meshes[step.mesh]
            for position, value in enumerate(step.outputs):
                layout = (program.out_shardings[position]
                          if program.out_shardings else None)
                shardings[value] = NamedSharding(mesh, partition_spec(layout))
            continue
        assert isinstance(step, TransferStep)
        target = sharding_for(step.type, meshes)
        shardings[step.output] = target
        devices = (*meshes[step.source].devices.flat,
                   *meshes[step.target].devices.flat)
        if not processes.fully_addressable(devices):
            source = shardings[step.input]
            remote[index] = source
    return remote

