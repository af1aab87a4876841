"""Tracing runs: a 4-mesh MLP training step traced per mesh, exported as
Chrome trace JSON and SVG; recorder and rendering details on synthetic
steps with a fake clock."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections import defaultdict

import jax
import numpy as np
import pytest

from meshes import MESHES, four_meshes
import models  # noqa: E402  (examples/, put on the path by meshes)

from mpmd.config import make_config  # noqa: E402
from mpmd.stages import jit  # noqa: E402
from mpmd.runtime.plan import CallStep, TensorSpec, TransferStep  # noqa: E402
from mpmd.origins import Origin  # noqa: E402
from mpmd.runtime.trace import (  # noqa: E402
    CallEvent, Trace, TraceError, TraceRecorder)

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def mlp():
    """A traced MLP training step and the same step run untraced."""
    params = models.init_mlp(jax.random.PRNGKey(0), [16, 32, 32, 32, 8])
    x = jax.random.normal(jax.random.PRNGKey(1), (8, 16))
    y = jax.random.normal(jax.random.PRNGKey(2), (8, 8))
    config = make_config(four_meshes(),
                         {f"layer{i}": (MESHES[i], i) for i in range(4)})
    compiled = jit(models.mlp_train_step, config).lower(params, x, y).compile()
    plain = compiled(params, x, y)
    traced, trace = compiled.run_traced(params, x, y, source="host")
    return compiled, plain, traced, trace


# ------------------------------------------------------------ real run

def test_traced_run_gives_the_same_results(mlp):
    _, plain, traced, trace = mlp
    assert isinstance(trace, Trace)
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_trace_has_every_step_of_the_plan(mlp):
    compiled, _, _, trace = mlp
    plan = compiled.plan
    assert trace.meshes == tuple(MESHES)
    assert len(trace.calls) == len(plan.calls())
    assert len(trace.transfers) == len(plan.steps) - len(plan.calls())
    assert trace.mesh_order() == plan.mesh_order()
    for mesh in MESHES:
        calls = trace.calls_on(mesh)
        assert calls, f"no call on {mesh}"
        for call in calls:
            assert 0 <= call.start_us <= call.end_us <= trace.total_us
            assert call.program in plan.programs
        for earlier, later in zip(calls, calls[1:]):
            assert earlier.end_us <= later.start_us  # serialized per mesh
    for event in trace.transfers:
        assert event.source != event.target
        assert event.nbytes == 8 * 32 * 4  # float32[8x32] activations
        assert event.start_us <= event.end_us


def test_backward_starts_after_forward(mlp):
    trace = mlp[3]
    for i, mesh in enumerate(MESHES):
        forward = trace.call(f"layer{i}", mesh)
        backward = trace.call(f"layer{i}(1)", mesh)
        assert forward.kind == "forward" and backward.kind == "backward"
        assert forward.stage == backward.stage == i
        assert backward.start_us >= forward.end_us
    # The pipeline goes down the meshes and back up.
    starts = [trace.call(f"layer{i}").start_us for i in range(4)]
    assert starts == sorted(starts)
    back = [trace.call(f"layer{i}(1)").start_us for i in range(4)]
    assert back == sorted(back, reverse=True)


def test_transfers_sit_between_producer_and_consumer(mlp):
    trace = mlp[3]
    for event in trace.transfers:
        producer = next(c for c in trace.calls if event.input in c.outputs)
        consumer = next(c for c in trace.calls if event.output in c.inputs)
        assert (producer.mesh, consumer.mesh) == (event.source, event.target)
        assert producer.end_us <= event.start_us
        assert event.end_us <= consumer.start_us


def test_mesh_order_text(mlp):
    text = mlp[3].mesh_order_text()
    lines = text.splitlines()
    assert [line.split(":")[0] for line in lines] == MESHES
    m1 = lines[0].split()
    assert m1[0] == "m1:"
    assert m1.index("layer0") < m1.index("layer0(1)")
    assert lines[0] == "m1: layer0 layer0(1)"
    assert lines[3] == "m4: layer3 layer3(1)"


def validate_chrome_trace(doc: dict, meshes: list[str]) -> tuple[dict, dict]:
    """Checks the trace-event structure (per mesh a track of calls and one of
    incoming transfers, more `#2`, `#3`... where slices overlap); returns
    the X events by track name and the flow events by id."""
    json.loads(json.dumps(doc))  # serializable as is
    events = doc["traceEvents"]
    assert isinstance(events, list) and events
    names: dict[int, str] = {}
    processes = []
    for event in events:
        assert event["ph"] in {"X", "M", "s", "t", "f"}, event
        assert isinstance(event["name"], str)
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
        if event["ph"] == "M":
            if event["name"] == "thread_name":
                names[event["tid"]] = event["args"]["name"]
            elif event["name"] == "process_name":
                processes.append(event["args"]["name"])
    assert processes == ["mpmd"]
    bases = [name.split(" #")[0] for name in names.values()]
    assert sorted(set(bases)) == sorted(
        [*meshes, *(f"{mesh} transfers in" for mesh in meshes)])
    assert len(set(names.values())) == len(names)
    slices: dict[int, list[dict]] = defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0
            assert event["tid"] in names
            slices[event["tid"]].append(event)
    flows: dict[int, list[dict]] = defaultdict(list)
    for event in events:
        if event["ph"] in "stf":
            flows[event["id"]].append(event)
    for points in flows.values():
        phases = [p["ph"] for p in points]
        assert phases[0] == "s" and phases[-1] == "f"
        assert set(phases[1:-1]) <= {"t"}
        assert points[-1]["bp"] == "e"
        times = [p["ts"] for p in points]
        assert times == sorted(times)
        for point in points:  # each binds to an enclosing slice
            assert any(s["ts"] <= point["ts"] <= s["ts"] + s["dur"]
                       for s in slices[point["tid"]]), point
    return {names[tid]: evs for tid, evs in slices.items()}, flows


def test_chrome_json_is_a_valid_trace(mlp, tmp_path):
    trace = mlp[3]
    doc = trace.to_chrome_json()
    by_track, flows = validate_chrome_trace(doc, MESHES)
    for mesh in MESHES:
        assert [e["name"] for e in sorted(by_track[mesh],
                                          key=lambda e: e["ts"])] == \
            trace.mesh_order()[mesh]
    moves = [e for name, events in by_track.items() if "transfers in" in name
             for e in events]
    assert len(moves) == len(trace.transfers)
    assert all(e["args"]["bytes"] == 1024 for e in moves)
    # Host timestamps: the metadata says so.
    assert doc["otherData"]["source"] == "host"
    assert doc["otherData"]["timeline"] == "host timestamps, serialized"
    # Every transfer has an arrow producer -> transfer -> consumer.
    assert len(flows) == len(trace.transfers)
    assert all(len(points) == 3 for points in flows.values())
    path = tmp_path / "trace.json"
    trace.write_chrome_json(path)
    assert json.loads(path.read_text()) == json.loads(json.dumps(doc))


def test_svg_has_one_row_per_mesh(mlp, tmp_path):
    trace = mlp[3]
    path = tmp_path / "trace.svg"
    trace.write_svg(path)
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    rows = [g for g in root.iter(f"{SVG}g")
            if g.get("class") == "mesh-row"]
    assert [row.get("data-mesh") for row in rows] == MESHES
    tops = []
    for row, mesh in zip(rows, MESHES):
        calls = [g for g in row.findall(f"{SVG}g")
                 if g.get("class", "").startswith("call ")]
        assert len(calls) == len(trace.calls_on(mesh))
        assert [g.get("class") for g in calls] == \
            [f"call {c.kind}" for c in trace.calls_on(mesh)]
        assert {g.find(f"{SVG}rect").get("fill") for g in calls} == \
            {"#4e79a7", "#f28e2b"}  # forward and backward colors
        tops.append(float(row.find(f"{SVG}rect").get("y")))
    assert tops == sorted(tops) and len(set(tops)) == len(tops)
    lines = [e for e in root.iter(f"{SVG}line")
             if e.get("class") == "transfer"]
    assert len(lines) == len(trace.transfers)
    # Boxes follow time: layer0(1) lies right of layer0 on m1.
    boxes = {g.find(f"{SVG}title").text.split(" on ")[0]:
             float(g.find(f"{SVG}rect").get("x"))
             for g in rows[0].findall(f"{SVG}g")}
    assert boxes["layer0(1)"] > boxes["layer0"]


# ------------------------------------------------------ synthetic steps

class FakeClock:
    def __init__(self):
        self.ns = 0

    def __call__(self) -> int:
        return self.ns


class SlowResult:
    """A result that takes `ns` of the fake clock to become ready."""

    def __init__(self, clock: FakeClock, ns: int):
        self.clock, self.ns = clock, ns

    def block_until_ready(self):
        self.clock.ns += self.ns
        return self


def origin(text):
    """`layer1(1)` -> Origin("layer1", 1): how the tests write origins."""
    name, _, count = text.partition("(")
    return Origin(name, int(count[:-1]) if count else 0)


def call_step(mesh, origins, counter=None, inputs=(), outputs=(),
              program="p"):
    return CallStep(program, mesh, tuple(inputs), tuple(outputs),
                    tuple(map(origin, origins)), (), counter, 0)


def record(steps_and_costs, meshes=("m1", "m2")) -> Trace:
    clock = FakeClock()
    recorder = TraceRecorder(meshes, clock=clock)
    recorder.start()
    for step, cost in steps_and_costs:
        clock.ns += 1000  # dispatch gap
        recorder.before(step)
        recorder.after(step, [SlowResult(clock, cost)])
    return recorder.finish()


def test_recorder_waits_for_results_to_time_a_step():
    spec = TensorSpec("m2", (4, 2), np.dtype(np.float32))
    trace = record([
        (call_step("m1", ["a"], outputs=[1]), 5000),
        (TransferStep(1, 2, "m1", "m2", spec, ()), 2000),
        (call_step("m2", ["b"], inputs=[2]), 3000),
    ])
    a, b = trace.calls
    assert (a.start_us, a.end_us) == (1.0, 6.0)
    assert (b.start_us, b.end_us) == (10.0, 13.0)
    (move,) = trace.transfers
    assert (move.start_us, move.end_us, move.nbytes) == (7.0, 9.0, 32)
    assert trace.total_us == 13.0
    doc = trace.to_chrome_json()
    _, flows = validate_chrome_trace(doc, ["m1", "m2"])
    # m1 (tid 1) -> "m2 transfers in" (tid 4) -> m2 (tid 3)
    assert [p["tid"] for p in flows[1]] == [1, 4, 3]


def test_recorder_rejects_steps_out_of_order():
    recorder = TraceRecorder(["m1"], clock=FakeClock())
    first, second = call_step("m1", ["a"]), call_step("m1", ["b"])
    with pytest.raises(TraceError, match="ended without starting"):
        recorder.after(first, [])
    recorder.before(first)
    with pytest.raises(TraceError, match="before step a on m1 ended"):
        recorder.before(second)
    with pytest.raises(TraceError, match="never ended"):
        recorder.finish()


def test_kinds_and_short_labels():
    def event(origins, counter=None, program="p3_inferred"):
        step = call_step("m1", origins, counter, program=program)
        return CallEvent("m1", step.label(), program, step.origins, None,
                         counter, 0.0, 1.0)

    assert [str(Origin("l", n)) for n in (0, 1, 12)] == ["l", "l(1)", "l(12)"]
    assert Origin("f(x)", 0).is_backward is False  # names may hold parentheses
    cases = [
        (event(["layer1"], 3), "forward", "F3", "layer1#3"),
        (event(["layer1(1)"], 3), "backward", "B3", "layer1(1)#3"),
        (event(["layer3", "layer3(1)"], 0), "merged", "FB0",
         "layer3+layer3(1)#0"),
        (event([], 2), "inferred", "p3_inferred#2", "p3_inferred#2"),
        (event(["layer1(1)"]), "backward", "layer1(1)", "layer1(1)"),
    ]
    for ev, kind, short, label in cases:
        assert (ev.kind, ev.short_label, ev.label) == (kind, short, label)


def test_microbatched_order_and_svg_labels():
    steps = []
    for counter in range(2):
        steps.append((call_step("m1", ["layer0"], counter), 4000))
    steps.append((call_step("m1", [], program="p9_inferred_with_a_long_name"),
                  500))
    for counter in range(2):
        steps.append((call_step("m1", ["layer0(1)"], counter), 4000))
    trace = record(steps, meshes=("m1", "m2"))
    assert trace.mesh_order_text() == (
        "m1: layer0#0 layer0#1 p9_inferred_with_a_long_name "
        "layer0(1)#0 layer0(1)#1\nm2:")
    root = ET.fromstring(trace.to_svg(width=600))
    rows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "mesh-row"]
    assert [r.get("data-mesh") for r in rows] == ["m1", "m2"]
    texts = [g.find(f"{SVG}text") for g in rows[0].findall(f"{SVG}g")]
    labels = [t.text if t is not None else None for t in texts]
    assert labels[:2] == ["F0", "F1"] and labels[3:] == ["B0", "B1"]
    assert labels[2] is None or labels[2].endswith("\u2026")  # truncated
    inferred = rows[0].findall(f"{SVG}g")[2]
    assert inferred.get("class") == "call inferred"
    assert inferred.find(f"{SVG}rect").get("fill") == "#b0b0b0"
    assert "p9_inferred_with_a_long_name" in inferred.find(f"{SVG}title").text
    # Time axis: ticks from 0 to the end of the run.
    axis = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "axis")
    ticks = [t.text for t in axis.findall(f"{SVG}text")]
    assert ticks[0] == "0 us" and len(ticks) >= 4


def test_write_to_a_missing_directory_is_an_error(tmp_path):
    trace = Trace(("m1",))
    with pytest.raises(TraceError, match="cannot write trace"):
        trace.write_svg(tmp_path / "missing" / "t.svg")
    with pytest.raises(TraceError, match="no call labelled"):
        trace.call("layer0")


def test_traces_of_processes_merge_into_one(mlp):
    """What each process of a multi-process run records goes through
    to_dict/from_dict, and the merge keeps one event per call and per
    transfer, from the earliest start to the latest end."""
    trace = mlp[3]
    again = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again == trace
    # Process 0 recorded m1, m2 and the m2 -> m3 transfers' sending side;
    # process 1 m3, m4 and their receiving side, 5 us later.
    first = Trace(trace.meshes, [c for c in trace.calls
                                 if c.mesh in ("m1", "m2")],
                  list(trace.transfers), trace.total_us)
    late = [dataclasses.replace(t, start_us=t.start_us + 5,
                                end_us=t.end_us + 5)
            for t in trace.transfers]
    second = Trace(trace.meshes, [c for c in trace.calls
                                  if c.mesh in ("m3", "m4")],
                   late, trace.total_us + 5)
    merged = Trace.merge([first, second])
    assert merged.mesh_order() == trace.mesh_order()
    assert len(merged.transfers) == len(trace.transfers)
    for event, original in zip(merged.transfers, trace.transfers):
        assert event.start_us == original.start_us
        assert event.end_us == original.end_us + 5
    assert merged.total_us == trace.total_us + 5


def test_replay_keeps_durations_and_waits_only_for_data(mlp):
    """simulate.replay: the host trace (every step waited for) re-timed
    with each mesh computing in parallel: durations kept, each call starts
    when its mesh is free and its inputs are made, never later than
    measured (relative to the first call), and it is written like any
    trace."""
    from mpmd.runtime.simulate import replay  # noqa: PLC0415
    from mpmd.runtime.trace import REPLAY  # noqa: PLC0415

    compiled, _, _, trace = mlp
    replayed = replay(trace, compiled.plan)
    assert replayed.source == REPLAY and replayed.transfers == []
    assert len(replayed.calls) == len(trace.calls)
    made_at: dict[int, float] = {}
    producer_of = {step.output: step.input for step in compiled.plan.steps
                   if isinstance(step, TransferStep)}
    for mesh in MESHES:
        measured, timed = trace.calls_on(mesh), replayed.calls_on(mesh)
        assert [c.label for c in measured] == [c.label for c in timed]
        for a, b in zip(measured, timed):
            assert b.duration_us == pytest.approx(a.duration_us)
    ends = {}
    for call in sorted(replayed.calls, key=lambda c: c.start_us):
        for value in call.outputs:
            made_at[value] = call.end_us
        ends.setdefault(call.mesh, 0.0)
        assert call.start_us >= ends[call.mesh] - 1e-6
        ends[call.mesh] = call.end_us
    for call in replayed.calls:
        ready = 0.0
        for value in call.inputs:
            value = producer_of.get(value, value)
            ready = max(ready, made_at.get(value, 0.0))
        # Starts as soon as both its mesh and its inputs allow.
        mesh_free = max([c.end_us for c in replayed.calls_on(call.mesh)
                         if c.end_us <= call.start_us + 1e-6
                         and c is not call], default=0.0)
        assert call.start_us == pytest.approx(max(ready, mesh_free))
    first = min(c.start_us for c in trace.calls)
    assert replayed.end_us() <= max(c.end_us for c in trace.calls) - first \
        + 1e-6
    assert "replayed with every mesh computing in parallel" in \
        replayed.to_svg()
