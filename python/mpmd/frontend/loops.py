"""One traced body per microbatch loop: the `mpmd_for` and `mpmd_call`
primitives.

Under `mpmd.jit` (`emit_named_computations()`), `mpmd.fori_loop` and
`mpmd.scan_microbatches` trace their body once, with the loop index as a
traced int32 scalar, and bind `mpmd_for_p`, which lowers to

    %r = mpmd.for (%carry...) {iterations = M : ui32}
        (%c: T..., %index: tensor<ui32>) { ...body once...; mpmd.return ... }

(values the body reads from outside are used directly: `mpmd.for` is not
isolated from above). `mpmd.call(fn, call_counter=i)` binds `mpmd_call_p`,
which lowers to a private `func.func` per distinct traced body and an
`mpmd.call @body(...) {call_counter = i : ui32}` per call. The compiler's
`mpmd-unroll-loops` turns both into straight-line code whose named
computations carry the microbatch as their call counter.

Under plain `jax.jit` (the default lowering mode) nothing changes: the
loops are unrolled at trace time, iteration `i` in `mpmd.call(...,
call_counter=i)`, with the index a Python int. Transformations of a loop
(`jax.grad` *through* the loop, `jax.vmap` of it) also unroll it at that
point, with the counters set at trace time, so their results are the same.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex_core
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import mpmd as mpmd_dialect
from jax.interpreters import ad, batching, mlir

from mpmd.frontend.context import (CALL_COUNTER_ATTR, LOOP_SCHEDULE_ATTR,
                                   call_counter_scope, lowers_inline)
from mpmd.frontend.errors import FrontendError
from mpmd.frontend.primitives import (_body_consts, _is_zero, _spec,
                                      flat_function)

__all__ = ["bind_call", "bind_for", "emits_loops", "lift_closed_over",
           "mpmd_call_p", "mpmd_for_p", "traced_bodies"]


def emits_loops() -> bool:
    """True while `mpmd.jit` traces: loops become `mpmd.for` / `mpmd.call`."""
    return not lowers_inline()


def lift_closed_over(closed: jex_core.ClosedJaxpr,
                     leading: int = 0) -> tuple[jex_core.ClosedJaxpr,
                                                list[Any]]:
    """Closed-over tracers of an enclosing trace become leading inputs of the
    jaxpr (returned, to pass as operands); concrete constants stay consts.
    `leading` invars stay first (none by default)."""
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    is_tracer = [isinstance(c, jax.core.Tracer) for c in consts]
    lifted = [v for v, t in zip(jaxpr.constvars, is_tracer) if t]
    kept = [v for v, t in zip(jaxpr.constvars, is_tracer) if not t]
    invars = list(jaxpr.invars)
    arg_names = jaxpr.debug_info.arg_names
    if arg_names is not None:
        arg_names = ("",) * len(lifted) + tuple(arg_names)
    body = jaxpr.replace(
        constvars=kept, invars=[*invars[:leading], *lifted, *invars[leading:]],
        debug_info=jaxpr.debug_info._replace(arg_names=arg_names))
    return (jex_core.ClosedJaxpr(body, [c for c, t in zip(consts, is_tracer)
                                        if not t]),
            [c for c, t in zip(consts, is_tracer) if t])


def _instantiate(tangents: Sequence[Any]) -> list[Any]:
    return [ad.instantiate_zeros(t) if _is_zero(t) and type(t) is ad.Zero
            else t for t in tangents]


def _unrolled_rules(unrolled: Callable[..., Any]) -> tuple[Any, Any]:
    """JVP and batching rules of a loop primitive whose unrolled form is
    `unrolled(*args, **params)`: differentiated or vmapped, the loop is
    unrolled there (the counters are set then)."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any],
            **params: Any) -> tuple[list[Any], list[Any]]:
        out, out_tangents = jax.jvp(functools.partial(unrolled, **params),
                                    list(primals), _instantiate(tangents))
        return list(out), list(out_tangents)

    def batch(args: Sequence[Any], dims: Sequence[Any],
              **params: Any) -> tuple[list[Any], list[Any]]:
        in_axes = [None if d is batching.not_mapped else d for d in dims]
        outs = jax.vmap(functools.partial(unrolled, **params),
                        in_axes=in_axes)(*args)
        return list(outs), [0] * len(outs)

    return jvp, batch


# --- mpmd_for_p ---------------------------------------------------------------

mpmd_for_p = jex_core.Primitive("mpmd_for")
mpmd_for_p.multiple_results = True


def _for_unrolled(*args: Any, body: jex_core.ClosedJaxpr, iterations: int,
                  lower: int, num_invariants: int,
                  schedule: str | None = None) -> list[Any]:
    """The loop as straight-line code: iteration k in call counter k."""
    invariants = list(args[:num_invariants])
    carry = list(args[num_invariants:])
    fn = jex_core.jaxpr_as_fun(body)
    for k in range(iterations):
        with call_counter_scope(k):
            carry = list(fn(*invariants, *carry, np.int32(lower + k)))
    return carry


mpmd_for_p.def_impl(_for_unrolled)


@mpmd_for_p.def_effectful_abstract_eval
def _for_abstract_eval(*avals: Any, body: jex_core.ClosedJaxpr,
                       iterations: int, lower: int, num_invariants: int,
                       schedule: str | None = None) -> tuple[list[Any], Any]:
    del iterations, lower, schedule
    return list(avals[num_invariants:]), body.effects


def _for_lowering(ctx: mlir.LoweringRuleContext, *args: Any,
                  body: jex_core.ClosedJaxpr, iterations: int, lower: int,
                  num_invariants: int,
                  schedule: str | None = None) -> Sequence[Any]:
    params = dict(body=body, iterations=iterations, lower=lower,
                  num_invariants=num_invariants, schedule=schedule)
    if lowers_inline():
        return mlir.lower_fun(functools.partial(_for_unrolled, **params),
                              multiple_results=True)(ctx, *args)
    from jax._src.lib.mlir.dialects import hlo  # noqa: PLC0415

    invariants, carry = list(args[:num_invariants]), list(args[num_invariants:])
    result_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
    loop = mpmd_dialect.ForOp(result_types, carry, iterations)
    if schedule is not None:
        # The loop's own pipeline schedule (docs/loops.md).
        loop.attributes[LOOP_SCHEDULE_ATTR] = ir.StringAttr.get(schedule)
    index_type = ir.RankedTensorType.get(
        [], ir.IntegerType.get_unsigned(32))
    block = loop.regions[0].blocks.append(*[v.type for v in carry],
                                          index_type)
    with ir.InsertionPoint(block):
        index = hlo.convert(ir.RankedTensorType.get(
            [], ir.IntegerType.get_signless(32)), block.arguments[-1])
        if lower:
            index = hlo.add(index, mlir.ir_constant(np.int32(lower)))
        outs, _ = mlir.jaxpr_subcomp(
            ctx.module_context, body.jaxpr, ctx.name_stack, mlir.TokenSet(),
            _body_consts(body), *invariants, *block.arguments[:-1], index,
            dim_var_values=[], const_lowering={}, outer_traceback=None)
        mpmd_dialect.ReturnOp(list(outs))
    return list(loop.results)


(ad.primitive_jvps[mpmd_for_p],
 batching.primitive_batchers[mpmd_for_p]) = _unrolled_rules(_for_unrolled)
mlir.register_lowering(mpmd_for_p, _for_lowering)


def bind_for(body: Callable[..., Sequence[Any]], init: Sequence[Any],
             iterations: int, lower: int,
             schedule: str | None = None) -> list[Any]:
    """Traces `body(index, *carry) -> carry` once and binds `mpmd_for_p`.

    Raises `jax.errors.ConcretizationTypeError` (and the related tracer
    conversion errors) when the body needs the index as a Python value; the
    caller unrolls then. Raises FrontendError when the carry changes type.
    """
    specs = [_spec(x) for x in init]
    closed = jax.make_jaxpr(body)(jax.ShapeDtypeStruct((), jnp.int32),
                                  *specs)
    for position, (spec, aval) in enumerate(zip(specs, closed.out_avals)):
        if tuple(spec.shape) != tuple(aval.shape) or spec.dtype != aval.dtype:
            raise FrontendError(
                f"Input and output avals must match. Got "
                f"{np.dtype(spec.dtype).name}{list(spec.shape)} and "
                f"{np.dtype(aval.dtype).name}{list(aval.shape)} respectively: "
                f"the loop body changes carry leaf {position}; a carry keeps "
                "its shape and dtype across iterations")
    # The index is the body's first input; it goes last, after the carry.
    jaxpr = closed.jaxpr
    reordered = jaxpr.replace(invars=[*jaxpr.invars[1:], jaxpr.invars[0]])
    names = jaxpr.debug_info.arg_names
    if names is not None:
        reordered = reordered.replace(debug_info=jaxpr.debug_info._replace(
            arg_names=(*names[1:], names[0])))
    lifted_body, invariants = lift_closed_over(
        jex_core.ClosedJaxpr(reordered, closed.consts))
    if lifted_body.effects:
        raise FrontendError("a microbatch loop body must be pure; it has "
                            f"effects {lifted_body.effects}")
    return mpmd_for_p.bind(*invariants, *init, body=lifted_body,
                           iterations=iterations, lower=lower,
                           num_invariants=len(invariants), schedule=schedule)


# --- mpmd_call_p --------------------------------------------------------------

mpmd_call_p = jex_core.Primitive("mpmd_call")
mpmd_call_p.multiple_results = True


def _call_unrolled(*args: Any, jaxpr: jex_core.ClosedJaxpr,
                   call_counter: int, schedule: str | None = None) -> list[Any]:
    with call_counter_scope(call_counter):
        return list(jex_core.jaxpr_as_fun(jaxpr)(*args))


mpmd_call_p.def_impl(_call_unrolled)


@mpmd_call_p.def_effectful_abstract_eval
def _call_abstract_eval(*avals: Any, jaxpr: jex_core.ClosedJaxpr,
                        call_counter: int, schedule: str | None = None
                        ) -> tuple[list[Any], Any]:
    del avals, call_counter, schedule
    return list(jaxpr.out_avals), jaxpr.effects


def _call_lowering(ctx: mlir.LoweringRuleContext, *args: Any,
                   jaxpr: jex_core.ClosedJaxpr,
                   call_counter: int,
                   schedule: str | None = None) -> Sequence[Any]:
    if lowers_inline():
        return mlir.lower_fun(functools.partial(
            _call_unrolled, jaxpr=jaxpr, call_counter=call_counter),
            multiple_results=True)(ctx, *args)
    from jax._src.lib.mlir.dialects import func as func_dialect  # noqa: PLC0415

    result_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
    key = ("mpmd_call_body", jaxpr.jaxpr)
    cache = ctx.module_context.cached_primitive_lowerings
    symbol = cache.get(key)
    if symbol is None:
        # One private function per distinct traced body, shared by its calls.
        module = ctx.module_context.module
        with ir.InsertionPoint(module.body):
            ftype = ir.FunctionType.get([a.type for a in args], result_types)
            fn = func_dialect.FuncOp("mpmd_call_body", ftype)
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                outs, _ = mlir.jaxpr_subcomp(
                    ctx.module_context, jaxpr.jaxpr, ctx.name_stack,
                    mlir.TokenSet(), _body_consts(jaxpr), *block.arguments,
                    dim_var_values=[], const_lowering={},
                    outer_traceback=None)
                func_dialect.ReturnOp(list(outs))
        symbol = ir.StringAttr(
            ctx.module_context.symbol_table.insert(fn)).value
        cache[key] = symbol
    op = mpmd_dialect.CallOp(result_types, list(args),
                             ir.FlatSymbolRefAttr.get(symbol))
    op.attributes[CALL_COUNTER_ATTR] = ir.IntegerAttr.get(
        ir.IntegerType.get_unsigned(32), call_counter)
    if schedule is not None:
        op.attributes[LOOP_SCHEDULE_ATTR] = ir.StringAttr.get(schedule)
    return list(op.results)


(ad.primitive_jvps[mpmd_call_p],
 batching.primitive_batchers[mpmd_call_p]) = _unrolled_rules(_call_unrolled)
mlir.register_lowering(mpmd_call_p, _call_lowering)


# Bodies traced during one mpmd.jit lowering, by what decides the trace: the
# function (its code, closure cells and defaults, by identity), the input
# structure and avals. None outside `traced_bodies()`: nothing is cached.
_BODIES: contextvars.ContextVar[dict[Any, Any] | None] = \
    contextvars.ContextVar("mpmd_traced_bodies", default=None)


@contextlib.contextmanager
def traced_bodies() -> Iterator[None]:
    """Within: `mpmd.call` of the same function on the same avals reuses
    its traced body (as `jax.jit` does), so a Python loop of calls traces
    the body once. Scoped to one lowering: tracers never outlive it."""
    token = _BODIES.set({})
    try:
        yield
    finally:
        _BODIES.reset(token)


class _Same:
    """Compares and hashes by identity, and keeps its object alive (so that
    no other object can take its id while the key exists)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


def _function_key(fn: Any) -> Any:
    """What identifies the computation of `fn` for caching: its code and,
    by identity, what it closes over and its defaults; None when it cannot
    be told (callable objects), and then every call is traced."""
    if isinstance(fn, functools.partial):
        inner = _function_key(fn.func)
        if inner is None:
            return None
        return ("partial", inner, tuple(_Same(a) for a in fn.args),
                tuple(sorted((k, _Same(v)) for k, v in fn.keywords.items())))
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(_Same(cell.cell_contents))
        except ValueError:  # an empty cell
            cells.append(None)
    defaults = tuple(_Same(d) for d in (fn.__defaults__ or ()))
    return ("function", code, tuple(cells), defaults,
            _Same(getattr(fn, "__self__", None)))


def bind_call(fn: Callable[..., Any], counter: int, args: tuple,
              kwargs: dict, schedule: str | None = None) -> Any:
    """Traces `fn` (once per distinct function and avals within a lowering)
    and binds `mpmd_call_p`."""
    flat_args, in_tree = jax.tree_util.tree_flatten((args, kwargs))
    specs = [_spec(x) for x in flat_args]
    cache = _BODIES.get()
    function_key = _function_key(fn) if cache is not None else None
    key = None
    if function_key is not None:
        key = (function_key, in_tree,
               tuple((tuple(s.shape), s.dtype, s.weak_type) for s in specs))
        cached = cache.get(key)
        if cached is not None:
            jaxpr, lifted, out_tree = cached
            outs = mpmd_call_p.bind(*lifted, *flat_args, jaxpr=jaxpr,
                                    call_counter=counter, schedule=schedule)
            return jax.tree_util.tree_unflatten(out_tree, outs)
    flat_fn, out_trees = flat_function(fn, in_tree)

    jaxpr, lifted = lift_closed_over(jax.make_jaxpr(flat_fn)(*specs))
    if jaxpr.effects:
        raise FrontendError("a function called with mpmd.call must be pure; "
                            f"it has effects {jaxpr.effects}")
    if key is not None:
        cache[key] = (jaxpr, lifted, out_trees[0])
    outs = mpmd_call_p.bind(*lifted, *flat_args, jaxpr=jaxpr,
                            call_counter=counter, schedule=schedule)
    return jax.tree_util.tree_unflatten(out_trees[0], outs)
