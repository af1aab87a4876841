"""The compiler's calls run in MLIR contexts taken from a pool and given
back after the call (or when a Partitioner ends): reused, not reused
after a crash, once they have parsed more than the budget or read IFRT
IR, and the diagnostics of one call never reach another (concurrent calls:
test_compiler.test_concurrent_calls_are_independent)."""

from __future__ import annotations

import gc

import pytest

import mpmd
from mpmd import _mpmd_compiler, compiler
from mpmd.compiler import Partitioner
from mpmd.errors import CompilerError
from test_compiler import IDENTITY, MISSING_RESULT


def pool() -> dict:
    return _mpmd_compiler._context_pool()


@pytest.fixture
def limits():
    """Restores the pool's limits after a test that changes them."""
    before = pool()
    yield
    _mpmd_compiler._context_pool(max_idle=before["max_idle"],
                                 budget_bytes=before["budget_bytes"])


def test_calls_reuse_contexts():
    mpmd.parse(IDENTITY)  # at least one context exists and is idle
    before = pool()
    assert before["idle"] >= 1
    for _ in range(5):
        assert "func.func @identity" in mpmd.parse(IDENTITY)
        compiler.run_pipeline(IDENTITY, "canonicalize")
    after = pool()
    assert after["created"] == before["created"]
    assert after["idle"] == before["idle"]


def test_a_partitioner_holds_its_context_until_it_ends():
    mpmd.parse(IDENTITY)
    idle = pool()["idle"]
    partitioner = Partitioner("module {}\n")
    assert pool()["idle"] == idle - 1
    del partitioner
    gc.collect()
    assert pool()["idle"] == idle


def test_a_crashed_context_is_never_reused():
    mpmd.parse(IDENTITY)
    before = pool()
    with pytest.raises(CompilerError, match="the compiler crashed"):
        compiler.run_pipeline(IDENTITY, "mpmd-test-crash{mode=signal}")
    after = pool()
    # The crashed run's context left the pool and did not come back.
    assert after["idle"] == before["idle"] - 1
    assert after["created"] == before["created"]
    assert "func.func @identity" in mpmd.parse(IDENTITY)


def test_a_context_over_the_budget_is_dropped(limits):
    mpmd.parse(IDENTITY)
    before = _mpmd_compiler._context_pool(budget_bytes=len(IDENTITY) - 1)
    mpmd.parse(IDENTITY)  # parses more than the budget: dropped
    after = pool()
    assert after["over_budget"] == before["over_budget"] + 1
    assert after["idle"] == before["idle"] - 1
    _mpmd_compiler._context_pool(budget_bytes=before["budget_bytes"])
    mpmd.parse(IDENTITY)  # makes a new one if none is left
    assert pool()["created"] == before["created"] + (before["idle"] == 1)


def test_no_more_idle_contexts_than_the_limit(limits):
    _mpmd_compiler._context_pool(max_idle=1)
    partitioners = [Partitioner("module {}\n") for _ in range(3)]
    del partitioners
    gc.collect()
    assert pool()["idle"] == 1


def test_diagnostics_stay_with_their_call():
    for _ in range(3):
        with pytest.raises(CompilerError) as caught:
            mpmd.parse(MISSING_RESULT, source_name="bad.mlir")
        (error,) = caught.value.errors
        assert error.location == "bad.mlir:2:3"
    assert mpmd.parse(IDENTITY).startswith("module {")


def test_lowering_to_ifrt_after_reading_ifrt_ir():
    # mpmd-lower-to-ifrt writes IFRT ops by name with opaque types: a
    # context that has parsed IFRT IR (loading our IFRT dialect) is not
    # pooled, or the lowering's output would fail to verify there.
    ifrt = ('func.func @f(%arg0: !ifrt.array<tensor<i32>, '
            '#ifrt.sharding_param< to [0] on 2>, [0, 1]>) {\n  return\n}\n')
    exported = """\
module @p {
  func.func public @main(%arg0: !mpmd.mesh_tensor<"m0", tensor<i32>>) -> !mpmd.mesh_tensor<"m1", tensor<i32>> attributes {topology = #mpmd.topology<<"m0" : <["x"=2]>>, <"m1" : <["x"=2]>>>} {
    %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m0", tensor<i32>>) -> !mpmd.mesh_tensor<"m1", tensor<i32>>
    return %0 : !mpmd.mesh_tensor<"m1", tensor<i32>>
  }
}
"""
    before = compiler.lower_to_ifrt(exported)
    assert '"ifrt.CopyArrays"' in before
    for _ in range(3):
        assert "ifrt.sharding_param" in mpmd.parse(ifrt)
        assert compiler.lower_to_ifrt(exported) == before
