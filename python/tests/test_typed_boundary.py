"""The road from Python to the compiler is typed: names of any spelling,
schedules and merge predicates called back with the fragments, enums with
one home, exceptions of client code passed through."""

from __future__ import annotations

import inspect
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd import compiler, stages
from mpmd.compiler import (FragmentKind, ImportOptions, OptimizeOptions,
                           Partitioner, ScheduleKind)
from mpmd.origins import Origin
from mpmd.schedules import BUILTIN_SCHEDULES

# Every character a pass option or a printed pipeline would trip over.
ODD_NAMES = ["layer one", 'say "hi"', "a=b", "x,y", "@f", "été→λ", "it's",
             "{brace}", "m1:3"]


def meshes(count: int) -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(count, -1)
    return {f"m{i + 1}": jax.sharding.Mesh(devices[i], ("x",))
            for i in range(count)}


def chain(names):
    """One layer per name, each with its own weight (ws[i])."""
    def step(ws, x):
        for name, w in zip(names, ws):
            x = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                                       name=name)(w, x)
        return jnp.sum(x ** 2)
    return step


def weights(count):
    return [jnp.eye(4) * 0.5 + 0.01 * i for i in range(count)]


@pytest.mark.parametrize("schedule", [None, "1f1b"])
def test_any_name_named_computation_accepts_partitions_and_runs(schedule):
    topology = meshes(2)
    assignment = {name: (f"m{i % 2 + 1}", i)
                  for i, name in enumerate(ODD_NAMES)}
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"pipeline_schedule": schedule})
    step = chain(ODD_NAMES)
    grad = jax.value_and_grad(step)
    w = weights(len(ODD_NAMES))
    x = jnp.linspace(-1.0, 1.0, 8).reshape(2, 4)
    lowered = mpmd.jit(grad, config).lower(w, x)
    loss, dw = lowered.compile()(w, x)
    want_loss, want_dw = jax.jit(grad)(w, x)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for got, want in zip(dw, want_dw):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Each name reached the program, forward and backward.
    labels = {step.label() for step in lowered.plan.calls()}
    for name in ODD_NAMES:
        assert any(name in label for label in labels), name
    origins = {o for step in lowered.plan.calls() for o in step.origins}
    assert Origin("été→λ", 0) in origins and Origin("été→λ", 1) in origins


def test_named_tensor_with_an_odd_name():
    def step(x):
        y = mpmd.named_computation(lambda x: x * 2, name="a b")(x)
        y = mpmd.named_tensor(y, name='t="1",2')
        return mpmd.named_computation(lambda y: y + 1, name="c@d")(y)

    config = mpmd.make_config(meshes(2), {"a b": "m1", 't="1",2': "m2",
                                          "c@d": "m2"})
    x = jnp.arange(4.0)
    np.testing.assert_allclose(mpmd.jit(step, config)(x), jax.jit(step)(x))


def test_comparator_sees_typed_fragments_and_orders_them():
    seen = []

    def before(a, b):
        seen.append(a)
        # GPipe: every forward, then every backward, by microbatch.
        return (a.transpose_count, a.microbatch) < (b.transpose_count,
                                                    b.microbatch)

    names = ["s 0", "s,1"]
    config = mpmd.make_config(
        meshes(2), {names[0]: ("m1", 0), names[1]: ("m2", 1)},
        partitioning_options={"pipeline_schedule": before})

    def loop(w, xs):
        def body(i, total):
            return total + chain(names)(w, xs[i])
        return mpmd.fori_loop(0, 3, body, jnp.zeros(()))

    grad = jax.grad(loop)
    w = weights(2)
    xs = jnp.linspace(0.0, 1.0, 24).reshape(3, 2, 4)
    lowered = mpmd.jit(grad, config).lower(w, xs)
    for got, want in zip(lowered.compile()(w, xs), jax.jit(grad)(w, xs)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert lowered.schedule_text().splitlines()[0] == \
        "m1: F0 F1 F2 B0 B1 B2"
    assert seen
    kinds = {f.kind for f in seen}
    assert kinds <= {FragmentKind.FORWARD, FragmentKind.BACKWARD}
    assert FragmentKind.BACKWARD in kinds
    first = seen[0]
    assert isinstance(first.origins[0], Origin)
    assert first.origins[0].name in names
    assert first.key == f"{first.label}#{first.call_counter}"


def test_a_comparator_that_raises_propagates_its_exception():
    class Boom(Exception):
        pass

    def before(a, b):
        raise Boom("from the comparator")

    config = mpmd.make_config(
        meshes(2), {"a": "m1", "b": "m1"},
        partitioning_options={"pipeline_schedule": before})

    def step(x):
        y = mpmd.named_computation(lambda x: x * 2, name="a")(x)
        return mpmd.named_computation(lambda y: y + 1, name="b")(y)

    with pytest.raises(Boom, match="from the comparator"):
        mpmd.jit(step, config).lower(jnp.ones(4))


def test_a_merge_predicate_that_raises_propagates_its_exception():
    def merge(a, b):
        raise KeyError("predicate")

    config = mpmd.make_config(
        meshes(2), {"a": "m1", "b": "m1"},
        partitioning_options={"fragment_merge_rules": merge})

    def step(x):
        y = mpmd.named_computation(lambda x: x * 2, name="a")(x)
        return mpmd.named_computation(lambda y: y + 1, name="b")(y)

    with pytest.raises(KeyError, match="predicate"):
        mpmd.jit(step, config).lower(jnp.ones(4))


def two_stage_text() -> str:
    def step(x):
        y = mpmd.named_computation(lambda x: x * 2, name="a b")(x)
        return mpmd.named_computation(lambda y: y + 1, name="c")(y)

    config = mpmd.make_config(meshes(2), {"a b": "m1", "c": "m2"})
    return mpmd.jit(step, config).lower(jnp.ones(4)).as_text("stablehlo")


def test_partitioner_reports_names_and_partitions_once():
    partitioner = Partitioner(two_stage_text())
    assert partitioner.named_ops() == (["a b", "c"], [])
    module, plan = partitioner.partition(
        ImportOptions({"a b": ("m1", None), "c": ("m2", None)}),
        OptimizeOptions())
    assert "mpmd.fragment_call" in module and '"steps"' in plan
    with pytest.raises(ValueError, match="already partitioned"):
        partitioner.partition(ImportOptions(), OptimizeOptions())


def test_an_order_of_the_wrong_type_is_a_compiler_error():
    partitioner = Partitioner(two_stage_text())
    with pytest.raises(mpmd.CompilerError,
                       match="the schedule could not be evaluated: it "
                             "returned an unexpected value"):
        partitioner.partition(
            ImportOptions({"a b": ("m1", None), "c": ("m2", None)}),
            OptimizeOptions(ScheduleKind.EXPLICIT, order=lambda f: 3))


def test_compiler_errors_name_odd_names_verbatim():
    partitioner = Partitioner(two_stage_text())
    with pytest.raises(mpmd.CompilerError,
                       match="named_computation 'a b' has no mesh"):
        partitioner.partition(
            ImportOptions({"c": ("m2", None)}), OptimizeOptions())


def test_enums_are_the_compilers():
    spellings = compiler.schedule_kind_spellings()
    assert spellings["1f1b"] is ScheduleKind.ONE_F_ONE_B
    assert sorted(k.value for k in spellings.values()) == \
        sorted(k.value for k in ScheduleKind)
    assert set(BUILTIN_SCHEDULES) == \
        set(spellings) - {"none", "explicit"}
    kinds = compiler.fragment_kind_spellings()
    assert kinds == {"forward": FragmentKind.FORWARD,
                     "backward": FragmentKind.BACKWARD,
                     "mixed": FragmentKind.MIXED,
                     "weight_gradient": FragmentKind.WEIGHT_GRADIENT}


def test_stages_build_no_pipeline_text():
    source = inspect.getsource(stages)
    assert not re.search(r"mpmd-[a-z]", source)
    assert "run_pipeline" not in source and "compile_to_plan" not in source
