"""Traces of runs: what ran where, and when.

    result, trace = compiled.run_traced(params, batch)
    print(trace.mesh_order_text())
    trace.write_chrome_json("run.json")   # open in Perfetto / chrome://tracing
    trace.write_svg("run.svg")            # a pipeline picture

A trace comes from one of two sources (`Trace.source`):

- "profiler" (`mpmd.runtime.profile`): the device timeline JAX's profiler
  recorded for the step, which ran as an untraced step does (nothing waits
  between steps), so the meshes overlap as they really do.
- "host": `TraceRecorder`, the `StepRecorder` that `PlanExecutor.run` calls
  around every step, waits for each step's results
  (`jax.block_until_ready`) to know when the step ended, so the run is
  serialized: the meshes no longer overlap, and the timeline shows each
  step's own cost, not the concurrency of an untraced run. Used where the
  profiler gives nothing usable.

Times are microseconds since the run started. `idle_us()` is, per mesh, the
time its devices sat idle inside the step.

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

import dataclasses
import json
import math
import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol, Sequence
from xml.sax.saxutils import escape, quoteattr

import jax
import numpy as np

from mpmd.errors import MpmdError
from mpmd.origins import Origin, origins_from
from mpmd.runtime.plan import CallStep, ExecutionPlan, Step, TransferStep

__all__ = ["CallEvent", "HOST", "Kind", "PROFILER", "REPLAY", "SOURCE_LABELS",
           "StepRecorder", "Trace", "TraceError", "TraceRecorder",
           "TransferEvent", "donates_inputs", "prepare_traced_run",
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

_COLORS: dict[str, str] = {
    "forward": "#4e79a7", "backward": "#f28e2b", "merged": "#9c6ade",
    "inferred": "#b0b0b0",
}
_PID = 1


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

    # -- Chrome trace event format

    def to_chrome_json(self) -> dict[str, Any]:
        """The trace in Chrome's trace event format (JSON object form): one
        process `mpmd` labelled with the trace's source; per mesh a track of
        its calls (`m1`) and one of the transfers arriving there (`m1
        transfers in`), more (`m1 #2`) where slices overlap; complete events
        for steps, and flow arrows producer -> transfer -> consumer."""
        names, call_tids, transfer_tids = self._tracks()
        events: list[dict[str, Any]] = [
            _meta("process_name", 0, {"name": "mpmd"}),
            _meta("process_labels", 0, {"labels": self.source_label})]
        for tid, name in enumerate(names, start=1):
            events.append(_meta("thread_name", tid, {"name": name}))
            events.append(_meta("thread_sort_index", tid,
                                {"sort_index": tid}))
        call_tid = {}
        for event, tid in zip(self.calls, call_tids):
            call_tid[id(event)] = tid
            events.append({
                "name": event.label, "cat": event.kind, "ph": "X",
                "ts": _us(event.start_us), "dur": _us(event.duration_us),
                "pid": _PID, "tid": tid,
                "args": {"mesh": event.mesh, "program": event.program,
                         "origins": [str(o) for o in event.origins],
                         "stage": event.stage,
                         "call_counter": event.call_counter},
            })
        producers = {v: c for c in self.calls for v in c.outputs}
        for flow_id, (event, tid) in enumerate(
                zip(self.transfers, transfer_tids), start=1):
            events.append({
                "name": f"{event.source} -> {event.target}",
                "cat": "transfer", "ph": "X", "ts": _us(event.start_us),
                "dur": _us(event.duration_us), "pid": _PID,
                "tid": tid,
                "args": {"source": event.source, "target": event.target,
                         "bytes": event.nbytes, "tensor": event.tensor,
                         "value": event.output},
            })
            # Each point lies inside the slice it binds to.
            points = []
            producer = producers.get(event.input)
            if producer is not None:
                points.append((call_tid[id(producer)], _mid(producer)))
            points.append((tid, _mid(event)))
            consumer = self._consumer(event)
            if consumer is not None:
                points.append((call_tid[id(consumer)], _mid(consumer)))
            if len(points) < 2:
                continue
            for index, (point_tid, ts) in enumerate(points):
                phase = ("s" if index == 0 else
                         "f" if index == len(points) - 1 else "t")
                flow = {"name": "transfer", "cat": "transfer", "ph": phase,
                        "id": flow_id, "ts": _us(ts), "pid": _PID,
                        "tid": point_tid}
                if phase == "f":
                    flow["bp"] = "e"
                events.append(flow)
        other: dict[str, Any] = {
            "producer": "mpmd", "meshes": list(self.meshes),
            "total_us": _us(self.total_us), "source": self.source,
            "timeline": self.source_label,
            "idle_us": {m: _us(v) for m, v in self.idle_us().items()}}
        if self.fallback_reason:
            other["fallback_reason"] = self.fallback_reason
        if self.first_run:
            other["first_run"] = True
        return {"traceEvents": events, "displayTimeUnit": "ms",
                "otherData": other}

    def _tracks(self) -> tuple[list[str], list[int], list[int]]:
        """Track names (tid = position + 1), and the tid of each call and
        each transfer. Slices on one track must not overlap (the format
        nests them), so overlapping ones go to extra tracks."""
        call_lane = _lanes([(c.start_us, c.end_us) for c in self.calls],
                           [c.mesh for c in self.calls])
        move_lane = _lanes([(t.start_us, t.end_us) for t in self.transfers],
                           [t.target for t in self.transfers])
        names: list[str] = []
        tid: dict[tuple[str, str, int], int] = {}
        for mesh in self.meshes:
            for kind, lanes in (("calls", call_lane), ("in", move_lane)):
                count = max([lane + 1 for (m, lane) in lanes if m == mesh],
                            default=1)
                for lane in range(count):
                    base = mesh if kind == "calls" else f"{mesh} transfers in"
                    names.append(base if lane == 0 else f"{base} #{lane + 1}")
                    tid[(mesh, kind, lane)] = len(names)
        calls = [tid[(m, "calls", lane)] for m, lane in call_lane]
        moves = [tid.get((m, "in", lane)) or _extra(names, tid, m, lane)
                 for m, lane in move_lane]
        return names, calls, moves

    def _consumer(self, transfer: TransferEvent) -> CallEvent | None:
        """The first call on the target mesh that uses the moved value."""
        users = [c for c in self.calls_on(transfer.target)
                 if transfer.output in c.inputs
                 and c.start_us >= transfer.start_us]
        return users[0] if users else None

    def write_chrome_json(self, path: str | os.PathLike[str]) -> None:
        """Writes `to_chrome_json()` to `path`."""
        _write(path, json.dumps(self.to_chrome_json(), indent=1))

    # -- SVG picture

    def to_svg(self, width: int = 1000) -> str:
        """A timeline: one row per mesh, a box per call colored by kind,
        hatched idle gaps with each mesh's idle total on the right, thin
        lines for transfers, a time axis below; the header says where the
        times come from."""
        return _Svg(self, width).render()

    def write_svg(self, path: str | os.PathLike[str],
                  width: int = 1000) -> None:
        """Writes `to_svg(width)` to `path`."""
        _write(path, self.to_svg(width))


def _lanes(spans: list[tuple[float, float]],
           groups: list[str]) -> list[tuple[str, int]]:
    """Per span, its group and the first lane of that group where it
    overlaps nothing (spans taken by start time)."""
    ends: dict[str, list[float]] = {}
    result: list[tuple[str, int]] = [("", 0)] * len(spans)
    for index in sorted(range(len(spans)), key=lambda i: spans[i]):
        start, end = spans[index]
        lanes = ends.setdefault(groups[index], [])
        for lane, last in enumerate(lanes):
            if last <= start:
                lanes[lane] = end
                break
        else:
            lane = len(lanes)
            lanes.append(end)
        result[index] = (groups[index], lane)
    return result


def _extra(names: list[str], tid: dict[tuple[str, str, int], int],
           mesh: str, lane: int) -> int:
    """A track for transfers to a mesh the trace does not list."""
    key = (mesh, "in", lane)
    if key not in tid:
        base = f"{mesh} transfers in"
        names.append(base if lane == 0 else f"{base} #{lane + 1}")
        tid[key] = len(names)
    return tid[key]


def _meta(name: str, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "ts": 0, "pid": _PID, "tid": tid,
            "args": args}


def _us(value: float) -> float:
    return round(value, 3)


def _mid(event: CallEvent | TransferEvent) -> float:
    return event.start_us + event.duration_us / 2


def _write(path: str | os.PathLike[str], text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise TraceError(f"cannot write trace to {os.fspath(path)!r}: "
                         f"{error.strerror or error}") from error


# ------------------------------------------------------------------ SVG

class _Svg:
    """Lays out a Trace as SVG text."""

    LEFT, RIGHT, TOP = 70, 110, 50
    ROW, GAP, AXIS = 30, 12, 40
    FONT = 11
    CHAR = 0.62 * FONT  # estimated width of one character

    def __init__(self, trace: Trace, width: int):
        if width < self.LEFT + self.RIGHT + 10:
            raise TraceError(f"SVG width {width} is too small")
        self.trace = trace
        self.width = width
        self.plot = width - self.LEFT - self.RIGHT
        self.span = max(trace.end_us(), 1e-3)
        self.rows = {mesh: i for i, mesh in enumerate(trace.meshes)}
        self.height = (self.TOP + len(self.rows) * (self.ROW + self.GAP)
                       + self.AXIS)

    def x(self, us: float) -> float:
        return self.LEFT + us / self.span * self.plot

    def top(self, mesh: str) -> float:
        return self.TOP + self.rows[mesh] * (self.ROW + self.GAP)

    def render(self) -> str:
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               f'<svg xmlns="http://www.w3.org/2000/svg" '
               f'width="{self.width}" height="{self.height}" '
               f'viewBox="0 0 {self.width} {self.height}" '
               f'font-family="sans-serif" font-size="{self.FONT}">',
               '<defs><pattern id="idle-hatch" width="6" height="6" '
               'patternUnits="userSpaceOnUse" '
               'patternTransform="rotate(45)"><rect width="6" height="6" '
               'fill="#fbe3e3"/><line x1="0" y1="0" x2="0" y2="6" '
               'stroke="#d9534f" stroke-width="2"/></pattern></defs>',
               f'<rect width="{self.width}" height="{self.height}" '
               'fill="white"/>']
        out += self.legend()
        out.append(self.source_line())
        for mesh in self.trace.meshes:
            out += self.row(mesh)
        out += self.idle_marks()
        out += self.transfer_lines()
        out += self.axis()
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def legend(self) -> list[str]:
        out = ['<g class="legend">']
        x = self.LEFT
        for kind, color in _COLORS.items():
            out.append(f'<rect x="{x}" y="10" width="10" height="10" '
                       f'fill="{color}"/>')
            out.append(f'<text x="{x + 14}" y="19">{kind}</text>')
            x += 14 + len(kind) * self.CHAR + 16
        out.append("</g>")
        return out

    def source_line(self) -> str:
        trace = self.trace
        text = f"timeline: {trace.source_label}"
        if trace.first_run:
            text += ("; first run after compiling: times include XLA's "
                     "one-time costs")
        if trace.fallback_reason:
            text += f" (profiler not used: {trace.fallback_reason})"
        text = self.fit(text, self.width - self.LEFT - 10)
        return (f'<text class="timeline-source" '
                f'data-source={quoteattr(trace.source)} x="{self.LEFT}" '
                f'y="{self.TOP - 14}" fill="#555">{escape(text)}</text>')

    def idle_marks(self) -> list[str]:
        """Per mesh, each gap of the step window without a call, hatched,
        and the mesh's idle total right of its row."""
        out = []
        begin, end = self.trace.step_window()
        window = end - begin
        idle = self.trace.idle_us()
        for mesh, gaps in self.trace.idle_gaps().items():
            y = self.top(mesh)
            total = idle[mesh]
            out.append(f'<g class="idle" data-mesh={quoteattr(mesh)} '
                       f'data-idle-us="{_us(total)}">')
            for start, finish in gaps:
                x0 = self.x(start)
                w = max(self.x(finish) - x0, 0.5)
                tip = (f"{mesh} idle {start:.1f}-{finish:.1f} us "
                       f"({finish - start:.1f} us)")
                out.append(f'<rect class="idle-gap" x="{x0:.2f}" '
                           f'y="{y + self.ROW / 2 - 4}" width="{w:.2f}" '
                           f'height="8" fill="url(#idle-hatch)">'
                           f'<title>{escape(tip)}</title></rect>')
            share = f" ({total / window:.0%})" if window > 0 else ""
            out.append(f'<text class="idle-total" '
                       f'x="{self.LEFT + self.plot + 6}" '
                       f'y="{y + self.ROW / 2 + 4}" fill="#b52b27">'
                       f'{escape("idle " + _duration(total) + share)}</text>')
            out.append("</g>")
        return out

    def row(self, mesh: str) -> list[str]:
        y = self.top(mesh)
        out = [f'<g class="mesh-row" data-mesh={quoteattr(mesh)}>',
               f'<rect x="{self.LEFT}" y="{y}" width="{self.plot}" '
               f'height="{self.ROW}" fill="#f4f4f4"/>',
               f'<text x="{self.LEFT - 8}" y="{y + self.ROW / 2 + 4}" '
               f'text-anchor="end">{escape(mesh)}</text>']
        for event in self.trace.calls_on(mesh):
            x0 = self.x(event.start_us)
            w = max(self.x(event.end_us) - x0, 1.0)
            tip = (f"{event.label} on {mesh}: {event.program}, "
                   f"{event.start_us:.1f}-{event.end_us:.1f} us")
            out.append(f'<g class="call {event.kind}">')
            out.append(f"<title>{escape(tip)}</title>")
            out.append(f'<rect x="{x0:.2f}" y="{y + 2}" width="{w:.2f}" '
                       f'height="{self.ROW - 4}" fill="{_COLORS[event.kind]}"'
                       ' stroke="white" stroke-width="0.5"/>')
            text = self.fit(event.short_label, w)
            if text:
                out.append(f'<text x="{x0 + w / 2:.2f}" '
                           f'y="{y + self.ROW / 2 + 4}" text-anchor="middle" '
                           f'fill="white">{escape(text)}</text>')
            out.append("</g>")
        out.append("</g>")
        return out

    def fit(self, text: str, width: float) -> str:
        """`text`, truncated with an ellipsis to fit `width` pixels."""
        chars = int((width - 4) / self.CHAR)
        if len(text) <= chars:
            return text
        return text[:chars - 1] + "\u2026" if chars >= 2 else ""

    def transfer_lines(self) -> list[str]:
        out = ['<g class="transfers" stroke="#333" stroke-width="1" '
               'stroke-opacity="0.7">']
        for event in self.trace.transfers:
            if event.source not in self.rows or event.target not in self.rows:
                continue
            down = self.rows[event.target] >= self.rows[event.source]
            y1 = self.top(event.source) + (self.ROW if down else 0)
            y2 = self.top(event.target) + (0 if down else self.ROW)
            if event.source == event.target:
                y1, y2 = self.top(event.source), y1
            tip = (f"{event.source} -> {event.target}: {event.tensor}, "
                   f"{event.nbytes} bytes")
            x1, x2 = self.x(event.start_us), self.x(event.end_us)
            out.append(f'<line class="transfer" x1="{x1:.2f}" y1="{y1}" '
                       f'x2="{x2:.2f}" y2="{y2}">'
                       f'<title>{escape(tip)}</title></line>')
        out.append("</g>")
        return out

    def axis(self) -> list[str]:
        y = self.TOP + len(self.rows) * (self.ROW + self.GAP)
        step = _tick_step(self.span)
        in_ms = self.span >= 2000
        out = ['<g class="axis" stroke="#333">',
               f'<line x1="{self.LEFT}" y1="{y}" x2="{self.LEFT + self.plot}"'
               f' y2="{y}"/>']
        count = int(self.span / step + 1e-9)
        for index in range(count + 1):
            us = index * step
            x = self.x(us)
            value = us / 1000 if in_ms else us
            text = f"{value:g} {'ms' if in_ms else 'us'}"
            out.append(f'<line x1="{x:.2f}" y1="{y}" x2="{x:.2f}" '
                       f'y2="{y + 5}"/>')
            out.append(f'<text x="{x:.2f}" y="{y + 17}" stroke="none" '
                       f'text-anchor="middle">{escape(text)}</text>')
        out.append("</g>")
        return out


def _duration(us: float) -> str:
    """`850 us`, `12.3 ms`, `1.20 s`."""
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.0f} us"


def _tick_step(span: float) -> float:
    """1, 2 or 5 times a power of ten, giving 4 to 10 ticks over `span`."""
    raw = span / 8
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power  # pragma: no cover - unreachable


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
