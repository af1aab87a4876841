"""Zero-bubble pipelining: mpmd-split-backward then the ZB-H1 schedule, on
p=4 meshes and m=8 microbatches; exact orders, the simulated bubble against
1F1B, and the errors."""

from __future__ import annotations

import re

import pytest

import mpmd
from mpmd.runtime.plan import ExecutionPlan
from mpmd.runtime.simulate import Costs, Simulation, simulate

from pipeline_ir import (ZB_H1, pipeline_module_with_weights, seq,
                         split_mesh_orders)

P, M = 4, 8
UNIT = Costs(forward=1, backward=1, weight_gradient=1)


def zb_rule(r: int, p: int = P, m: int = M) -> list[str]:
    """The rule of `pipeline_ir.ZB_H1`, written out independently of the
    table."""
    warmup = min(p - r, m)
    out = [f"F{k}" for k in range(warmup)]
    for k in range(m):
        out.append(f"B{k}")
        if k >= r:
            out.append(f"W{k - r}")
        if k + warmup < m:
            out.append(f"F{k + warmup}")
    return out + [f"W{k}" for k in range(max(m - r, 0), m)]


def run(passes: str, **kwargs) -> str:
    return mpmd.run_pipeline(pipeline_module_with_weights(P, M, **kwargs),
                             passes)


def plan_of(passes: str, **kwargs) -> ExecutionPlan:
    _, plan = mpmd.compiler.compile_to_plan(
        pipeline_module_with_weights(P, M, **kwargs), f"{passes},mpmd-export")
    return ExecutionPlan.from_json(plan)


def idle_per_mesh(result: Simulation) -> float:
    return result.step_time * len(result.busy) - sum(result.busy.values())


def test_table_follows_the_rule():
    assert ZB_H1 == {f"m{r}": zb_rule(r) for r in range(P)}


def test_split_backward_splits_every_backward():
    orders = split_mesh_orders(run("mpmd-split-backward"))
    for r in range(P):
        labels = orders[f"m{r}"]
        assert sorted(labels) == sorted(
            f"{k}{i}" for k in "FBW" for i in range(M))
        # Each W directly follows its B until a schedule moves it.
        for i in range(M):
            assert labels.index(f"W{i}") == labels.index(f"B{i}") + 1


def test_zero_bubble_h1_order():
    text = run("mpmd-split-backward,mpmd-schedule{schedule=zero-bubble-h1}")
    assert split_mesh_orders(text) == ZB_H1


def test_plan_schedule_text():
    plan = plan_of("mpmd-split-backward,mpmd-schedule{schedule=zero-bubble-h1}")
    lines = plan.schedule_text().splitlines()
    assert lines == [f"{mesh}: {' '.join(order)}"
                     for mesh, order in ZB_H1.items()]


def test_simulated_bubble_below_1f1b():
    zb = simulate(plan_of(
        "mpmd-split-backward,mpmd-schedule{schedule=zero-bubble-h1}"), UNIT)
    # 1F1B on the same split program: each W right after its B.
    one_f_one_b = simulate(plan_of(
        "mpmd-split-backward,mpmd-schedule{schedule=1f1b}"), UNIT)
    print(f"bubble fraction: zero-bubble-h1 {zb.bubble_fraction:.4f}, "
          f"1f1b (split) {one_f_one_b.bubble_fraction:.4f}")
    assert zb.bubble_fraction < one_f_one_b.bubble_fraction
    # Every mesh idles p - 1 units, all before its first B.
    assert zb.step_time == pytest.approx(3 * M + P - 1)
    assert zb.bubble_fraction == pytest.approx((P - 1) / (3 * M + P - 1))
    assert one_f_one_b.step_time == pytest.approx(30)
    assert one_f_one_b.bubble_fraction == pytest.approx(0.2)


def test_bubble_is_a_third_of_unsplit_1f1b():
    # 1F1B with whole backwards (B + W = 2 units) idles (p - 1) * 3 units per
    # mesh; ZB-H1 idles p - 1 (docs/architecture.md#optimize, "Bubbles").
    zb = simulate(plan_of(
        "mpmd-split-backward,mpmd-schedule{schedule=zero-bubble-h1}"), UNIT)
    whole = simulate(plan_of("mpmd-schedule{schedule=1f1b}"),
                     Costs(forward=1, backward=2))
    assert whole.bubble_fraction == pytest.approx((P - 1) / (M + P - 1))
    assert idle_per_mesh(zb) == pytest.approx(idle_per_mesh(whole) / 3)


def test_first_stage_left_whole():
    # Without an input gradient the first stage's backward stays whole; on
    # the first mesh ZB-H1 runs W right after B anyway, so it is accepted.
    text = run("mpmd-split-backward,mpmd-schedule{schedule=zero-bubble-h1}",
               first_stage_input_gradient=False)
    orders = split_mesh_orders(text)
    assert orders["m0"] == [label for label in ZB_H1["m0"]
                            if not label.startswith("W")]
    for r in range(1, P):
        assert orders[f"m{r}"] == ZB_H1[f"m{r}"]


def test_needs_split_backward():
    with pytest.raises(mpmd.CompilerError) as info:
        run("mpmd-schedule{schedule=zero-bubble-h1}")
    assert ('pipeline schedule zero-bubble-h1 cannot order mesh "m1": '
            "zero-bubble-h1 needs split backward fragments: run "
            "mpmd-split-backward first") in str(info.value)


def test_weight_gradient_microbatches_must_match():
    split = run("mpmd-split-backward")
    # Relabel the weight gradient of microbatch 7 on m2 as microbatch 6.
    pattern = re.compile(
        r'(mpmd\.fragment<mesh="m2", [^\n]*\{call_counter = )7'
        r"( : ui32, mpmd\.weight_gradient\})")
    text, count = pattern.subn(r"\g<1>6\g<2>", split)
    assert count == 1
    with pytest.raises(mpmd.CompilerError, match=(
            r'cannot order mesh "m2": weight-gradient fragments have '
            r"microbatches \{0, 1, 2, 3, 4, 5, 6\} but input-gradient "
            r"fragments have \{0, 1, 2, 3, 4, 5, 6, 7\}")):
        mpmd.run_pipeline(text, "mpmd-schedule{schedule=zero-bubble-h1}")
