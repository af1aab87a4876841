"""Every op JAX emits, inside, outside and between named computations,
partitioned over two meshes, equals jax.jit; every op the catalog names
goes through import without crashing the compiler."""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.compiler import op_catalog, run_pipeline
from op_zoo import Case, base_input, generated_cases, select_cases, special_cases

# Op names the zoo reaches with JAX 0.10.2 on CPU (checked below, so that the
# zoo cannot shrink unnoticed; a new JAX may move it).
EXPECTED_COVERAGE = 99

# Ops XLA itself cannot compile for a mesh of more than one device ("Unable
# to convert MHLO to StableHLO" from plain jax.jit with 2-device shardings);
# every mpmd program is compiled for its mesh, so they are left out of the
# comparison. `test_xla_still_cannot_partition` notices when XLA can.
XLA_CANNOT_PARTITION = {"chlo.mulhi"}


@pytest.fixture(scope="module")
def zoo() -> list[Case]:
    """Every hand-written case (each tests an argument structure of its
    own), and per op the first generated one."""
    special = special_cases()
    return special + [case for case in select_cases(generated_cases())
                      if case not in special]


def two_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    return {"m1": jax.sharding.Mesh(devices[0], ("x",)),
            "m2": jax.sharding.Mesh(devices[1], ("x",))}


def _keep(value: Any) -> Any:
    """A computation on `value` that is not an identity (the compiler would
    pass an identity through, so the value would never cross)."""
    if value.dtype == jnp.bool_:
        return jnp.logical_and(value, True)
    return value + jnp.zeros_like(value)


def program(cases: Sequence[Case], placement: str):
    """`a` on m1 feeds every case; the cases run inside `b` (on m2), outside
    every named computation after `a`, or between `a` and `b`."""
    def apply(x):
        return [case.fn(x) for case in cases]

    def step(x):
        a = mpmd.named_computation(lambda x: x * 1.0, name="a")(x)
        if placement == "inside":
            return mpmd.named_computation(apply, name="b")(a)
        outs = apply(a)
        if placement == "between":
            outs = mpmd.named_computation(
                lambda outs: jax.tree.map(_keep, outs), name="b")(outs)
        return outs

    return step


def mismatches(cases: Sequence[Case], placement: str) -> list[str]:
    """Runs the cases as one program; returns what differs from jax.jit
    (one entry per case that fails, found by running them one by one when
    the whole program fails)."""
    topology = two_meshes()
    assignment = {"a": "m1"} if placement == "outside" else {"a": "m1",
                                                             "b": "m2"}
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"infer_transfers": placement == "between"})
    x = base_input()

    def check(group: Sequence[Case]) -> None:
        step = program(group, placement)
        got = mpmd.jit(step, config)(x)
        with jax.set_mesh(topology["m2"]):
            want = jax.jit(step)(x)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype
            if np.issubdtype(w.dtype, np.inexact):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                           equal_nan=True)
            else:
                np.testing.assert_array_equal(g, w)

    try:
        check(cases)
        return []
    except Exception:  # noqa: BLE001 - find which cases fail
        failures = []
        for case in cases:
            try:
                check([case])
            except Exception as error:  # noqa: BLE001
                failures.append(f"{case.name} ({', '.join(sorted(case.ops))}):"
                                f" {type(error).__name__}: {error}"[:800])
        return failures or ["the cases pass alone but not together"]


@pytest.mark.parametrize("placement", ["inside", "outside", "between"])
def test_every_emitted_op_partitions_and_equals_jax_jit(zoo, placement):
    cases = [c for c in zoo if (placement == "inside" or not c.needs_mesh)
             and not c.ops & XLA_CANNOT_PARTITION]
    failures = mismatches(cases, placement)
    assert not failures, "\n".join(failures)


def test_xla_still_cannot_partition(zoo):
    mesh = two_meshes()["m1"]
    replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    for case in zoo:
        if not case.ops & XLA_CANNOT_PARTITION:
            continue
        with pytest.raises(Exception, match="Unable to convert MHLO"):
            jax.jit(case.fn, in_shardings=replicated,
                    out_shardings=replicated)(base_input())


def test_the_zoo_covers_the_catalog(zoo):
    catalog = {entry["name"] for entry in op_catalog()}
    emitted = set().union(*(case.ops for case in zoo))
    # The catalog knows every op JAX emits (CHLO included).
    assert emitted <= catalog, sorted(emitted - catalog)
    assert len(emitted) == EXPECTED_COVERAGE, sorted(emitted)


MODULE = """
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
    attributes {{topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>}} {{
  %0 = mpmd.named_computation<"a"> (%arg0) (%x: tensor<4xf32>) {{
    %s = stablehlo.add %x, %x : tensor<4xf32>
    mpmd.return %s : tensor<4xf32>
  }} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "{op}"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mpmd.named_computation<"b"> (%1) (%y: tensor<4xf32>) {{
    %t = stablehlo.add %y, %y : tensor<4xf32>
    mpmd.return %t : tensor<4xf32>
  }} : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}}
"""


@pytest.mark.parametrize("op", [entry["name"] for entry in op_catalog()])
def test_no_catalog_op_crashes_the_compiler(op):
    """Also the ops JAX does not emit (CHLO's broadcasting ops, dynamic
    shapes, host I/O, ...): placed by inference, or rejected with a
    diagnostic, never a crash."""
    pipeline = ("mpmd-import{assignment=a=m1,b=m2 infer-transfers=true},"
                "mpmd-sharding,mpmd-export")
    try:
        run_pipeline(MODULE.format(op=op), pipeline)
    except mpmd.CompilerError as error:
        assert "crashed" not in error.summary, str(error)
        assert error.errors, str(error)
