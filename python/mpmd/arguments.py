"""The arguments of an `mpmd.jit` function: how they are traced (shape and
dtype only), named (`params['w1']`), keyed for the cache, and checked
against a compiled program's inputs at call time.

    paths = argument_paths(fn, static, len(args), flat_paths)
    placed = as_placed(leaves, compiled_inputs)   # None: something to move
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.sharding import NamedSharding

from mpmd.config import ConfigError
from mpmd.runtime.transfer import relabel

__all__ = ["abstract", "argument_paths", "as_placed", "fits", "leaf_key",
           "leaf_paths", "normalize_argnums", "path_text", "split_static",
           "static_key"]

try:
    from jax._src.array import ArrayImpl as _ARRAY_IMPL
except ImportError:  # a JAX that moved it: the isinstance test alone
    _ARRAY_IMPL = jax.Array


def abstract(value: Any) -> Any:
    """What JAX traces for an argument: its shape and dtype only. Arrays on
    different meshes cannot be traced together by `jax.jit`; their layouts
    reach the compiler as `sdy.sharding` attributes instead."""
    if isinstance(value, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(value.shape, value.dtype,
                                    weak_type=value.weak_type)
    aval = jax.typeof(value)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype,
                                weak_type=getattr(aval, "weak_type", False))


def split_static(args: Sequence[Any], static: frozenset[int]
                 ) -> tuple[list[Any], list[Any]]:
    dynamic = [a for i, a in enumerate(args) if i not in static]
    fixed = [a for i, a in enumerate(args) if i in static]
    return dynamic, fixed


def normalize_argnums(argnums: Sequence[int] | int, count: int
                      ) -> frozenset[int]:
    if isinstance(argnums, int):
        argnums = (argnums,)
    return frozenset(i % count if count else i for i in argnums)


def as_placed(leaves: Sequence[Any], expected: Sequence[tuple],
              memo: dict[int, tuple[Any, Any]] | None = None
              ) -> Sequence[Any] | None:
    """`leaves` if every one is a live jax.Array already laid out as the
    plan's input (so the call needs no copy and no check), with those whose
    committed sharding is only equivalent to the input's (a
    `SingleDeviceSharding` on a one-device mesh, other axis names) relabelled
    without a copy; else None. `memo` keeps, per position, the last array
    relabelled and its relabelling: a loop passing the same array again
    (a batch, a constant) reuses it."""
    if len(leaves) != len(expected):
        return None
    relabelled = None
    for index, (value, (shape, dtype, sharding)) in enumerate(
            zip(leaves, expected)):
        # jax.Array's isinstance goes through its ABC: test the concrete
        # class first.
        if not ((value.__class__ is _ARRAY_IMPL or isinstance(value, jax.Array))
                and value.shape == shape
                and (value.dtype is dtype or value.dtype == dtype)
                and not value.is_deleted()):
            return None
        if value.sharding == sharding:
            continue
        if not (value._committed  # noqa: SLF001
                and _equivalent(value.sharding, sharding, len(shape))):
            return None
        if relabelled is None:
            relabelled = list(leaves)
        known = memo.get(index) if memo is not None else None
        if known is not None and known[0] is value:
            relabelled[index] = known[1]
            continue
        relabelled[index] = relabel(value, sharding)
        if memo is not None:
            memo[index] = (value, relabelled[index])
    return leaves if relabelled is None else relabelled


# (sharding, sharding, rank) -> whether they place the same pieces on the
# same devices: asked once per pair of shardings, not at every call.
_EQUIVALENCE: dict[tuple[Any, Any, int], bool] = {}


def _equivalent(given: Any, wanted: Any, rank: int) -> bool:
    key = (given, wanted, rank)
    found = _EQUIVALENCE.get(key)
    if found is None:
        try:
            found = bool(given.is_equivalent_to(wanted, rank))
        except Exception:  # noqa: BLE001 - shardings JAX cannot compare
            found = False
        if len(_EQUIVALENCE) < 4096:
            _EQUIVALENCE[key] = found
    return found


def fits(leaves: Sequence[Any], expected: Sequence[tuple]) -> bool:
    """Whether a program lowered for `expected` inputs takes `leaves` as
    they are: same shapes and dtypes, and every committed array already
    laid out as the program's input (host data is placed by the call)."""
    if len(leaves) != len(expected):
        return False
    for value, (shape, dtype, sharding) in zip(leaves, expected):
        try:
            if tuple(np.shape(value)) != tuple(shape) or \
                    np.dtype(getattr(value, "dtype", type(value))) != dtype:
                return False
        except TypeError:  # not array-like: left to the call's checks
            return False
        if isinstance(value, jax.Array) and getattr(value, "_committed",
                                                    False):
            if not (value.sharding == sharding or
                    value.sharding.is_equivalent_to(sharding,
                                                    len(shape))):
                return False
    return True


def static_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise ConfigError(f"static argument {value!r} is not hashable; static"
                          " arguments must be hashable, as in jax.jit") from None
    return (type(value), value)


def leaf_key(value: Any) -> Any:
    """What of an argument decides the lowering: shape, dtype, and the
    layout of a committed array (a fixed point of sharding propagation)."""
    layout = None
    if isinstance(value, jax.Array) and getattr(value, "_committed", False):
        sharding = value.sharding
        layout = sharding
        if isinstance(sharding, NamedSharding):
            # P("x", None) and P("x") lay the array out alike.
            spec = list(sharding.spec)
            while spec and spec[-1] is None:
                spec.pop()
            layout = (sharding.mesh, tuple(spec), sharding.memory_kind)
    return (np.shape(value), str(getattr(value, "dtype", type(value))),
            layout)


def argument_paths(fn: Callable, static: frozenset[int], count: int,
                   paths: Sequence[Any]) -> list[str]:
    """`params['w1']` for key 'w1' of the parameter named `params`: the
    pytree path of each flat argument, led by the parameter's name (as the
    signature of `fn` gives it; `args[i]` where it does not)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(count):
        param = params[i] if i < len(params) else None
        if param is None or param.kind in (param.VAR_POSITIONAL,
                                           param.VAR_KEYWORD):
            names.append(f"args[{i}]")
        else:
            names.append(param.name)
    dynamic_names = [n for i, n in enumerate(names) if i not in static]
    texts = []
    for path in paths:
        head, rest = path[0], tuple(path[1:])
        if getattr(head, "idx", None) == 0 and rest:  # positional
            index = rest[0].idx
            texts.append(dynamic_names[index] + path_text(rest[1:]))
        elif rest:  # keyword
            texts.append(str(getattr(rest[0], "key", rest[0]))
                         + path_text(rest[1:]))
        else:
            texts.append(path_text(path))
    return texts


def path_text(path: Any) -> str:
    """`[0]['w1']` for the first positional argument's key 'w1'."""
    return jax.tree_util.keystr(tuple(path))


def leaf_paths(tree: Any) -> list[str]:
    dummy = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    return [path_text(path)
            for path, _ in jax.tree_util.tree_flatten_with_path(dummy)[0]]
