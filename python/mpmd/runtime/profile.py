"""Timelines of a step from JAX's profiler: what the devices did, and when.

`profile_run(executor, inputs)` runs one step of a plan under
`jax.profiler` without waiting between steps (the meshes overlap as in an
untraced run), reads the profile back (`jax.profiler.ProfileData`) and maps
its events onto the plan's steps (`trace_from_profile`), giving the same
`Trace` as the host recorder, with `source == "profiler"`.

What the XLA:CPU backend records (jaxlib 0.10.2), and how it is used:

- Every thunk an executable runs (a fusion, a dot, a copy, ...) is an event
  on the thread that ran it, with the stats `hlo_module` (the executable's
  name, e.g. `jit_p3_stage2_fwd`), `run_id` (one execution of it, the same
  on every device it runs on) and `device_ordinal` (the global device id).
  A call's slice on its mesh spans the first to the last thunk of its run
  on the mesh's devices. Executions that ran no thunk leave only a
  `ThunkExecutor::Execute (wait for completion)` mark with `run_id` and
  `device_ordinal`; it is used when there is nothing else.
- Threads are a pool shared by all devices (`tf_XLAPjRtCpuClient/...` and,
  for work split inside an op, `tf_XLAEigen/...`): a thread is not a
  device, so events are grouped by their stats, not by thread.
- The dispatching thread records the launch: `CommonPjRtLoadedExecutable::
  Execute (jit_NAME)` with `name` and `run_id` for executables over several
  devices, `...::ExecuteHelperOnSingleDevice` without either for one device.
- A transfer (`jax.device_put` between devices) shows only on the
  dispatching thread (`BatchedCopyToDeviceWithSharding: dispatch`,
  `CopyToMemorySpace`); the copy itself is a memcpy scheduled for when the
  source is ready, which records no event. Resharding programs a transfer
  runs (`jit_identity`) record thunks like any executable.

Mapping: the k-th execution of executable E (ordered by when it started;
an XLA:CPU device runs its executions in launch order) is the k-th call of
the plan whose program was compiled to E. Each step's dispatch is wrapped
in a `mpmd.step` annotation (a `TraceMe` with the step's index) and the
whole run in `mpmd.run`: they give each transfer its dispatch window, and
the run its clock origin (times are microseconds since `mpmd.run` began).
A transfer's slice starts when the copy can start (dispatched, and its
source computed) and ends at the end of what was recorded for it: its
dispatch, and any resharding program it launched. Its end is a lower bound
of when the data landed; the first call reading it bounds it from above.
"""

from __future__ import annotations

import bisect
import glob
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import jax

from mpmd.runtime.plan import CallStep, ExecutionPlan, Step, TransferStep
from mpmd.runtime.trace import (PROFILER, CallEvent, Trace, TraceError,
                                TransferEvent)
from mpmd.runtime.trace_record import (donates_inputs, prepare_traced_run,
                                       transfer_nbytes)

__all__ = ["SOURCES", "ProfileError", "ProfileUnavailable", "ProfiledEvent",
           "StepAnnotator", "check_source", "donates_inputs",
           "events_from_profile", "module_names", "profile_run",
           "trace_from_profile"]

# What `Compiled.run_traced(source=...)` accepts: the profiler, falling back
# to host timestamps ("auto"), only the profiler, or only host timestamps.
SOURCES = ("auto", "profiler", "host")

RUN = "mpmd.run"
STEP = "mpmd.step"
_HOST_EXECUTE = "CommonPjRtLoadedExecutable::Execute"
_SINGLE_DEVICE_EXECUTE = \
    "CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice"
_WAIT = "ThunkExecutor::Execute (wait for completion)"


class ProfileError(TraceError):
    """The profile of a step cannot be mapped onto the plan. `results` holds
    the step's results when the step ran (None otherwise)."""

    def __init__(self, message: str, results: Any = None):
        super().__init__(message)
        self.results = results


class ProfileUnavailable(ProfileError):
    """The JAX profiler could not be started, stopped or read; `results`
    holds the step's results if it ran."""


def check_source(source: Any) -> str:
    """`source` if it is one of `SOURCES`, else a `TraceError` naming them."""
    if not isinstance(source, str) or source not in SOURCES:
        valid = ", ".join(repr(s) for s in SOURCES)
        raise TraceError(f"trace source must be one of {valid}; got "
                         f"{source!r}")
    return source


@dataclass(frozen=True)
class ProfiledEvent:
    """One event of a profile: the thread (line) that recorded it, its name,
    its times (ns, one clock for the whole profile) and its stats."""

    line: str
    name: str
    start_ns: float
    end_ns: float
    stats: Mapping[str, Any] = field(default_factory=dict)


def events_from_profile(data: Any) -> list[ProfiledEvent]:
    """Every event of a `jax.profiler.ProfileData`, flattened. Lines are
    named `plane/line` so that threads of different planes stay apart."""
    events = []
    for plane in data.planes:
        for line in plane.lines:
            where = f"{plane.name}/{line.name}"
            for event in line.events:
                stats = {key: value for key, value in event.stats
                         if not key.startswith("_")}
                events.append(ProfiledEvent(where, event.name,
                                            event.start_ns, event.end_ns,
                                            stats))
    return events


class StepAnnotator:
    """A `StepRecorder` that wraps the dispatch of every step in a
    `mpmd.step` profiler annotation carrying the step's index. It waits for
    nothing."""

    def __init__(self, plan: ExecutionPlan):
        self._index = {id(step): index
                       for index, step in enumerate(plan.steps)}
        self._open: Any = None

    def before(self, step: Step) -> None:
        self._open = jax.profiler.TraceAnnotation(
            STEP, index=self._index[id(step)])
        self._open.__enter__()

    def after(self, step: Step, results: Sequence[Any]) -> None:
        del step, results
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None


def module_names(executor: Any) -> dict[str, str]:
    """Per program of the executor, the name XLA gave its executable (the
    `hlo_module` of its events). Programs with the same text on the same
    mesh share one executable and so one name."""
    names = {}
    for name, program in executor.programs.items():
        try:
            names[name] = program.compiled.runtime_executable() \
                .hlo_modules()[0].name
        except Exception:  # noqa: BLE001 - best effort: JAX's default name
            from mpmd.runtime.program import _identifier  # noqa: PLC0415
            names[name] = f"jit_{_identifier(name)}"
    return names


def profile_run(executor: Any, inputs: Sequence[jax.Array],
                log_dir: str | os.PathLike[str] | None = None,
                ) -> tuple[list[jax.Array], Trace]:
    """Runs one step of `executor`'s plan under the JAX profiler and returns
    its results and its `Trace` (source "profiler"). Nothing waits between
    steps; the run waits for its results at the end. Before the profiler
    starts, `prepare_traced_run` readies the step (a warm-up run where the
    executor never ran and the plan donates nothing, then a wait for work
    launched earlier), so that the trace opens on the step's first dispatch.

    Raises `ProfileUnavailable` when the profiler cannot start or its
    output cannot be read (the step did not run, or its results are in
    `.results`), and `ProfileError` with the results in `.results` when the
    profile does not map onto the plan. The profile is written to `log_dir`
    (kept) or a temporary directory (removed)."""
    first_run = prepare_traced_run(executor, inputs)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # Python function events: noise, slow
    with tempfile.TemporaryDirectory(prefix="mpmd-profile-") as scratch:
        directory = os.fspath(log_dir) if log_dir is not None else scratch
        try:
            jax.profiler.start_trace(directory, profiler_options=options)
        except Exception as error:  # RuntimeError: another trace is running
            raise ProfileUnavailable(
                f"the JAX profiler could not start: {error}") from error
        try:
            with jax.profiler.TraceAnnotation(RUN):
                results = jax.block_until_ready(executor.run(
                    inputs, recorder=StepAnnotator(executor.plan)))
        finally:
            try:
                jax.profiler.stop_trace()
            except Exception as error:  # noqa: BLE001
                stop_error: Exception | None = error
            else:
                stop_error = None
        if stop_error is not None:
            raise ProfileUnavailable(
                f"the JAX profiler could not stop: {stop_error}",
                results) from stop_error
        events = _read_profile(directory, results)
    mesh_of_device = {device.id: name
                      for name, mesh in executor.meshes.items()
                      for device in mesh.devices.flat}
    try:
        trace = trace_from_profile(executor.plan, events,
                                   module_names(executor), mesh_of_device)
    except ProfileError as error:
        error.results = results
        raise
    trace.first_run = first_run
    return results, trace


def _read_profile(directory: str, results: Any) -> list[ProfiledEvent]:
    files = sorted(glob.glob(os.path.join(directory, "plugins", "profile",
                                          "*", "*.xplane.pb")),
                   key=os.path.getmtime)
    if not files:
        raise ProfileUnavailable(
            f"the JAX profiler wrote no .xplane.pb file under {directory!r}",
            results)
    try:
        data = jax.profiler.ProfileData.from_file(files[-1])
    except Exception as error:  # noqa: BLE001
        raise ProfileUnavailable(
            f"cannot read the profile {files[-1]!r}: {error}",
            results) from error
    return events_from_profile(data)


# ------------------------------------------------------------------ mapping

@dataclass
class _Run:
    """One execution of an executable: its span on each device."""

    module: str | None
    run_id: int
    devices: dict[int, list[float]] = field(default_factory=dict)
    # Only `wait for completion` marks seen so far (no thunk).
    marks_only: bool = True

    def add(self, device: int, start: float, end: float,
            mark: bool) -> None:
        if mark and not self.marks_only:
            return  # thunks give the span; marks are a last resort
        if not mark and self.marks_only:
            self.devices.clear()
            self.marks_only = False
        span = self.devices.get(device)
        if span is None:
            self.devices[device] = [start, end]
        else:
            span[0] = min(span[0], start)
            span[1] = max(span[1], end)

    @property
    def start(self) -> float:
        return min(span[0] for span in self.devices.values())

    @property
    def end(self) -> float:
        return max(span[1] for span in self.devices.values())


def trace_from_profile(plan: ExecutionPlan,
                       events: Iterable[ProfiledEvent],
                       modules: Mapping[str, str],
                       mesh_of_device: Mapping[int, str]) -> Trace:
    """The `Trace` of one step of `plan` from the events of its profile.

    `modules` names each program's executable, `mesh_of_device` the mesh of
    each global device id. The profile must hold one `mpmd.run` annotation
    with a `mpmd.step` annotation per step on the same thread, and one
    execution per call of the plan; anything else raises `ProfileError`
    naming what is missing."""
    events = list(events)
    runs = [e for e in events if e.name == RUN]
    if len(runs) != 1:
        raise ProfileError(
            f"the profile has {len(runs)} '{RUN}' annotations, expected 1 "
            "(was the step profiled by mpmd.runtime.profile.profile_run?)")
    run = runs[0]
    origin = run.start_ns
    dispatch = [e for e in events if e.line == run.line
                and run.start_ns <= e.start_ns <= run.end_ns]
    windows = _step_windows(plan, dispatch)
    executions = _executions(events, run)
    if not executions:
        raise ProfileError(
            "the profile has no device events with 'hlo_module', 'run_id' "
            "and 'device_ordinal' stats: this backend's profiler records no "
            "thunks that mpmd can map onto the plan")
    # By executable and mesh: an executable loaded for several meshes of
    # one shape (compile_programs) has one name on all of them.
    by_module: dict[tuple[str, str | None], list[_Run]] = defaultdict(list)
    for execution in executions.values():
        if execution.module is not None:
            meshes = {mesh_of_device.get(d) for d in execution.devices}
            mesh = meshes.pop() if len(meshes) == 1 else None
            by_module[(execution.module, mesh)].append(execution)
    for found in by_module.values():
        found.sort(key=lambda r: (r.start, r.end))

    def us(ns: float) -> float:
        return (ns - origin) / 1000.0

    # Calls: the k-th execution of an executable is its k-th call.
    calls_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, step in enumerate(plan.steps):
        if isinstance(step, CallStep):
            calls_of[(modules.get(step.program, step.program),
                      step.mesh)].append(index)
    # Launches on other threads, or still running from before the run,
    # are not the run's: multi-device launches name their run id on the
    # dispatching thread; of single-device ones, the run's are the last
    # (a device runs an executable's executions in launch order).
    launched = {e.stats.get("run_id") for e in dispatch
                if e.name.startswith(_HOST_EXECUTE)}
    named = {e.stats.get("run_id") for e in events
             if e.name.startswith(_HOST_EXECUTE)}
    mapped: dict[int, _Run] = {}
    for module, indices in calls_of.items():
        found = [r for r in by_module.get(module, [])
                 if r.run_id in launched or r.run_id not in named]
        if len(found) > len(indices):
            found = found[len(found) - len(indices):]
        if len(found) < len(indices):
            # Executions of it where no call of the plan runs it: on the
            # wrong mesh (or over several).
            stray = [r for (name, mesh), runs in by_module.items()
                     if name == module[0] and (name, mesh) not in calls_of
                     for r in runs]
            if stray:
                step = plan.steps[indices[len(found)]]
                where = ", ".join(sorted(str(mesh_of_device.get(d))
                                         for d in stray[0].devices))
                raise ProfileError(
                    f"call {step.label()} of program {step.program} runs on "
                    f"mesh {step.mesh!r}, but its execution {stray[0].run_id}"
                    f" in the profile ran on devices "
                    f"{sorted(stray[0].devices)} (mesh {where})")
        if len(found) != len(indices):
            programs = sorted({plan.steps[i].program for i in indices})
            raise ProfileError(
                f"program {', '.join(programs)} (executable {module[0]} on "
                f"mesh {module[1]!r}): the "
                f"plan calls it {len(indices)} time(s), the profile has "
                f"{len(found)} execution(s) of it")
        mapped.update(zip(indices, found))

    calls: list[CallEvent] = []
    ready: dict[int, float] = {}  # value -> when it was computed (us)
    for index, execution in mapped.items():
        step = plan.steps[index]
        assert isinstance(step, CallStep)
        event = CallEvent(step.mesh, step.label(), step.program, step.origins,
                          step.stage, step.call_counter, us(execution.start),
                          us(execution.end), step.inputs, step.outputs)
        calls.append(event)
        for value in step.outputs:
            ready[value] = event.end_us

    # Transfers, in plan order (a transfer may move a transfer's result).
    plan_modules = {module for module, _ in calls_of}
    others = _transfer_executions(plan, dispatch, executions, plan_modules,
                                  windows, mesh_of_device)
    transfers: list[TransferEvent] = []
    for index, step in enumerate(plan.steps):
        if not isinstance(step, TransferStep):
            continue
        begin, end = windows[index]
        start = max(us(begin), ready.get(step.input, 0.0))
        finish = max(start, us(end),
                     *(us(r.end) for r in others.get(index, ())))
        transfers.append(TransferEvent(
            step.source, step.target, transfer_nbytes(step),
            step.type.short(), step.input, step.output, start, finish))
        ready[step.output] = finish

    ends = [us(run.end_ns)] + [c.end_us for c in calls] + \
        [t.end_us for t in transfers]
    return Trace(tuple(m.name for m in plan.meshes),
                 sorted(calls, key=lambda c: (c.start_us, c.end_us)),
                 sorted(transfers, key=lambda t: (t.start_us, t.end_us)),
                 max(ends), source=PROFILER)


def _step_windows(plan: ExecutionPlan, dispatch: list[ProfiledEvent],
                  ) -> dict[int, tuple[float, float]]:
    windows: dict[int, tuple[float, float]] = {}
    for event in dispatch:
        if event.name != STEP:
            continue
        index = event.stats.get("index")
        if not isinstance(index, int) or not 0 <= index < len(plan.steps):
            last = len(plan.steps) - 1
            raise ProfileError(f"a '{STEP}' annotation has index {index!r}, "
                               f"not a step of the plan (0..{last})")
        if index in windows:
            raise ProfileError(f"step {index} was annotated twice in the "
                               "profile")
        windows[index] = (event.start_ns, event.end_ns)
    missing = [i for i in range(len(plan.steps)) if i not in windows]
    if missing:
        shown = ", ".join(map(str, missing[:8]))
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        raise ProfileError(f"the profile lacks the '{STEP}' annotation of "
                           f"step(s) {shown}{more}")
    return windows


def _executions(events: list[ProfiledEvent],
                run: ProfiledEvent) -> dict[int, _Run]:
    """Device work that started in the run, by run id. A run's executable
    name comes from its thunks, else from the launch event naming it."""
    executions: dict[int, _Run] = {}
    names: dict[int, str] = {}
    for event in events:
        stats = event.stats
        run_id = stats.get("run_id")
        if not isinstance(run_id, int) or event.start_ns < run.start_ns:
            continue
        if event.name.startswith(_HOST_EXECUTE) and "name" in stats:
            names[run_id] = str(stats["name"])
            continue
        device = stats.get("device_ordinal")
        if not isinstance(device, int):
            continue
        module = stats.get("hlo_module")
        if module is None and event.name != _WAIT:
            continue
        execution = executions.get(run_id)
        if execution is None:
            execution = executions[run_id] = _Run(None, run_id)
        if module is not None:
            execution.module = str(module)
        execution.add(device, event.start_ns, event.end_ns,
                      mark=module is None)
    for run_id, execution in executions.items():
        if execution.module is None:
            execution.module = names.get(run_id)
    return executions


def _transfer_executions(plan: ExecutionPlan, dispatch: list[ProfiledEvent],
                         executions: dict[int, _Run], plan_modules: set[str],
                         windows: dict[int, tuple[float, float]],
                         mesh_of_device: Mapping[int, str],
                         ) -> dict[int, list[_Run]]:
    """Per transfer step, the executions of resharding programs it launched.

    Multi-device launches name their run id on the dispatching thread,
    inside the step's window. Single-device launches do not: the ones
    left over are given, in the order they started, to the transfers that
    launched single-device programs, in plan order, on the transfer's
    meshes."""
    extra = [r for r in executions.values() if r.module not in plan_modules]
    if not extra:
        return {}
    transfers = {i: s for i, s in enumerate(plan.steps)
                 if isinstance(s, TransferStep)}
    owner: dict[int, list[_Run]] = defaultdict(list)
    taken: set[int] = set()
    single: dict[int, int] = defaultdict(int)  # step -> launches to place
    by_id = {r.run_id: r for r in extra}
    spans = sorted((windows[i][0], windows[i][1], i) for i in transfers)
    starts = [begin for begin, _, _ in spans]
    for event in dispatch:
        step = _step_at(spans, starts, event.start_ns)
        if step is None:
            continue
        if event.name.startswith(_HOST_EXECUTE) and \
                event.stats.get("run_id") in by_id:
            execution = by_id[event.stats["run_id"]]
            owner[step].append(execution)
            taken.add(execution.run_id)
        elif event.name == _SINGLE_DEVICE_EXECUTE:
            single[step] += 1
    left = sorted((r for r in extra if r.run_id not in taken),
                  key=lambda r: r.start)
    for step in sorted(single):
        meshes = {transfers[step].source, transfers[step].target}
        for _ in range(single[step]):
            for position, execution in enumerate(left):
                where = {mesh_of_device.get(d) for d in execution.devices}
                if where <= meshes:
                    owner[step].append(left.pop(position))
                    break
    return owner


def _step_at(spans: list[tuple[float, float, int]], starts: list[float],
             ns: float) -> int | None:
    """The transfer whose dispatch window holds time `ns` (windows are
    disjoint: steps are dispatched one after another)."""
    position = bisect.bisect_right(starts, ns) - 1
    if position >= 0 and spans[position][0] <= ns <= spans[position][1]:
        return spans[position][2]
    return None
