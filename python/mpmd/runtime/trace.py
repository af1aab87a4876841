"""Traces of runs: what ran where, and when.

    result, trace = compiled.run_traced(params, batch)
    print(trace.mesh_order_text())
    trace.write_chrome_json("run.json")   # open in Perfetto / chrome://tracing
    trace.write_svg("run.svg")            # a pipeline picture

This module is the model: a `Trace` holds the `CallEvent`s and
`TransferEvent`s of one run and answers questions about them (the order
per mesh, idle time, overlap); its writers are `mpmd.runtime.trace_render`
(Chrome JSON, SVG), and `mpmd.runtime.trace_record` takes host traces and
readies a step before it is traced.

A trace comes from one of two sources (`Trace.source`):

- "profiler" (`mpmd.runtime.profile`): the device timeline JAX's profiler
  recorded for the step, which ran as an untraced step does (nothing waits
  between steps), so the meshes overlap as they really do.
- "host": `TraceRecorder` (`mpmd.runtime.trace_record`), the
  `StepRecorder` that `PlanExecutor.run` calls around every step, waits
  for each step's results (`jax.block_until_ready`) to know when the step
  ended, so the run is serialized: the meshes no longer overlap, and the
  timeline shows each step's own cost, not the concurrency of an untraced
  run. Used where the profiler gives nothing usable.

Times are microseconds since the run started. `idle_us()` is, per mesh, the
time its devices sat idle inside the step.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Sequence

from mpmd.errors import MpmdError
from mpmd.runtime.origins import Origin, origins_from
from mpmd.runtime.plan import Step

__all__ = ["CallEvent", "HOST", "Kind", "PROFILER", "REPLAY", "SOURCE_LABELS",
           "StepRecorder", "Trace", "TraceError", "TransferEvent",
           # Re-exported from mpmd.runtime.trace_record for existing importers.
           "TraceRecorder", "donates_inputs", "prepare_traced_run",
           "settle_devices", "transfer_nbytes"]

Kind = Literal["forward", "backward", "merged", "inferred"]

HOST = "host"
PROFILER = "profiler"
REPLAY = "replay"
# How a trace's timeline was taken, in words (JSON metadata, SVG header).
SOURCE_LABELS = {
    HOST: "host timestamps, serialized",
    PROFILER: "device timeline from the XLA profiler",
    REPLAY: "measured durations replayed with every mesh computing in "
            "parallel (mpmd.runtime.simulate.replay)",
}


class TraceError(MpmdError):
    """A recorder was used out of order, or a trace cannot be written."""


class StepRecorder(Protocol):
    """Hooks `PlanExecutor.run` calls around every call and transfer."""

    def before(self, step: Step) -> None:
        """Just before the step is dispatched."""

    def after(self, step: Step, results: Sequence[Any]) -> None:
        """Just after the step was dispatched, with its results."""


# ------------------------------------------------------------------ events

@dataclass(frozen=True)
class CallEvent:
    """One program call on one mesh."""

    mesh: str
    label: str
    program: str
    origins: tuple[Origin, ...]
    stage: int | None
    call_counter: int | None
    start_us: float
    end_us: float
    inputs: tuple[int, ...] = ()
    outputs: tuple[int, ...] = ()

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us

    @property
    def kind(self) -> Kind:
        """forward (all transpose counts 0), backward (all >= 1), merged
        (both), or inferred (no origin: code mesh inference placed)."""
        if not self.origins:
            return "inferred"
        counts = {o.is_backward for o in self.origins}
        if counts == {False}:
            return "forward"
        return "backward" if counts == {True} else "merged"

    @property
    def short_label(self) -> str:
        """`F3` / `B3` / `FB3` (`R3`: a forward recomputed for its
        backward) with a call counter, else the label."""
        if self.call_counter is not None and self.kind != "inferred":
            prefix = {"forward": "F", "backward": "B", "merged": "FB"}
            if "[r]#" in self.label:
                return f"R{self.call_counter}"
            return f"{prefix[self.kind]}{self.call_counter}"
        return self.label


@dataclass(frozen=True)
class TransferEvent:
    """One array moved from mesh `source` to mesh `target`."""

    source: str
    target: str
    nbytes: int
    tensor: str
    input: int
    output: int
    start_us: float
    end_us: float

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


# ------------------------------------------------------------------ trace

@dataclass
class Trace:
    """The calls and transfers of one run, per mesh, in time."""

    meshes: tuple[str, ...]
    calls: list[CallEvent] = field(default_factory=list)
    transfers: list[TransferEvent] = field(default_factory=list)
    total_us: float = 0.0
    # Where the times come from: HOST or PROFILER (see the module doc).
    source: str = HOST
    # Why the profiler was not used, when a profiled run fell back to host.
    fallback_reason: str | None = None
    # The traced step was the executor's first run (not warmed up because
    # the plan donates its inputs): its times include XLA's one-time costs.
    first_run: bool = False

    @property
    def source_label(self) -> str:
        """`source` in words: "host timestamps, serialized" or "device
        timeline from the XLA profiler"."""
        return SOURCE_LABELS.get(self.source, self.source)

    # -- queries

    def calls_on(self, mesh: str) -> list[CallEvent]:
        """The calls of `mesh` in the order they started."""
        return sorted((c for c in self.calls if c.mesh == mesh),
                      key=lambda c: c.start_us)

    def call(self, label: str, mesh: str | None = None) -> CallEvent:
        """The first call with this label (on `mesh`, if given)."""
        for event in sorted(self.calls, key=lambda c: c.start_us):
            if event.label == label and mesh in (None, event.mesh):
                return event
        where = f" on mesh {mesh!r}" if mesh else ""
        raise TraceError(f"no call labelled {label!r}{where} in the trace")

    def end_us(self) -> float:
        """When the last step ended (or the run, if later)."""
        ends = [e.end_us for e in [*self.calls, *self.transfers]]
        return max([self.total_us, *ends])

    def mesh_order(self) -> dict[str, list[str]]:
        """Per mesh, the labels of its calls in the order they ran."""
        return {mesh: [c.label for c in self.calls_on(mesh)]
                for mesh in self.meshes}

    def mesh_order_text(self) -> str:
        """One line per mesh: `m1: layer0 layer1 layer1(1) layer0(1)`."""
        return "\n".join(f"{mesh}: {' '.join(labels)}".rstrip()
                         for mesh, labels in self.mesh_order().items())

    # -- idle time

    def step_window(self) -> tuple[float, float]:
        """From the first call's start to the last call's end, on any mesh
        (the part of the run where devices work); (0, 0) without calls."""
        if not self.calls:
            return (0.0, 0.0)
        return (min(c.start_us for c in self.calls),
                max(c.end_us for c in self.calls))

    def busy_intervals(self, mesh: str) -> list[tuple[float, float]]:
        """The times `mesh` runs a call, overlapping calls merged."""
        merged: list[list[float]] = []
        for call in self.calls_on(mesh):
            if merged and call.start_us <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], call.end_us)
            else:
                merged.append([call.start_us, call.end_us])
        return [(start, end) for start, end in merged]

    def idle_gaps(self) -> dict[str, list[tuple[float, float]]]:
        """Per mesh, the intervals of the step window in which it runs no
        call: waiting before its first call (the pipeline's fill), between
        calls, and after its last (the drain). Transfers do not count as
        work: on CPU a copy occupies no device's thread."""
        begin, end = self.step_window()
        gaps: dict[str, list[tuple[float, float]]] = {}
        for mesh in self.meshes:
            found, cursor = [], begin
            for start, finish in self.busy_intervals(mesh):
                if start > cursor:
                    found.append((cursor, start))
                cursor = max(cursor, finish)
            if end > cursor:
                found.append((cursor, end))
            gaps[mesh] = found
        return gaps

    def idle_us(self) -> dict[str, float]:
        """Per mesh, the microseconds of the step window it spent waiting
        (the sum of `idle_gaps()`). With source "host" the run was
        serialized, so this is each mesh's share of a serial run, not the
        pipeline's real idle time."""
        return {mesh: sum(end - start for start, end in gaps)
                for mesh, gaps in self.idle_gaps().items()}

    def overlap_us(self, meshes: Sequence[str] | None = None) -> float:
        """The microseconds in which two meshes or more (of `meshes`, all
        by default) ran a call at the same time: how much they overlapped.
        Zero when they took turns (a host trace is serialized, so it is
        zero there)."""
        edges = sorted((time, change) for mesh in (meshes or self.meshes)
                       for start, end in self.busy_intervals(mesh)
                       for time, change in ((start, 1), (end, -1)))
        total, running, since = 0.0, 0, 0.0
        for time, change in edges:
            if running >= 2:
                total += time - since
            running += change
            since = time
        return total

    # -- many processes

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for sending between processes); `from_dict` inverts."""
        return {"meshes": list(self.meshes), "total_us": self.total_us,
                "source": self.source,
                "fallback_reason": self.fallback_reason,
                "first_run": self.first_run,
                "calls": [dataclasses.asdict(c) for c in self.calls],
                "transfers": [dataclasses.asdict(t) for t in self.transfers]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trace":
        def call(d: dict[str, Any]) -> CallEvent:
            return CallEvent(**{**d, "origins": origins_from(d["origins"]),
                                "inputs": tuple(d["inputs"]),
                                "outputs": tuple(d["outputs"])})

        return cls(tuple(data["meshes"]), [call(c) for c in data["calls"]],
                   [TransferEvent(**t) for t in data["transfers"]],
                   data["total_us"], data.get("source", HOST),
                   data.get("fallback_reason"),
                   bool(data.get("first_run", False)))

    @classmethod
    def merge(cls, traces: Sequence["Trace"]) -> "Trace":
        """One trace of a multi-process run from each process's own (clocks
        started together). A call of a mesh spanning processes, and a
        transfer between processes, is recorded by each process taking
        part: they become one event from the earliest start to the latest
        end."""
        calls: dict[tuple, CallEvent] = {}
        for event in (c for t in traces for c in t.calls):
            key = (event.mesh, event.program, event.inputs, event.outputs)
            seen = calls.get(key)
            calls[key] = event if seen is None else dataclasses.replace(
                seen, start_us=min(seen.start_us, event.start_us),
                end_us=max(seen.end_us, event.end_us))
        transfers: dict[tuple, TransferEvent] = {}
        for event in (e for t in traces for e in t.transfers):
            key = (event.input, event.output)
            seen = transfers.get(key)
            transfers[key] = event if seen is None else dataclasses.replace(
                seen, start_us=min(seen.start_us, event.start_us),
                end_us=max(seen.end_us, event.end_us))
        meshes = traces[0].meshes if traces else ()
        sources = {t.source for t in traces}
        reasons = sorted({t.fallback_reason for t in traces
                          if t.fallback_reason})
        return cls(meshes, sorted(calls.values(), key=lambda c: c.start_us),
                   sorted(transfers.values(), key=lambda e: e.start_us),
                   max((t.total_us for t in traces), default=0.0),
                   sources.pop() if len(sources) == 1 else HOST,
                   "; ".join(reasons) or None,
                   any(t.first_run for t in traces))

    # -- writing out (mpmd.runtime.trace_render, imported in each method: it
    # imports this module)

    def to_chrome_json(self) -> dict[str, Any]:
        """The trace in Chrome's trace event format (JSON object form): one
        process `mpmd` labelled with the trace's source; per mesh a track of
        its calls (`m1`) and one of the transfers arriving there (`m1
        transfers in`), more (`m1 #2`) where slices overlap; complete events
        for steps, and flow arrows producer -> transfer -> consumer."""
        from mpmd.runtime import trace_render  # noqa: PLC0415
        return trace_render.chrome_json(self)

    def write_chrome_json(self, path: str | os.PathLike[str]) -> None:
        """Writes `to_chrome_json()` to `path`."""
        from mpmd.runtime import trace_render  # noqa: PLC0415
        trace_render.write_chrome_json(self, path)

    def to_svg(self, width: int = 1000) -> str:
        """A timeline: one row per mesh, a box per call colored by kind,
        hatched idle gaps with each mesh's idle total on the right, thin
        lines for transfers, a time axis below; the header says where the
        times come from."""
        from mpmd.runtime import trace_render  # noqa: PLC0415
        return trace_render.svg(self, width)

    def write_svg(self, path: str | os.PathLike[str],
                  width: int = 1000) -> None:
        """Writes `to_svg(width)` to `path`."""
        from mpmd.runtime import trace_render  # noqa: PLC0415
        trace_render.write_svg(self, path, width)


# ------------------------------------------------------------------ moved

# Where the names re-exported for existing importers live. Their module
# imports this one, so they are looked up on first use (PEP 562) rather
# than imported here: an import at either end would find the other module
# half-initialized when it is imported first.
_MOVED = {name: "mpmd.runtime.trace_record"
          for name in ("TraceRecorder", "donates_inputs", "prepare_traced_run",
                       "settle_devices", "transfer_nbytes")}


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MOVED])
