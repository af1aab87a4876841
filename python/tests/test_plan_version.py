"""The execution plan's format version: the compiler writes it, the runtime
reads that version only and refuses a plan of another version, or of none,
with a PlanVersionError that says what to do."""

from __future__ import annotations

import dataclasses
import json

import pytest

import mpmd
from mpmd.errors import MpmdError
from mpmd.runtime.plan import PLAN_VERSION, ExecutionPlan, PlanVersionError

TWO_LAYERS = """
!t = tensor<4xf32>
func.func @main(%x: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.named_computation<"layer1"> (%x) (%a: !t) {
    %1 = stablehlo.add %a, %a : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  %2 = mpmd.named_computation<"layer2"> (%0) (%a: !t) {
    %3 = stablehlo.multiply %a, %a : !t
    mpmd.return %3 : !t
  } : (!t) -> !t
  func.return %2 : !t
}
"""


@pytest.fixture(scope="module")
def plan_json() -> str:
    _, plan = mpmd.compiler.compile_to_plan(
        TWO_LAYERS, "mpmd-partition{assignment=layer1=m1:0,layer2=m2:1}")
    return plan


def with_version(text: str, version: object) -> str:
    data = json.loads(text)
    if version is None:
        del data["version"]
    else:
        data["version"] = version
    return json.dumps(data)


def test_the_compiler_writes_the_version_the_runtime_reads(plan_json):
    assert json.loads(plan_json)["version"] == PLAN_VERSION == 1
    assert ExecutionPlan.from_json(plan_json).version == PLAN_VERSION


def test_the_round_trip_keeps_the_version(plan_json):
    plan = ExecutionPlan.from_json(plan_json)
    again = ExecutionPlan.from_json(json.dumps(json.loads(plan_json)))
    assert again == plan and again.version == plan.version == PLAN_VERSION


def test_plans_compare_with_their_version(plan_json):
    plan = ExecutionPlan.from_json(plan_json)
    # A plan built by hand is of this runtime's version, so it equals the
    # same plan read from JSON.
    assert dataclasses.replace(plan) == plan
    assert dataclasses.replace(plan, version=PLAN_VERSION + 1) != plan
    fields = {f.name: getattr(plan, f.name)
              for f in dataclasses.fields(plan) if f.name != "version"}
    assert ExecutionPlan(**fields) == plan


def test_a_plan_of_another_version_is_refused(plan_json):
    newer = with_version(plan_json, PLAN_VERSION + 1)
    with pytest.raises(PlanVersionError) as raised:
        ExecutionPlan.from_json(newer)
    message = str(raised.value)
    assert f"is of version {PLAN_VERSION + 1}" in message
    assert f"reads execution plan version {PLAN_VERSION} only" in message
    assert "Partition the program again with this build" in message
    assert isinstance(raised.value, MpmdError)


def test_a_plan_without_a_version_is_refused(plan_json):
    with pytest.raises(PlanVersionError,
                       match=r"has no version \(it was written before plans "
                             r"carried one\); this runtime reads execution "
                             rf"plan version {PLAN_VERSION} only\. Partition "
                             "the program again"):
        ExecutionPlan.from_json(with_version(plan_json, None))


@pytest.mark.parametrize("version", [True, "1", 1.5, 0])
def test_a_version_of_another_type_or_value_is_refused(plan_json, version):
    with pytest.raises(PlanVersionError, match="is of version"):
        ExecutionPlan.from_json(with_version(plan_json, version))


def test_the_version_is_checked_before_the_rest_is_read(plan_json):
    # A future format may change anything else: the error is the version's,
    # not a KeyError from a field that moved.
    data = {"version": PLAN_VERSION + 1, "steps": "elsewhere"}
    with pytest.raises(PlanVersionError):
        ExecutionPlan.from_json(json.dumps(data))
