"""Microbatches in the front end: `mpmd.call` call counters survive JAX's
transformations and lower to `call_counter = i : ui32`; `mpmd.fori_loop`
and `mpmd.scan_microbatches` compute what the plain Python loop computes."""

from __future__ import annotations

import os
import re
from typing import Any, Callable

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

import mpmd  # noqa: E402
from mpmd.frontend import (  # noqa: E402
    FrontendError,
    InvalidCallCounterError,
    InvalidLoopBoundsError,
    current_call_counter,
    emit_named_computations,
    inline_named_computations,
    named_computation,
    named_tensor,
)

RTOL = 1e-6
ATOL = 1e-6
M = 3  # microbatches



def _fresh(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as a new function: JAX reuses a lowering it cached for the same
    function in the other mode (the mode is not part of its cache keys)."""
    return lambda *args, **kwargs: fn(*args, **kwargs)

def _close(actual: Any, expected: Any) -> None:
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=RTOL,
                                   atol=ATOL)


def _text(fn: Callable[..., Any], *args: Any) -> str:
    """What the partitioner sees after unrolling the loops of JAX's
    lowering for mpmd.jit: every named computation with its microbatch.
    (JAX's lowering itself holds each loop body once, in `mpmd.for` or a
    function called by `mpmd.call`.)"""
    from mpmd.compiler import run_pipeline  # noqa: PLC0415
    from mpmd.lowering import add_topology as _add_topology  # noqa: PLC0415

    with emit_named_computations():
        module = jax.jit(_fresh(fn)).lower(*args).compiler_ir("stablehlo")
    op = module.operation.clone()
    _add_topology(op, '#mpmd.topology<<"m" : <["x"=1]>>>')
    return run_pipeline(op.get_asm(print_generic_op_form=True),
                        "mpmd-unroll-loops,mpmd-inline-calls")


def _generic(fn: Callable[..., Any], *args: Any) -> str:
    with emit_named_computations():
        module = jax.jit(_fresh(fn)).lower(*args).compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True,
                                    enable_debug_info=False)


_HEADER = re.compile(
    r'mpmd\.named_computation<("[^"]*"(?:\(\d+\))?)> \([^)]*\)'
    r'(?: \{call_counter = (\d+) : ui32\})?')


def _labels(text: str) -> list[tuple[str, int | None]]:
    """(origin, call counter or None) of each named computation, in order."""
    return [(origin, None if counter == "" else int(counter))
            for origin, counter in _HEADER.findall(text)]


# The model: two labelled layers; a training step accumulating gradients
# over M stacked microbatches (the documented use).

def _layer(w: Any, x: Any) -> Any:
    return jnp.tanh(x @ w)


def _params() -> list[Any]:
    k = jax.random.split(jax.random.key(0), 2)
    return [jax.random.normal(k[0], (4, 6)) * 0.5,
            jax.random.normal(k[1], (6, 3)) * 0.5]


def _data() -> tuple[Any, Any]:
    k = jax.random.split(jax.random.key(1), 2)
    return (jax.random.normal(k[0], (M, 2, 4)),
            jax.random.normal(k[1], (M, 2, 3)))


def loss_fn(params: list[Any], x: Any, y: Any) -> Any:
    h = named_computation(_layer, name="layer0")(params[0], x)
    out = named_computation(_layer, name="layer1")(params[1], h)
    return jnp.mean((out - y) ** 2)


def plain_loss(params: list[Any], x: Any, y: Any) -> Any:
    return jnp.mean((_layer(params[1], _layer(params[0], x)) - y) ** 2)


def _zeros(params: list[Any]) -> tuple[Any, Any]:
    return jnp.zeros(()), jax.tree.map(jnp.zeros_like, params)


def train_step(params: list[Any], xs: Any, ys: Any) -> tuple[Any, Any]:
    def body(i: int, acc: Any) -> Any:
        loss, g = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
        return jax.tree.map(jnp.add, acc, (loss, g))

    loss, grads = mpmd.fori_loop(0, M, body, _zeros(params))
    new = jax.tree.map(lambda p, g: p - 0.1 * g / M, params, grads)
    return new, loss / M


def reference_step(params: list[Any], xs: Any, ys: Any) -> tuple[Any, Any]:
    acc = _zeros(params)
    for i in range(M):
        loss, g = jax.value_and_grad(plain_loss)(params, xs[i], ys[i])
        acc = jax.tree.map(jnp.add, acc, (loss, g))
    loss, grads = acc
    return jax.tree.map(lambda p, g: p - 0.1 * g / M, params, grads), loss / M


# --- lowered text -----------------------------------------------------------


def test_train_step_labels_forward_and_backward_per_microbatch() -> None:
    labels = _labels(_text(train_step, _params(), *_data()))
    expected = {(f'"layer{k}"{suffix}', i) for i in range(M) for k in (0, 1)
                for suffix in ("", "(1)")}
    assert set(labels) == expected
    assert len(labels) == len(expected)  # each exactly once
    # Microbatch i's computations are all traced before microbatch i + 1's.
    assert [c for _, c in labels] == sorted(c for _, c in labels)


def test_generic_form_holds_the_body_once_and_verifies() -> None:
    # fori_loop: one mpmd.for with the iteration count, the body once.
    generic = _generic(train_step, _params(), *_data())
    assert generic.count('"mpmd.for"') == 1
    assert f"iterations = {M} : ui32" in generic
    assert generic.count('#mpmd.user_origin<"layer0">') == 1
    assert "call_counter" not in generic
    # A Python loop of mpmd.call: one body, one call per counter.
    params, (xs, ys) = _params(), _data()

    def calls(params: Any, xs: Any, ys: Any) -> Any:
        def body(i: Any, acc: Any) -> Any:
            return acc + loss_fn(params, xs[i], ys[i])
        from mpmd.frontend import traced_bodies  # noqa: PLC0415
        acc = jnp.zeros(())
        with traced_bodies():
            for i in range(M):
                acc = mpmd.call(body, call_counter=i)(i, acc)
        return acc

    generic = _generic(calls, params, xs, ys)
    assert generic.count('"mpmd.call"') == M
    for i in range(M):
        assert f"{{call_counter = {i} : ui32}}" in generic
    # mpmd's verifier checks the counters are ui32.
    assert mpmd.parse(generic, generic=True) == generic


def test_outside_any_call_there_is_no_counter() -> None:
    params, (xs, ys) = _params(), _data()
    labels = _labels(_text(jax.grad(loss_fn), params, xs[0], ys[0]))
    assert labels and all(c is None for _, c in labels)
    assert "call_counter" not in _generic(jax.grad(loss_fn), params, xs[0],
                                          ys[0])
    assert current_call_counter() is None


def test_grad_of_call_keeps_the_counter() -> None:
    params, (xs, ys) = _params(), _data()
    grad = jax.grad(mpmd.call(loss_fn, call_counter=5))
    assert set(_labels(_text(grad, params, xs[0], ys[0]))) == {
        ('"layer0"', 5), ('"layer1"', 5), ('"layer1"(1)', 5),
        ('"layer0"(1)', 5)}


def test_call_of_grad_keeps_the_counter() -> None:
    params, (xs, ys) = _params(), _data()
    step = mpmd.call(jax.grad(loss_fn), call_counter=7)
    assert {c for _, c in _labels(_text(step, params, xs[0], ys[0]))} == {7}
    assert len(_labels(_text(step, params, xs[0], ys[0]))) == 4


@pytest.mark.parametrize("transform", ["vjp", "value_and_grad",
                                       "checkpoint_in", "checkpoint_out",
                                       "vmap", "linearize"])
def test_counter_survives_transformations(transform: str) -> None:
    params, (xs, ys) = _params(), _data()
    x, y = xs[0], ys[0]
    called = mpmd.call(loss_fn, call_counter=2)
    if transform == "vjp":
        def fn(p: Any) -> Any:
            out, pullback = jax.vjp(lambda p: called(p, x, y), p)
            return pullback(jnp.ones_like(out))
    elif transform == "value_and_grad":
        fn = lambda p: jax.value_and_grad(called)(p, x, y)  # noqa: E731
    elif transform == "checkpoint_in":
        fn = lambda p: jax.grad(mpmd.call(jax.checkpoint(loss_fn),  # noqa: E731
                                          call_counter=2))(p, x, y)
    elif transform == "checkpoint_out":
        fn = lambda p: jax.grad(jax.checkpoint(called))(p, x, y)  # noqa: E731
    elif transform == "vmap":
        fn = lambda p: jax.vmap(jax.grad(called), in_axes=(None, 0, 0))(  # noqa: E731
            p, xs, ys)
    else:
        def fn(p: Any) -> Any:
            _, lin = jax.linearize(lambda p: called(p, x, y), p)
            return jax.linear_transpose(lin, p)(jnp.float32(1.0))
    labels = _labels(_text(fn, params))
    origins = {o for o, _ in labels}
    assert {'"layer0"', '"layer0"(1)', '"layer1"(1)'} <= origins, labels
    assert {c for _, c in labels} == {2}, labels


def test_grad_of_grad_keeps_the_counter() -> None:
    nc = named_computation(lambda x: jnp.sin(x) * x, name="layer0")
    inner = mpmd.call(lambda x: jnp.sum(nc(x)), call_counter=4)
    second = jax.grad(lambda x: jnp.sum(jax.grad(inner)(x) ** 2))
    labels = _labels(_text(second, jnp.arange(3.0)))
    assert ('"layer0"(2)', 4) in labels
    assert {c for _, c in labels} == {4}


def test_nested_calls_innermost_wins() -> None:
    def fn(x: Any) -> Any:
        a = named_computation(jnp.sin, name="outer")(x)
        b = mpmd.call(named_computation(jnp.cos, name="inner"),
                      call_counter=9)(a)
        c = named_computation(jnp.exp, name="after")(b)
        # Under mpmd.jit the body is traced once for every counter: the
        # compiler labels it. Traced inline, the counter is set now.
        assert current_call_counter() in (None, 1)
        return c

    top = lambda x: named_computation(jnp.tanh, name="top")(  # noqa: E731
        mpmd.call(fn, call_counter=1)(x))
    assert _labels(_text(top, jnp.ones(3))) == [
        ('"outer"', 1), ('"inner"', 9), ('"after"', 1), ('"top"', None)]


def test_nested_jit_is_traced_once_per_counter() -> None:
    # The counter is part of JAX's trace context: a jitted helper called
    # under two counters is not served from the trace cache.
    helper = jax.jit(named_computation(jnp.sin, name="helper"))

    def fn(x: Any) -> Any:
        return mpmd.call(helper, call_counter=1)(
            mpmd.call(helper, call_counter=0)(x))

    assert _labels(_text(fn, jnp.ones(3))) == [('"helper"', 0),
                                               ('"helper"', 1)]


def test_fori_loop_counts_from_lower_and_traces_the_body_once() -> None:
    seen: list[Any] = []

    def body(i: Any, carry: Any) -> Any:
        seen.append(i)
        return named_computation(lambda c: c * 2.0 + i, name="step")(carry)

    labels = _labels(_text(lambda x: mpmd.fori_loop(2, 5, body, x),
                           jnp.ones(3)))
    assert labels == [('"step"', 0), ('"step"', 1), ('"step"', 2)]
    assert len(seen) == 1 and isinstance(seen[0], jax.core.Tracer)
    # Eagerly (and under plain jax.jit) the index is a Python int.
    seen.clear()
    _close(mpmd.fori_loop(np.int32(2), 5, body, jnp.ones(3)),
           ((jnp.ones(3) * 2 + 2) * 2 + 3) * 2 + 4)
    assert seen == [2, 3, 4] and all(type(i) is int for i in seen)


def test_fori_loop_body_needing_a_python_index_is_unrolled() -> None:
    def body(i: Any, carry: Any) -> Any:
        scale = 2.0 if i == 0 else 1.0  # Python control flow on the index
        return named_computation(lambda c: c * scale, name="step")(carry)

    with pytest.warns(mpmd.UnrolledLoopWarning, match="traced once per "
                      "iteration") as record:
        labels = _labels(_text(lambda x: mpmd.fori_loop(0, 3, body, x),
                               jnp.ones(3)))
    assert labels == [('"step"', 0), ('"step"', 1), ('"step"', 2)]
    # Attributed to the user's call of fori_loop, not to mpmd or JAX.
    assert record[0].filename == __file__


def test_fori_loop_carry_must_keep_its_type() -> None:
    def body(i: Any, carry: Any) -> Any:
        return jnp.concatenate([carry, carry])

    with pytest.raises(FrontendError, match=r"Input and output avals must "
                       r"match. Got float32\[3\] and float32\[6\] "
                       r"respectively: the loop body changes carry leaf 0"):
        _text(lambda x: mpmd.fori_loop(0, 3, body, x), jnp.ones(3))
    with pytest.raises(FrontendError, match="Tree structs of init_val and the "
                       "result of the fori_loop must match"):
        _text(lambda x: mpmd.fori_loop(0, 3, lambda i, c: (c, c), x),
              jnp.ones(3))


def test_fori_loop_empty_range_returns_init() -> None:
    init = (jnp.ones(2), {"a": jnp.zeros(3)})
    assert mpmd.fori_loop(3, 3, lambda i, c: None, init) is init
    assert mpmd.fori_loop(5, 1, lambda i, c: None, init) is init


def test_scan_microbatches_counters_and_numerics() -> None:
    params, (xs, ys) = _params(), _data()

    def fn(carry: Any, xy: Any) -> tuple[Any, Any]:
        loss, g = jax.value_and_grad(loss_fn)(params, *xy)
        return jax.tree.map(jnp.add, carry, g), loss

    def plain(carry: Any, xy: Any) -> tuple[Any, Any]:
        loss, g = jax.value_and_grad(plain_loss)(params, *xy)
        return jax.tree.map(jnp.add, carry, g), loss

    zeros = jax.tree.map(jnp.zeros_like, params)
    run = lambda xs, ys: mpmd.scan_microbatches(fn, zeros, (xs, ys))  # noqa: E731
    with inline_named_computations():
        got = jax.jit(run)(xs, ys)
    _close(got, jax.lax.scan(plain, zeros, (xs, ys)))
    labels = _labels(_text(run, xs, ys))
    assert sorted({c for _, c in labels}) == list(range(M))
    # No ys, and an explicit length.
    carry, none = mpmd.scan_microbatches(lambda c, _: (c + 1.0, None),
                                         jnp.zeros(()), None, length=4)
    assert none is None and float(carry) == 4.0


# --- numerics ---------------------------------------------------------------


@pytest.mark.parametrize("use_jit", [False, True])
def test_fori_loop_matches_python_loop(use_jit: bool) -> None:
    params, (xs, ys) = _params(), _data()
    with inline_named_computations():
        got = (jax.jit(train_step) if use_jit else train_step)(params, xs, ys)
    _close(got, jax.jit(reference_step)(params, xs, ys))


def test_call_matches_plain_and_under_grad() -> None:
    params, (xs, ys) = _params(), _data()
    called = mpmd.call(loss_fn, call_counter=3)
    with inline_named_computations():
        _close(jax.jit(called)(params, xs[0], ys[0]),
               plain_loss(params, xs[0], ys[0]))
        _close(jax.jit(jax.grad(called))(params, xs[1], ys[1]),
               jax.grad(plain_loss)(params, xs[1], ys[1]))
        _close(jax.jit(mpmd.call(jax.grad(loss_fn), call_counter=0))(
            params, xs[2], ys[2]), jax.grad(plain_loss)(params, xs[2], ys[2]))


def test_call_passes_kwargs_and_keeps_metadata() -> None:
    def scaled(x: Any, *, scale: float) -> Any:
        """Doc."""
        return named_tensor(x, "t") * scale

    wrapped = mpmd.call(scaled, call_counter=0)
    assert wrapped.__name__ == "scaled" and wrapped.__doc__ == "Doc."
    _close(wrapped(jnp.ones(2), scale=3.0), jnp.full(2, 3.0))


# --- end to end through the compiler ----------------------------------------


def _two_meshes() -> dict[str, Any]:
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    return {f"m{i}": jax.sharding.Mesh(devices[i], ("x",)) for i in range(2)}


@pytest.fixture(scope="module")
def lowered_step() -> Any:
    # `from mpmd.stages import jit`, not `mpmd.jit`: once another test module
    # has imported the submodule `mpmd.jit`, the package attribute `jit` is
    # that module rather than the function.
    from mpmd.config import make_config  # noqa: PLC0415
    from mpmd.stages import jit  # noqa: PLC0415

    config = make_config(_two_meshes(), {"layer0": "m0", "layer1": "m1"})
    return jit(train_step, config).lower(_params(), *_data())


def test_mpmd_jit_matches_jax_jit(lowered_step: Any) -> None:
    order = lowered_step.mesh_order()
    for k in (0, 1):
        labels = [re.sub(r"#\d+$", "", label) for label in order[f"m{k}"]]
        assert labels.count(f"layer{k}") == M, order
        assert labels.count(f"layer{k}(1)") == M, order
    params, (xs, ys) = _params(), _data()
    _close(lowered_step.compile()(params, xs, ys),
           jax.jit(train_step)(params, xs, ys))


def test_mesh_order_labels_carry_the_microbatch(lowered_step: Any) -> None:
    order = lowered_step.mesh_order()
    for k in (0, 1):
        for i in range(M):
            assert f"layer{k}#{i}" in order[f"m{k}"], order
            assert f"layer{k}(1)#{i}" in order[f"m{k}"], order


# --- errors -----------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 2**32, 1.0, "3", True,
                                 np.float32(2.0)])
def test_bad_call_counter(bad: Any) -> None:
    with pytest.raises(InvalidCallCounterError,
                       match=re.escape(repr(bad))) as info:
        mpmd.call(jnp.sin, call_counter=bad)
    assert isinstance(info.value, mpmd.MpmdError)
    assert isinstance(info.value, FrontendError)


def test_call_without_a_counter_labels_nothing() -> None:
    # Shardy:MPMD's call counter is optional: the call is then plain.
    assert mpmd.call(jnp.sin) is jnp.sin
    assert mpmd.call(jnp.sin, call_counter=None) is jnp.sin


def test_largest_call_counter_is_accepted() -> None:
    text = _generic(mpmd.call(named_computation(jnp.sin, name="s"),
                              call_counter=np.uint32(2**32 - 1)), jnp.ones(2))
    assert "{call_counter = 4294967295 : ui32}" in text


def test_fori_loop_bounds_must_be_static() -> None:
    def traced(n: Any) -> Any:
        return mpmd.fori_loop(0, n, lambda i, c: c + 1.0, jnp.zeros(()))

    with pytest.raises(InvalidLoopBoundsError, match="static Python int"):
        jax.jit(traced)(3)
    with pytest.raises(InvalidLoopBoundsError, match="2.5"):
        mpmd.fori_loop(0, 2.5, lambda i, c: c, 0.0)
    with pytest.raises(InvalidLoopBoundsError, match="True"):
        mpmd.fori_loop(True, 2, lambda i, c: c, 0.0)
    with pytest.raises(InvalidLoopBoundsError, match="2\\*\\*32"):
        mpmd.fori_loop(0, 2**32 + 1, lambda i, c: c, 0.0)
    assert issubclass(InvalidLoopBoundsError, mpmd.MpmdError)


def test_scan_microbatches_errors() -> None:
    with pytest.raises(InvalidLoopBoundsError, match="disagree"):
        mpmd.scan_microbatches(lambda c, x: (c, x), 0.0,
                               (jnp.ones((2, 1)), jnp.ones((3, 1))))
    with pytest.raises(InvalidLoopBoundsError, match="leading"):
        mpmd.scan_microbatches(lambda c, x: (c, x), 0.0, jnp.float32(1.0))
    with pytest.raises(InvalidLoopBoundsError, match="length"):
        mpmd.scan_microbatches(lambda c, x: (c, x), 0.0, None)


def test_non_callables_are_rejected() -> None:
    with pytest.raises(FrontendError, match="expects a callable"):
        mpmd.call(3, call_counter=0)  # type: ignore[arg-type]
    with pytest.raises(FrontendError, match="callable body"):
        mpmd.fori_loop(0, 1, "body", 0.0)  # type: ignore[arg-type]


def test_lazy_exports() -> None:
    from mpmd.frontend import call, fori_loop, scan_microbatches  # noqa: PLC0415

    assert mpmd.call is call and mpmd.fori_loop is fori_loop
    assert mpmd.scan_microbatches is scan_microbatches
    assert mpmd.InvalidCallCounterError is InvalidCallCounterError
    assert {"call", "fori_loop", "scan_microbatches"} <= set(dir(mpmd))
