"""Pipeline schedules: exact per-mesh orders for p=4 meshes and m=8
microbatches, the simulator against the closed forms, and bad schedules."""

from __future__ import annotations

import pytest

import mpmd
from mpmd.runtime.plan import ExecutionPlan
from mpmd.runtime.simulate import Costs, simulate

from pipeline_ir import GPIPE, ONE_F_ONE_B, mesh_orders, pipeline_module, seq

P, M = 4, 8


def scheduled(schedule: str, v: int = 1, extra: str = "") -> str:
    return mpmd.run_pipeline(pipeline_module(P, M, v),
                             f"mpmd-schedule{{schedule={schedule}}}{extra}")


def plan_of(schedule: str, v: int = 1) -> ExecutionPlan:
    _, plan = mpmd.compiler.compile_to_plan(
        pipeline_module(P, M, v),
        f"mpmd-schedule{{schedule={schedule}}},mpmd-export")
    return ExecutionPlan.from_json(plan)


# Megatron-LM's interleaved 1F1B with v=2 chunks: stage s and s+4 on mesh s;
# microbatches in groups of p=4, chunk by chunk; (p-r-1)*2 + (v-1)*p warm-up
# forwards on mesh r.
INTERLEAVED = {
    "m0": seq("F0s0 F1s0 F2s0 F3s0 F0s4 F1s4 F2s4 F3s4 F4s0 F5s0 F6s0 B0s4 "
              "F7s0 B1s4 F4s4 B2s4 F5s4 B3s4 F6s4 B0s0 F7s4 B1s0 B2s0 B3s0 "
              "B4s4 B5s4 B6s4 B7s4 B4s0 B5s0 B6s0 B7s0"),
    "m3": seq("F0s3 F1s3 F2s3 F3s3 F0s7 B0s7 F1s7 B1s7 F2s7 B2s7 F3s7 B3s7 "
              "F4s3 B0s3 F5s3 B1s3 F6s3 B2s3 F7s3 B3s3 F4s7 B4s7 F5s7 B5s7 "
              "F6s7 B6s7 F7s7 B7s7 B4s3 B5s3 B6s3 B7s3"),
}


def test_gpipe_order():
    orders = mesh_orders(scheduled("gpipe"))
    assert orders == {f"m{r}": GPIPE for r in range(P)}


def test_1f1b_order():
    assert mesh_orders(scheduled("1f1b")) == ONE_F_ONE_B


def test_interleaved_order():
    orders = mesh_orders(scheduled("interleaved-1f1b", v=2))
    assert orders["m0"] == INTERLEAVED["m0"]
    assert orders["m3"] == INTERLEAVED["m3"]
    for r in range(P):
        assert sorted(orders[f"m{r}"]) == sorted(
            f"{k}{i}s{s}" for k in "FB" for i in range(M) for s in (r, r + P))


def test_schedule_text_names_the_stage_where_a_mesh_holds_several():
    lines = dict(line.split(": ", 1)
                 for line in plan_of("interleaved-1f1b", v=2)
                 .schedule_text().splitlines())
    # The plan's order, each entry with its stage (s and s + 4 on mesh s).
    assert lines["m0"].split() == [entry.replace("s", "@s")
                                   for entry in INTERLEAVED["m0"]]
    for r in range(P):
        assert {entry.split("@")[1] for entry in lines[f"m{r}"].split()} == \
            {f"s{r}", f"s{r + P}"}


def test_schedule_text_of_one_stage_per_mesh_is_short():
    lines = plan_of("1f1b").schedule_text().splitlines()
    assert lines == [f"{mesh}: {' '.join(order)}"
                     for mesh, order in sorted(ONE_F_ONE_B.items())]


def test_plan_mesh_order_matches_the_schedule():
    plan = plan_of("1f1b")
    labels = {mesh: [("B" if "(1)" in l else "F") + l.split("#")[1]
                     for l in order]
              for mesh, order in plan.mesh_order().items()}
    assert labels == ONE_F_ONE_B


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_simulated_bubble_matches_closed_form(schedule):
    result = simulate(plan_of(schedule))
    assert result.step_time == pytest.approx((M + P - 1) * 3)
    assert result.bubble_fraction == pytest.approx((P - 1) / (M + P - 1))


def test_simulated_interleaved_bubble():
    v = 2
    # Each chunk holds half a stage: F and B cost half as much.
    result = simulate(plan_of("interleaved-1f1b", v=v),
                      Costs(forward=1 / v, backward=2 / v))
    assert result.bubble_fraction == pytest.approx((P - 1) / (v * M + P - 1))
    one_f_one_b = simulate(plan_of("1f1b")).bubble_fraction
    assert result.bubble_fraction < one_f_one_b


def test_schedule_against_data_flow_names_the_cycle():
    text = pipeline_module(2, 2, reverse_accumulation=True)
    with pytest.raises(mpmd.CompilerError) as info:
        mpmd.run_pipeline(text, "mpmd-schedule{schedule=gpipe}")
    message = str(info.value)
    assert "pipeline schedule gpipe contradicts the data flow; cycle:" in message
    # Gradients accumulate from the last microbatch down, but GPipe runs
    # backward 0 before backward 1.
    assert ("cycle: 's1(1)#0' on m1 -(schedule)-> 's1(1)#1' on m1 -> "
            "'s1(1)#0' on m1") in message


def test_unknown_schedule():
    with pytest.raises(mpmd.CompilerError, match="option 'schedule': unknown value 'zigzag'; expected none, gpipe, 1f1b"):
        mpmd.run_pipeline(pipeline_module(2, 2), "mpmd-schedule{schedule=zigzag}")


def test_interleaved_needs_microbatches_multiple_of_meshes():
    text = pipeline_module(4, 6, v=2)
    with pytest.raises(mpmd.CompilerError, match=r"needs the number of microbatches \(6\) to be a multiple of the number of meshes \(4\)"):
        mpmd.run_pipeline(text, "mpmd-schedule{schedule=interleaved-1f1b}")


def test_microbatch_counts_must_match():
    text = pipeline_module(2, 2).replace(
        'origin=["s0"(1)], stage=0> (%v8, %v1) {call_counter = 0',
        'origin=["s0"(1)], stage=0> (%v8, %v1) {call_counter = 5')
    assert "call_counter = 5" in text
    with pytest.raises(mpmd.CompilerError, match=r"forward fragments have microbatches \{0, 1\} but backward fragments have \{1, 5\}"):
        mpmd.run_pipeline(text, "mpmd-schedule{schedule=1f1b}")
