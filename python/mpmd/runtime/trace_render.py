"""Writing a trace out: Chrome trace event JSON and an SVG timeline.

    trace.write_chrome_json("run.json")   # open in Perfetto / chrome://tracing
    trace.write_svg("run.svg")            # a pipeline picture

The `Trace` methods that render (`to_chrome_json`, `write_chrome_json`,
`to_svg`, `write_svg`) call the functions here; the model they render
(`Trace`, its events, its idle time) is `mpmd.runtime.trace`.

- Chrome's trace event format (JSON object form): one process labelled
  with the trace's source; per mesh a track of its calls and one of the
  transfers arriving there. Slices of one track must not overlap (the
  format nests them), so overlapping ones go to extra tracks (`m2 #2`).
  Flow arrows bind each transfer to the call that produced its value and
  the first call that uses it.
- SVG: one row per mesh, a box per call colored by kind, each mesh's idle
  gaps hatched with its idle total on the right, thin lines for transfers,
  a time axis below; the header says where the times come from. The
  layout is computed here (no plotting library), with character widths
  estimated from the font size.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from mpmd.runtime.trace import CallEvent, Trace, TraceError, TransferEvent

__all__ = ["chrome_json", "svg", "write_chrome_json", "write_svg"]


# ------------------------------------------------------------------ Chrome

_PID = 1


def chrome_json(trace: Trace) -> dict[str, Any]:
    """The trace in Chrome's trace event format (JSON object form): one
    process `mpmd` labelled with the trace's source; per mesh a track of
    its calls (`m1`) and one of the transfers arriving there (`m1
    transfers in`), more (`m1 #2`) where slices overlap; complete events
    for steps, and flow arrows producer -> transfer -> consumer."""
    names, call_tids, transfer_tids = _tracks(trace)
    events: list[dict[str, Any]] = [
        _meta("process_name", 0, {"name": "mpmd"}),
        _meta("process_labels", 0, {"labels": trace.source_label})]
    for tid, name in enumerate(names, start=1):
        events.append(_meta("thread_name", tid, {"name": name}))
        events.append(_meta("thread_sort_index", tid,
                            {"sort_index": tid}))
    call_tid = {}
    for event, tid in zip(trace.calls, call_tids):
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
    producers = {v: c for c in trace.calls for v in c.outputs}
    for flow_id, (event, tid) in enumerate(
            zip(trace.transfers, transfer_tids), start=1):
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
        consumer = _consumer(trace, event)
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
        "producer": "mpmd", "meshes": list(trace.meshes),
        "total_us": _us(trace.total_us), "source": trace.source,
        "timeline": trace.source_label,
        "idle_us": {m: _us(v) for m, v in trace.idle_us().items()}}
    if trace.fallback_reason:
        other["fallback_reason"] = trace.fallback_reason
    if trace.first_run:
        other["first_run"] = True
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": other}


def write_chrome_json(trace: Trace, path: str | os.PathLike[str]) -> None:
    """Writes `chrome_json(trace)` to `path`."""
    _write(path, json.dumps(chrome_json(trace), indent=1))


def _tracks(trace: Trace) -> tuple[list[str], list[int], list[int]]:
    """Track names (tid = position + 1), and the tid of each call and
    each transfer. Slices on one track must not overlap (the format
    nests them), so overlapping ones go to extra tracks."""
    call_lane = _lanes([(c.start_us, c.end_us) for c in trace.calls],
                       [c.mesh for c in trace.calls])
    move_lane = _lanes([(t.start_us, t.end_us) for t in trace.transfers],
                       [t.target for t in trace.transfers])
    names: list[str] = []
    tid: dict[tuple[str, str, int], int] = {}
    for mesh in trace.meshes:
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


def _consumer(trace: Trace, transfer: TransferEvent) -> CallEvent | None:
    """The first call on the target mesh that uses the moved value."""
    users = [c for c in trace.calls_on(transfer.target)
             if transfer.output in c.inputs
             and c.start_us >= transfer.start_us]
    return users[0] if users else None


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


def _mid(event: CallEvent | TransferEvent) -> float:
    return event.start_us + event.duration_us / 2


# ------------------------------------------------------------------ SVG

_COLORS: dict[str, str] = {
    "forward": "#4e79a7", "backward": "#f28e2b", "merged": "#9c6ade",
    "inferred": "#b0b0b0",
}


def svg(trace: Trace, width: int = 1000) -> str:
    """The SVG picture of `trace`, `width` pixels wide (see the module
    doc); `TraceError` when too narrow for the labels and margins."""
    return _Svg(trace, width).render()


def write_svg(trace: Trace, path: str | os.PathLike[str],
              width: int = 1000) -> None:
    """Writes `svg(trace, width)` to `path`."""
    _write(path, svg(trace, width))


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


# ------------------------------------------------------------------ shared

def _us(value: float) -> float:
    """Microseconds rounded to the nanosecond, as both formats write them."""
    return round(value, 3)


def _write(path: str | os.PathLike[str], text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise TraceError(f"cannot write trace to {os.fspath(path)!r}: "
                         f"{error.strerror or error}") from error
