"""mpmd's tracing state: what its primitives read while traced and lowered.

    with emit_named_computations():          # labels lower to mpmd.* ops
        ...
    with call_counter_scope(3):              # named computations: microbatch 3
        ...

The lowering mode (labels as their bodies, for XLA, or as `mpmd.*` ops,
for the mpmd compiler), the call counter of the `mpmd.call` being traced,
and the mesh each named computation's body sees while `mpmd.jit` traces.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

import jax
import numpy as np

from mpmd.frontend.errors import InvalidCallCounterError

__all__ = ["CALL_COUNTER_ATTR", "InvalidCallCounterError",
           "LOOP_SCHEDULE_ATTR", "call_counter_scope", "check_call_counter",
           "context_mesh", "current_call_counter", "emit_named_computations",
           "inline_named_computations", "labels_lower_to_ops",
           "lowers_inline", "named_computation_meshes"]


# --- lowering mode, call counter, meshes: mpmd's tracing state -------------
#
# What mpmd's primitives read while they are traced and lowered lives in
# context variables, not in JAX's config: a JAX config state that is part of
# the tracing context changes the key of every trace JAX caches (when it is
# registered, and whenever its value differs), so the first mpmd lowering
# made a user's `jax.jit` functions trace and compile again. Nothing here
# changes what JAX sees outside mpmd's own primitives. `mpmd.jit` traces
# the user's function afresh (never from JAX's trace cache); a `jax.jit`
# function called inside it may come from that cache, traced before in
# another mode, and still computes the same numbers (`docs/runtime.md`).

_INLINE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mpmd_inline_named_computations", default=True)


@contextlib.contextmanager
def _setting(variable: contextvars.ContextVar[Any], value: Any
             ) -> Iterator[None]:
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


def inline_named_computations(enabled: bool = True) -> Any:
    """Context manager: lower labels to plain StableHLO that XLA can run
    (the default)."""
    return _setting(_INLINE, bool(enabled))


def emit_named_computations() -> Any:
    """Context manager: lower labels to `mpmd.*` ops for the mpmd compiler
    (what `mpmd.jit` does). It applies to what is traced and lowered inside;
    JAX hands out a lowering it cached for the same function and arguments
    without lowering again, so lower a function not lowered before
    (`jax.jit(lambda *a: f(*a)).lower(...)`), as `mpmd.jit` does."""
    return _setting(_INLINE, False)


def labels_lower_to_ops() -> bool:
    """Whether labels and annotations lower to `mpmd.*` ops now (under
    `mpmd.jit`) rather than to their plain bodies."""
    return not _INLINE.get()


# --- call counter -----------------------------------------------------------

#: The discardable attribute of `mpmd.named_computation` (and of the
#: fragments made from it) that holds the microbatch, as a `ui32`.
CALL_COUNTER_ATTR = "call_counter"
# A loop's (or a Python loop of mpmd.call's) own pipeline schedule, on
# mpmd.for and mpmd.call (docs/loops.md).
LOOP_SCHEDULE_ATTR = "mpmd.loop_schedule"

_MAX_CALL_COUNTER = 2**32 - 1

# The counter of the innermost enclosing `mpmd.call` being traced (None:
# none).
_CALL_COUNTER: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "mpmd_call_counter", default=None)


def check_call_counter(counter: object) -> int:
    """`counter` as an int, or `InvalidCallCounterError` naming it."""
    if isinstance(counter, (bool, np.bool_)) or not isinstance(
            counter, (int, np.integer)):
        raise InvalidCallCounterError(
            f"call_counter must be an int in [0, {_MAX_CALL_COUNTER}], got "
            f"{counter!r} of type {type(counter).__name__}")
    value = int(counter)
    if value < 0:
        raise InvalidCallCounterError(
            f"call_counter must be non-negative, got call_counter={value} "
            f"instead; counters are ui32s, in [0, {_MAX_CALL_COUNTER}]")
    if value > _MAX_CALL_COUNTER:
        raise InvalidCallCounterError(
            f"call_counter must be in [0, {_MAX_CALL_COUNTER}] (it is a ui32),"
            f" got {value}")
    return value


def current_call_counter() -> int | None:
    """The counter of the innermost `mpmd.call` being traced, or None."""
    return _CALL_COUNTER.get()


def call_counter_scope(counter: int) -> Any:
    """Context manager: named computations traced inside carry `counter`
    (validated by the caller)."""
    return _setting(_CALL_COUNTER, counter)


# --- the mesh of a named computation -----------------------------------------

# While `mpmd.jit` traces: name -> AbstractMesh, the mesh each named
# computation is assigned to. Its body is traced with that mesh as the
# context mesh, so `with_sharding_constraint(x, PartitionSpec(...))` and
# `shard_map` without a mesh inside it resolve on the computation's mesh.
_NAMED_MESHES: contextvars.ContextVar[dict[str, Any] | None] = \
    contextvars.ContextVar("mpmd_named_computation_meshes", default=None)


def named_computation_meshes(meshes: dict[str, Any]) -> Any:
    """Context manager: named computations traced inside see the abstract
    mesh `meshes[name]` as their context mesh."""
    return _setting(_NAMED_MESHES, dict(meshes))


def context_mesh(name: str) -> Any:
    mesh = (_NAMED_MESHES.get() or {}).get(name)
    if mesh is None:
        return contextlib.nullcontext()
    return jax.sharding.use_abstract_mesh(mesh)


def lowers_inline() -> bool:
    """Whether labels lower to their plain bodies now (the default)."""
    return _INLINE.get()
