"""named_computation / named_tensor: numerics under JAX transformations and
the mpmd ops they lower to."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from typing import Any, Callable

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

import mpmd  # noqa: E402
from mpmd.frontend import (  # noqa: E402
    FrontendError,
    InvalidNameError,
    emit_named_computations,
    inline_named_computations,
    named_computation,
    named_tensor,
)

RTOL = 1e-6
ATOL = 1e-6



def _fresh(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as a new function: JAX reuses a lowering it cached for the same
    function in the other mode (the mode is not part of its cache keys)."""
    return lambda *args, **kwargs: fn(*args, **kwargs)

def _close(actual: Any, expected: Any) -> None:
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=RTOL, atol=ATOL)


def _text(fn: Callable[..., Any], *args: Any) -> str:
    with emit_named_computations():
        return jax.jit(_fresh(fn)).lower(*args).as_text()


def _generic(fn: Callable[..., Any], *args: Any) -> str:
    with emit_named_computations():
        module = jax.jit(_fresh(fn)).lower(*args).compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)


def _headers(text: str) -> list[str]:
    """The `mpmd.named_computation<...>` origins of a pretty-printed module, in order."""
    return re.findall(r"mpmd\.named_computation<(\"[^\"]*\"(?:\(\d+\))?)>", text)


# A small model: two labelled dense layers and a labelled weight.
def _layer(w: Any, b: Any, x: Any) -> Any:
    return jnp.tanh(x @ w + b)


def _params() -> dict[str, Any]:
    k = jax.random.split(jax.random.key(0), 4)
    return {
        "l1": (jax.random.normal(k[0], (4, 5)) * 0.5, jax.random.normal(k[1], (5,))),
        "l2": (jax.random.normal(k[2], (5, 3)) * 0.5, jax.random.normal(k[3], (3,))),
    }


X = jnp.linspace(-1.0, 1.0, 8 * 4, dtype=jnp.float32).reshape(8, 4)


def _plain_loss(params: dict[str, Any], x: Any) -> Any:
    h = _layer(*params["l1"], x)
    return jnp.mean(_layer(*params["l2"], h) ** 2)


def _labelled_loss(params: dict[str, Any], x: Any) -> Any:
    w1 = named_tensor(params["l1"][0], "w1")
    h = named_computation(_layer, name="layer1")(w1, params["l1"][1], x)
    y = named_computation(_layer, name="layer2")(*params["l2"], h)
    return jnp.mean(y**2)


# --- numerics ---------------------------------------------------------------


def test_eager_matches_plain() -> None:
    _close(_labelled_loss(_params(), X), _plain_loss(_params(), X))


def test_jit_inline_matches_plain() -> None:
    with inline_named_computations():
        got = jax.jit(_labelled_loss)(_params(), X)
    _close(got, _plain_loss(_params(), X))


@pytest.mark.parametrize("use_jit", [False, True])
def test_grad_matches_plain(use_jit: bool) -> None:
    grad = jax.grad(_labelled_loss)
    with inline_named_computations():
        got = (jax.jit(grad) if use_jit else grad)(_params(), X)
    _close(got, jax.grad(_plain_loss)(_params(), X))


def test_value_and_grad_matches_plain() -> None:
    with inline_named_computations():
        got = jax.jit(jax.value_and_grad(_labelled_loss, argnums=(0, 1)))(_params(), X)
    _close(got, jax.value_and_grad(_plain_loss, argnums=(0, 1))(_params(), X))


def test_vjp_matches_plain() -> None:
    fn = named_computation(_layer, name="layer1")
    w, b = _params()["l1"]
    ct = jnp.ones((8, 5)) * 0.3
    out, pullback = jax.vjp(fn, w, b, X)
    out_ref, pullback_ref = jax.vjp(_layer, w, b, X)
    _close(out, out_ref)
    _close(pullback(ct), pullback_ref(ct))


def test_jvp_and_jacfwd_match_plain() -> None:
    fn = named_computation(_layer, name="layer1")
    w, b = _params()["l1"]
    tangents = (jnp.ones_like(w), jnp.zeros_like(b), jnp.ones_like(X))
    _close(jax.jvp(fn, (w, b, X), tangents), jax.jvp(_layer, (w, b, X), tangents))
    _close(jax.jacfwd(fn, argnums=1)(w, b, X), jax.jacfwd(_layer, argnums=1)(w, b, X))


def test_grad_of_grad_matches_plain() -> None:
    def inner(fn: Callable[..., Any]) -> Callable[..., Any]:
        return lambda x: jnp.sum(jnp.sin(fn(x)) * x)

    nc = named_computation(lambda x: x**3, name="cube")
    second = jax.grad(lambda x: jnp.sum(jax.grad(inner(nc))(x) ** 2))
    second_ref = jax.grad(lambda x: jnp.sum(jax.grad(inner(lambda x: x**3))(x) ** 2))
    x = jnp.linspace(0.1, 1.0, 6)
    with inline_named_computations():
        _close(jax.jit(second)(x), second_ref(x))
    _close(second(x), second_ref(x))


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_checkpoint_matches_plain(where: str) -> None:
    def loss(params: dict[str, Any], x: Any) -> Any:
        if where == "outside":
            l1 = jax.checkpoint(named_computation(_layer, name="layer1"))
        else:
            l1 = named_computation(jax.checkpoint(_layer), name="layer1")
        h = l1(*params["l1"], x)
        return jnp.mean(_layer(*params["l2"], h) ** 2)

    with inline_named_computations():
        got = jax.jit(jax.grad(loss))(_params(), X)
    _close(got, jax.grad(_plain_loss)(_params(), X))
    text = _text(jax.grad(loss), _params(), X)
    assert '"layer1"' in text and '"layer1"(1)' in text


def test_checkpoint_policy_recomputes_forward_in_backward() -> None:
    nc = named_computation(lambda x: jnp.sin(x) * 2.0, name="layer1")
    loss = jax.checkpoint(lambda x: jnp.sum(nc(x) ** 2),
                          policy=jax.checkpoint_policies.nothing_saveable)
    x = jnp.linspace(0.0, 1.0, 4)
    _close(jax.grad(loss)(x), jax.grad(lambda x: jnp.sum((jnp.sin(x) * 2.0) ** 2))(x))
    assert '"layer1"(1)' in _text(jax.grad(loss), x)


def test_pytrees_in_and_out() -> None:
    def block(inputs: dict[str, Any], scale: tuple[Any, list[Any]], *, shift: Any) -> Any:
        y = inputs["a"] * scale[0] + inputs["b"] @ scale[1][0]
        return {"sum": y + shift, "parts": (y, [jnp.sum(y)])}

    nc = named_computation(block, name="block")
    inputs = {"a": jnp.ones((3, 2)), "b": jnp.arange(6.0).reshape(3, 2)}
    scale = (jnp.float32(2.0), [jnp.eye(2)])

    _close(nc(inputs, scale, shift=1.5), block(inputs, scale, shift=1.5))

    def loss(fn: Callable[..., Any]) -> Callable[..., Any]:
        return lambda i, s: jnp.sum(fn(i, s, shift=0.5)["parts"][1][0] ** 2)

    with inline_named_computations():
        _close(jax.jit(jax.grad(loss(nc), argnums=(0, 1)))(inputs, scale),
               jax.grad(loss(block), argnums=(0, 1))(inputs, scale))


def test_closure_over_tracer_is_differentiated() -> None:
    x = jnp.linspace(-1.0, 1.0, 5)

    def loss(w: Any, fn_of: Callable[[Any], Callable[[Any], Any]]) -> Any:
        return jnp.sum(fn_of(w)(x) ** 2)

    def labelled(w: Any) -> Callable[[Any], Any]:
        return named_computation(lambda v: jnp.sin(v * w), name="closure")

    def plain(w: Any) -> Callable[[Any], Any]:
        return lambda v: jnp.sin(v * w)

    w = jnp.float32(0.7)
    expected = jax.grad(loss)(w, plain)
    _close(jax.grad(loss)(w, labelled), expected)
    with inline_named_computations():
        _close(jax.jit(jax.grad(loss), static_argnums=1)(w, labelled), expected)
    # The closed-over tracer is an explicit operand: two operands, w and x.
    text = _text(lambda w: loss(w, labelled), w)
    assert re.search(r'named_computation<"closure"> \(%\w+, %\w+\)', text), text


def test_closure_over_concrete_array_stays_in_body() -> None:
    table = np.arange(4.0, dtype=np.float32) + 10.0
    nc = named_computation(lambda v: v * table, name="const")
    v = jnp.ones(4)
    _close(nc(v), v * table)
    text = _text(nc, v)
    body = text.split('named_computation<"const">', 1)[1]
    assert "stablehlo.constant dense<[1.000000e+01" in body.split("mpmd.return", 1)[0]


def test_integer_inputs_and_outputs_under_grad() -> None:
    def block(x: Any, idx: Any) -> tuple[Any, Any]:
        return x[idx] * 2.0, idx + 1

    nc = named_computation(block, name="gather")
    x, idx = jnp.arange(5.0), jnp.array([0, 3])
    loss = lambda fn: lambda x, i: jnp.sum(fn(x, i)[0] ** 2)  # noqa: E731
    _close(jax.grad(loss(nc))(x, idx), jax.grad(loss(block))(x, idx))
    _close(nc(x, idx), block(x, idx))


def test_unused_output_gets_no_cotangent() -> None:
    nc = named_computation(lambda x: (jnp.sin(x), jnp.cos(x)), name="two")
    x = jnp.linspace(0.0, 1.0, 3)
    _close(jax.grad(lambda x: jnp.sum(nc(x)[0]))(x), jnp.cos(x))
    text = _text(jax.grad(lambda x: jnp.sum(nc(x)[0])), x)
    assert _headers(text) == ['"two"', '"two"(1)']


def test_vmap_matches_plain() -> None:
    fn = named_computation(_layer, name="layer1")
    w, b = _params()["l1"]
    xs = jnp.stack([X, X * 2.0, X - 1.0])
    _close(jax.vmap(fn, in_axes=(None, None, 0))(w, b, xs),
           jax.vmap(_layer, in_axes=(None, None, 0))(w, b, xs))
    assert _headers(_text(jax.vmap(fn, in_axes=(None, None, 0)), w, b, xs)) == ['"layer1"']


def test_vmap_of_a_collective_over_the_mapped_axis() -> None:
    # A result of `pmean` over the vmapped axis is not batched: JAX's own
    # batching says so (BatchNorm's statistics under eqx's vmap).
    def stats(x: Any) -> Any:
        return named_computation(lambda x: (x * 2.0, jax.lax.pmean(x, "b")),
                                 name="nc")(x)

    x = jnp.arange(6.0).reshape(3, 2)
    scaled, mean = jax.vmap(stats, axis_name="b", out_axes=(0, None))(x)
    _close(scaled, x * 2.0)
    _close(mean, jnp.mean(x, axis=0))
    text = _text(jax.vmap(stats, axis_name="b", out_axes=(0, None)), x)
    assert _headers(text) == ['"nc"']


def test_decorator_form_and_nested_jit() -> None:
    @named_computation(name="deco")
    def block(x: Any) -> Any:
        return jax.jit(lambda y: y * 3.0)(x) + 1.0

    x = jnp.arange(3.0)
    _close(block(x), x * 3.0 + 1.0)
    assert _headers(_text(block, x)) == ['"deco"']


def test_named_tensor_is_identity_and_differentiable() -> None:
    x = jnp.arange(4.0)
    _close(named_tensor(x, "t"), x)
    grad = jax.grad(lambda v: jnp.sum(named_tensor(v, "t") ** 2))
    _close(grad(x), 2.0 * x)
    _close(jax.vmap(lambda v: named_tensor(v, "t") * 2.0)(x), 2.0 * x)


# --- lowered text -----------------------------------------------------------


def test_grad_lowers_to_forward_and_transposed_computations() -> None:
    text = _text(jax.grad(_labelled_loss), _params(), X)
    assert _headers(text) == ['"layer1"', '"layer2"', '"layer2"(1)', '"layer1"(1)']
    generic = _generic(jax.grad(_labelled_loss), _params(), X)
    assert '"mpmd.named_computation"' in generic
    assert 'origin = #mpmd.user_origin<"layer1">' in generic
    assert 'origin = #mpmd.user_origin<"layer1"(1)>' in generic
    assert '"mpmd.return"' in generic


def test_forward_alone_has_count_zero_only() -> None:
    text = _text(_labelled_loss, _params(), X)
    assert _headers(text) == ['"layer1"', '"layer2"']


def test_grad_of_grad_lowers_to_transpose_count_two() -> None:
    nc = named_computation(lambda x: jnp.sin(x) * x, name="layer1")
    second = jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(nc(y)))(x) ** 2))
    headers = _headers(_text(second, jnp.arange(3.0)))
    assert '"layer1"(2)' in headers
    assert set(headers) == {'"layer1"', '"layer1"(1)', '"layer1"(2)'}


def test_named_tensor_lowers_with_its_name() -> None:
    text = _text(jax.grad(_labelled_loss), _params(), X)
    found = re.findall(r'mpmd\.named_tensor %[\w#]+ name="w1"', text)
    assert len(found) == 2  # the weight and its gradient


def test_region_is_isolated_and_parses_in_mpmd() -> None:
    # Hoisted constants and closed-over values must not leak into the region;
    # mpmd's own verifier checks the region is isolated from above.
    scale = jnp.full((5,), 3.0)
    nc = named_computation(lambda h: h * scale + 2.0, name="const")

    def loss(params: dict[str, Any], x: Any) -> Any:
        return jnp.sum(nc(named_computation(_layer, name="layer1")(*params["l1"], x)))

    generic = _generic(jax.grad(loss), _params(), X)
    assert mpmd.parse(generic, generic=True) == generic


def test_plain_jit_lowers_to_plain_stablehlo() -> None:
    # By default labels lower to their bodies, so plain jax.jit runs them.
    text = jax.jit(jax.grad(_labelled_loss)).lower(_params(), X).as_text()
    assert "mpmd." not in text
    assert "stablehlo.tanh" in text
    with inline_named_computations(False):
        assert "mpmd.named_computation" in jax.jit(
            jax.grad(_labelled_loss)).lower(_params(), X).as_text()
    # The mode is part of the cache key: the inline lowering comes back.
    assert "mpmd." not in jax.jit(jax.grad(_labelled_loss)).lower(
        _params(), X).as_text()


def test_special_characters_in_name_round_trip() -> None:
    name = 'stage "a"\\b'
    text = _generic(named_computation(jnp.sin, name=name), jnp.ones(2))
    assert mpmd.parse(text, generic=True) == text
    assert r'#mpmd.user_origin<"stage \22a\22\\b">' in text


# --- errors -----------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", 3, None, b"layer"])
def test_bad_named_computation_name(bad: Any) -> None:
    with pytest.raises(InvalidNameError, match="named_computation name") as info:
        named_computation(jnp.sin, name=bad)
    assert isinstance(info.value, mpmd.MpmdError)


@pytest.mark.parametrize("bad", ["", 1.5, None])
def test_bad_named_tensor_name(bad: Any) -> None:
    with pytest.raises(InvalidNameError, match="named_tensor name"):
        named_tensor(jnp.ones(2), bad)


def test_empty_name_message_says_what_to_change() -> None:
    with pytest.raises(mpmd.MpmdError, match="must not be empty"):
        named_computation(jnp.sin, name="")
    with pytest.raises(mpmd.MpmdError, match="must be a str, got 3 of type int"):
        named_tensor(jnp.ones(2), 3)


def test_non_callable_is_rejected() -> None:
    with pytest.raises(FrontendError, match="expects a callable"):
        named_computation(42, name="x")  # type: ignore[call-overload]


# --- packaging --------------------------------------------------------------


def test_package_imports_without_jax() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["jax"] = None  # any `import jax` now fails
        import mpmd
        assert "named_computation" in dir(mpmd)
        try:
            mpmd.named_computation
        except ImportError:
            print("lazy")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True, env=dict(os.environ))
    assert out.stdout.strip() == "lazy"


def test_lazy_exports_are_the_frontend_objects() -> None:
    assert mpmd.named_computation is named_computation
    assert mpmd.named_tensor is named_tensor
    assert issubclass(mpmd.InvalidNameError, mpmd.MpmdError)
