"""Length buckets: one program per bucket of a length that changes from call
to call (sequences trimmed to what was sampled), compiled ahead, so that a
new length never compiles during training.

    update = mpmd.jit(train_step, config)
    step = mpmd.length_buckets(update, [16, 32, 64],
                               pad={"tokens": (1, PAD), "mask": (1, 0)})
    step.compile(params, opt_state, tokens, mask)  # every bucket, ahead
    params, opt_state, loss = step(params, opt_state, tokens, mask)

`pad` names the arguments whose axis varies (by position, or by parameter
name), each with that axis and the value its padding takes. A call reads
the length from them (they must agree), picks the smallest bucket that
holds it, pads each of them with its value up to the bucket on the host
and calls the bucket's program. The function sees padded data: it must
give the same numbers with the padding as without, which a mask padded
with zeros does (a loss summed over masked tokens, divided by the count
of unmasked ones).

A call longer than the largest bucket raises `BucketError` (add a bucket);
padding is done in host memory, so an argument that spans processes is
refused ("not supported yet"): pad it before the call there.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping, Sequence

import jax
import numpy as np

from mpmd.errors import MpmdError

__all__ = ["BucketError", "LengthBuckets", "length_buckets"]


class BucketError(MpmdError):
    """Buckets, padded arguments or a call's length that do not fit."""


class LengthBuckets:
    """`function` (an `mpmd.jit` function) with one compiled program per
    bucket length; see the module docstring and `length_buckets`."""

    def __init__(self, function: Any, lengths: Sequence[int],
                 pad: Mapping[int | str, tuple[int, Any]]) -> None:
        if not hasattr(function, "lower") or not callable(function):
            raise BucketError(
                f"length_buckets takes an mpmd.jit function; got "
                f"{type(function).__name__}")
        if isinstance(lengths, (str, bytes)) or not isinstance(
                lengths, Sequence) or not lengths or any(
                isinstance(n, bool) or not isinstance(n, (int, np.integer))
                or n < 1 for n in lengths):
            raise BucketError(f"lengths must be a non-empty list of positive "
                              f"ints; got {lengths!r}")
        if not isinstance(pad, Mapping) or not pad:
            raise BucketError("pad must map the padded arguments (position "
                              "or name) to (axis, pad value); got "
                              f"{pad!r}")
        self.function = function
        self.lengths = tuple(sorted({int(n) for n in lengths}))
        self._parameters = _parameter_names(getattr(function, "fn", None))
        self.pad: dict[int, tuple[int, Any]] = {}
        for key, spec in pad.items():
            position = self._position(key)
            if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(
                    spec[0], (int, np.integer)) and not isinstance(
                    spec[0], bool)):
                raise BucketError(f"pad[{key!r}] must be (axis, pad value); "
                                  f"got {spec!r}")
            self.pad[position] = (int(spec[0]), spec[1])
        self.compiled: dict[int, Any] = {}
        self._example: Sequence[Any] | None = None

    def _position(self, key: int | str) -> int:
        if isinstance(key, str):
            if key not in self._parameters:
                raise BucketError(
                    f"pad names argument {key!r}, which the function does "
                    f"not have (its parameters: {list(self._parameters)})")
            return self._parameters.index(key)
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)) \
                or key < 0:
            raise BucketError(f"pad's keys are argument positions or names; "
                              f"got {key!r}")
        return int(key)

    def bucket_for(self, length: int) -> int:
        """The smallest bucket that holds `length`."""
        for bucket in self.lengths:
            if length <= bucket:
                return bucket
        raise BucketError(
            f"a call of length {length} is longer than the largest bucket "
            f"({self.lengths[-1]}); add a bucket of at least {length}")

    def length_of(self, args: Sequence[Any]) -> int:
        """The call's length: the size of every padded leaf's axis."""
        found: tuple[int, str] | None = None
        for position, (axis, _) in self.pad.items():
            if position >= len(args):
                raise BucketError(
                    f"pad names argument {position}, but the call has "
                    f"{len(args)} arguments")
            for path, leaf in jax.tree_util.tree_flatten_with_path(
                    args[position])[0]:
                where = f"argument {position}{jax.tree_util.keystr(path)}"
                shape = np.shape(leaf)
                if not -len(shape) <= axis < len(shape):
                    raise BucketError(f"{where} has shape {list(shape)}: no "
                                      f"axis {axis} to pad")
                if found is None:
                    found = (shape[axis], where)
                elif shape[axis] != found[0]:
                    raise BucketError(
                        f"{where} has length {shape[axis]} on its padded "
                        f"axis, {found[1]} has {found[0]}; padded arguments "
                        "must agree")
        if found is None:
            raise BucketError("the padded arguments hold no arrays")
        return found[0]

    def padded(self, args: Sequence[Any], bucket: int,
               length: int | None = None) -> list[Any]:
        """`args` with the padded arguments resized to `bucket`: their
        first `length` positions (default: all they hold) kept, the rest
        the pad value."""
        out = list(args)
        for position, (axis, value) in self.pad.items():
            if position >= len(args):
                raise BucketError(
                    f"pad names argument {position}, but the call has "
                    f"{len(args)} arguments")
            out[position] = jax.tree_util.tree_map_with_path(
                lambda path, leaf, p=position, a=axis, v=value: _resize_leaf(
                    leaf, a, length, bucket, v,
                    f"argument {p}{jax.tree_util.keystr(path)}"),
                args[position])
        return out

    def compile(self, *args: Any) -> dict[int, Any]:
        """Lowers and compiles the function for every bucket, from `args`
        (a call's arguments, any length: cut or padded to each bucket, laid
        out as they are). Returns {bucket: Compiled}."""
        self._example = args
        for bucket in self.lengths:
            self.program(bucket)
        return dict(self.compiled)

    def __call__(self, *args: Any) -> Any:
        """Runs the bucket that holds the padded arguments' length."""
        return self.call(self.length_of(args), *args)

    def call(self, length: int, *args: Any) -> Any:
        """Runs the bucket that holds `length`, keeping the first `length`
        positions of the padded arguments (they may hold more: a buffer
        of the largest length, as a sampler fills) and padding the rest,
        on the host, shard by shard: nothing is compiled."""
        available = self.length_of(args)
        if isinstance(length, bool) or not isinstance(
                length, (int, np.integer)) or not 0 <= length <= available:
            raise BucketError(
                f"length {length!r}: the padded arguments hold {available} "
                "positions; give a length between 0 and that")
        bucket = self.bucket_for(int(length))
        if self._example is None:
            self._example = args
        return self.program(bucket)(*self.padded(args, bucket, int(length)))

    def program(self, bucket: int) -> Any:
        """The compiled program of `bucket` (an `mpmd.Compiled`: also
        `run_traced`, `plan`); compiled now if `compile` did not."""
        compiled = self.compiled.get(bucket)
        if compiled is None:
            if bucket not in self.lengths:
                raise BucketError(f"{bucket} is not a bucket (buckets: "
                                  f"{list(self.lengths)})")
            if self._example is None:
                raise BucketError(
                    f"bucket {bucket} is not compiled: call the buckets, "
                    "or compile them, first")
            example = self._example
            keep = min(self.length_of(example), bucket)
            compiled = self.compiled[bucket] = self.function.lower(
                *self.padded(example, bucket, keep)).compile()
        return compiled


def length_buckets(function: Any, lengths: Sequence[int], *,
                   pad: Mapping[int | str, tuple[int, Any]]
                   ) -> LengthBuckets:
    """`function` (from `mpmd.jit`) called through one program per bucket
    of `lengths`: `pad` maps each argument whose axis varies (position or
    parameter name) to (axis, pad value). `.compile(*args)` compiles every
    bucket ahead; a call pads up to the smallest bucket that holds its
    length (module docstring)."""
    return LengthBuckets(function, lengths, pad)


def _parameter_names(fn: Any) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def _resize_leaf(leaf: Any, axis: int, length: int | None, bucket: int,
                 value: Any, where: str) -> Any:
    """`leaf` with its first `length` positions on `axis` (None: all)
    kept and the rest up to `bucket` set to `value`; a jax.Array shard by
    shard on the host (the axis must not be split over devices), laid out
    as it was."""
    if isinstance(leaf, jax.ShapeDtypeStruct):
        shape = list(leaf.shape)
        shape[axis] = bucket
        return jax.ShapeDtypeStruct(tuple(shape), leaf.dtype,
                                    sharding=leaf.sharding)
    shape = list(np.shape(leaf))
    keep = shape[axis] if length is None else length
    if keep == shape[axis] == bucket:
        return leaf
    shape[axis] = bucket
    if not isinstance(leaf, jax.Array):
        return _resized(np.asarray(leaf), axis, keep, bucket, value)
    sharding = leaf.sharding
    if sharding.shard_shape(leaf.shape)[axis] != leaf.shape[axis]:
        raise BucketError(
            f"not supported yet: padding {where} along axis {axis}, which "
            f"its sharding splits over devices ({sharding}); keep the "
            "padded axis whole on each device")
    if not leaf.is_fully_addressable and not leaf.addressable_shards:
        return jax.make_array_from_single_device_arrays(
            tuple(shape), sharding, [], dtype=leaf.dtype)
    pieces = [jax.device_put(_resized(np.asarray(shard.data), axis, keep,
                                      bucket, value), shard.device)
              for shard in leaf.addressable_shards]
    return jax.make_array_from_single_device_arrays(tuple(shape), sharding,
                                                    pieces)


def _resized(host: np.ndarray, axis: int, keep: int, bucket: int,
             value: Any) -> np.ndarray:
    shape = list(host.shape)
    shape[axis] = bucket
    out = np.full(shape, value, dtype=host.dtype)
    index = [slice(None)] * host.ndim
    index[axis] = slice(0, min(keep, bucket))
    out[tuple(index)] = host[tuple(index)]
    return out
