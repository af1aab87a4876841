"""The executor's C++ step loop (`_mpmd_runtime.StepLoop`), its Python
twin (`runtime/step_loop.py`, where the extension is missing), and the
fast path of `PlanExecutor.run` / `Compiled.__call__` built on them: what
they run, what they drop, and what they say when a step fails."""

from __future__ import annotations

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
from mpmd._mpmd_runtime import StepLoop
from mpmd.runtime import ProgramInputError
from mpmd.runtime import executor
from mpmd.runtime.step_loop import PythonStepLoop


@pytest.fixture(params=["cpp", "python"])
def Loop(request):
    """Each test of the loop's contract runs on both loops."""
    return StepLoop if request.param == "cpp" else PythonStepLoop


class Box:
    """A value the tests can watch being dropped (weakref-able)."""

    def __init__(self, n):
        self.n = n


def add(a, b):
    return [Box(a.n + b.n)]


def split(a):
    return (Box(a.n), Box(-a.n))


def test_runs_calls_and_transfers_in_order(Loop):
    seen = []

    def move(value, target):
        seen.append(target)
        return Box(value.n * 10)

    # v2 = add(v0, v1); v3 = move(v2); (v4, v5) = split(v3);
    # v6 = add(v4, constant)
    constant = Box(100)
    loop = Loop([
        (True, add, (0, 1), (), (2,), (0, 1), None),
        (False, move, (2,), (), (3,), (2,), "m2"),
        (True, split, (3,), (), (4, 5), (3,), None),
        (True, add, (4,), (constant,), (6,), (4,), None),
    ], 7, [6, 5])
    out = loop.run([Box(1), Box(2)])
    assert [b.n for b in out] == [130, -30]
    assert seen == ["m2"]
    assert loop.failed_step == -1


def test_values_are_dropped_at_their_last_use(Loop):
    watched = []

    def keep(a, b):
        result = Box(a.n + b.n)
        watched.append(weakref.ref(result))
        return [result]

    loop = Loop([
        (True, keep, (0, 1), (), (2,), (), None),
        (True, keep, (2, 1), (), (3,), (2,), None),
        (True, keep, (3, 1), (), (4,), (3,), None),
    ], 5, [4])
    out = loop.run([Box(1), Box(1)])
    gc.collect()
    # v2 and v3 were freed by the plan; only the output is alive.
    assert [ref() is None for ref in watched] == [True, True, False]
    assert out[0].n == 4


def test_a_failing_step_is_named_with_its_arguments(Loop):
    def boom(a, b):
        raise RuntimeError("XLA says no")

    loop = Loop([
        (True, add, (0, 1), (), (2,), (), None),
        (True, boom, (2, 0), (), (3,), (), None),
    ], 4, [3])
    with pytest.raises(RuntimeError, match="XLA says no"):
        loop.run([Box(1), Box(2)])
    assert loop.failed_step == 1
    assert [b.n for b in loop.failed_arguments] == [3, 1]
    # The next run starts clean.
    ok = Loop([(True, add, (0, 1), (), (2,), (), None)], 3, [2])
    assert ok.run([Box(1), Box(1)])[0].n == 2 and ok.failed_step == -1


def test_malformed_plans_and_results_are_errors(Loop):
    with pytest.raises(ValueError, match="a step names a value outside"):
        Loop([(True, add, (0, 7), (), (2,), (), None)], 3, [2])
    with pytest.raises(ValueError, match="an output names a value outside"):
        Loop([], 2, [5])
    with pytest.raises(ValueError, match="a step is"):
        Loop([(True, add)], 3, [2])
    with pytest.raises(ValueError, match="a transfer step has one input"):
        Loop([(False, add, (0, 1), (), (2,), (), "m")], 3, [2])
    loop = Loop([(True, add, (0, 1), (), (2, 3), (), None)], 4, [3])
    with pytest.raises(ValueError, match="different number of results"):
        loop.run([Box(1), Box(1)])
    assert loop.failed_step == 0
    unmade = Loop([(True, add, (0, 2), (), (3,), (), None)], 4, [3])
    with pytest.raises(ValueError, match="reads a value no step has made"):
        unmade.run([Box(1), Box(1)])
    with pytest.raises(ValueError, match="more inputs than the plan"):
        unmade.run([Box(1)] * 5)


def _compiled_chain():
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    rep = NamedSharding(mesh, P())

    def f(x, y):
        for i in range(3):
            x = mpmd.named_computation(lambda a, b: a * b + 1.0,
                                       name=f"f{i}")(x, y)
        return x

    config = mpmd.make_config({"m1": mesh},
                              {f"f{i}": "m1" for i in range(3)})
    x = jax.device_put(jnp.full((4, 4), 2.0), rep)
    y = jax.device_put(jnp.full((4, 4), 0.5), rep)
    return f, mpmd.jit(f, config).lower(x, y).compile(), x, y


def test_the_fast_path_equals_jax_jit_and_takes_other_inputs_too():
    f, compiled, x, y = _compiled_chain()
    expected = jax.jit(f)(x, y)
    np.testing.assert_allclose(compiled(x, y), expected)
    # Host data and keyword-free pytrees go through the placing path.
    np.testing.assert_allclose(compiled(np.asarray(x), np.asarray(y)),
                               expected)
    np.testing.assert_allclose(compiled(*[x, y]), expected)


def test_a_deleted_input_reaching_the_loop_is_named():
    _, compiled, x, y = _compiled_chain()
    dead = x + 0.0
    dead.delete()
    # Compiled refuses it when placing ...
    with pytest.raises(mpmd.errors.MpmdError, match=r"argument x "
                       r"was deleted"):
        compiled(dead, y)
    # ... and the executor, given it directly, names the program and the
    # argument after the loop's step fails.
    with pytest.raises(ProgramInputError, match=r"program 'p0_f0_fwd' argument 0: .*got a "
                       r"deleted"):
        compiled.executor.run([dead, y])


def test_the_jit_wrapper_skips_the_signature_for_placed_arrays(monkeypatch):
    import mpmd.arguments as arguments

    f, compiled, x, y = _compiled_chain()
    step = mpmd.jit(f, mpmd.make_config(
        {"m1": x.sharding.mesh}, {f"f{i}": "m1" for i in range(3)}))
    first = step(x, y)  # lowers, compiles, remembers the program
    assert len(step._cache) == 1

    def no_signature(value):
        raise AssertionError("the signature was computed")

    monkeypatch.setattr(arguments, "leaf_key", no_signature)
    # Arrays laid out as the program's inputs: run without a signature.
    np.testing.assert_allclose(step(x, y), first)
    np.testing.assert_allclose(step(first, y), jax.jit(f)(first, y))
    # Anything else (host data, another shape) goes the full way.
    with pytest.raises(AssertionError, match="the signature was computed"):
        step(np.asarray(x), y)
    with pytest.raises(AssertionError, match="the signature was computed"):
        step(jnp.ones((2, 2)), y)


def test_without_the_extension_the_python_loop_runs_the_plan(monkeypatch):
    # As where mpmd._mpmd_runtime is missing: the same plan, the same
    # numbers, and a failing step still named by program and argument.
    monkeypatch.setattr(executor, "_native", False)
    f, compiled, x, y = _compiled_chain()
    np.testing.assert_allclose(compiled(x, y), jax.jit(f)(x, y))
    assert isinstance(compiled.executor._loop, PythonStepLoop)
    dead = x + 0.0
    dead.delete()
    with pytest.raises(ProgramInputError, match=r"program 'p0_f0_fwd' "
                       r"argument 0: .*got a deleted"):
        compiled.executor.run([dead, y])
