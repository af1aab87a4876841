"""`total_cost`: XLA's per-program cost analyses weighted by how often the
plan calls each program, with XLA's "unknown" (negative) estimates left
out instead of multiplied into a negative total."""

from __future__ import annotations

import pytest

from mpmd.runtime.plan import ExecutionPlan, ProgramSpec, total_cost


def plan_calling(**calls: int) -> ExecutionPlan:
    return ExecutionPlan(
        "main", "", (), (), (), (),
        {name: ProgramSpec(name, "m1", "", (), count)
         for name, count in calls.items()})


def test_known_estimates_are_weighted_by_calls_and_summed():
    plan = plan_calling(p0=8, p1=1)
    total = total_cost(plan, {"p0": {"flops": 10.0, "bytes accessed": 4.0},
                              "p1": [{"flops": 3.0}, {"flops": 99.0}]})
    assert total == {"flops": 8 * 10.0 + 3.0, "bytes accessed": 8 * 4.0}


def test_unknown_estimates_count_as_nothing():
    """XLA's -1 per op it cannot estimate (a program that only broadcasts
    zeros reports flops -2 for two such ops) is no part of the sum; a key
    no program estimates is left out."""
    plan = plan_calling(p0=191, p1=2)
    total = total_cost(plan, {
        "p0": {"flops": 5.0, "optimal_seconds": -1.0},
        "p1": {"flops": -2.0, "optimal_seconds": -1.0}})
    assert "optimal_seconds" not in total  # not -193
    assert total["flops"] == pytest.approx(191 * 5.0)  # not 191 * 5 - 4
    assert all(value >= 0 for value in total.values())


def test_programs_without_an_analysis_count_as_nothing():
    plan = plan_calling(p0=2, p1=3)
    assert total_cost(plan, {"p0": None, "p1": []}) == {}
    assert total_cost(plan, {"p0": {"flops": 1.0, "note": "text",
                                    "exact": True}}) == {"flops": 2.0}
