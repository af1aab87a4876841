"""Traces from JAX's profiler: a 1F1B step over 4 meshes, profiled without
waiting between steps, shows the meshes overlapping and the transfers as
their own slices; every step of the plan maps to one event in plan order;
host timestamps remain as the fallback; the SVG marks idle time per mesh.
Mapping rules and their errors on synthetic profiles.

The meshes have one CPU device each: XLA:CPU (jaxlib 0.10.2) launches
executables over several devices one at a time ("gang scheduling" of
collectives), so meshes of 2 devices never overlap on CPU; single-device
executables run concurrently on the client's thread pool.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshes import MESHES
import models  # noqa: E402  (examples/, put on the path by meshes)
from test_trace import SVG, validate_chrome_trace

import mpmd  # noqa: E402
from mpmd.config import make_config  # noqa: E402
from mpmd.errors import MpmdError  # noqa: E402
from mpmd.origins import Origin  # noqa: E402
from mpmd.runtime import processes, profile  # noqa: E402
from mpmd.runtime.plan import (CallStep, ExecutionPlan, MeshSpec,  # noqa: E402
                               ProgramSpec, TensorSpec, TransferStep)
from mpmd.runtime.profile import (ProfileError, ProfileUnavailable,  # noqa: E402
                                  ProfiledEvent, trace_from_profile)
from mpmd.runtime.trace import (CallEvent, Trace, TraceError,  # noqa: E402
                                TransferEvent)
from mpmd.stages import jit  # noqa: E402

M = 4          # microbatches
WIDTH = 512    # every layer is WIDTH x WIDTH
BATCH = 256    # rows per microbatch: a forward is a few ms on one core
PROFILER_LABEL = "device timeline from the XLA profiler"
HOST_LABEL = "host timestamps, serialized"


def one_device_meshes() -> dict[str, jax.sharding.Mesh]:
    """m1..m4 on CPU devices 0..3, one device each."""
    return {name: jax.sharding.Mesh(np.array(jax.devices()[i:i + 1]), ("x",))
            for i, name in enumerate(MESHES)}


def mlp_microbatched_step(params, xs, ys, lr=0.05):
    """One SGD step of models.mlp_forward over M stacked microbatches."""
    def body(i, acc):
        loss, grads = jax.value_and_grad(
            lambda p: models.mse(models.mlp_forward(p, xs[i]), ys[i]))(params)
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, xs.shape[0], body, zeros)
    return (jax.tree.map(lambda p, g: p - lr * g / xs.shape[0], params, grads),
            loss / xs.shape[0])


@pytest.fixture(scope="module")
def step():
    params = models.init_mlp(jax.random.PRNGKey(0), [WIDTH] * 5)
    xs = jax.random.normal(jax.random.PRNGKey(1), (M, BATCH, WIDTH))
    ys = jax.random.normal(jax.random.PRNGKey(2), (M, BATCH, WIDTH))
    config = make_config(one_device_meshes(),
                         {f"layer{i}": (MESHES[i], i) for i in range(4)},
                         partitioning_options={"pipeline_schedule": "1f1b"})
    compiled = jit(mlp_microbatched_step, config).lower(
        params, xs, ys).compile()
    plain = jax.block_until_ready(compiled(params, xs, ys))
    return compiled, (params, xs, ys), plain


@pytest.fixture(scope="module")
def profiled(step):
    compiled, args, _ = step
    traced, trace = compiled.run_traced(*args, source="profiler")
    return traced, trace


def overlap(a: dict, b: dict) -> float:
    return min(a["ts"] + a["dur"], b["ts"] + b["dur"]) - max(a["ts"], b["ts"])


# ------------------------------------------------------------ the real run

def test_the_step_is_1f1b(step):
    compiled = step[0]
    assert compiled.plan.schedule_text().splitlines()[1] == \
        "m2: F0 F1 F2 B0 F3 B1 B2 B3"


def test_json_shows_meshes_overlapping_and_transfers_as_slices(
        step, profiled, tmp_path):
    compiled, _, _ = step
    trace = profiled[1]
    path = tmp_path / "step.json"
    trace.write_chrome_json(path)
    doc = json.loads(path.read_text())
    by_track, _ = validate_chrome_trace(doc, MESHES)
    calls = [e for e in doc["traceEvents"]
             if e["ph"] == "X" and e["cat"] != "transfer"]
    # Some pair of calls on different meshes runs at the same time, by a
    # clear margin (a fifth of the shorter one, and at least 100 us).
    best = max((overlap(a, b) / min(a["dur"], b["dur"])
                for a in calls for b in calls
                if a["args"]["mesh"] < b["args"]["mesh"]
                and overlap(a, b) >= 100 and min(a["dur"], b["dur"]) > 0),
               default=0.0)
    assert best >= 0.2
    # Each transfer is its own slice, on the track of the mesh it goes to.
    moves = [e for e in doc["traceEvents"]
             if e["ph"] == "X" and e["cat"] == "transfer"]
    steps = [s for s in compiled.plan.steps if isinstance(s, TransferStep)]
    assert len(moves) == len(steps) > 0
    assert Counter((e["args"]["source"], e["args"]["target"])
                   for e in moves) == \
        Counter((s.source, s.target) for s in steps)
    for track, events in by_track.items():
        kinds = {e["cat"] == "transfer" for e in events}
        assert len(kinds) == 1, track  # calls and transfers never share one
        if kinds == {True}:
            assert all(track.startswith(f"{e['args']['target']} transfers in")
                       for e in events)
    assert doc["otherData"]["source"] == "profiler"
    assert doc["otherData"]["timeline"] == PROFILER_LABEL
    labels = [e["args"]["labels"] for e in doc["traceEvents"]
              if e["name"] == "process_labels"]
    assert labels == [PROFILER_LABEL]


def test_every_step_has_one_event_in_plan_order(step, profiled):
    compiled, _, _ = step
    plan = compiled.plan
    trace = profiled[1]
    assert trace.source == "profiler" and trace.fallback_reason is None
    assert len(trace.calls) == len(plan.calls())
    events = Counter((c.program, c.inputs, c.outputs) for c in trace.calls)
    assert events == Counter((s.program, s.inputs, s.outputs)
                             for s in plan.calls())
    assert trace.mesh_order() == plan.mesh_order()
    moves = [s for s in plan.steps if isinstance(s, TransferStep)]
    assert sorted((t.input, t.output) for t in trace.transfers) == \
        sorted((s.input, s.output) for s in moves)
    producer = {v: c for c in trace.calls for v in c.outputs}
    for event in trace.transfers:
        # The copy starts once its source is computed; whatever was
        # recorded of it ends before its first reader starts.
        assert event.start_us >= producer[event.input].end_us
        readers = [c for c in trace.calls if event.output in c.inputs]
        assert readers and event.end_us <= min(c.start_us for c in readers)
    for call in trace.calls:
        assert 0 <= call.start_us <= call.end_us <= trace.total_us


def test_traced_step_computes_what_the_untraced_one_does(step, profiled):
    plain = step[2]
    traced = profiled[0]
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_idle_time_per_mesh(profiled):
    trace = profiled[1]
    begin, end = trace.step_window()
    idle = trace.idle_us()
    assert set(idle) == set(MESHES)
    for mesh in MESHES:
        busy = sum(e - s for s, e in trace.busy_intervals(mesh))
        assert idle[mesh] == pytest.approx(end - begin - busy)
        assert 0 < idle[mesh] < end - begin
    # m4 starts last in the forward fill: it waits longest at the start.
    gaps = trace.idle_gaps()
    first = {m: gaps[m][0] for m in MESHES}
    assert first["m4"][0] == begin and first["m4"][1] > first["m2"][1]


def test_svg_marks_idle_time_and_the_source(profiled, tmp_path):
    trace = profiled[1]
    path = tmp_path / "step.svg"
    trace.write_svg(path)
    root = ET.parse(path).getroot()
    source = next(t for t in root.iter(f"{SVG}text")
                  if t.get("class") == "timeline-source")
    assert source.get("data-source") == "profiler"
    assert PROFILER_LABEL in source.text
    marks = {g.get("data-mesh"): g for g in root.iter(f"{SVG}g")
             if g.get("class") == "idle"}
    assert list(marks) == MESHES
    gaps = trace.idle_gaps()
    for mesh, group in marks.items():
        assert float(group.get("data-idle-us")) == \
            pytest.approx(trace.idle_us()[mesh], abs=1e-3)
        rects = [r for r in group.findall(f"{SVG}rect")
                 if r.get("class") == "idle-gap"]
        assert len(rects) == len(gaps[mesh]) > 0
        total = next(t for t in group.findall(f"{SVG}text")
                     if t.get("class") == "idle-total")
        assert total.text.startswith("idle ")


# ------------------------------------------------------------ fallbacks

def test_host_source_says_serialized(step, tmp_path):
    compiled, args, plain = step
    traced, trace = compiled.run_traced(*args, source="host")
    assert trace.source == "host" and trace.fallback_reason is None
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    doc = trace.to_chrome_json()
    validate_chrome_trace(doc, MESHES)
    assert doc["otherData"]["timeline"] == HOST_LABEL
    assert [e["args"]["labels"] for e in doc["traceEvents"]
            if e["name"] == "process_labels"] == [HOST_LABEL]
    root = ET.fromstring(trace.to_svg())
    source = next(t for t in root.iter(f"{SVG}text")
                  if t.get("class") == "timeline-source")
    assert source.get("data-source") == "host"
    assert HOST_LABEL in source.text
    # Serialized: no two calls overlap, whatever their mesh.
    calls = sorted(trace.calls, key=lambda c: c.start_us)
    assert all(a.end_us <= b.start_us for a, b in zip(calls, calls[1:]))


def test_invalid_source_is_an_error_naming_the_valid_ones(step):
    compiled, args, _ = step
    with pytest.raises(TraceError, match=r"trace source must be one of "
                       r"'auto', 'profiler', 'host'; got 'device'") as info:
        compiled.run_traced(*args, source="device")
    assert isinstance(info.value, MpmdError)


def test_auto_falls_back_to_host_when_the_profiler_is_busy(step, tmp_path):
    compiled, args, plain = step
    jax.profiler.start_trace(tmp_path / "user")  # the user's own profile
    try:
        with pytest.raises(ProfileUnavailable,
                           match="the JAX profiler could not start"):
            compiled.run_traced(*args, source="profiler")
        traced, trace = compiled.run_traced(*args)
    finally:
        jax.profiler.stop_trace()
    assert trace.source == "host"
    assert "the JAX profiler could not start" in trace.fallback_reason
    assert trace.to_chrome_json()["otherData"]["fallback_reason"] == \
        trace.fallback_reason
    assert "profiler not used" in trace.to_svg()
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_auto_reruns_with_host_timestamps_when_the_profile_does_not_map(
        step, monkeypatch):
    compiled, args, plain = step

    def unmappable(*_args, **_kwargs):
        raise ProfileError("no thunks here")

    monkeypatch.setattr(profile, "trace_from_profile", unmappable)
    traced, trace = compiled.run_traced(*args)
    assert (trace.source, trace.fallback_reason) == ("host", "no thunks here")
    for a, b in zip(jax.tree.leaves(traced), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ProfileError, match="no thunks here") as info:
        compiled.run_traced(*args, source="profiler")
    # The step ran: its results come with the error, as a call returns them.
    for a, b in zip(jax.tree.leaves(info.value.results),
                    jax.tree.leaves(plain), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_step_that_donated_its_inputs_is_not_run_twice(step, monkeypatch):
    compiled, args, _ = step
    monkeypatch.setattr(profile, "trace_from_profile",
                        lambda *a, **k: (_ for _ in ()).throw(
                            ProfileError("unmappable")))
    monkeypatch.setattr("mpmd.runtime.executable.donates_inputs",
                        lambda plan: True)
    with pytest.raises(ProfileError, match="unmappable") as info:
        compiled.run_traced(*args)
    assert jax.tree.structure(info.value.results) == \
        jax.tree.structure(step[2])


def test_profiler_traces_of_multi_process_runs_are_refused(step, monkeypatch):
    compiled, args, _ = step
    monkeypatch.setattr(processes, "is_multiprocess", lambda: True)
    with pytest.raises(ProfileError, match="multi-process"):
        compiled.run_traced(*args, source="profiler")


def test_donates_inputs():
    plan = _plan()
    assert not profile.donates_inputs(plan)
    donating = ExecutionPlan(
        plan.function, plan.topology, plan.meshes, plan.inputs, plan.outputs,
        plan.output_values,
        {**plan.programs, "p0": ProgramSpec("p0", "m1", "", (0,), 2)},
        plan.steps)
    assert profile.donates_inputs(donating)


# --------------------------------------------------- synthetic profiles

def _plan() -> ExecutionPlan:
    """p0 on m1 twice (microbatches 0 and 1), each result moved to m2 and
    read there by p1."""
    spec = TensorSpec("m2", (4,), np.dtype(np.float32))
    origin = (Origin("layer0", 0),)
    steps = (
        CallStep("p0", "m1", (0,), (1,), origin, (), 0, 0),
        CallStep("p0", "m1", (0,), (2,), origin, (), 1, 0),
        TransferStep(1, 3, "m1", "m2", spec, ()),
        TransferStep(2, 4, "m1", "m2", spec, ()),
        CallStep("p1", "m2", (3, 4), (5,), (Origin("layer1", 0),), (), None,
                 1),
    )
    return ExecutionPlan(
        "main", "", (MeshSpec("m1", (("x", 1),)), MeshSpec("m2", (("x", 1),))),
        (TensorSpec("m1", (4,), np.dtype(np.float32)),),
        (TensorSpec("m2", (4,), np.dtype(np.float32)),), (5,),
        {"p0": ProgramSpec("p0", "m1", "", (), 2),
         "p1": ProgramSpec("p1", "m2", "", (), 1)}, steps)


MODULES = {"p0": "jit_p0", "p1": "jit_p1"}
DEVICES = {0: "m1", 1: "m2"}


def host(event, start, end, **stats):
    return ProfiledEvent("/host:CPU/python", event, start * 1000, end * 1000,
                         stats)


def thunk(module, run_id, device, start, end, thread="pool/1"):
    return ProfiledEvent(f"/host:CPU/{thread}", "fusion", start * 1000,
                         end * 1000, {"hlo_op": "fusion",
                                      "hlo_module": module, "run_id": run_id,
                                      "device_ordinal": device})


def _events():
    """Times in us since the run began. p0's two runs (ids 7 and 8) ran
    10-30 and 30-50 on device 0, p1 (id 3) 60-90 on device 1; the
    transfers were dispatched at 4-5 and 6-7, before their sources were
    computed."""
    return [
        host("mpmd.run", 0, 100),
        host("mpmd.step", 1, 2, index=0), host("mpmd.step", 2, 3, index=1),
        host("mpmd.step", 4, 5, index=2), host("mpmd.step", 6, 7, index=3),
        host("mpmd.step", 8, 9, index=4),
        # Listed out of order: the mapping goes by time, not by listing.
        thunk("jit_p0", 8, 0, 30, 40), thunk("jit_p0", 8, 0, 41, 50),
        thunk("jit_p0", 7, 0, 10, 30, thread="pool/2"),
        thunk("jit_p1", 3, 1, 60, 90),
    ]


def test_synthetic_profile_maps_by_executable_and_order():
    trace = trace_from_profile(_plan(), _events(), MODULES, DEVICES)
    assert trace.source == "profiler"
    assert [(c.label, c.start_us, c.end_us) for c in trace.calls] == [
        ("layer0#0", 10, 30), ("layer0#1", 30, 50), ("layer1", 60, 90)]
    # A transfer starts when its source was computed; nothing was recorded
    # of the copy itself, so its slice ends there too.
    assert [(t.input, t.start_us, t.end_us) for t in trace.transfers] == [
        (1, 30, 30), (2, 50, 50)]
    assert trace.total_us == 100
    assert trace.idle_us() == {"m1": 40, "m2": 50}
    assert trace.idle_gaps() == {"m1": [(50, 90)], "m2": [(10, 60)]}


def test_synthetic_profile_uses_reshard_programs_and_marks():
    events = _events()
    # The first transfer launched a resharding program over several
    # devices (named on the dispatching thread) running 55-58; p1 ran no
    # thunk, only its completion marks remain.
    events = [e for e in events if e.stats.get("hlo_module") != "jit_p1"]
    events += [
        host("CommonPjRtLoadedExecutable::Execute (jit_identity)", 4.2, 4.8,
             run_id=11, name="jit_identity"),
        thunk("jit_identity", 11, 0, 55, 56), thunk("jit_identity", 11, 1,
                                                    56, 58),
        host("CommonPjRtLoadedExecutable::Execute (jit_p1)", 8.1, 8.9,
             run_id=3, name="jit_p1"),
        ProfiledEvent("/host:CPU/pool/3",
                      "ThunkExecutor::Execute (wait for completion)",
                      70_000, 70_000, {"run_id": 3, "device_ordinal": 1}),
    ]
    trace = trace_from_profile(_plan(), events, MODULES, DEVICES)
    assert [(t.input, t.start_us, t.end_us) for t in trace.transfers] == [
        (1, 30, 58), (2, 50, 50)]
    assert trace.call("layer1").start_us == trace.call("layer1").end_us == 70


def test_synthetic_profile_skips_work_launched_before_the_run():
    # A run of p0 from an earlier, unawaited step, still going as the run
    # began: the run's own executions are the last ones.
    events = _events() + [thunk("jit_p0", 6, 0, 0.5, 9)]
    trace = trace_from_profile(_plan(), events, MODULES, DEVICES)
    assert [c.start_us for c in trace.calls_on("m1")] == [10, 30]


@pytest.mark.parametrize("edit, message", [
    (lambda ev: [e for e in ev if e.name != "mpmd.run"],
     "the profile has 0 'mpmd.run' annotations, expected 1"),
    (lambda ev: [e for e in ev if e.stats.get("index") not in (2, 3)],
     r"lacks the 'mpmd.step' annotation of step\(s\) 2, 3"),
    (lambda ev: ev + [host("mpmd.step", 9, 9.5, index=1)],
     "step 1 was annotated twice"),
    (lambda ev: ev + [host("mpmd.step", 9, 9.5, index=5)],
     r"'mpmd.step' annotation has index 5, not a step of the plan \(0..4\)"),
    (lambda ev: [e for e in ev if "hlo_module" not in e.stats],
     "no device events with 'hlo_module', 'run_id' and 'device_ordinal'"),
    (lambda ev: [e for e in ev if e.stats.get("run_id") != 8],
     r"program p0 \(executable jit_p0 on mesh 'm1'\): the plan calls it 2 "
     r"time\(s\), the profile has 1 execution\(s\)"),
    (lambda ev: [e for e in ev if e.stats.get("run_id") != 3]
     + [thunk("jit_p1", 3, 0, 60, 90)],
     r"call layer1 of program p1 runs on mesh 'm2', but its execution 3 in "
     r"the profile ran on devices \[0\] \(mesh m1\)"),
])
def test_synthetic_profiles_that_do_not_map(edit, message):
    with pytest.raises(ProfileError, match=message):
        trace_from_profile(_plan(), edit(_events()), MODULES, DEVICES)


# -------------------------------------------------- trace model pieces

def test_idle_gaps_on_a_handmade_trace():
    def call(mesh, start, end):
        return CallEvent(mesh, "f", "p", (), None, None, start, end)

    trace = Trace(("m1", "m2", "m3"),
                  [call("m1", 0, 10), call("m1", 20, 30), call("m1", 25, 28),
                   call("m2", 5, 25)],
                  [TransferEvent("m1", "m2", 4, "f32[1]", 1, 2, 10, 12)], 40)
    assert trace.step_window() == (0, 30)
    assert trace.busy_intervals("m1") == [(0, 10), (20, 30)]
    assert trace.idle_gaps() == {"m1": [(10, 20)], "m2": [(0, 5), (25, 30)],
                                 "m3": [(0, 30)]}
    assert trace.idle_us() == {"m1": 10, "m2": 10, "m3": 30}
    assert Trace(("m1",)).idle_us() == {"m1": 0}
    # Overlapping calls of one mesh go to a second track in the JSON.
    names = {e["args"]["name"] for e in trace.to_chrome_json()["traceEvents"]
             if e["name"] == "thread_name"}
    assert "m1 #2" in names and "m1 transfers in" in names


def test_source_survives_to_dict_and_merge():
    trace = Trace(("m1",), source="profiler")
    again = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again == trace
    old = trace.to_dict()
    del old["source"], old["fallback_reason"]  # a trace from before
    assert Trace.from_dict(old).source == "host"
    host_trace = Trace(("m1",), fallback_reason="busy")
    merged = Trace.merge([host_trace, host_trace])
    assert (merged.source, merged.fallback_reason) == ("host", "busy")
    assert Trace.merge([trace, host_trace]).source == "host"
