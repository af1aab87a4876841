"""Whether an array is where a program takes it: the one home of "same
placement" for the runtime and the front doors.

    placed = as_placed(leaves, expected)     # None: something to move
    ok = fits(leaves, expected)              # may a program take these?
    same = equivalent(array.sharding, sharding, array.ndim)  # same devices
    copies = same_layout(array.sharding, sharding, array.ndim)  # any devices

`expected` holds, per flat argument, the (shape, dtype, NamedSharding) a
program takes (`PlanExecutable.expected`).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np

from jax.sharding import NamedSharding

__all__ = ["as_placed", "equivalent", "fits", "relabel", "same_layout"]

try:
    from jax._src.array import ArrayImpl as _ARRAY_IMPL
except ImportError:  # a JAX that moved it: the isinstance test alone
    _ARRAY_IMPL = jax.Array


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
                and equivalent(value.sharding, sharding, len(shape))):
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


def equivalent(given: Any, wanted: Any, rank: int) -> bool:
    """Whether `given` puts the same pieces of a rank-`rank` array on the
    same devices as `wanted` (a SingleDeviceSharding on a one-device mesh's
    device, a mesh equal but for its axis names), as JAX's
    `is_equivalent_to` says; False for shardings it cannot compare."""
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


def same_layout(a: Any, b: NamedSharding, ndim: int) -> bool:
    """Whether `a` and `b` cut a rank-`ndim` array into the same pieces
    over as many devices (which devices aside): then `device_put` from
    one to the other copies shards one to one."""
    if len(a.device_set) != len(b.device_set):
        return False
    try:
        return a._to_xla_hlo_sharding(ndim) == b._to_xla_hlo_sharding(ndim)
    except Exception:  # noqa: BLE001 - shardings without an HLO form
        return False


def fits(leaves: Sequence[Any], expected: Sequence[tuple]) -> bool:
    """Whether a program lowered for `expected` inputs takes `leaves` as
    they are: same shapes and dtypes, and every committed array already
    laid out as the program's input (host data is placed by the call)."""
    if len(leaves) != len(expected):
        return False
    for value, (shape, dtype, sharding) in zip(leaves, expected):
        try:
            given = getattr(value, "dtype", None)
            if given is None:
                given = np.dtype(type(value))
            if tuple(np.shape(value)) != tuple(shape) or given != dtype:
                return False
        except TypeError:  # not array-like: left to the call's checks
            return False
        if isinstance(value, jax.Array) and getattr(value, "_committed",
                                                    False):
            if not (value.sharding == sharding or
                    equivalent(value.sharding, sharding, len(shape))):
                return False
    return True


def relabel(x: jax.Array, sharding: NamedSharding) -> jax.Array:
    """`x`'s own buffers, as an array laid out by `sharding`: no copy, for a
    `sharding` equivalent to `x`'s (each device holds the same piece)."""
    if _ARRAY_IMPL is not jax.Array and sharding.mesh.size == 1:
        # One buffer (what `jax.device_put(x, device)` makes for a
        # one-device mesh): wrapped directly, about 2.5 us against 13 us
        # through make_array_from_single_device_arrays.
        try:
            arrays = x._arrays  # noqa: SLF001
            if len(arrays) == 1:
                return _ARRAY_IMPL(x.aval, sharding, arrays, committed=True,
                                   _skip_checks=True)
        except (AttributeError, TypeError):
            pass  # another JAX: the public route below
    buffers = {shard.device: shard.data for shard in x.addressable_shards}
    return jax.make_array_from_single_device_arrays(
        x.shape, sharding,
        [buffers[device]
         for device in sharding.addressable_devices_indices_map(x.shape)])
