"""Microbatches: `mpmd.call`, `mpmd.fori_loop`, `mpmd.scan_microbatches`.

A pipeline schedule interleaves the microbatches of a step, so the compiler
has to know which microbatch each named computation belongs to: its *call
counter*. Under `mpmd.jit` a loop's body is traced once and reaches the
compiler as `mpmd.for` or as `mpmd.call`s of one function, each call with
its counter (`{call_counter = i : ui32}`); the compiler unrolls the loop and
gives every named computation of iteration `i` the counter `i`
(docs/loops.md). Elsewhere (plain `jax.jit`, eager, or a transformation
through the loop) the loop is unrolled at trace time and each named
computation records the counter of the `mpmd.call` it is traced in. The
fragments the compiler makes keep the counter, and `Lowered.mesh_order()`
labels them `layer1#3`.

Gradient accumulation over `m` microbatches, the typical use::

    def train_step(params, xs, ys):   # xs: [m, b, d] stacked microbatches
        def body(i, acc):
            loss, g = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
            return jax.tree.map(jnp.add, acc, (loss, g))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        loss, grads = mpmd.fori_loop(0, m, body, zeros)
        params = jax.tree.map(lambda p, g: p - 0.1 * g / m, params, grads)
        return params, loss / m

Each layer's forward (`"layer1"`) and backward (`"layer1"(1)`) of iteration
`i` carry counter `i`.

Rules:

* The counter is a primitive parameter of `named_computation_p`: set when
  the computation is traced, copied by the JVP, transpose, batching and
  dead-code rules onto what they produce. It therefore survives
  `jax.grad`/`vjp`/`value_and_grad`/`linearize`/`checkpoint`/`vmap`, both
  as grad-of-call (`jax.grad(mpmd.call(f, call_counter=i))`: the backward
  pass is built after the call returned, from the forward's parameter) and
  as call-of-grad (`mpmd.call(jax.grad(f), call_counter=i)`).
* Nested `mpmd.call`: the innermost counter wins. A named computation
  traced outside any `mpmd.call` has no counter.
* The counter is part of JAX's trace context, so a `jax.jit`-wrapped
  function called under two counters is traced once per counter.
* Only named computations carry counters; `named_tensor` does not.
* A named computation is labelled by the counter in effect when it is
  *traced*: code that first runs after the call returned (e.g. the
  backward of a `jax.custom_vjp` that calls a new named computation) gets
  the counter of the enclosing call, if any.
"""

from __future__ import annotations

import collections.abc
import contextlib
import contextvars
import functools
import operator
from typing import Any, Callable, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from mpmd import diagnostics
from mpmd.frontend.loops import bind_call, bind_for, emits_loops
from mpmd.frontend.context import call_counter_scope, check_call_counter
from mpmd.frontend.errors import FrontendError

__all__ = ["InvalidLoopBoundsError", "UnrolledLoopWarning", "call",
           "fori_loop", "scan_microbatches"]

# What JAX raises when traced code needs a traced value as a Python one.
_INDEX_AS_PYTHON_VALUE = (jax.errors.ConcretizationTypeError,
                          jax.errors.TracerIntegerConversionError,
                          jax.errors.TracerBoolConversionError,
                          jax.errors.TracerArrayConversionError)


class UnrolledLoopWarning(UserWarning):
    """A microbatch loop was traced once per iteration instead of once."""

C = TypeVar("C")


class InvalidLoopBoundsError(FrontendError, ValueError):
    """The bounds of `mpmd.fori_loop` (or the length of
    `mpmd.scan_microbatches`) are not static Python ints."""


def call(fn: Callable[..., Any], *,
         call_counter: int | None = None,
         schedule: Any = None) -> Callable[..., Any]:
    """`fn`, with every named computation traced inside it (and every
    derivative of one) labelled with microbatch `call_counter`.

    `call_counter` must be an int in [0, 2**32 - 1] (it lowers to a `ui32`);
    otherwise `InvalidCallCounterError`. In nested calls the innermost
    counter wins. Without a counter (None, as Shardy:MPMD allows) the call
    labels nothing: `fn` is called as it is.

    `schedule`: the pipeline schedule of the Python loop these calls make
    (anything `pipeline_schedule` takes: a built-in or registry name, a
    table, a comparator), instead of the function's `pipeline_schedule`;
    give every call of the loop the same one (docs/loops.md).
    """
    if not callable(fn):
        raise FrontendError(
            f"mpmd.call expects a callable, got {type(fn).__name__}")
    if schedule is None and call_counter is not None:
        schedule = _AMBIENT.get()
    given, schedule = schedule, compiler_schedule(schedule)
    if call_counter is None:
        if schedule is not None:
            raise FrontendError(
                f"mpmd.call(..., schedule={given!r}) needs a call_counter:"
                " a schedule orders the microbatches a loop's calls number")
        return fn
    counter = check_call_counter(call_counter)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with _body_scope():
            if emits_loops():
                return bind_call(fn, counter, args, kwargs, schedule)
            with call_counter_scope(counter):
                return fn(*args, **kwargs)

    return wrapped


# fori_loop's `init` when not given (None is a valid carry).
_NO_INIT = object()


def _static_int(value: object, what: str) -> int:
    if isinstance(value, jax.core.Tracer):
        raise InvalidLoopBoundsError(
            f"{what} must be a static Python int (the loop is unrolled at "
            f"trace time), got a traced value {value!r}; pass a Python int "
            "or mark it static")
    if isinstance(value, (bool, np.bool_)):
        raise InvalidLoopBoundsError(
            f"{what} must be a static Python int, got {value!r}")
    try:
        return operator.index(value)  # int, np.integer, 0-d int arrays
    except TypeError:
        raise InvalidLoopBoundsError(
            f"{what} must be a static Python int, got {value!r} of type "
            f"{type(value).__name__}") from None


def compiler_schedule(schedule: Any) -> str | None:
    """A loop's own schedule as the compiler takes it: a built-in name (or
    Shardy's spelling of one), or the token of a table, comparator or
    registry schedule that Python evaluates while partitioning
    (`mpmd.schedules.loops`); None for none."""
    if schedule is None:
        return None
    from mpmd.schedules import loops  # noqa: PLC0415
    from mpmd.schedules.spellings import loop_schedule_name  # noqa: PLC0415

    value = loop_schedule_name(schedule)
    if isinstance(value, str):
        return value
    return loops.register(value,
                          schedule if isinstance(schedule, str) else None)


# The schedule `loop_schedule` gives the loops of its block.
_AMBIENT: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "mpmd_loop_schedule", default=None)


@contextlib.contextmanager
def loop_schedule(schedule: Any):
    """Within the block, every loop that names no schedule of its own
    (`fori_loop`, `enumerated_for`, `call(..., call_counter=i)`) has
    `schedule` (anything `schedule=` takes), as if given to each:

        with mpmd.loop_schedule("gpipe"):
            ref = mpmd.fori_loop(0, m, ref_body, zeros)
            for i in range(m):
                r = r + mpmd.call(reward, call_counter=i)(batch[i])

    Loops traced inside those loops' bodies do not take it."""
    compiler_schedule(schedule)  # an unknown schedule fails here
    token = _AMBIENT.set(schedule)
    try:
        yield
    finally:
        _AMBIENT.reset(token)


@contextlib.contextmanager
def _body_scope():
    """Tracing a loop's body: the block's schedule is the loop's, not its
    inner loops'."""
    token = _AMBIENT.set(None)
    try:
        yield
    finally:
        _AMBIENT.reset(token)


def fori_loop(lower: Any, upper: Any, body: Any = None,
              init: Any = _NO_INIT, *, schedule: Any = None) -> Any:
    """`jax.lax.fori_loop` whose iterations are microbatches:
    `fori_loop(lower, upper, body, init)`, or Shardy:MPMD's
    `fori_loop(num_iterations, body, init)` (from 0).

    `schedule`: this loop's own pipeline schedule, which orders its
    microbatches instead of the function's `pipeline_schedule`: anything
    `pipeline_schedule` takes (a built-in or registry name, a table, a
    comparator, a `PipelineSchedule`). Loops of one program may each have
    their own (docs/loops.md).

    Iteration `i` is microbatch `i - lower` (counters start at 0 whatever
    `lower` is). Under `mpmd.jit` the body is traced once, with `i` a traced
    int32, and reaches the compiler as `mpmd.for` (docs/loops.md); a body
    that needs `i` as a Python value is unrolled instead, with an
    `UnrolledLoopWarning`. Under plain `jax.jit` and eagerly the loop is
    unrolled at trace time with `i` a Python int. `lower` and `upper` must
    be static ints (`InvalidLoopBoundsError` otherwise); when
    `upper <= lower`, `init` is returned unchanged.
    """
    if callable(upper) and init is _NO_INIT:
        lower, upper, body, init = 0, lower, upper, body
    if init is _NO_INIT:
        raise FrontendError("mpmd.fori_loop takes (lower, upper, body, init) "
                            "or (num_iterations, body, init)")
    lo = _static_int(lower, "fori_loop lower bound")
    hi = _static_int(upper, "fori_loop upper bound")
    if not callable(body):
        raise FrontendError(
            f"mpmd.fori_loop expects a callable body, got "
            f"{type(body).__name__}")
    if hi - lo - 1 > 2**32 - 1:
        raise InvalidLoopBoundsError(
            f"fori_loop({lo}, {hi}) has {hi - lo} iterations; call counters "
            "are ui32, so at most 2**32")
    if schedule is None:
        schedule = _AMBIENT.get()
    given, schedule = schedule, compiler_schedule(schedule)
    if hi <= lo:
        return init
    if emits_loops():
        flat_init, tree = jax.tree_util.tree_flatten(init)

        def flat_body(index: Any, *flat_carry: Any) -> list[Any]:
            out = body(index, jax.tree_util.tree_unflatten(tree, flat_carry))
            flat_out, out_tree = jax.tree_util.tree_flatten(out)
            _check_carry_tree(tree, out_tree)
            return flat_out

        try:
            with _body_scope():
                flat = bind_for(flat_body, flat_init, hi - lo, lo, schedule)
            return jax.tree_util.tree_unflatten(tree, flat)
        except _INDEX_AS_PYTHON_VALUE as error:
            if schedule is not None:
                raise FrontendError(
                    f"not supported yet: mpmd.fori_loop(..., schedule="
                    f"{given!r}) whose body uses the loop index as a "
                    f"Python value ({type(error).__name__}): such a loop is "
                    "traced once per iteration, and its schedule is lost; "
                    "compute on the index with jnp/lax, or drop the "
                    "loop's schedule") from None
            diagnostics.warn(
                f"mpmd.fori_loop: the body uses the loop index as a Python "
                f"value ({type(error).__name__}), so it is traced once per "
                f"iteration ({hi - lo} times) instead of once; compute on "
                "the index with jnp/lax (jnp.where, lax.cond, xs[i]) to trace"
                " it once", UnrolledLoopWarning)
    carry = init
    tree = jax.tree_util.tree_structure(init)
    specs = [_carry_spec(x) for x in jax.tree_util.tree_leaves(init)]
    for i in range(lo, hi):
        with call_counter_scope(i - lo), _body_scope():
            carry = body(i, carry)
        leaves, out_tree = jax.tree_util.tree_flatten(carry)
        _check_carry_tree(tree, out_tree)
        for position, (spec, leaf) in enumerate(zip(specs, leaves)):
            _check_carry_leaf(position, spec, _carry_spec(leaf))
    return carry


def _carry_spec(x: Any) -> jax.ShapeDtypeStruct | None:
    """Shape and dtype of a carry leaf, as JAX would type it; None for a
    Python object JAX does not type (an unrolled loop may carry one)."""
    try:
        aval = jax.typeof(x)
    except TypeError:
        return None
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)


def _check_carry_tree(tree: Any, out_tree: Any) -> None:
    if out_tree != tree:
        raise FrontendError(
            "Tree structs of init_val and the result of the fori_loop must "
            f"match. Got {tree} and {out_tree}: the body must return a carry "
            "of the structure it is given")


def _check_carry_leaf(position: int, spec: Any, out: Any) -> None:
    """A carry leaf keeps its shape and dtype across iterations."""
    if spec is None or out is None:
        return
    if tuple(spec.shape) != tuple(out.shape) or spec.dtype != out.dtype:
        raise FrontendError(
            f"Input and output avals must match. Got "
            f"{np.dtype(spec.dtype).name}{list(spec.shape)} and "
            f"{np.dtype(out.dtype).name}{list(out.shape)} respectively, for "
            f"carry leaf {position}: a carry keeps its shape and dtype "
            "across iterations")


def enumerated_for(body: Callable[[C, Any, Any], C], initial_carry: C,
                   inputs: Any, *, unroll: bool = False,
                   schedule: Any = None) -> C:
    """Shardy:MPMD's loop over the elements of lists:

        carry = initial_carry
        for i, x in enumerate(inputs):
            carry = body(carry, i, x)

    `inputs` is a pytree whose leaves are sequences of arrays, all of one
    length; `x` has the structure of `inputs` with one element per leaf.
    Iteration `i` is microbatch `i`. Rolled (the default), the body is
    traced once over the stacked inputs, as `fori_loop`; with `unroll`,
    once per element. `schedule`: the loop's own schedule, as in
    `fori_loop`.
    """
    def is_array(x: Any) -> bool:
        return hasattr(x, "shape") or isinstance(x, (int, float, complex))

    def is_sequence(leaf: Any) -> bool:
        return isinstance(leaf, collections.abc.Sequence) and \
            not isinstance(leaf, str) and all(is_array(x) for x in leaf)

    with_paths = jax.tree_util.tree_flatten_with_path(
        inputs, is_leaf=is_sequence)[0]
    for path, leaf in with_paths:
        if is_sequence(leaf):
            continue
        where = jax.tree_util.keystr(path) or "()"
        if not isinstance(leaf, collections.abc.Sequence):
            raise FrontendError(
                "Expected all leaves of the `inputs` tree to be Sequences. "
                f"Got leaf at path {where} of type {type(leaf)}; "
                "enumerated_for iterates over lists (or tuples) of arrays")
        raise FrontendError(
            "Expected all leaves of the `inputs` tree to be sequences of "
            f"arrays. Got leaf at path {where} of type {type(leaf)}; "
            "enumerated_for iterates over lists (or tuples) of arrays")
    sequences = [leaf for _, leaf in with_paths]
    if not sequences:
        raise FrontendError("enumerated_for: `inputs` has no lists to "
                            "iterate over; give a pytree of lists of arrays")
    lengths = {len(s) for s in sequences}
    if len(lengths) != 1:
        raise FrontendError(
            "Expected all leaves of the `inputs` tree to be lists of the same"
            f" length. Got list lengths: {lengths}; one iteration takes one "
            "element of each")
    (count,) = lengths
    # The body sees JAX arrays, as it does under jax.jit (`carry.at[i]`
    # works on a numpy initial carry too).
    initial_carry = jax.tree_util.tree_map(
        lambda x: jnp.asarray(x) if isinstance(
            x, (np.ndarray, np.generic, int, float, complex)) else x,
        initial_carry)
    if unroll:
        carry = initial_carry
        for i in range(count):
            element = jax.tree_util.tree_map(lambda s: s[i], inputs,
                                             is_leaf=is_sequence)
            carry = call(body, call_counter=i, schedule=schedule)(
                carry, i, element)
        return carry
    stacked = jax.tree_util.tree_map(jnp.stack, inputs, is_leaf=is_sequence)

    def step(i: Any, carry: C) -> C:
        element = jax.tree_util.tree_map(lambda s: s[i], stacked)
        return body(carry, i, element)

    return fori_loop(0, count, step, initial_carry, schedule=schedule)


def scan_microbatches(fn: Callable[[C, Any], tuple[C, Any]], init: C,
                      xs: Any, length: int | None = None) -> tuple[C, Any]:
    """`jax.lax.scan` (same argument order) whose iterations are
    microbatches.

    With `x_i` the i-th slice of every leaf of `xs` along its leading axis,
    iteration `i` (microbatch `i`) runs `fn(carry, x_i)` and returns
    `(carry, y_i)`; the result is the final carry and the `y_i` stacked
    along a new leading axis (`None` when `fn` returns `None` for y). Under
    `mpmd.jit` the body is traced once, like `fori_loop`'s; otherwise the
    loop is unrolled at trace time.
    The number of iterations is the leading dimension of the leaves of `xs`
    (all equal), or `length` when `xs` is None.
    """
    leaves = jax.tree.leaves(xs)
    sizes = {np.shape(x)[0] if np.ndim(x) else None for x in leaves}
    if None in sizes:
        raise InvalidLoopBoundsError(
            "scan_microbatches: every leaf of xs needs a leading "
            "(microbatch) axis; got a scalar")
    if length is not None:
        length = _static_int(length, "scan_microbatches length")
        sizes.add(length)
    if not sizes:
        raise InvalidLoopBoundsError(
            "scan_microbatches needs xs with a leading (microbatch) axis or "
            "a static length")
    if len(sizes) != 1:
        raise InvalidLoopBoundsError(
            "scan_microbatches: the leaves of xs (and length) disagree on "
            f"the number of microbatches: {sorted(sizes)}")
    (count,) = sizes
    if emits_loops() and count > 0:
        return _scan_once(fn, init, xs, count)
    carry, ys = init, []
    for i in range(count):
        x_i = jax.tree.map(lambda x: x[i], xs)  # noqa: B023
        with call_counter_scope(i):
            carry, y = fn(carry, x_i)
        ys.append(y)
    if not ys or all(y is None for y in ys):
        return carry, None
    return carry, jax.tree.map(lambda *ys_: jnp.stack(ys_), *ys)


def _scan_once(fn: Callable[[C, Any], tuple[C, Any]], init: C, xs: Any,
               count: int) -> tuple[C, Any]:
    """scan_microbatches as one traced body: x_i is sliced by the traced
    index, each y_i written into its row of a stacked buffer carried along."""
    def x_at(i: Any) -> Any:
        return jax.tree.map(
            lambda x: jax.lax.dynamic_index_in_dim(x, i, keepdims=False), xs)

    _, y_shape = jax.eval_shape(lambda c: fn(c, x_at(0)), init)
    if y_shape is None:
        def body(i: Any, carry: C) -> C:
            carry, _ = fn(carry, x_at(i))
            return carry
        return fori_loop(0, count, body, init), None
    buffers = jax.tree.map(lambda y: jnp.zeros((count, *y.shape), y.dtype),
                           y_shape)

    def stacking_body(i: Any, state: tuple[C, Any]) -> tuple[C, Any]:
        carry, ys = state
        carry, y = fn(carry, x_at(i))
        ys = jax.tree.map(
            lambda buf, y: jax.lax.dynamic_update_index_in_dim(buf, y, i, 0),
            ys, y)
        return carry, ys

    return fori_loop(0, count, stacking_body, (init, buffers))
