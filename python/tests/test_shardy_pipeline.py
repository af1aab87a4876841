"""Shardy:MPMD's pipeline-schedule API (mpmd.pipeline, mpmd.pipeline_registry):
the data classes and their validation, the rule builders, the adapter to
the compiler (to_mpmd, required_options), the per-mesh order of each
registry schedule for p=4 meshes and m=8 microbatches (checked against the
compiler's built-ins and its data-flow check), and training steps with
registry schedules equal to jax.jit."""

from __future__ import annotations

import functools

import pytest

import mpmd
from mpmd import pipeline
from mpmd import pipeline_registry as registry
from mpmd.compiler import FragmentKind
from mpmd.errors import MpmdError
from mpmd.origins import Origin
from mpmd.schedules import FragmentInfo as OurFragment
from mpmd.schedules import ScheduleError

from pipeline_ir import (GPIPE, ONE_F_ONE_B, ZB_H1, mesh_orders,
                         pipeline_module, pipeline_module_with_weights, seq,
                         split_mesh_orders)

P, M = 4, 8
FragmentInfo = pipeline.FragmentInfo
FragmentOrigin = pipeline.FragmentOrigin
CTX = pipeline.PipelineContext(num_meshes=P)


def info(name="a", count=0, mesh="m0", **kwargs) -> FragmentInfo:
    return FragmentInfo(origins=(FragmentOrigin(name, count),),
                        mesh_name=mesh, **kwargs)



# -- Data classes and validation. -------------------------------------------

def test_defaults():
    assert FragmentOrigin("f").transpose_count == 0
    fragment = FragmentInfo(origins=(FragmentOrigin("f"),))
    assert (fragment.stage_id, fragment.call_counter, fragment.split_type,
            fragment.mesh_name) == (None, None, None, "")
    assert pipeline.PipelineSchedule() == pipeline.PipelineSchedule(None, None)
    assert [t.name for t in pipeline.SplitFragmentType] == [
        "KEEP_TRANSFERRED", "DROP_TRANSFERRED"]
    # Frozen and hashable: merge rules hold sets of fragments.
    with pytest.raises(AttributeError):
        fragment.stage_id = 3  # type: ignore[misc]
    assert len({info(), info(), info(call_counter=1)}) == 2


def test_merge_rule_validation():
    a, b = info("a"), info("b")
    target = pipeline._minimal_create_target_info([a, b])
    assert pipeline.FragmentMergeRule({a, b}, target).target.origins == (
        FragmentOrigin("a"), FragmentOrigin("b"))
    with pytest.raises(ValueError, match="at least 2 source fragments"):
        pipeline.FragmentMergeRule({a}, target)
    with pytest.raises(ValueError, match="at least one origin"):
        pipeline.FragmentMergeRule({a, FragmentInfo(origins=(),
                                                    mesh_name="m0")}, target)
    with pytest.raises(ValueError, match="must be on the same mesh"):
        pipeline.FragmentMergeRule({a, info("b", mesh="m1")}, target)
    with pytest.raises(ValueError, match="Target fragment must have at least"):
        pipeline.FragmentMergeRule({a, b}, FragmentInfo(origins=()))


def test_schedule_rule_validation():
    a, b = info("a"), info("b")
    assert pipeline.FragmentScheduleRule([a, b]).ordered_fragments == [a, b]
    with pytest.raises(ValueError, match="at least 2 fragments"):
        pipeline.FragmentScheduleRule([a])
    with pytest.raises(ValueError, match="at least one origin"):
        pipeline.FragmentScheduleRule([a, FragmentInfo(origins=())])
    with pytest.raises(ValueError, match="must be on the same mesh"):
        pipeline.FragmentScheduleRule([a, info("b", mesh="m1")])


def test_minimal_target_info():
    with pytest.raises(ValueError, match="empty source fragments"):
        pipeline._minimal_create_target_info([])
    one = FragmentInfo((FragmentOrigin("x", 0), FragmentOrigin("y", 1)),
                       stage_id=2, call_counter=3,
                       split_type=pipeline.SplitFragmentType.KEEP_TRANSFERRED,
                       mesh_name="m1")
    two = FragmentInfo((FragmentOrigin("y", 1), FragmentOrigin("x", 1)),
                       stage_id=2, call_counter=3, mesh_name="m1")
    target = pipeline._minimal_create_target_info([one, two])
    assert target == FragmentInfo(
        (FragmentOrigin("x", 0), FragmentOrigin("y", 1),
         FragmentOrigin("x", 1)), mesh_name="m1")
    with pytest.raises(ValueError,
                       match="Inconsistent mesh_name values: m1 vs m2"):
        pipeline._minimal_create_target_info([one, info(mesh="m2")])


def test_helpers():
    mixed = FragmentInfo((FragmentOrigin("layer_a", 0),
                          FragmentOrigin("layer_b", 1)), call_counter=0)
    assert pipeline.fragment_origins_contain(mixed, "er_b")
    assert not pipeline.fragment_origins_contain(mixed, "layer_c")
    assert pipeline.union_fragment_origins([mixed, info("layer_a")]) == \
        mixed.origins
    assert pipeline.maybe_unique_transpose_count(mixed) is None
    assert pipeline.maybe_unique_transpose_count(info(count=1)) == 1
    assert pipeline.maybe_unique_transpose_count(
        FragmentInfo(origins=())) is None
    unit = pipeline.get_scheduling_unit_info
    assert unit(info(count=1, call_counter=4)) == (4, 1)
    assert unit(info(count=1)) is None  # no call counter
    assert unit(info(count=2, call_counter=4)) is None  # transposed twice
    assert unit(mixed) is None
    assert unit(FragmentInfo(origins=(), call_counter=1)) is None
    staged = pipeline.get_staged_scheduling_info
    assert staged(info(call_counter=1, stage_id=0),
                  info(count=1, call_counter=2, stage_id=0), "x") == (1, 0, 2, 1)
    assert staged(info(), info(call_counter=1), "x") is None
    with pytest.raises(ValueError, match="must have a stage id for my sched"):
        staged(info(call_counter=1), info(call_counter=2, stage_id=0),
               "my sched")


def test_predicate_builders():
    fragments = [info("a", call_counter=i, mesh=mesh)
                 for mesh in ("m0", "m1") for i in range(3)]
    asked = []

    def before(a, b, context):
        asked.append((a.mesh_name, b.mesh_name))
        assert context is CTX
        return a.call_counter < b.call_counter

    rules, merges = pipeline.build_schedule_rules_from_predicate(
        fragments, CTX, before_pred=before)
    assert merges == []
    assert all(a == b for a, b in asked)  # never across meshes
    assert [[f.call_counter for f in r.ordered_fragments] for r in rules] == [
        [0, 1], [0, 2], [1, 2]] * 2

    schedule, merges = pipeline.build_merge_rules_from_predicate(
        fragments, CTX, pred=lambda a, b, _: a.call_counter == 0)
    assert schedule == []
    assert [sorted(f.call_counter for f in r.sources) for r in merges] == [
        [0, 1], [0, 2]] * 2
    assert merges[0].target.origins == (FragmentOrigin("a"),)
    custom = pipeline.build_merge_rules_from_predicate(
        fragments[:2], CTX, lambda srcs: info("merged"),
        pred=lambda *_: True)[1]
    assert custom[0].target == info("merged")


def test_build_rules_from_pipeline_runs_builders_per_mesh():
    seen = []

    def builder(fragments, context):
        seen.append([f.mesh_name for f in fragments])
        if len(fragments) < 2:
            return [], []
        return [pipeline.FragmentScheduleRule(list(fragments))], []

    fragments = [info("a", mesh="m1"), info("b", mesh="m0"),
                 info("c", mesh="m1")]
    rules, merges = pipeline.build_rules_from_pipeline(
        fragments, pipeline.PipelineSchedule([builder, builder]), CTX)
    assert seen == [["m1", "m1"], ["m0"], ["m1", "m1"], ["m0"]]
    assert len(rules) == 2 and merges == []
    assert pipeline.build_rules_from_pipeline(
        fragments, pipeline.PipelineSchedule(), CTX) == ([], [])


# -- required_options. -----------------------------------------------------

def test_required_options():
    schedule = pipeline.PipelineSchedule(required_mpmd_options={
        "mpmd_split_bwd_fragments": True,
        "mpmd_merge_inferred_after_scheduling": True})
    assert pipeline.required_options(schedule) == {"split_backward": True}
    assert pipeline.required_options(pipeline.PipelineSchedule()) == {}
    with pytest.raises(MpmdError, match=r"^not supported yet: required "
                       r"option 'mpmd_apply_merge_transfers_pass'"):
        pipeline.required_options(pipeline.PipelineSchedule(
            required_mpmd_options={"mpmd_apply_merge_transfers_pass": True}))
    assert pipeline.required_options(pipeline.PipelineSchedule(
        required_mpmd_options={"mpmd_fragment_remat": True,
                               "mpmd_merge_remat_fragments": False})) == {
        "remat": True, "merge_remat": False}
    with pytest.raises(MpmdError, match="not supported yet: required option "
                       "'mpmd_pipeline_schedule'.*rule builders define"):
        pipeline.required_options(pipeline.PipelineSchedule(
            required_mpmd_options={"mpmd_pipeline_schedule": "1F1B"}))
    with pytest.raises(MpmdError, match="must be True or False"):
        pipeline.required_options(pipeline.PipelineSchedule(
            required_mpmd_options={"mpmd_split_bwd_fragments": "yes"}))


def test_registry():
    assert sorted(registry.PIPELINE_SCHEDULES) == sorted([
        "ONE_FWD_ONE_BWD", "GPIPE", "GPIPE_BUT_1F1B_FOR_LAST_MESH",
        "ZERO_BUBBLE_H1", "ZERO_BUBBLE_H2_ZERO_TX_LATENCY",
        "ZERO_BUBBLE_H2_HALF_TX_LATENCY", "ZERO_BUBBLE_H2_FULL_TX_LATENCY",
        "PARALLEL_PIPELINES_WITH_WRAP_AROUND", "CIRCULAR",
        "CIRCULAR_WITH_REVERSED_BACKWARD",
        # Ours, beyond Shardy's (test_v_schedules.py).
        "ZERO_BUBBLE_V", "DUALPIPE_V"])
    for name, schedule in registry.PIPELINE_SCHEDULES.items():
        assert isinstance(schedule, pipeline.PipelineSchedule)
        assert registry.get_pipeline_schedule(name) is schedule
        split = ({"split_backward": True}
                 if "ZERO_BUBBLE" in name or name == "DUALPIPE_V" else {})
        assert pipeline.required_options(schedule) == split
    with pytest.raises(registry.UnknownScheduleError) as caught:
        registry.get_pipeline_schedule("1F1B")
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, MpmdError)
    assert str(caught.value).startswith(
        "Unknown pipeline schedule '1F1B'. Valid schedules are: "
        "['CIRCULAR', 'CIRCULAR_WITH_REVERSED_BACKWARD', 'DUALPIPE_V', "
        "'GPIPE', ")


def test_predicate_errors():
    f0 = info(call_counter=0, stage_id=0)
    with pytest.raises(ValueError, match="latency_stage_fraction must be"):
        registry.latency_hiding_zero_bubble_h2_schedule_predicate(
            f0, info(call_counter=1, stage_id=0), CTX,
            latency_stage_fraction=1.5)
    wrap = registry.parallel_pipelines_with_wraparound_schedule_predicate
    with pytest.raises(ValueError, match="Only forward fragments"):
        wrap(f0, info(count=1, call_counter=1, stage_id=0), CTX)
    with pytest.raises(ValueError, match="duplicate call counter"):
        wrap(f0, info("b", call_counter=0, stage_id=0), CTX)
    with pytest.raises(ValueError, match="must have a stage id for 1F1B"):
        registry.one_fwd_one_bwd_schedule_predicate(
            f0, info(call_counter=1), CTX)
    # GPipe needs no stage; fragments without call counter are not ordered.
    assert registry.gpipe_schedule_predicate(
        info(count=1, call_counter=0), info(call_counter=5), CTX) is False
    assert registry.gpipe_schedule_predicate(
        info(call_counter=5), info(count=1, call_counter=0), CTX) is True
    assert registry.gpipe_schedule_predicate(info(), info(call_counter=0),
                                             CTX) is False


# -- to_mpmd over synthetic fragments. --------------------------------------

def ours(stage: int, mb: int | None, kind: FragmentKind, p: int = P,
         name: str | None = None) -> OurFragment:
    name = name or f"s{stage}"
    count = 0 if kind == FragmentKind.FORWARD else 1
    label = name + ("(1)" if count else "")
    if kind == FragmentKind.WEIGHT_GRADIENT:
        label += "[w]"
    key = label if mb is None else f"{label}#{mb}"
    return OurFragment((Origin(name, count),), stage, mb, f"m{stage % p}",
                       kind, label, key)


def training_fragments(p: int = P, m: int = M, v: int = 1,
                       split: bool = False, backward: bool = True,
                       reverse: bool = False) -> list[OurFragment]:
    """The fragments of a pipelined step in program order as an unrolled
    loop over microbatches leaves them: each microbatch's forward through
    all stages, then its backward (B then W per stage when split)."""
    fragments = []
    for mb in range(m):
        for s in range(p * v):
            fragments.append(ours(s, mb, FragmentKind.FORWARD, p))
    for mb in (reversed(range(m)) if reverse else range(m)):
        if not backward:
            break
        for s in reversed(range(p * v)):
            fragments.append(ours(s, mb, FragmentKind.BACKWARD, p))
            if split:
                fragments.append(ours(s, mb, FragmentKind.WEIGHT_GRADIENT, p))
    if not reverse:
        # Interleave: microbatch by microbatch, as an unrolled loop body.
        by_mb: dict[int, list[OurFragment]] = {}
        for fragment in fragments:
            by_mb.setdefault(fragment.call_counter, []).append(fragment)
        fragments = [f for mb in sorted(by_mb) for f in by_mb[mb]]
    return fragments


def short(order: dict[str, list[str]], stages: bool = False
          ) -> dict[str, list[str]]:
    """Keys as F3 / B3 / W3 (with the stage, F3s4, when asked)."""
    def one(key: str) -> str:
        label, mb = key.split("#")
        kind = "W" if "[w]" in label else "B" if "(1)" in label else "F"
        stage = label.split("(")[0][1:]
        return kind + mb + (f"s{stage}" if stages else "")
    return {mesh: [one(key) for key in keys] for mesh, keys in order.items()}


def order_of(name: str, fragments: list[OurFragment], split: bool = False
             ) -> dict[str, list[str]]:
    order, merges = pipeline.to_mpmd(registry.get_pipeline_schedule(name),
                                     fragments, P, split)
    assert merges == []
    assert order is not None
    return order


def explicit(text: str, order: dict[str, list[str]],
             passes: str = "") -> str:
    """Runs the compiler's explicit schedule with `order` (checked against
    the data flow of `text`)."""
    spec = ",".join(f"{mesh}={'|'.join(keys)}" for mesh, keys in order.items())
    return mpmd.run_pipeline(
        text, f"{passes}mpmd-schedule{{schedule=explicit order={spec}}}")


def builtin(schedule: str, split: bool = False) -> dict[str, list[str]]:
    if split:
        return split_mesh_orders(mpmd.run_pipeline(
            pipeline_module_with_weights(P, M),
            f"mpmd-split-backward,mpmd-schedule{{schedule={schedule}}}"))
    return mesh_orders(mpmd.run_pipeline(
        pipeline_module(P, M), f"mpmd-schedule{{schedule={schedule}}}"))


def test_no_schedule_rules_keeps_program_order():
    fragments = training_fragments()
    assert pipeline.to_mpmd(pipeline.PipelineSchedule(), fragments, P,
                            False) == (None, [])


def test_every_fragment_is_placed_and_split_types_are_given():
    seen: list[FragmentInfo] = []

    def builder(fragments, context):
        seen.extend(fragments)
        return registry.PIPELINE_SCHEDULES["GPIPE"]\
            .schedule_merge_rule_builders[0](fragments, context)

    fragments = [ours(0, None, FragmentKind.FORWARD, name="init")]
    fragments += training_fragments(split=True)
    fragments += [ours(0, None, FragmentKind.BACKWARD, name="update")]
    order, _ = pipeline.to_mpmd(pipeline.PipelineSchedule([builder]),
                                fragments, P, True)
    assert sorted(sum(order.values(), [])) == sorted(f.key for f in fragments)
    # Fragments without a call counter keep their place: first and last.
    assert order["m0"][0] == "init" and order["m0"][-1] == "update(1)"
    # Builders see each mesh's fragments, in program order, described.
    assert seen == [pipeline._describe(f, True) for mesh in sorted(order)
                    for f in fragments if f.mesh == mesh]
    split = {f.key: pipeline._describe(f, True).split_type for f in fragments}
    assert split["s1(1)#0"] == pipeline.SplitFragmentType.KEEP_TRANSFERRED
    assert split["s1(1)[w]#0"] == pipeline.SplitFragmentType.DROP_TRANSFERRED
    assert split["s1#0"] is None
    assert pipeline._describe(ours(1, 0, FragmentKind.BACKWARD), False) == \
        FragmentInfo((FragmentOrigin("s1", 1),), stage_id=1, call_counter=0,
                     mesh_name="m1")


def test_direct_construction_schedule_and_merge_rules():
    """A schedule built without predicates (as in Shardy's docs): on each
    mesh F0 B0 F1 B1 ..., forward and backward of a microbatch fused."""
    def builder(fragments, _):
        forward = sorted((f for f in fragments
                          if pipeline.maybe_unique_transpose_count(f) == 0),
                         key=lambda f: f.call_counter)
        backward = sorted((f for f in fragments
                           if pipeline.maybe_unique_transpose_count(f) == 1),
                          key=lambda f: f.call_counter)
        ordered = [f for pair in zip(forward, backward) for f in pair]
        merges = [pipeline.FragmentMergeRule(
            {f, b}, pipeline._minimal_create_target_info([f, b]))
            for f, b in zip(forward, backward)]
        return [pipeline.FragmentScheduleRule(ordered)], merges

    order, merges = pipeline.to_mpmd(pipeline.PipelineSchedule([builder]),
                                     training_fragments(m=3), P, False)
    assert short(order)["m2"] == seq("F0 B0 F1 B1 F2 B2")
    assert sorted(merges) == sorted((f"s{s}", f"s{s}(1)") for s in range(P))


def test_merge_rules_that_cannot_be_said_as_label_pairs():
    fragments = training_fragments(m=3)

    def merging(pred):
        return pipeline.PipelineSchedule([functools.partial(
            pipeline.build_merge_rules_from_predicate, pred=pred)])

    def direction(f):
        return pipeline.maybe_unique_transpose_count(f)

    same_mb = merging(lambda a, b, _: a.call_counter == b.call_counter)
    assert pipeline.to_mpmd(same_mb, fragments, P, False) == (
        None, [(f"s{s}", f"s{s}(1)") for s in range(P)])
    with pytest.raises(MpmdError, match=r"^not supported yet: merging "
                       r"fragments of different call counters \('s0#0' and "
                       r"'s0#1' on 'm0'\)"):
        pipeline.to_mpmd(merging(lambda a, b, _: direction(a) == 0 ==
                                 direction(b)), fragments, P, False)
    with pytest.raises(MpmdError, match=r"^not supported yet: merging 's0' "
                       r"and 's0\(1\)' for some call counters only \(not for "
                       r"call counter 1 on 'm0', and 1 more\)"):
        pipeline.to_mpmd(merging(lambda a, b, _: a.call_counter ==
                                 b.call_counter == 0), fragments, P, False)

    def triple(fragments, _):
        group = [f for f in fragments if f.call_counter == 0]
        return [], [pipeline.FragmentMergeRule(
            set(group), pipeline._minimal_create_target_info(group))]

    with pytest.raises(MpmdError, match=r"^not supported yet: a merge rule "
                       r"of 3 fragments"):
        pipeline.to_mpmd(pipeline.PipelineSchedule([triple]),
                         training_fragments(m=1, v=1, split=True), P, True)


def test_merge_pairs_drive_the_compiler_merge():
    """1F1B, and on the last stage each microbatch's forward and backward
    fused (Shardy's predicate-based merge rules): the label pairs are what
    the compiler's merge pass takes."""
    def last_stage(a, b, context):
        return (a.stage_id == b.stage_id == context.num_meshes - 1
                and a.call_counter == b.call_counter)

    one_f_one_b = registry.get_pipeline_schedule("ONE_FWD_ONE_BWD")
    schedule = pipeline.PipelineSchedule([
        *one_f_one_b.schedule_merge_rule_builders,
        functools.partial(pipeline.build_merge_rules_from_predicate,
                          pred=last_stage)])
    order, merges = pipeline.to_mpmd(schedule, training_fragments(), P, False)
    assert merges == [("s3", "s3(1)")]
    rules = ",".join(f"{a}:{b}" for a, b in merges)
    text = explicit(pipeline_module(P, M), order)
    merged = mpmd.run_pipeline(text, f"mpmd-merge-fragments{{rules={rules}}}")
    assert merged.count('origin=["s3", "s3"(1)]') == M
    assert mesh_orders(merged)["m2"] == ONE_F_ONE_B["m2"]


def test_contradictory_rules_name_the_cycle():
    def before(a, b, _):  # F0 < F1 < F2 < F0
        return (b.call_counter - a.call_counter) % 3 == 1 and \
            a.origins[0].transpose_count == b.origins[0].transpose_count == 0

    schedule = pipeline.PipelineSchedule([functools.partial(
        pipeline.build_schedule_rules_from_predicate, before_pred=before)])
    with pytest.raises(ScheduleError, match=(
            r"rules contradict each other on mesh 'm0': they order these "
            r"fragments in a cycle: 's0#0' -> 's0#1' -> 's0#2' -> 's0#0'")):
        pipeline.to_mpmd(schedule, training_fragments(m=3), P, False)


def test_rules_naming_unknown_fragments():
    def builder(fragments, _):
        ghost = info("ghost", mesh=fragments[0].mesh_name)
        return [pipeline.FragmentScheduleRule([fragments[0], ghost])], []

    with pytest.raises(ScheduleError, match="names .*ghost.*which is not a "
                       "fragment of the program"):
        pipeline.to_mpmd(pipeline.PipelineSchedule([builder]),
                         training_fragments(m=1), P, False)


def test_rules_override_the_data_chains():
    """A schedule may run microbatches' backwards in any order (e.g. when
    gradients are not accumulated); it is the compiler that checks the data
    flow."""
    def before(a, b, _):
        return (a.call_counter, b.call_counter) == (1, 0) and \
            a.origins == b.origins and a.origins[0].transpose_count == 1

    schedule = pipeline.PipelineSchedule([functools.partial(
        pipeline.build_schedule_rules_from_predicate, before_pred=before)])
    order, _ = pipeline.to_mpmd(schedule, training_fragments(m=2), P, False)
    assert short(order)["m1"] == seq("F0 F1 B1 B0")


# -- Registry schedules: exact orders for p=4, m=8. -------------------------

# ZB-H2 with transfers free: n(r) = 2(p - r) - 1 = 7, 5, 3, 1 warm-up
# forwards on stage r (all before any backward), then Ba(i) before
# F(i + n) and F(i + n - 1) before Ba(i); Bw(i) between Ba(i + n' - 1) and
# Ba(i + n'), n' = n(p - 1 - r) = 1, 3, 5, 7. What the rules leave open
# follows the data (Bw in microbatch order, each after its Ba) and the
# program order.
ZB_H2_ZERO = {
    "m0": seq("F0 F1 F2 F3 F4 F5 F6 B0 W0 F7 B1 W1 B2 W2 B3 W3 B4 W4 "
              "B5 W5 B6 W6 B7 W7"),
    "m1": seq("F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 W0 F7 B3 W1 B4 W2 B5 W3 "
              "B6 W4 B7 W5 W6 W7"),
    "m2": seq("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 W0 F7 B5 W1 B6 W2 "
              "B7 W3 W4 W5 W6 W7"),
    "m3": seq("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 W0 F7 B7 W1 "
              "W2 W3 W4 W5 W6 W7"),
}
# With a transfer costing half a stage: n(r) = int(2(p - r) - 1
# + (p - r - 1)) = 10, 7, 4, 1 and n' = 1, 4, 7, 10. On the mesh of stage 1
# F7 must follow Ba(0) and precede Ba(1), while Ba(2), Ba(3) are free to run
# before it; Ba(4) waits for F7, which the next mesh runs before its Ba(4).
ZB_H2_HALF = {
    "m0": seq("F0 F1 F2 F3 F4 F5 F6 F7 B0 W0 B1 W1 B2 W2 B3 W3 B4 W4 "
              "B5 W5 B6 W6 B7 W7"),
    "m1": seq("F0 F1 F2 F3 F4 F5 F6 B0 B2 B3 W0 F7 B1 B4 W1 B5 W2 B6 "
              "W3 B7 W4 W5 W6 W7"),
    "m2": seq("F0 F1 F2 F3 B0 F4 B1 F5 B2 B5 F6 B3 B6 W0 F7 B4 B7 W1 "
              "W2 W3 W4 W5 W6 W7"),
    "m3": seq("F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5 "
              "F6 B6 W6 F7 B7 W7"),
}
# A transfer costing a whole stage: n = 13, 9, 5, 1 and n' = 1, 5, 9, 13.
ZB_H2_FULL = {
    "m0": seq("F0 F1 F2 F3 F4 F5 F6 F7 B0 W0 B1 W1 B2 W2 B3 W3 B4 W4 "
              "B5 W5 B6 W6 B7 W7"),
    "m1": seq("F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B4 W0 B5 W1 B6 W2 B3 "
              "B7 W3 W4 W5 W6 W7"),
    "m2": seq("F0 F1 F2 F3 F4 B0 W0 B4 F5 B1 W1 B5 F6 B2 W2 B6 F7 B3 "
              "W3 W4 W5 W6 B7 W7"),
    "m3": seq("F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5 "
              "F6 B6 W6 F7 B7 W7"),
}


def test_one_fwd_one_bwd_is_the_builtin_1f1b():
    fragments = training_fragments()
    order = order_of("ONE_FWD_ONE_BWD", fragments)
    assert short(order) == ONE_F_ONE_B == builtin("1f1b")
    assert_rules_hold("ONE_FWD_ONE_BWD", fragments, order, False)
    assert_data_chains_hold(fragments, order)
    text = pipeline_module(P, M)
    assert mesh_orders(explicit(text, order)) == ONE_F_ONE_B


def test_gpipe_is_the_builtin_gpipe():
    order = order_of("GPIPE", training_fragments())
    assert short(order) == {f"m{r}": GPIPE for r in range(P)} == \
        builtin("gpipe")
    assert mesh_orders(explicit(pipeline_module(P, M), order)) == short(order)


def test_gpipe_but_1f1b_for_last_mesh():
    order = order_of("GPIPE_BUT_1F1B_FOR_LAST_MESH", training_fragments())
    assert short(order) == {"m0": GPIPE, "m1": GPIPE, "m2": GPIPE,
                            "m3": ONE_F_ONE_B["m3"]}
    assert mesh_orders(explicit(pipeline_module(P, M), order)) == short(order)


def test_zero_bubble_h1_is_the_builtin_zero_bubble_h1():
    fragments = training_fragments(split=True)
    order = order_of("ZERO_BUBBLE_H1", fragments, True)
    assert short(order) == ZB_H1 == builtin("zero-bubble-h1", split=True)
    assert_rules_hold("ZERO_BUBBLE_H1", fragments, order, True)
    assert_data_chains_hold(fragments, order)
    text = explicit(pipeline_module_with_weights(P, M), order,
                    "mpmd-split-backward,")
    assert split_mesh_orders(text) == ZB_H1


@pytest.mark.parametrize("name, expected", [
    ("ZERO_BUBBLE_H2_ZERO_TX_LATENCY", ZB_H2_ZERO),
    ("ZERO_BUBBLE_H2_HALF_TX_LATENCY", ZB_H2_HALF),
    ("ZERO_BUBBLE_H2_FULL_TX_LATENCY", ZB_H2_FULL)])
def test_zero_bubble_h2(name, expected):
    fragments = training_fragments(split=True)
    order = order_of(name, fragments, True)
    assert short(order) == expected
    assert_rules_hold(name, fragments, order, True)
    assert_data_chains_hold(fragments, order)
    # The compiler finds the order consistent with the data flow.
    text = explicit(pipeline_module_with_weights(P, M), order,
                    "mpmd-split-backward,")
    assert split_mesh_orders(text) == expected


def assert_rules_hold(name, fragments, order, split):
    """Every pair the schedule's predicate orders is in that order."""
    position = {key: i for keys in order.values()
                for i, key in enumerate(keys)}
    described = {f.key: pipeline._describe(f, split) for f in fragments}
    builder = registry.get_pipeline_schedule(name)\
        .schedule_merge_rule_builders[0]
    pred = builder.keywords["before_pred"]
    for a in fragments:
        for b in fragments:
            if a is not b and a.mesh == b.mesh and pred(
                    described[a.key], described[b.key], CTX):
                assert position[a.key] < position[b.key], (a.key, b.key)


def assert_data_chains_hold(fragments, order):
    """The order keeps the inferred data dependencies (so they were not
    dropped for contradicting the rules)."""
    position = {key: i for keys in order.values()
                for i, key in enumerate(keys)}
    for a, b in pipeline._data_chains(fragments):
        a, b = fragments[a], fragments[b]
        if a.mesh == b.mesh:
            assert position[a.key] < position[b.key], (a.key, b.key)


def test_parallel_pipelines_with_wrap_around():
    # Forward only; microbatch r enters at the mesh of stage r: there the
    # order is F(r), F(r - 1), ..., F(0), F(m - 1), ..., F(r + 1).
    fragments = training_fragments(m=4, backward=False)
    order = order_of("PARALLEL_PIPELINES_WITH_WRAP_AROUND", fragments)
    assert short(order) == {"m0": seq("F0 F3 F2 F1"),
                            "m1": seq("F1 F0 F3 F2"),
                            "m2": seq("F2 F1 F0 F3"),
                            "m3": seq("F3 F2 F1 F0")}
    assert_rules_hold("PARALLEL_PIPELINES_WITH_WRAP_AROUND", fragments, order,
                      False)
    # As in Shardy: backward fragments, or two fragments of one call counter
    # on a mesh, are errors.
    with pytest.raises(ValueError, match="Only forward fragments"):
        order_of("PARALLEL_PIPELINES_WITH_WRAP_AROUND",
                 training_fragments(m=4))
    with pytest.raises(ValueError, match="duplicate call counter"):
        order_of("PARALLEL_PIPELINES_WITH_WRAP_AROUND",
                 training_fragments(m=4, v=2, backward=False))


def wraparound_module(p: int) -> str:
    """A forward-only program of p microbatches where microbatch i enters
    at mesh i and visits the meshes i, i + 1, ... (mod p); the fragment on
    mesh r is stage r."""
    tensor = "tensor<4xf32>"

    def mt(r: int) -> str:
        return f'!mpmd.mesh_tensor<"m{r}", {tensor}>'

    topology = ", ".join(f'<"m{r}" : <["x"=1]>>' for r in range(p))
    args = ", ".join(f"%x{i}: {mt(i)}" for i in range(p))
    results = [(i + p - 1) % p for i in range(p)]
    lines = [f"func.func @main({args}) -> "
             f"({', '.join(mt(r) for r in results)})",
             f"    attributes {{topology = #mpmd.topology<{topology}>}} {{"]
    outs = []
    for i in range(p):
        value = f"%x{i}"
        for hop in range(p):
            r = (i + hop) % p
            if hop:
                lines.append(f"  %t{i}_{hop} = mpmd.transfer {value} : "
                             f"({mt((r - 1) % p)}) -> {mt(r)}")
                value = f"%t{i}_{hop}"
            lines.append(
                f'  %f{i}_{hop} = mpmd.fragment<mesh="m{r}", origin=["s{r}"],'
                f" stage={r}> ({value}) {{call_counter = {i} : ui32}} "
                f"(%a: {tensor}) {{\n"
                f"    %y = stablehlo.add %a, %a : {tensor}\n"
                f"    mpmd.return %y : {tensor}\n"
                f"  }} : ({mt(r)}) -> {mt(r)}")
            value = f"%f{i}_{hop}"
        outs.append(value)
    lines.append(f"  func.return {', '.join(outs)} : "
                 f"{', '.join(mt(r) for r in results)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_parallel_pipelines_run_as_the_data_flows():
    # In program order: microbatch by microbatch, each from its entry mesh.
    fragments = [ours(r, i, FragmentKind.FORWARD)
                 for i in range(P) for r in [(i + h) % P for h in range(P)]]
    order = order_of("PARALLEL_PIPELINES_WITH_WRAP_AROUND", fragments)
    # Each mesh takes the microbatches in the order they arrive.
    assert short(order)["m1"] == seq("F1 F0 F3 F2")
    assert mesh_orders(explicit(wraparound_module(P), order)) == short(order)


def circular(reverse: bool) -> dict[str, list[str]]:
    """Stages r and r + 4 on mesh r; microbatches in phases of p = 4.
    Forwards by (phase, stage, microbatch); backwards after all forwards,
    by phase, stage descending, microbatch (or all three descending)."""
    orders = {}
    for r in range(P):
        stages = (r, r + P)
        forward = [f"F{i}s{s}" for phase in (0, 1) for s in stages
                   for i in range(phase * P, phase * P + P)]
        backward = [f"B{i}s{s}" for phase in (0, 1) for s in stages[::-1]
                    for i in range(phase * P, phase * P + P)]
        if reverse:
            backward = [f"B{i}s{s}" for phase in (1, 0) for s in stages[::-1]
                        for i in reversed(range(phase * P, phase * P + P))]
        orders[f"m{r}"] = forward + backward
    return orders


def test_circular():
    fragments = training_fragments(v=2)
    order = order_of("CIRCULAR", fragments)
    assert short(order, stages=True) == circular(False)
    assert_rules_hold("CIRCULAR", fragments, order, False)
    assert_data_chains_hold(fragments, order)
    assert mesh_orders(explicit(pipeline_module(P, M, v=2), order)) == \
        short(order, stages=True)


def test_circular_with_reversed_backward():
    fragments = training_fragments(v=2, reverse=True)
    order = order_of("CIRCULAR_WITH_REVERSED_BACKWARD", fragments)
    assert short(order, stages=True) == circular(True)
    assert_rules_hold("CIRCULAR_WITH_REVERSED_BACKWARD", fragments, order,
                      False)
    assert_data_chains_hold(fragments, order)
    # Backwards last microbatch first: the data flow allows it when the
    # gradients accumulate in that order (the transpose of a loop) ...
    text = pipeline_module(P, M, v=2, reverse_accumulation=True)
    assert mesh_orders(explicit(text, order)) == short(order, stages=True)
    # ... and the compiler names the cycle when they accumulate forward.
    forward = order_of("CIRCULAR_WITH_REVERSED_BACKWARD",
                       training_fragments(v=2))
    assert short(forward, stages=True) == circular(True)
    with pytest.raises(mpmd.CompilerError, match="contradicts the data flow"):
        explicit(pipeline_module(P, M, v=2), forward)


def test_make_config_takes_the_required_options():
    from meshes import MESHES, four_meshes
    import models

    assignment = models.transformer_assignment(4, MESHES)
    for name, split in [("ZERO_BUBBLE_H1", True), ("GPIPE", False)]:
        schedule = registry.get_pipeline_schedule(name)
        config = mpmd.make_config(four_meshes(), assignment,
                                  partitioning_options={
                                      "pipeline_schedule": schedule})
        assert config.partitioning_options.pipeline_schedule is schedule
        assert config.partitioning_options.split_backward is split


# -- Training steps equal jax.jit. ------------------------------------------

def _train(name: str, num_blocks: int, interleaved: bool):
    from meshes import (MESHES, assert_trains_like_jit, four_meshes,
                        transformer_data)
    import models

    assignment = (models.interleaved_assignment if interleaved else
                  models.transformer_assignment)(num_blocks, MESHES)
    config = mpmd.make_config(four_meshes(), assignment, partitioning_options={
        "pipeline_schedule": registry.get_pipeline_schedule(name)})
    params, tokens, targets = transformer_data(4, num_blocks)
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    assert_trains_like_jit(lowered.compile(),
                           models.transformer_microbatched_step,
                           params, tokens, targets)
    return dict(line.split(": ", 1) for line in
                lowered.schedule_text().splitlines() if ": " in line)


def test_one_fwd_one_bwd_trains_like_jax_jit():
    orders = _train("ONE_FWD_ONE_BWD", 4, interleaved=False)
    # The built-in 1F1B orders of test_e2e_pipelining (4 microbatches).
    assert orders["m2"] == "F0 F1 F2 B0 F3 B1 B2 B3"
    assert orders["m3"] == "F0 F1 B0 F2 B1 F3 B2 B3"
    assert orders["m4"] == "F0 F0 B0 B0 F1 F1 B1 B1 F2 F2 B2 B2 F3 F3 B3 B3"


def test_zero_bubble_h1_trains_like_jax_jit():
    orders = _train("ZERO_BUBBLE_H1", 4, interleaved=False)
    # Split backwards: weight gradients deferred on the later meshes.
    m3 = orders["m3"].split()
    assert "W0" in m3 and m3.index("W0") > m3.index("B1")


def test_circular_trains_like_jax_jit():
    orders = _train("CIRCULAR", 8, interleaved=True)
    # Stages 0 and 4 on m1 (with embed): all forwards before backwards.
    m1 = orders["m1"].split()
    assert {entry.split("@")[1] for entry in m1} == {"s0", "s4"}
    assert min(i for i, s in enumerate(m1) if s[0] == "B") > \
        max(i for i, s in enumerate(m1) if s[0] == "F")
