"""Split stacks carried through the whole program, one value per mesh.

    program = rewrite(traced.jaxpr)          # after `stacks` split the scans
    program.inputs[i]    # None, or the StackPiece layout of input i
    fn = program.function                    # over the program's flat inputs
    jax.jit(fn).trace(*program.input_specs()).lower()

`stacks.bind_split` cuts a split named computation into one piece per mesh,
but the stacked values around it stay whole: the parameters the program
takes, the gradients autodiff accumulates (`stack_pad_p`s added up), the
optimizer's moments and updates, the parameters it returns. Left so, one
mesh would hold every layer. This rewrite evaluates the traced program
again with each such value held as its pieces, one per mesh (`Piecewise`):

1. *Which values.* A union-find links values whose rows are the same layers:
   operands and results of elementwise ops, of ops that keep axis 0
   (reshapes and transposes that keep it first, reductions over other axes,
   batch dimensions of dot_general, ...), loop carries and invariants and
   the bodies of calls. A group that holds a cut stack (the operand of a
   `stack_slice_p`, a `stack_pad_p`, a `stack_concat_p`) is held in pieces,
   with that stack's layer ranges: the program's inputs and results in such
   groups become one input and one result per mesh.
2. *How.* Each op is bound again on its pieces where its rule allows
   (`_RULES`); a reduction over the layers reduces each piece and combines
   the results. Anything else gets the stack joined (a warning names the op,
   since a mesh then holds every layer) and the result cut again.

Loops (`mpmd.fori_loop`, `mpmd.call`) and `jax.checkpoint` keep their
structure: their bodies are rewritten the same way and bound again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax import lax
from jax.extend import core as jex_core

from mpmd import diagnostics
from mpmd.runtime.boundary import StackPiece
from mpmd.frontend.stacks import (eval_eqn, stack_concat_p, stack_pad_p,
                                  stack_slice_p)

__all__ = ["Piecewise", "Program", "StackGatheredWarning", "StackPiece",
           "rewrite"]

Bounds = tuple[tuple[int, int], ...]


class StackGatheredWarning(UserWarning):
    """A value of a stack split over meshes is joined whole on one mesh."""


class Piecewise:
    """A value of shape [L, ...] held as its rows `bounds[j]` in
    `pieces[j]`; a piece None is zeros (the gradient of one piece, before
    the others are added)."""

    __slots__ = ("stack", "bounds", "pieces", "aval")

    def __init__(self, stack: str, bounds: Bounds, pieces: Sequence[Any],
                 aval: Any):
        self.stack, self.bounds, self.pieces = stack, bounds, list(pieces)
        self.aval = aval

    @property
    def layout(self) -> StackPiece:
        return StackPiece(self.stack, self.bounds)

    def piece_aval(self, j: int) -> Any:
        lo, hi = self.bounds[j]
        return self.aval.update(shape=(hi - lo, *self.aval.shape[1:]))

    def piece(self, j: int) -> Any:
        """Piece j as an array (zeros made where it is None)."""
        value = self.pieces[j]
        if value is None:
            aval = self.piece_aval(j)
            value = lax.full(aval.shape, 0, aval.dtype)
        return value

    def filled(self) -> list[Any]:
        return [self.piece(j) for j in range(len(self.bounds))]


# --- which values: linking rows that are the same layers ------------------

def _is_var(v: Any) -> bool:
    return isinstance(v, jex_core.Var) and not isinstance(v,
                                                          jex_core.DropVar)


def _leading(v: Any) -> int | None:
    shape = getattr(getattr(v, "aval", None), "shape", ())
    return shape[0] if len(shape) else None


class _Groups:
    """Union-find over jaxpr variables; a group may carry the stack (name
    and layer ranges) its values are cut like."""

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}
        self.stack: dict[Any, StackPiece] = {}

    def find(self, v: Any) -> Any:
        parent = self.parent.setdefault(v, v)
        if parent is v:
            return v
        root = self.find(parent)
        self.parent[v] = root
        return root

    def union(self, a: Any, b: Any) -> None:
        if not (_is_var(a) and _is_var(b)):
            return
        if _leading(a) is None or _leading(a) != _leading(b):
            return
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return
        sa, sb = self.stack.get(ra), self.stack.get(rb)
        if sa is not None and sb is not None and sa != sb:
            return  # two stacks cut differently: kept apart (joined if met)
        self.parent[rb] = ra
        if sb is not None:
            self.stack[ra] = sb
            self.stack.pop(rb, None)

    def union_all(self, vs: Sequence[Any]) -> None:
        vs = [v for v in vs if _is_var(v)]
        for v in vs[1:]:
            self.union(vs[0], v)

    def seed(self, v: Any, stack: str, bounds: Bounds) -> None:
        if not _is_var(v):
            return
        root = self.find(v)
        known = self.stack.get(root)
        if known is None:
            self.stack[root] = StackPiece(stack, bounds)

    def of(self, v: Any) -> StackPiece | None:
        if not _is_var(v) or _leading(v) is None:
            return None
        stack = self.stack.get(self.find(v))
        if stack is None or stack.bounds[-1][1] != _leading(v):
            return None
        return stack


# Ops applied to each piece as they are: every operand of the result's
# shape is cut like the result, scalars are shared.
_ELEMENTWISE = frozenset("""
    neg sign floor ceil round is_finite exp exp2 log log1p expm1 tanh
    logistic sin cos tan asin acos atan sinh cosh asinh acosh atanh sqrt
    rsqrt cbrt abs square integer_pow erf erfc erf_inv lgamma digamma
    igamma igammac polygamma zeta bessel_i0e bessel_i1e not
    population_count clz real imag conj complex add sub mul div rem pow
    max min atan2 nextafter and or xor eq ne lt le gt ge shift_left
    shift_right_arithmetic shift_right_logical select_n clamp
    convert_element_type reduce_precision add_any copy copy_p
    random_gamma_grad mpmd_named_tensor""".split())

_REDUCTIONS = {"reduce_sum": lax.add, "reduce_max": lax.max,
               "reduce_min": lax.min, "reduce_prod": lax.mul,
               "reduce_and": lax.bitwise_and, "reduce_or": lax.bitwise_or}

_CUMULATIVE = frozenset(["cumsum", "cumprod", "cummax", "cummin",
                         "cumlogsumexp"])


def _keeps_rows(eqn: Any) -> list[tuple[int, int]] | None:
    """(operand, result) pairs of `eqn` whose axis 0 is the same rows, for
    ops that act on each row range alone; None when the op mixes rows."""
    name = eqn.primitive.name
    params = eqn.params
    ins, outs = eqn.invars, eqn.outvars
    rank = [len(getattr(v.aval, "shape", ())) for v in ins]
    if name in _ELEMENTWISE:
        shape = outs[0].aval.shape
        if not shape:
            return None
        return [(i, 0) for i, v in enumerate(ins)
                if tuple(getattr(v.aval, "shape", ())) == tuple(shape)]
    if not ins or rank[0] == 0:
        return None
    if name in _REDUCTIONS or name in ("argmax", "argmin"):
        return None if 0 in params["axes"] else [(0, 0)]
    if name in _CUMULATIVE:
        return None if params["axis"] == 0 else [(0, 0)]
    if name == "transpose":
        return [(0, 0)] if params["permutation"][0] == 0 else None
    if name == "reshape":
        ok = (params.get("dimensions") is None and
              outs[0].aval.shape[:1] == ins[0].aval.shape[:1])
        return [(0, 0)] if ok else None
    if name == "squeeze":
        return None if 0 in params["dimensions"] else [(0, 0)]
    if name == "rev":
        return None if 0 in params["dimensions"] else [(0, 0)]
    if name == "broadcast_in_dim":
        dims = params["broadcast_dimensions"]
        ok = (len(dims) and dims[0] == 0 and
              ins[0].aval.shape[0] == outs[0].aval.shape[0])
        return [(0, 0)] if ok else None
    if name == "slice":
        strides = params.get("strides")
        ok = (params["start_indices"][0] == 0 and
              params["limit_indices"][0] == ins[0].aval.shape[0] and
              (strides is None or strides[0] == 1))
        return [(0, 0)] if ok else None
    if name == "dynamic_slice":
        ok = params["slice_sizes"][0] == ins[0].aval.shape[0]
        return [(0, 0)] if ok else None
    if name == "dynamic_update_slice":
        ok = ins[1].aval.shape[0] == ins[0].aval.shape[0]
        return [(0, 0), (1, 0)] if ok else None
    if name == "pad":
        ok = tuple(params["padding_config"][0]) == (0, 0, 0)
        return [(0, 0)] if ok else None
    if name == "concatenate":
        return None if params["dimension"] == 0 else [
            (i, 0) for i in range(len(ins))]
    if name == "sort":
        return None if params["dimension"] == 0 else [
            (i, i) for i in range(len(ins))]
    if name == "top_k":
        return [(0, 0), (0, 1)] if rank[0] > 1 else None
    if name == "dot_general":
        (lc, rc), (lb, rb) = params["dimension_numbers"]
        if lb and lb[0] == 0 and rb[0] == 0:
            return [(0, 0), (1, 0)]
        if not lb and 0 not in lc and rank[0] > 0:
            return [(0, 0)]
        return None
    return None


def _contracts_rows(eqn: Any) -> bool:
    """A dot_general that sums over the rows of both operands."""
    if eqn.primitive.name != "dot_general":
        return False
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    return any(l == 0 and r == 0 for l, r in zip(lc, rc))


def _call_jaxpr(eqn: Any) -> tuple[Any, Sequence[Any]] | None:
    """The body of a call-like op, as (jaxpr, consts), whose invars take the
    op's operands in order and whose outvars are its results."""
    name = eqn.primitive.name
    params = eqn.params
    if name in ("jit", "pjit"):
        return params["jaxpr"].jaxpr, params["jaxpr"].consts
    if name in ("custom_jvp_call", "custom_vjp_call"):
        return params["call_jaxpr"].jaxpr, params["call_jaxpr"].consts
    if name in ("checkpoint", "remat2"):
        return params["jaxpr"], ()
    if name == "mpmd_call":
        return params["jaxpr"].jaxpr, params["jaxpr"].consts
    return None


def _link(groups: _Groups, jaxpr: Any, seen: set[int]) -> None:
    if id(jaxpr) in seen:
        return
    seen.add(id(jaxpr))
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if prim is stack_slice_p:
            groups.seed(eqn.invars[0], eqn.params["stack"],
                        eqn.params["bounds"])
            continue
        if prim in (stack_pad_p, stack_concat_p):
            groups.seed(eqn.outvars[0], eqn.params["stack"],
                        eqn.params["bounds"])
            continue
        if prim.name == "mpmd_for":
            body = eqn.params["body"].jaxpr
            n = eqn.params["num_invariants"]
            for outer, inner in zip(eqn.invars, body.invars[:-1]):
                groups.union(outer, inner)
            for inner_in, inner_out, outer_in, outer_out in zip(
                    body.invars[n:-1], body.outvars, eqn.invars[n:],
                    eqn.outvars):
                groups.union_all([inner_in, inner_out, outer_in, outer_out])
            _link(groups, body, seen)
            continue
        called = _call_jaxpr(eqn)
        if called is not None:
            inner = called[0]
            for outer, var in zip(eqn.invars, inner.invars):
                groups.union(outer, var)
            for outer, var in zip(eqn.outvars, inner.outvars):
                groups.union(outer, var)
            _link(groups, inner, seen)
            continue
        pairs = _keeps_rows(eqn)
        if pairs:
            for i, o in pairs:
                groups.union(eqn.invars[i], eqn.outvars[o])


# --- how: evaluating the program with stacks in pieces --------------------

def _where(eqn: Any) -> str:
    from jax._src import source_info_util  # noqa: PLC0415

    return source_info_util.summarize(eqn.source_info)


class _Evaluator:
    """Evaluates jaxprs with the values of cut groups held as Piecewise."""

    def __init__(self, groups: _Groups):
        self.groups = groups
        # Rewritten bodies of calls and loops, by body and input layout:
        # calls of one body keep sharing one program.
        self.bodies: dict[Any, Any] = {}
        self.warned: set[str] = set()

    # Converting a value to the layout its variable's group asks for.

    def join(self, value: Any, why: str) -> Any:
        """A Piecewise value as one array (a mesh then holds all of it)."""
        if not isinstance(value, Piecewise):
            return value
        if why not in self.warned:
            self.warned.add(why)
            diagnostics.warn(
                f"a value of the stack {value.stack!r}, which is split over "
                f"meshes, is joined whole for {why}: one mesh holds every "
                "layer of it there", StackGatheredWarning)
        return lax.concatenate(value.filled(), 0)

    def cut(self, value: Any, layout: StackPiece, aval: Any,
            why: str) -> Piecewise:
        if isinstance(value, Piecewise):
            if value.layout == layout:
                return value
            value = self.join(value, why)
        if np.ndim(value) == 0:
            value = lax.broadcast_in_dim(value, aval.shape, ())
        return Piecewise(layout.stack, layout.bounds,
                         [lax.slice_in_dim(value, lo, hi, axis=0)
                          for lo, hi in layout.bounds], aval)

    def coerce(self, value: Any, var: Any, why: str) -> Any:
        layout = self.groups.of(var)
        if layout is None:
            return self.join(value, why)
        return self.cut(value, layout, var.aval, why)

    # Evaluation.

    def run(self, jaxpr: Any, consts: Sequence[Any],
            args: Sequence[Any]) -> list[Any]:
        env: dict[Any, Any] = {}

        def read(v: Any) -> Any:
            return v.val if isinstance(v, jex_core.Literal) else env[v]

        for v, value in zip(jaxpr.constvars, consts):
            env[v] = self.coerce(value, v, "a constant")
        for v, value in zip(jaxpr.invars, args):
            env[v] = self.coerce(value, v, "an input")
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            wanted = [self.groups.of(v) for v in eqn.outvars]
            if not any(isinstance(x, Piecewise) for x in invals) and \
                    not any(wanted):
                outs = eval_eqn(eqn, invals)
            else:
                outs = self.apply(eqn, invals)
            why = f"{eqn.primitive.name} at {_where(eqn)}"
            for v, out in zip(eqn.outvars, outs):
                env[v] = self.coerce(out, v, why)
        return [read(v) for v in jaxpr.outvars]

    def apply(self, eqn: Any, invals: list[Any]) -> list[Any]:
        prim = eqn.primitive
        name = prim.name
        params = eqn.params
        why = f"{name} at {_where(eqn)}"
        if prim is stack_slice_p:
            x = invals[0]
            layout = StackPiece(params["stack"], params["bounds"])
            if isinstance(x, Piecewise) and x.layout == layout:
                return [x.piece(params["index"])]
            return eval_eqn(eqn, [self.join(x, why)])
        if prim is stack_pad_p:
            pieces: list[Any] = [None] * len(params["bounds"])
            pieces[params["index"]] = self.join(invals[0], why)
            return [Piecewise(params["stack"], params["bounds"], pieces,
                              eqn.outvars[0].aval)]
        if prim is stack_concat_p:
            return [Piecewise(params["stack"], params["bounds"],
                              [self.join(x, why) for x in invals],
                              eqn.outvars[0].aval)]
        if name == "mpmd_for":
            return self._loop(eqn, invals)
        if name in ("mpmd_call", "checkpoint", "remat2"):
            return self._call(eqn, invals)
        if name in ("jit", "pjit", "custom_jvp_call", "custom_vjp_call"):
            inner, consts = _call_jaxpr(eqn)
            args = [self.coerce(x, v, why) for x, v in zip(invals,
                                                            inner.invars)]
            return self.run(inner, consts, args)
        layout = self._common_layout(eqn, invals)
        if layout is not None and name == "broadcast_in_dim" and \
                not isinstance(invals[0], Piecewise) and \
                0 not in params["broadcast_dimensions"]:
            # Zeros (an accumulator's start) and the like: made per piece.
            return [Piecewise(layout.stack, layout.bounds, [
                eval_eqn(eqn.replace(params=_piece_params(eqn, lo, hi)),
                         invals)[0] for lo, hi in layout.bounds],
                eqn.outvars[0].aval)]
        if layout is not None:
            if name in _REDUCTIONS and 0 in params["axes"]:
                return [self._reduce_rows(eqn, invals[0], _REDUCTIONS[name])]
            if _contracts_rows(eqn):
                return [self._reduce_rows(eqn, None, lax.add, invals)]
            pairs = _keeps_rows(eqn)
            if pairs:
                return self._per_piece(eqn, invals, layout, pairs)
        return eval_eqn(eqn, [self.join(x, why) for x in invals])

    def _common_layout(self, eqn: Any, invals: list[Any]
                       ) -> StackPiece | None:
        layouts = {x.layout for x in invals if isinstance(x, Piecewise)}
        layouts |= {w for w in map(self.groups.of, eqn.outvars) if w}
        return layouts.pop() if len(layouts) == 1 else None

    def _per_piece(self, eqn: Any, invals: list[Any], layout: StackPiece,
                   pairs: list[tuple[int, int]]) -> list[Any]:
        """The op on each piece: operands paired with a result's rows are
        cut like it, the others passed whole."""
        cut_operands = {i for i, _ in pairs}
        cut_results = {o for _, o in pairs}
        name = eqn.primitive.name
        why = f"{name} at {_where(eqn)}"
        operands = []
        for i, (x, v) in enumerate(zip(invals, eqn.invars)):
            if i in cut_operands:
                operands.append(self.cut(x, layout, v.aval, why))
            else:
                operands.append(self.join(x, why))
        if name in ("add", "add_any") and all(
                isinstance(x, Piecewise) for x in operands):
            # Gradients of different pieces meet here: a zero piece adds
            # nothing.
            a, b = operands
            pieces = [pa if pb is None else pb if pa is None
                      else eval_eqn(eqn, [pa, pb])[0]
                      for pa, pb in zip(a.pieces, b.pieces)]
            return [Piecewise(layout.stack, layout.bounds, pieces,
                              eqn.outvars[0].aval)]
        results: list[list[Any]] = []
        for j, (lo, hi) in enumerate(layout.bounds):
            args = [x.piece(j) if isinstance(x, Piecewise) else x
                    for x in operands]
            piece = eqn.replace(params=_piece_params(eqn, lo, hi))
            results.append(eval_eqn(piece, args))
        outs = []
        for o, var in enumerate(eqn.outvars):
            column = [r[o] for r in results]
            if o in cut_results:
                outs.append(Piecewise(layout.stack, layout.bounds, column,
                                      var.aval))
            else:  # pragma: no cover - every rule cuts its results
                outs.append(lax.concatenate(column, 0))
        return outs

    def _reduce_rows(self, eqn: Any, x: Any, combine: Callable[..., Any],
                     invals: list[Any] | None = None) -> Any:
        """A reduction over the layers (or a dot_general contracting them):
        the op on each piece, the partial results combined."""
        why = f"{eqn.primitive.name} at {_where(eqn)}"
        operands = invals if invals is not None else [x]
        layout = self._common_layout(eqn, operands)
        cut = [self.cut(v, layout, var.aval, why)
               for v, var in zip(operands, eqn.invars)]
        partials = [eval_eqn(eqn, [c.piece(j) for c in cut])[0]
                    for j in range(len(layout.bounds))]
        return functools.reduce(combine, partials)

    # Loops and calls: their bodies rewritten and bound again.

    def _body(self, key: Any, jaxpr: Any, consts: Sequence[Any],
              layouts: list[Any]) -> tuple[Any, list[Any]]:
        """`jaxpr` rewritten over flat inputs of `layouts` (a StackPiece or
        an aval per input): (closed jaxpr, layout of each result)."""
        cache_key = (key, tuple(layouts))
        known = self.bodies.get(cache_key)
        if known is not None:
            return known
        out_layouts: list[Any] = []

        def flat_body(*flat: Any) -> list[Any]:
            args = _unflatten(flat, layouts, jaxpr.invars)
            outs = self.run(jaxpr, consts, args)
            out_layouts[:] = [o.layout if isinstance(o, Piecewise) else None
                              for o in outs]
            return _flatten(outs)

        specs = []
        for layout, var in zip(layouts, jaxpr.invars):
            specs += _specs(layout, var.aval)
        closed = jax.make_jaxpr(flat_body)(*specs)
        result = (closed, list(out_layouts))
        self.bodies[cache_key] = result
        return result

    def _layouts(self, values: Sequence[Any], variables: Sequence[Any],
                 why: str) -> tuple[list[Any], list[Any]]:
        coerced = [self.coerce(x, v, why) for x, v in zip(values, variables)]
        return coerced, [x.layout if isinstance(x, Piecewise) else None
                         for x in coerced]

    def _loop(self, eqn: Any, invals: list[Any]) -> list[Any]:
        from mpmd.frontend.loops import lift_closed_over  # noqa: PLC0415

        params = eqn.params
        body = params["body"]
        n = params["num_invariants"]
        why = f"the loop at {_where(eqn)}"
        values, layouts = self._layouts(invals, body.jaxpr.invars[:-1], why)
        layouts.append(None)  # the index
        closed, out_layouts = self._body(("for", body.jaxpr), body.jaxpr,
                                         body.consts, layouts)
        # The index is the body's last input.
        invariants = _flatten(values[:n])
        carry = _flatten(values[n:])
        lifted, extra = lift_closed_over(closed)
        outs = eqn.primitive.bind(
            *extra, *invariants, *carry,
            **dict(params, body=lifted,
                   num_invariants=len(extra) + len(invariants)))
        return _unflatten(outs, out_layouts, eqn.outvars)

    def _call(self, eqn: Any, invals: list[Any]) -> list[Any]:
        inner, consts = _call_jaxpr(eqn)
        why = f"{eqn.primitive.name} at {_where(eqn)}"
        values, layouts = self._layouts(invals, inner.invars, why)
        closed, out_layouts = self._body(("call", inner), inner, consts,
                                         layouts)
        flat = _flatten(values)
        if eqn.primitive.name == "mpmd_call":
            outs = eqn.primitive.bind(*flat, **dict(eqn.params, jaxpr=closed))
        else:  # jax.checkpoint: an open jaxpr, constants as leading inputs
            from jax._src.interpreters import partial_eval as pe  # noqa: PLC0415

            opened = pe.convert_constvars_jaxpr(closed.jaxpr)
            outs = eqn.primitive.bind(*closed.consts, *flat,
                                      **dict(eqn.params, jaxpr=opened))
        return _unflatten(outs, out_layouts, eqn.outvars)


def _piece_params(eqn: Any, lo: int, hi: int) -> dict[str, Any]:
    """The params of `eqn` for the piece of rows [lo, hi)."""
    params = dict(eqn.params)
    rows = hi - lo
    name = eqn.primitive.name
    if name == "broadcast_in_dim":
        params["shape"] = (rows, *params["shape"][1:])
    elif name == "reshape":
        params["new_sizes"] = (rows, *params["new_sizes"][1:])
    elif name == "slice":
        limit = list(params["limit_indices"])
        limit[0] = rows
        params["limit_indices"] = tuple(limit)
    elif name == "dynamic_slice":
        params["slice_sizes"] = (rows, *params["slice_sizes"][1:])
    return params


def _specs(layout: Any, aval: Any) -> list[Any]:
    if isinstance(layout, StackPiece):
        return [jax.ShapeDtypeStruct((hi - lo, *aval.shape[1:]), aval.dtype,
                                     weak_type=getattr(aval, "weak_type",
                                                       False))
                for lo, hi in layout.bounds]
    return [jax.ShapeDtypeStruct(aval.shape, aval.dtype,
                                 weak_type=getattr(aval, "weak_type", False))]


def _flatten(values: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for value in values:
        if isinstance(value, Piecewise):
            flat += value.filled()
        else:
            flat.append(value)
    return flat


def _unflatten(flat: Sequence[Any], layouts: Sequence[Any],
               variables: Sequence[Any]) -> list[Any]:
    it = iter(flat)
    values = []
    for layout, var in zip(layouts, variables):
        if isinstance(layout, StackPiece):
            values.append(Piecewise(layout.stack, layout.bounds,
                                    [next(it) for _ in layout.bounds],
                                    var.aval))
        else:
            values.append(next(it))
    return values


# --- the rewritten program ------------------------------------------------

@dataclass
class Program:
    """The traced program with split stacks held in pieces: `function`
    takes the flat inputs (an input held in pieces is one input per piece,
    in order) and returns the flat results likewise; `inputs`/`outputs`
    give each original input's/result's layout (None: one array)."""

    function: Callable[..., list[Any]]
    inputs: list[StackPiece | None]
    outputs: list[StackPiece | None]
    in_avals: list[Any]

    def input_specs(self) -> list[jax.ShapeDtypeStruct]:
        specs: list[Any] = []
        for layout, aval in zip(self.inputs, self.in_avals):
            specs += _specs(layout, aval)
        return specs


def rewrite(closed: Any) -> Program:
    """`closed` (the traced program) with every value of a cut stack held
    in pieces. `Program.outputs` is known once `function` has been traced."""
    jaxpr = closed.jaxpr
    groups = _Groups()
    _link(groups, jaxpr, set())
    evaluator = _Evaluator(groups)
    inputs = [groups.of(v) for v in jaxpr.invars]
    program = Program(lambda *flat: [], inputs, [],
                      [v.aval for v in jaxpr.invars])

    def function(*flat: Any) -> list[Any]:
        args = _unflatten(flat, inputs, jaxpr.invars)
        outs = evaluator.run(jaxpr, closed.consts, args)
        program.outputs = [o.layout if isinstance(o, Piecewise) else None
                           for o in outs]
        return _flatten(outs)

    program.function = function
    return program
