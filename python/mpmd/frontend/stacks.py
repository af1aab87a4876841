"""A named computation's scanned layer stack, split into one named
computation per mesh while `mpmd.jit` traces.

    def blocks(w, x):                     # w: [8, d, d], one row per layer
        return jax.lax.scan(lambda x, w: (layer(w, x), None), x, w)[0]

    config = mpmd.make_config(topology, {"blocks": ["m0", "m1", "m2", "m3"]})
    x = mpmd.named_computation(blocks, name="blocks")(params["w"], x)

Traced under `mpmd.jit` with that assignment, the call above becomes four
named computations `blocks[0:2]`, `blocks[2:4]`, ... chained by the scan's
carry, each running the scan over its own layers and reading its rows of
the stacked operands through `stack_slice_p` (rows [lo, hi) of a stack).
The split happens before autodiff sees the program, so each piece's
backward is its own named computation with its own residuals (what a
pipeline stage needs). The stacked operands themselves are still whole
arrays in the traced program; `stack_rewrite` carries them, and everything
computed from them (gradients, optimizer moments), as one value per mesh
through the rest of the program.

The three primitives are linear and lower to plain StableHLO; they mark
where a stack is cut so that the rewrite can cut the values around it:
`stack_slice_p` (a piece of a stack), its transpose `stack_pad_p` (a piece
placed in a stack of zeros) and `stack_concat_p` (pieces joined: a scan's
stacked results).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import jax
import numpy as np
from jax import lax
from jax.extend import core as jex_core
from jax.interpreters import ad, batching, mlir

from mpmd.frontend.errors import FrontendError
from mpmd.stack_split import StackSplit, piece_name

__all__ = ["SplitRecord", "bind_split", "split_of", "splitting",
           "stack_concat_p", "stack_pad_p", "stack_slice_p"]

Bounds = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SplitRecord:
    """What tracing found for one split computation: its stack's length,
    the layer range of each piece, and the pieces' names."""

    split: StackSplit
    length: int
    bounds: Bounds

    @property
    def pieces(self) -> list[str]:
        return [piece_name(self.name, lo, hi) for lo, hi in self.bounds]

    name: str = ""


# While `mpmd.jit` traces: the splits of the config, and what tracing found.
_SPLITS: contextvars.ContextVar[
    tuple[Mapping[str, StackSplit], dict[str, SplitRecord]] | None] = \
    contextvars.ContextVar("mpmd_stack_splits", default=None)


@contextlib.contextmanager
def splitting(splits: Mapping[str, StackSplit]
              ) -> Iterator[dict[str, SplitRecord]]:
    """Within: named computations named in `splits` are split; the dict
    yielded receives a `SplitRecord` per split computation traced."""
    found: dict[str, SplitRecord] = {}
    token = _SPLITS.set((dict(splits), found))
    try:
        yield found
    finally:
        _SPLITS.reset(token)


def split_of(name: str) -> StackSplit | None:
    """The split of named computation `name` while `mpmd.jit` traces."""
    state = _SPLITS.get()
    if state is None:
        return None
    return state[0].get(name)


def _record(name: str, split: StackSplit, length: int,
            bounds: Bounds) -> None:
    state = _SPLITS.get()
    assert state is not None
    found = state[1]
    known = found.get(name)
    if known is not None and known.bounds != bounds:
        raise FrontendError(
            f"named computation {name!r} is split over meshes and called on "
            f"stacks of {known.length} and {length} layers; every call of a "
            "split computation must scan the same number of layers")
    found[name] = SplitRecord(split, length, bounds, name)


# --- the primitives -------------------------------------------------------

def _rows(aval: Any, count: int) -> Any:
    return aval.update(shape=(count, *aval.shape[1:]))


stack_slice_p = jex_core.Primitive("mpmd_stack_slice")
stack_pad_p = jex_core.Primitive("mpmd_stack_pad")
stack_concat_p = jex_core.Primitive("mpmd_stack_concat")


def _slice_impl(x: Any, *, stack: str, bounds: Bounds, index: int) -> Any:
    del stack
    lo, hi = bounds[index]
    return lax.slice_in_dim(x, lo, hi, axis=0)


def _pad_impl(x: Any, *, stack: str, bounds: Bounds, index: int) -> Any:
    del stack
    lo, hi = bounds[index]
    length = bounds[-1][1]
    config = [(lo, length - hi, 0)] + [(0, 0, 0)] * (x.ndim - 1)
    return lax.pad(x, np.zeros((), x.dtype), config)


def _concat_impl(*xs: Any, stack: str, bounds: Bounds) -> Any:
    del stack, bounds
    return lax.concatenate(list(xs), 0)


stack_slice_p.def_impl(_slice_impl)
stack_pad_p.def_impl(_pad_impl)
stack_concat_p.def_impl(_concat_impl)
stack_slice_p.def_abstract_eval(
    lambda x, *, stack, bounds, index: _rows(
        x, bounds[index][1] - bounds[index][0]))
stack_pad_p.def_abstract_eval(
    lambda x, *, stack, bounds, index: _rows(x, bounds[-1][1]))
stack_concat_p.def_abstract_eval(
    lambda *xs, stack, bounds: _rows(xs[0], bounds[-1][1]))


def _slice_transpose(ct: Any, x: Any, *, stack: str, bounds: Bounds,
                     index: int) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [stack_pad_p.bind(ct, stack=stack, bounds=bounds, index=index)]


def _pad_transpose(ct: Any, x: Any, *, stack: str, bounds: Bounds,
                   index: int) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [stack_slice_p.bind(ct, stack=stack, bounds=bounds, index=index)]


def _concat_transpose(ct: Any, *xs: Any, stack: str,
                      bounds: Bounds) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval) for x in xs]
    return [stack_slice_p.bind(ct, stack=stack, bounds=bounds, index=j)
            for j in range(len(bounds))]


ad.deflinear2(stack_slice_p, _slice_transpose)
ad.deflinear2(stack_pad_p, _pad_transpose)
ad.deflinear2(stack_concat_p, _concat_transpose)


def _moved(x: Any, dim: int | None) -> Any:
    """`x` with its batch dimension (None: not batched) last, so that axis
    0 is the layers."""
    return x if dim is None else jax.numpy.moveaxis(x, dim, -1)


def _unary_batch(primitive: Any) -> Callable[..., Any]:
    def rule(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
        (x,), (dim,) = args, dims
        out = primitive.bind(_moved(x, dim), **params)
        return out, (None if dim is None
                     else out.ndim - 1)
    return rule


def _concat_batch(args: Sequence[Any], dims: Sequence[Any],
                  **params: Any) -> Any:
    size = next(x.shape[d] for x, d in zip(args, dims)
                if d is not None)
    moved = [jax.lax.broadcast_in_dim(x, (*x.shape, size),
                                      tuple(range(x.ndim))) if d is None
             else _moved(x, d) for x, d in zip(args, dims)]
    out = stack_concat_p.bind(*moved, **params)
    return out, out.ndim - 1


batching.primitive_batchers[stack_slice_p] = _unary_batch(stack_slice_p)
batching.primitive_batchers[stack_pad_p] = _unary_batch(stack_pad_p)
batching.primitive_batchers[stack_concat_p] = _concat_batch
mlir.register_lowering(stack_slice_p, mlir.lower_fun(
    _slice_impl, multiple_results=False))
mlir.register_lowering(stack_pad_p, mlir.lower_fun(
    _pad_impl, multiple_results=False))
mlir.register_lowering(stack_concat_p, mlir.lower_fun(
    _concat_impl, multiple_results=False))


# --- the split ------------------------------------------------------------

def eval_eqn(eqn: Any, invals: Sequence[Any]) -> list[Any]:
    """Binds an equation's primitive again on new operands (as JAX's
    `eval_jaxpr` does, keeping its source location and name stack)."""
    from jax._src import source_info_util  # noqa: PLC0415

    params = eqn.primitive.get_bind_params(eqn.params)
    subfuns: Sequence[Any] = ()
    if isinstance(params, tuple):  # JAX versions that return subfuns too
        subfuns, params = params
    name_stack = (source_info_util.current_name_stack()
                  + eqn.source_info.name_stack)
    with source_info_util.user_context(eqn.source_info.traceback,
                                       name_stack=name_stack), \
            eqn.ctx.manager:
        out = eqn.primitive.bind(*subfuns, *invals, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def _scan_primitive() -> Any:
    from jax._src.lax.control_flow import loops  # noqa: PLC0415

    return loops.scan_p


def _the_scan(jaxpr: Any, name: str, split: StackSplit) -> int:
    scan_p = _scan_primitive()
    found = [i for i, eqn in enumerate(jaxpr.eqns) if eqn.primitive is scan_p]
    if len(found) == 1:
        return found[0]
    what = ("has no jax.lax.scan" if not found else
            f"has {len(found)} jax.lax.scans")
    raise FrontendError(
        f"named computation {name!r} is assigned the meshes "
        f"{list(split.meshes)}, which splits the layers of the scan in its "
        f"body over them, but its body {what} at its top level; not "
        "supported yet: a split computation must run its layers as one "
        "scan over weights stacked on a leading axis (give a list of meshes "
        "only to such a computation)")


class _Unavailable:
    """A scan's stacked result inside a piece: only this piece's rows exist."""


def bind_split(flat_fn: Callable[..., list[Any]], flat_args: Sequence[Any],
               name: str, split: StackSplit) -> list[Any]:
    """Traces `flat_fn` (a named computation's body over flat arguments)
    and binds it as one named computation per range of its scan's layers,
    chained by the scan's carry. Returns the flat results: the scan's
    stacked results as `stack_concat_p` of the pieces'."""
    from mpmd.frontend.loops import lift_closed_over  # noqa: PLC0415
    from mpmd.frontend.context import (  # noqa: PLC0415
        context_mesh, current_call_counter)
    from mpmd.frontend.primitives import _bind  # noqa: PLC0415

    with context_mesh(name):
        closed = jax.make_jaxpr(flat_fn)(*flat_args)
    body, lifted = lift_closed_over(closed)
    operands = [*lifted, *flat_args]
    jaxpr = body.jaxpr
    at = _the_scan(jaxpr, name, split)
    scan = jaxpr.eqns[at]
    length = scan.params["length"]
    bounds = split.ranges(length, name)
    _record(name, split, length, bounds)
    num_consts, num_carry = scan.params["num_consts"], scan.params["num_carry"]
    consts_in = scan.invars[:num_consts]
    carry_in = scan.invars[num_consts:num_consts + num_carry]
    xs_in = scan.invars[num_consts + num_carry:]
    carry_out, ys_out = scan.outvars[:num_carry], scan.outvars[num_carry:]
    pre, post = jaxpr.eqns[:at], jaxpr.eqns[at + 1:]

    # Operands the pieces take by rows: inputs of the body used only as the
    # scan's stacked operands. Others are passed whole (and sliced inside).
    uses: dict[Any, int] = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if isinstance(v, jex_core.Var):
                uses[v] = uses.get(v, 0) + 1
    for v in jaxpr.outvars:
        if isinstance(v, jex_core.Var):
            uses[v] = uses.get(v, 0) + 1
    invar_index = {v: i for i, v in enumerate(jaxpr.invars)}
    stacked = [v for v in dict.fromkeys(xs_in)
               if isinstance(v, jex_core.Var) and v in invar_index
               and uses[v] == sum(1 for x in xs_in if x is v)]
    whole = [v for v in jaxpr.invars if v not in stacked]
    stacked_set = set(stacked)
    ys_set = set(ys_out)
    for eqn in post:
        read = [v for v in eqn.invars if isinstance(v, jex_core.Var)
                and v in ys_set]
        if read:
            raise FrontendError(
                f"not supported yet: named computation {name!r} is split "
                "over meshes and uses its scan's stacked results after the "
                f"scan ({eqn.primitive.name} at "
                f"{_where(eqn)}); return them from the computation and use "
                "them outside it")
    ys_returned = [v for v in ys_out if v in set(jaxpr.outvars)]

    k = len(bounds)
    chain = list(range(k))[::-1] if scan.params["reverse"] else list(range(k))

    def piece_fn(index: int, position: int) -> Callable[..., list[Any]]:
        lo, hi = bounds[index]
        first, last = position == 0, position == k - 1

        def piece(*values: Any) -> list[Any]:
            env: dict[Any, Any] = dict(zip(jaxpr.constvars, body.consts))
            it = iter(values)
            for v in whole:
                env[v] = next(it)
            for v in stacked:
                env[v] = next(it)
            previous = None if first else [next(it) for _ in carry_in]

            def read(v: Any) -> Any:
                if isinstance(v, jex_core.Literal):
                    return v.val
                value = env[v]
                if isinstance(value, _Unavailable):
                    raise AssertionError("checked above")
                return value

            for eqn in pre:
                for v, out in zip(eqn.outvars,
                                  eval_eqn(eqn, [read(v) for v in eqn.invars])):
                    env[v] = out
            init = [read(v) for v in carry_in] if first else previous
            xs = [read(v) if v in stacked_set
                  else lax.slice_in_dim(read(v), lo, hi, axis=0)
                  for v in xs_in]
            outs = eval_eqn(scan.replace(params=dict(scan.params,
                                                     length=hi - lo)),
                            [*map(read, consts_in), *init, *xs])
            carry, ys = outs[:num_carry], outs[num_carry:]
            results = [] if last else list(carry)
            results += [y for y, v in zip(ys, ys_out) if v in ys_returned]
            if last:
                env.update(zip(carry_out, carry))
                env.update((v, _Unavailable()) for v in ys_out)
                for eqn in post:
                    for v, out in zip(eqn.outvars, eval_eqn(
                            eqn, [read(v) for v in eqn.invars])):
                        env[v] = out
                results += [read(v) for v in jaxpr.outvars
                            if not (isinstance(v, jex_core.Var)
                                    and v in ys_set)]
            return results

        return piece

    counter = current_call_counter()
    carry_values: list[Any] = []
    ys_pieces: dict[int, list[Any]] = {}
    finals: list[Any] = []
    for position, index in enumerate(chain):
        lo, hi = bounds[index]
        piece_operands = [operands[invar_index[v]] for v in whole]
        piece_operands += [stack_slice_p.bind(
            operands[invar_index[v]], stack=name, bounds=bounds, index=index)
            for v in stacked]
        if position:
            piece_operands += carry_values
        with context_mesh(name):
            piece_jaxpr = jax.make_jaxpr(piece_fn(index, position))(
                *piece_operands)
        piece_jaxpr, more = lift_closed_over(piece_jaxpr)
        results = _bind([*more, *piece_operands], piece_jaxpr,
                        piece_name(name, lo, hi), 0, counter)
        last = position == k - 1
        cut = 0 if last else num_carry
        carry_values = list(results[:cut])
        ys_pieces[index] = list(results[cut:cut + len(ys_returned)])
        if last:
            finals = list(results[cut + len(ys_returned):])

    joined = {v: stack_concat_p.bind(*[ys_pieces[j][i] for j in range(k)],
                                     stack=name, bounds=bounds)
              for i, v in enumerate(ys_returned)}
    final = iter(finals)
    return [joined[v] if isinstance(v, jex_core.Var) and v in ys_set
            else next(final) for v in jaxpr.outvars]


def _where(eqn: Any) -> str:
    from jax._src import source_info_util  # noqa: PLC0415

    return source_info_util.summarize(eqn.source_info)
