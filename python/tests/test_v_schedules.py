"""ZB-V and DualPipe-V (mpmd.v_schedules): the generated orders, their
simulated bubbles and memory, the rules over a program's fragments, and
training steps that equal jax.jit."""

from __future__ import annotations

import collections

import pytest

import mpmd
from mpmd import pipeline
from mpmd import pipeline_registry as registry
from mpmd import v_schedules as vs
from mpmd.compiler import FragmentKind
from mpmd.config import ConfigError
from mpmd.origins import Origin
from mpmd.schedules import FragmentInfo as OurFragment
from mpmd.schedules import ScheduleError

GENERATORS = {"zbv": vs.zero_bubble_v_order, "dpv": vs.dualpipe_v_order}


def peak_activations(seq: list[vs.VOp]) -> int:
    """Chunk activations held at once on a mesh: from F until W."""
    live = peak = 0
    for op in seq:
        live += {"F": 1, "W": -1}.get(op.kind, 0)
        peak = max(peak, live)
    return peak


@pytest.mark.parametrize("name", sorted(GENERATORS))
@pytest.mark.parametrize("p", [1, 2, 3, 4, 8])
def test_orders_run_every_op_once_without_deadlock(name, p):
    for m in range(2 * p, 4 * p + 1):
        orders = GENERATORS[name](p, m)
        assert len(orders) == p
        for seq in orders:
            assert sorted(seq) == sorted(
                vs.VOp(kind, chunk, i) for kind in "FBW" for chunk in (0, 1)
                for i in range(m))
            # Each kind of each chunk runs its microbatches in order.
            for kind in "FB":
                for chunk in (0, 1):
                    mbs = [op.microbatch for op in seq
                           if (op.kind, op.chunk) == (kind, chunk)]
                    assert mbs == sorted(mbs)
        vs.simulate_v(orders)  # raises if the orders wait on each other


def test_unit_cost_bubbles():
    # With F = B = W = 1 per chunk (half a stage) and no transfer time, no
    # step can be shorter than 6m + p - 1 units (the last mesh's work, after
    # the first forward reaches it). DualPipe-V takes exactly that: a bubble
    # of (p - 1) / (6m + p - 1), half of ZB-H1's (p - 1) / (3m + p - 1) in
    # chunk units. So does ZB-V when p divides m, and at most p units more
    # otherwise.
    for p in (2, 3, 4, 8):
        for m in range(p, 4 * p + 1):
            bound = 6 * m + p - 1
            zbv = vs.simulate_v(vs.zero_bubble_v_order(p, m)).step_time
            assert bound <= zbv <= bound + p, (p, m)
            if m % p == 0:
                assert zbv == bound, (p, m)
            if m >= 2 * p:
                dpv = vs.simulate_v(vs.dualpipe_v_order(p, m))
                assert dpv.step_time == bound, (p, m)
                assert dpv.bubble_fraction == pytest.approx(
                    (p - 1) / (6 * m + p - 1))


def test_memory_bounds():
    for p in (2, 4, 8):
        for m in (2 * p, 4 * p):
            # ZB-V: at most p microbatches in flight per mesh, two chunks
            # each: the activations of 1F1B's first stage.
            assert max(map(peak_activations, vs.zero_bubble_v_order(p, m))) \
                == 2 * p
            assert max(map(peak_activations,
                           vs.zero_bubble_v_order(p, m, max_in_flight=2))) \
                <= 4
            # DualPipe-V holds one chunk more.
            assert max(map(peak_activations, vs.dualpipe_v_order(p, m))) \
                == 2 * p + 1


def test_zbv_trades_memory_for_latency():
    p, m = 4, 32
    bubbles = [vs.simulate_v(vs.zero_bubble_v_order(
        p, m, transfer=1.0, max_in_flight=k), transfer=1.0).bubble_fraction
        for k in (p, p + 2, 2 * p)]
    assert bubbles[0] > bubbles[1] > bubbles[2]
    # Built for the transfer time, the order hides more of it than the
    # order built for none.
    blind = vs.simulate_v(vs.zero_bubble_v_order(p, m),
                          transfer=1.0).bubble_fraction
    assert bubbles[0] < blind


def test_dualpipe_v_overlaps_pairs_in_the_steady_state():
    # Mesh 0 of p = 4, m = 16: 6 forwards of chunk 0, a pair of forwards,
    # 3 times B1 F1, then m - 2p + 1 = 9 times F0 B1 F1 B0.
    seq = vs.dualpipe_v_order(4, 16)[0]
    kinds = [f"{op.kind}{op.chunk}" for op in seq if op.kind != "W"]
    assert " ".join(kinds[:14]) == ("F0 " * 7 + "F1 " + "B1 F1 " * 3).strip()
    assert " ".join(kinds[14:14 + 4 * 9]) == " ".join(["F0 B1 F1 B0"] * 9)
    # Its last backwards defer their W to the end.
    assert [op.kind for op in seq[-1:]] == ["W"]


def test_errors():
    with pytest.raises(ScheduleError, match=r"at least 2p = 8 microbatches "
                       r"for p = 4 meshes; got m = 7"):
        vs.dualpipe_v_order(4, 7)
    with pytest.raises(ScheduleError, match="at least one microbatch"):
        vs.zero_bubble_v_order(4, 0)
    with pytest.raises(ScheduleError, match="at least one mesh"):
        vs.zero_bubble_v_order(0, 4)
    with pytest.raises(ScheduleError, match="max_in_flight >= 1"):
        vs.zero_bubble_v_order(4, 4, max_in_flight=0)
    orders = vs.zero_bubble_v_order(2, 4)
    swapped = [list(seq) for seq in orders]
    # Mesh 1 now wants microbatch 1's forward before microbatch 0's.
    f0 = swapped[1].index(vs.VOp("F", 0, 0))
    f1 = swapped[1].index(vs.VOp("F", 0, 1))
    swapped[1][f0], swapped[1][f1] = swapped[1][f1], swapped[1][f0]
    swapped[0].remove(vs.VOp("F", 0, 1))
    swapped[0].append(vs.VOp("F", 0, 1))
    with pytest.raises(ScheduleError, match=r"wait on each other: mesh 0: "):
        vs.simulate_v(swapped)
    with pytest.raises(ScheduleError, match=r"mesh 0 runs .* twice"):
        vs.simulate_v([orders[0] + orders[0][:1], orders[1]])


# -- Rules over fragments (the compiler's view, synthetic). ------------------

P = 4


def v_fragment(stage: int, mb: int, kind: FragmentKind) -> OurFragment:
    name = f"s{stage}"
    count = 0 if kind == FragmentKind.FORWARD else 1
    label = name + ("(1)" if count else "")
    if kind == FragmentKind.WEIGHT_GRADIENT:
        label += "[w]"
    mesh = f"m{vs.v_mesh_of_stage(stage, P)}"
    return OurFragment((Origin(name, count),), stage, mb, mesh, kind, label,
                       f"{label}#{mb}")


def v_program(m: int, whole: tuple[int, ...] = (0, 2 * P - 1)
              ) -> list[OurFragment]:
    """A V-pipelined step's fragments in program order; backwards of the
    stages in `whole` left unsplit (their results stay on the mesh)."""
    fragments = []
    for mb in range(m):
        for s in range(2 * P):
            fragments.append(v_fragment(s, mb, FragmentKind.FORWARD))
        for s in reversed(range(2 * P)):
            fragments.append(v_fragment(s, mb, FragmentKind.BACKWARD))
            if s not in whole:
                fragments.append(v_fragment(s, mb,
                                            FragmentKind.WEIGHT_GRADIENT))
    return fragments


def as_ops(keys: list[str]) -> list[vs.VOp]:
    ops = []
    for key in keys:
        label, mb = key.split("#")
        stage = int(label.split("(")[0][1:])
        kind = "W" if "[w]" in label else "B" if "(1)" in label else "F"
        ops.append(vs.VOp(kind, 0 if stage < P else 1, int(mb)))
    return ops


@pytest.mark.parametrize("name,generate", [
    ("ZERO_BUBBLE_V", vs.zero_bubble_v_order),
    ("DUALPIPE_V", vs.dualpipe_v_order)])
def test_registry_orders_fragments_as_generated(name, generate):
    m = 8
    fragments = v_program(m)
    order, merges = pipeline.to_mpmd(registry.get_pipeline_schedule(name),
                                     fragments, P, True)
    assert merges == []
    expected = generate(P, m)
    for r in range(P):
        present = {(f.stage, f.call_counter, f.kind) for f in fragments
                   if f.mesh == f"m{r}"}

        def exists(op: vs.VOp, r=r, present=present) -> bool:
            stage = r if op.chunk == 0 else 2 * P - 1 - r
            kind = {"F": FragmentKind.FORWARD, "B": FragmentKind.BACKWARD,
                    "W": FragmentKind.WEIGHT_GRADIENT}[op.kind]
            return (stage, op.microbatch, kind) in present
        # Unsplit backwards (stages 0 and 7 on m0) have no W fragment.
        assert as_ops(order[f"m{r}"]) == [op for op in expected[r]
                                          if exists(op)]
    assert pipeline.required_options(registry.get_pipeline_schedule(name)) \
        == {"split_backward": True}


def test_rules_refuse_programs_that_are_not_a_v():
    def fragments_on(meshes):
        return [OurFragment((Origin(f"s{s}", 0),), s, 0, meshes[s],
                            FragmentKind.FORWARD, f"s{s}", f"s{s}#0")
                for s in range(2 * P)]
    interleaved = fragments_on([f"m{s % P}" for s in range(2 * P)])
    with pytest.raises(ScheduleError, match=r"ZB-V needs mesh 'm0' to hold "
                       r"one V pair of stages \(r and 2p - 1 - r = 7 for r = "
                       r"0\); fragment 's4' \(call counter 0\) has stage 4, "
                       r"another on the mesh stage 0"):
        pipeline.to_mpmd(registry.get_pipeline_schedule("ZERO_BUBBLE_V"),
                         interleaved, P, True)
    one_stage_per_mesh = [f for f in fragments_on(
        [f"m{vs.v_mesh_of_stage(s, P)}" for s in range(2 * P)])
        if f.stage < P]
    stray = OurFragment((Origin("x", 0),), 9, 0, "m0", FragmentKind.FORWARD,
                        "x", "x#0")
    with pytest.raises(ScheduleError, match=r"DualPipe-V places 2p = 8 "
                       r"stages on 4 meshes; fragment 'x' \(call counter 0\)"
                       r" has stage 9"):
        pipeline.to_mpmd(registry.get_pipeline_schedule("DUALPIPE_V"),
                         one_stage_per_mesh + [stray], P, True)
    # Called on all fragments at once, the rules see a pair split.
    split_pair = [f for f in one_stage_per_mesh if f.stage != 3] + [
        OurFragment((Origin("s3", 0),), 3, 0, "m9", FragmentKind.FORWARD,
                    "s3", "s3#0")]
    with pytest.raises(ScheduleError, match=r"needs stages 3 and 4 on one "
                       r"mesh; they are on \['m3', 'm9'\]"):
        vs.zero_bubble_v_schedule_rules(
            [pipeline._describe(f, True) for f in split_pair + [
                v_fragment(4, 0, FragmentKind.FORWARD)]],
            pipeline.PipelineContext(num_meshes=P))
    few = v_program(4)
    with pytest.raises(ScheduleError, match="at least 2p = 8 microbatches"):
        pipeline.to_mpmd(registry.get_pipeline_schedule("DUALPIPE_V"),
                         few, P, True)


def test_spellings():
    from meshes import MESHES, four_meshes
    import models

    assignment = models.v_assignment(8, MESHES)
    for options in ({"pipeline_schedule": "zero-bubble-v"},
                    {"mpmd_pipeline_schedule": "ZeroBubbleV"}):
        config = mpmd.make_config(four_meshes(), assignment,
                                  partitioning_options=options)
        assert config.pipeline_schedule is \
            registry.get_pipeline_schedule("ZERO_BUBBLE_V")
        assert config.partitioning_options.split_backward
    config = mpmd.make_config(four_meshes(), assignment,
                              pipeline_schedule="dualpipe-v")
    assert config.pipeline_schedule is \
        registry.get_pipeline_schedule("DUALPIPE_V")
    with pytest.raises(ConfigError, match=r"V schedules: \['zero-bubble-v', "
                       r"'dualpipe-v'\]"):
        mpmd.make_config(four_meshes(), assignment,
                         pipeline_schedule="zero-bubble-w")
    with pytest.raises(ValueError, match="a V over 4 meshes has 8 stages"):
        models.v_assignment(6, MESHES)


# -- Training steps equal jax.jit. ------------------------------------------

def _train_v(schedule, meshes: list[str], microbatches: int
             ) -> dict[str, list[vs.VOp]]:
    """Trains two steps of the transformer with 2p blocks in a V over p
    meshes; returns each mesh's realized order of F/B/W ops (chunk 0: the
    lower stage of the mesh; consecutive fragments of one op, e.g. embed
    and block0, count once)."""
    from meshes import assert_trains_like_jit, four_meshes, transformer_data
    import models

    blocks = 2 * len(meshes)
    assignment = models.v_assignment(blocks, meshes)
    topology = {name: four_meshes()[name] for name in meshes}
    config = mpmd.make_config(topology, assignment,
                              pipeline_schedule=schedule)
    params, tokens, targets = transformer_data(microbatches, blocks)
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    assert_trains_like_jit(lowered.compile(),
                           models.transformer_microbatched_step,
                           params, tokens, targets)
    stage_of = {name: stage for name, (_, stage) in assignment.items()}
    realized: dict[str, list[vs.VOp]] = collections.defaultdict(list)
    for step in lowered.plan.calls():
        if step.call_counter is None or not step.origins:
            continue
        stage = stage_of[step.origins[0].name]
        op = vs.VOp(step.kind, 0 if stage < len(meshes) else 1,
                    step.call_counter)
        if realized[step.mesh][-1:] != [op]:
            realized[step.mesh].append(op)
    return realized


@pytest.mark.parametrize("schedule,generate", [
    ("zero-bubble-v", vs.zero_bubble_v_order),
    ("dualpipe-v", vs.dualpipe_v_order)])
def test_v_schedules_train_like_jax_jit(schedule, generate):
    # Two meshes keep the step small; DualPipe-V needs m >= 2p = 4.
    meshes, m = ["m1", "m2"], 4
    realized = _train_v(schedule, meshes, m)
    expected = generate(len(meshes), m)
    for r, mesh in enumerate(meshes):
        have = set(realized[mesh])
        # The compiler runs the generated order (W parts exist where a
        # backward's results leave the mesh).
        assert realized[mesh] == [op for op in expected[r] if op in have]
        assert {op for op in have if op.kind != "W"} == {
            op for op in expected[r] if op.kind != "W"}
    # Weight gradients were split off on the meshes inside the V.
    assert any(op.kind == "W" for op in realized["m2"])


def test_zero_bubble_v_built_from_costs_trains_like_jax_jit():
    from mpmd.runtime.simulate import Costs
    from mpmd.schedules.from_costs import CostDrivenSchedule

    costs = Costs(forward=1.0, backward=1.1, weight_gradient=0.6,
                  transfer=0.1)
    schedule = registry.zero_bubble_v_schedule(costs=costs,
                                               weight_memory=0.4)
    assert isinstance(schedule, CostDrivenSchedule)
    assert schedule.in_flight(4) == 4 and schedule.weight_memory == 0.4
    meshes, m = ["m1", "m2"], 4
    realized = _train_v(schedule, meshes, m)
    # Every microbatch's forwards of both chunks ran on both meshes.
    for mesh in meshes:
        assert {(op.chunk, op.microbatch) for op in realized[mesh]
                if op.kind == "F"} == {(c, i) for c in (0, 1)
                                       for i in range(m)}
    with pytest.raises(ScheduleError, match="transfer time from `costs`"):
        registry.zero_bubble_v_schedule(costs=costs, transfer=0.5)
    with pytest.raises(ScheduleError, match="give costs too"):
        registry.zero_bubble_v_schedule(weight_memory=0.5)
