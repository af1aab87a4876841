"""`named_computation` and `named_tensor`: the labels of an MPMD program.

Design
------
Both are JAX primitives defined with the public extension points
(`jax.extend.core.Primitive`, `jax.interpreters.{ad,batching,mlir}`) plus
two helpers of `partial_eval` (dead-code elimination of a jaxpr):

* `named_computation_p` is a call-like primitive with params
  `jaxpr` (a `ClosedJaxpr`), `name`, `transpose_count` and `call_counter`
  (the microbatch, `None` outside `mpmd.call`; see `microbatch.py`). The wrapper traces
  the user function to a jaxpr first; values it closes over that are tracers
  of an enclosing trace become explicit leading operands, concrete arrays
  stay constants of the body. The MLIR lowering emits an
  `mpmd.named_computation` op with origin `#mpmd.user_origin<"name"(k)>`
  whose region (isolated from above) is the lowered body.

* Autodiff works on the primitive itself, so every transformation of JAX
  composes (`jvp`, `grad`, `vjp`, `linearize`, `checkpoint`, `jit`, `vmap`,
  higher orders):

  - JVP: the body is linearized (`jax.linearize`) inside a new named
    computation with the same name and count that returns the primal outputs
    and the residuals, followed by a second one (same name and count) that
    applies the linear map to the tangents. JAX's partial evaluation keeps
    the first on the primal side and stages the second, which is linear in
    the tangents, for transposition.
  - Transpose: the linear body is transposed (`jax.linear_transpose`) inside
    a named computation with the same name and `transpose_count + 1`.

  The n-th transposition of a computation therefore carries count n:
  `jax.grad` gives `"layer1"` and `"layer1"(1)`, grad of grad adds
  `"layer1"(2)`. Every rule (JVP, transpose, batching, DCE) rebinds with the
  `call_counter` of the equation it rewrites, so the microbatch of a
  computation is also the microbatch of its derivatives, wherever the
  transformation runs (inside or outside `mpmd.call`).
* Batching re-traces the body under `jax.vmap`; dead-code elimination drops
  unused results and operands from the body.
* `named_tensor_p` is a linear identity lowered to `mpmd.named_tensor`; its
  cotangent is named the same (a gradient lives where its value lives).

Lowering mode. XLA cannot compile `mpmd.*` ops, so by default both
primitives lower to their plain bodies and a labelled program runs under
plain `jax.jit` unchanged. `mpmd.jit` lowers inside
`emit_named_computations()`, which emits the `mpmd.*` ops for the mpmd
compiler instead. The setting is a context variable that only mpmd's
primitives read: JAX's tracing context is left alone (see "lowering mode"
below).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence, TypeVar, overload

import jax
import numpy as np
from jax._src.interpreters import batching as _batching
from jax._src.interpreters import partial_eval as _pe
from jax.extend import core as jex_core
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import mpmd as mpmd_dialect
from jax.interpreters import ad, batching, mlir

from mpmd.frontend.context import (CALL_COUNTER_ATTR, context_mesh,
                                   current_call_counter, lowers_inline)
from mpmd.frontend.errors import FrontendError, InvalidNameError

__all__ = [
    "FrontendError",
    "InvalidNameError",
    "check_name",
    "flat_function",
    "named_computation",
    "named_computation_p",
    "split_static_leaves",
]

F = TypeVar("F", bound=Callable[..., Any])




# --- helpers ----------------------------------------------------------------


def check_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise InvalidNameError(
            f"{what} name must be a str, got {name!r} "
            f"of type {type(name).__name__}"
        )
    if not name:
        raise InvalidNameError(f"{what} name must not be empty")
    return name


def _check_computation_name(name: object) -> str:
    """A named computation's name: any non-empty string but the names
    Shardy:MPMD keeps for its compiler, which it refuses too."""
    check_name(name, "named_computation")
    if name == "main":
        raise InvalidNameError(
            'named_computations are not allowed to have "main" as their '
            "name (Shardy:MPMD keeps it for the entry function); choose "
            "another")
    if name.startswith("partir."):
        raise InvalidNameError(
            "computation names that start with `partir.` are reserved for "
            f"the compiler; rename {name!r}")
    return name


def _spec(x: Any) -> jax.ShapeDtypeStruct:
    """The shape and dtype of a value or abstract value, for tracing."""
    aval = x if isinstance(x, jax.core.AbstractValue) else jax.typeof(x)
    return jax.ShapeDtypeStruct(
        aval.shape, aval.dtype, weak_type=getattr(aval, "weak_type", False))


def _is_float(aval: Any) -> bool:
    return bool(np.issubdtype(aval.dtype, np.inexact))


def _is_zero(t: Any) -> bool:
    if type(t) is ad.Zero:
        return True
    return getattr(t, "dtype", None) == jax.dtypes.float0


def _merge(mask: Sequence[bool], when_true: Sequence[Any],
           when_false: Sequence[Any]) -> list[Any]:
    """Interleaves two lists by a mask (True takes from `when_true`)."""
    a, b = iter(when_true), iter(when_false)
    return [next(a) if m else next(b) for m in mask]


def _trace(fn: Callable[..., Sequence[Any]],
           specs: Sequence[Any]) -> jex_core.ClosedJaxpr:
    """Traces a flat function of flat arguments to a closed jaxpr."""
    return jax.make_jaxpr(fn)(*specs)


def _bind(operands: Sequence[Any], jaxpr: jex_core.ClosedJaxpr, name: str,
          transpose_count: int, call_counter: int | None) -> list[Any]:
    """Binds `named_computation_p`, first dropping operands the body ignores."""
    pruned, used = _pe.dce_jaxpr(jaxpr.jaxpr, [True] * len(jaxpr.out_avals))
    operands = [x for x, u in zip(operands, used) if u]
    return named_computation_p.bind(
        *operands, jaxpr=jex_core.ClosedJaxpr(pruned, jaxpr.consts), name=name,
        transpose_count=transpose_count, call_counter=call_counter)


def _body_consts(jaxpr: jex_core.ClosedJaxpr) -> list[Any]:
    """IR constants for the constvars of a closed jaxpr, at the insertion point."""
    return [mlir.ir_constant(c, aval=v.aval)
            for c, v in zip(jaxpr.consts, jaxpr.jaxpr.constvars)]


# --- named_computation_p ----------------------------------------------------

class _NamedComputationPrimitive(jex_core.Primitive):
    """Binding without a call counter inside an `mpmd.call` takes the
    call's: a body traced once (for mpmd.jit's loops) and evaluated again
    per microbatch, e.g. when a transformation unrolls the loop, labels its
    named computations then."""

    def bind(self, *args: Any, **params: Any) -> Any:
        if params.get("call_counter") is None:
            counter = current_call_counter()
            if counter is not None:
                params = dict(params, call_counter=counter)
        return super().bind(*args, **params)


named_computation_p = _NamedComputationPrimitive("mpmd_named_computation")
named_computation_p.multiple_results = True


@named_computation_p.def_impl
def _nc_impl(*args: Any, jaxpr: jex_core.ClosedJaxpr, name: str,
             transpose_count: int, call_counter: int | None) -> list[Any]:
    del name, transpose_count, call_counter
    return jex_core.jaxpr_as_fun(jaxpr)(*args)


@named_computation_p.def_effectful_abstract_eval
def _nc_abstract_eval(*avals: Any, jaxpr: jex_core.ClosedJaxpr, name: str,
                      transpose_count: int,
                      call_counter: int | None) -> tuple[list[Any], Any]:
    del avals, name, transpose_count, call_counter
    return list(jaxpr.out_avals), jaxpr.effects


def _nc_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
            jaxpr: jex_core.ClosedJaxpr, name: str, transpose_count: int,
            call_counter: int | None) -> tuple[list[Any], list[Any]]:
    out_avals = jaxpr.out_avals
    zero_outs = [ad.Zero(a.to_tangent_aval()) for a in out_avals]
    nonzero = [not _is_zero(t) for t in tangents]
    if not any(nonzero):
        return _bind(primals, jaxpr, name, transpose_count,
                     call_counter), zero_outs

    body = jex_core.jaxpr_as_fun(jaxpr)
    diff_outs = [_is_float(a) for a in out_avals]
    lin_tree: list[Any] = []

    def forward(*all_primals: Any) -> list[Any]:
        fixed = [p for p, nz in zip(all_primals, nonzero) if not nz]

        def of_nonzero(*nz_primals: Any) -> list[Any]:
            return body(*_merge(nonzero, nz_primals, fixed))

        outs, lin_fn = jax.linearize(
            of_nonzero, *[p for p, nz in zip(all_primals, nonzero) if nz])
        residuals, tree = jax.tree_util.tree_flatten(lin_fn)
        lin_tree.append(tree)
        return [*outs, *residuals]

    fwd_jaxpr = _trace(forward, [_spec(p) for p in primals])
    primal_outs, residuals = _bind_forward(
        primals, fwd_jaxpr, len(out_avals), name, transpose_count,
        call_counter)
    tree = lin_tree[0]

    if not any(diff_outs):
        return primal_outs, zero_outs

    nz_tangents = [
        ad.instantiate_zeros(t) for t, nz in zip(tangents, nonzero) if nz]
    n_res = len(residuals)

    def linear(*res_and_tangents: Any) -> list[Any]:
        lin_fn = jax.tree_util.tree_unflatten(tree, res_and_tangents[:n_res])
        outs = lin_fn(*res_and_tangents[n_res:])
        return [o for o, d in zip(outs, diff_outs) if d]

    lin_jaxpr = _trace(
        linear, [_spec(r) for r in residuals] + [_spec(t) for t in nz_tangents])
    diff_tangents = _bind([*residuals, *nz_tangents], lin_jaxpr, name,
                          transpose_count, call_counter)
    tangent_outs = _merge(diff_outs, diff_tangents, zero_outs)
    return primal_outs, tangent_outs


def _bind_forward(primals: Sequence[Any], jaxpr: jex_core.ClosedJaxpr,
                  n_outs: int, name: str, transpose_count: int,
                  call_counter: int | None) -> tuple[list[Any], list[Any]]:
    """Binds the forward part of a JVP: primal outputs, then residuals.

    A residual that is an input of the body is taken from the operand
    directly, and a residual returned twice is returned once, so the forward
    computation does not pass values through.
    """
    inner = jaxpr.jaxpr
    invar_index = {v: i for i, v in enumerate(inner.invars)}
    res_vars = inner.outvars[n_outs:]
    primal_vars = list(inner.outvars[:n_outs])
    kept: list[Any] = []  # residual outvars the op still returns
    source: list[tuple[str, int]] = []  # where each residual comes from
    for v in res_vars:
        if isinstance(v, jex_core.Var) and v in invar_index:
            source.append(("operand", invar_index[v]))
        elif isinstance(v, jex_core.Var) and v in primal_vars:
            source.append(("result", primal_vars.index(v)))
        elif isinstance(v, jex_core.Var) and v in kept:
            source.append(("result", n_outs + kept.index(v)))
        else:
            source.append(("result", n_outs + len(kept)))
            kept.append(v)
    if len(kept) != len(res_vars):
        new_inner = inner.replace(outvars=[*inner.outvars[:n_outs], *kept])
        jaxpr = jex_core.ClosedJaxpr(new_inner, jaxpr.consts)
    results = _bind(primals, jaxpr, name, transpose_count, call_counter)
    residuals = [primals[i] if kind == "operand" else results[i]
                 for kind, i in source]
    return list(results[:n_outs]), residuals


def _nc_transpose(cts: Sequence[Any], *args: Any, jaxpr: jex_core.ClosedJaxpr,
                  name: str, transpose_count: int,
                  call_counter: int | None) -> list[Any]:
    linear_mask = [ad.is_undefined_primal(a) for a in args]
    known = [a for a, lin in zip(args, linear_mask) if not lin]
    linear_avals = [a.aval for a, lin in zip(args, linear_mask) if lin]
    out_avals = jaxpr.out_avals
    ct_nonzero = [type(ct) is not ad.Zero for ct in cts]
    if not any(ct_nonzero):
        return [ad.Zero(a.aval.to_ct_aval()) if lin else None
                for a, lin in zip(args, linear_mask)]
    nz_cts = [ct for ct, nz in zip(cts, ct_nonzero) if nz]
    body = jex_core.jaxpr_as_fun(jaxpr)
    n_known = len(known)

    def backward(*known_and_cts: Any) -> list[Any]:
        known_vals = known_and_cts[:n_known]
        given = known_and_cts[n_known:]
        zeros = [jax.numpy.zeros(a.shape, a.to_tangent_aval().dtype)
                 for a, nz in zip(out_avals, ct_nonzero) if not nz]
        full_cts = _merge(ct_nonzero, given, zeros)

        def of_linear(*linear_vals: Any) -> list[Any]:
            return body(*_merge(linear_mask, linear_vals, known_vals))

        transpose = jax.linear_transpose(
            of_linear, *[_spec(a) for a in linear_avals])
        return list(transpose(full_cts))

    bwd_jaxpr = _trace(backward, [_spec(k) for k in known] + [_spec(c) for c in nz_cts])
    linear_cts = _bind([*known, *nz_cts], bwd_jaxpr, name, transpose_count + 1,
                       call_counter)
    return _merge(linear_mask, linear_cts, [None] * n_known)


def _nc_batch(axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *,
              jaxpr: jex_core.ClosedJaxpr, name: str, transpose_count: int,
              call_counter: int | None) -> tuple[list[Any], list[Any]]:
    if all(d is None for d in dims):  # None: not mapped
        outs = _bind(args, jaxpr, name, transpose_count, call_counter)
        return outs, [None] * len(outs)
    # JAX batches the body and says which results are batched: a result of
    # a collective over the vmapped axis (`lax.pmean`) is not.
    batched, out_axes = _batching.batch_jaxpr2(jaxpr, axis_data, tuple(dims))
    return _bind(args, batched, name, transpose_count,
                 call_counter), list(out_axes)


def _nc_dce(used_outputs: list[bool],
            eqn: Any) -> tuple[list[bool], Any]:
    jaxpr: jex_core.ClosedJaxpr = eqn.params["jaxpr"]
    if not any(used_outputs) and not jaxpr.effects:
        return [False] * len(eqn.invars), None
    pruned, used_inputs = _pe.dce_jaxpr(jaxpr.jaxpr, used_outputs)
    new_jaxpr = jex_core.ClosedJaxpr(pruned, jaxpr.consts)
    new_eqn = _pe.new_jaxpr_eqn(
        [v for v, u in zip(eqn.invars, used_inputs) if u],
        [v for v, u in zip(eqn.outvars, used_outputs) if u],
        eqn.primitive, dict(eqn.params, jaxpr=new_jaxpr), new_jaxpr.effects,
        eqn.source_info, eqn.ctx)
    return used_inputs, new_eqn


def _named_locations(jaxpr: jex_core.ClosedJaxpr,
                     name: str) -> jex_core.ClosedJaxpr:
    """`jaxpr` with `name` heading the name stack of each of its equations
    (`layer1/add`), as they read inline in the enclosing function."""
    from jax._src import source_info_util  # noqa: PLC0415

    head = source_info_util.new_name_stack(name)
    eqns = [eqn.replace(source_info=eqn.source_info.replace(
        name_stack=head + eqn.source_info.name_stack))
        for eqn in jaxpr.jaxpr.eqns]
    return jex_core.ClosedJaxpr(jaxpr.jaxpr.replace(eqns=eqns), jaxpr.consts)


def _nc_lowering(ctx: mlir.LoweringRuleContext, *args: Any,
                 jaxpr: jex_core.ClosedJaxpr, name: str, transpose_count: int,
                 call_counter: int | None) -> Sequence[Any]:
    name_stack = ctx.name_stack.extend(name)
    if lowers_inline():
        # A call of a private function holding the body (XLA inlines it),
        # named after the computation, as Shardy:MPMD lowers it under plain
        # jax.jit; its ops keep the computation's name in their locations.
        return mlir.core_call_lowering(
            ctx, *args, name=f"named_computation_{name}",
            call_jaxpr=_named_locations(jaxpr, name))
    if ctx.tokens_in.effects():
        raise FrontendError(
            f"named computation {name!r} has ordered side effects; mpmd named "
            "computations must be pure")
    if ctx.dim_var_values:
        raise FrontendError(
            f"named computation {name!r}: shape polymorphism is not supported")
    flat_args: list[ir.Value] = []
    for a in args:
        if not isinstance(a, ir.Value):
            raise FrontendError(
                f"named computation {name!r}: an operand lowers to several "
                "IR values, which mpmd does not support")
        flat_args.append(a)
    result_types = [mlir.aval_to_ir_type(ctx.module_context, a)
                    for a in ctx.avals_out]
    origin = mpmd_dialect.UserOriginAttr.get(name, transpose_count)
    op = mpmd_dialect.NamedComputationOp(result_types, flat_args, origin)
    if call_counter is not None:
        op.attributes[CALL_COUNTER_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_unsigned(32), call_counter)
    block = op.regions[0].blocks.append(*[a.type for a in flat_args])
    with ir.InsertionPoint(block):
        # Constants of the body are created inside the region (no outer
        # `const_lowering`): the op is isolated from above.
        outs, _ = mlir.jaxpr_subcomp(
            ctx.module_context, jaxpr.jaxpr, name_stack, mlir.TokenSet(),
            _body_consts(jaxpr),
            *block.arguments, dim_var_values=[], const_lowering={},
            outer_traceback=None)
        mpmd_dialect.ReturnOp(list(outs))
    return list(op.results)


ad.primitive_jvps[named_computation_p] = _nc_jvp
ad.primitive_transposes[named_computation_p] = _nc_transpose
batching.fancy_primitive_batchers[named_computation_p] = _nc_batch
_pe.dce_rules[named_computation_p] = _nc_dce
mlir.register_lowering(named_computation_p, _nc_lowering)


def flat_function(fn: Callable[..., Any], in_tree: Any
                  ) -> tuple[Callable[..., list[Any]], list[Any]]:
    """`fn` over flat arguments (unflattened with `in_tree`) returning its
    flat results, and the list each call appends its results' tree to."""
    out_trees: list[Any] = []

    def flat_fn(*xs: Any) -> list[Any]:
        args, kwargs = jax.tree_util.tree_unflatten(in_tree, xs)
        flat_out, out_tree = jax.tree_util.tree_flatten(fn(*args, **kwargs))
        out_trees.append(out_tree)
        return flat_out

    return flat_fn, out_trees


@overload
def named_computation(fn: F, *, name: str,
                      static_argnames: Sequence[str] | str | None = None
                      ) -> F: ...


@overload
def named_computation(fn: None = None, *, name: str,
                      static_argnames: Sequence[str] | str | None = None
                      ) -> Callable[[F], F]: ...


def named_computation(fn: Callable[..., Any] | None = None, *,
                      name: str,
                      static_argnames: Sequence[str] | str | None = None
                      ) -> Any:
    """Labels `fn` as a computation named `name`.

    The returned callable computes what `fn` computes; lowered with
    `jax.jit`, its body becomes an `mpmd.named_computation` op. Arguments and
    results may be any pytrees, modules of equinox, flax nnx or penzai
    included: array leaves are operands (and Python scalars, as `jax.jit`
    traces them, unless they are fields of an object); every other leaf
    (functions, strings, a module's int fields) is static, as
    `eqx.filter_jit` keeps it, and a static result is returned as it was
    made. Usable as a decorator:
    `@named_computation(name="layer1")`. Called inside `mpmd.call` (or an
    iteration of `mpmd.fori_loop`), the computation and its derivatives
    carry that call counter (read when the wrapped function is called, not
    when it is created). `static_argnames` (as in `jax.jit`) names
    parameters passed as Python values, not traced.
    """
    _check_computation_name(name)
    if fn is None:
        return functools.partial(named_computation, name=name,
                                 static_argnames=static_argnames)
    if not callable(fn):
        raise FrontendError(
            f"named_computation({name!r}) expects a callable, got "
            f"{type(fn).__name__}")
    if static_argnames:
        return _with_static_args(fn, name, static_argnames)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        dynamic, rebuild = split_static_leaves((args, kwargs))
        out_rebuild: list[Callable[[Sequence[Any]], Any]] = []

        def flat_fn(*xs: Any) -> list[Any]:
            call_args, call_kwargs = rebuild(xs)
            outs, out_rebuild_ = split_static_leaves(
                fn(*call_args, **call_kwargs), results=True)
            out_rebuild.append(out_rebuild_)
            return outs

        from mpmd.frontend import stacks  # noqa: PLC0415

        split = stacks.split_of(name)
        if split is not None:
            outs = stacks.bind_split(flat_fn, dynamic, name, split)
        else:
            outs = _bind_traced(flat_fn, dynamic, name)
        return out_rebuild[0](outs)

    return wrapped


def _is_traced_leaf(leaf: Any, in_object: bool) -> bool:
    """Whether a pytree leaf given to a named computation is traced (an
    operand) rather than static (baked into the body): arrays always;
    Python scalars as `jax.jit` traces them, unless they are fields of an
    object (a module's `num_heads`), where they stay static as
    `eqx.filter_jit` keeps them; anything else (functions, strings,
    objects) is static."""
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
        return True
    if isinstance(leaf, (bool, int, float, complex)):
        return not in_object
    return False


def _in_object(path: Sequence[Any]) -> bool:
    """Whether a leaf's pytree path goes through an object's field (a
    registered class such as a module) rather than only lists, tuples and
    dicts."""
    return any(isinstance(key, (jax.tree_util.GetAttrKey,
                                jax.tree_util.FlattenedIndexKey))
               for key in path)


def split_static_leaves(tree: Any, results: bool = False
                        ) -> tuple[list[Any], Callable[[Sequence[Any]], Any]]:
    """The traced leaves of `tree` and a function that rebuilds the tree
    from new values of them, the static leaves kept as they are (see
    `_is_traced_leaf`). For `results`, every tracer or array is traced and
    everything else static."""
    flat, treedef = jax.tree_util.tree_flatten_with_path(tree)
    if results:
        traced = [isinstance(leaf, (jax.Array, np.ndarray, np.generic))
                  or isinstance(leaf, jax.core.Tracer) for _, leaf in flat]
    else:
        traced = [_is_traced_leaf(leaf, _in_object(path))
                  for path, leaf in flat]
    leaves = [leaf for _, leaf in flat]

    def rebuild(values: Sequence[Any]) -> Any:
        it = iter(values)
        return jax.tree_util.tree_unflatten(
            treedef, [next(it) if t else leaf
                      for t, leaf in zip(traced, leaves)])

    return [leaf for t, leaf in zip(traced, leaves) if t], rebuild


def _bind_traced(flat_fn: Callable[..., list[Any]], flat_args: Sequence[Any],
                 name: str) -> list[Any]:
    """Traces `flat_fn` on `flat_args` and binds one named computation of
    it: values it closes over that are tracers of an enclosing trace become
    leading operands; concrete constants stay in the body."""
    with context_mesh(name):
        closed = jax.make_jaxpr(flat_fn)(*flat_args)
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    is_tracer = [isinstance(c, jax.core.Tracer) for c in consts]
    lifted = [v for v, t in zip(jaxpr.constvars, is_tracer) if t]
    arg_names = jaxpr.debug_info.arg_names
    if arg_names is not None:
        arg_names = ("",) * len(lifted) + tuple(arg_names)
    body = jaxpr.replace(
        constvars=[v for v, t in zip(jaxpr.constvars, is_tracer) if not t],
        invars=[*lifted, *jaxpr.invars],
        debug_info=jaxpr.debug_info._replace(arg_names=arg_names))
    operands = [*(c for c, t in zip(consts, is_tracer) if t), *flat_args]
    return _bind(
        operands,
        jex_core.ClosedJaxpr(body, [c for c, t in zip(consts, is_tracer)
                                    if not t]),
        name, 0, current_call_counter())


def _with_static_args(fn: Callable[..., Any], name: str,
                      static_argnames: Sequence[str] | str) -> Any:
    """named_computation of `fn` whose `static_argnames` parameters are
    bound as Python values, by position or by keyword."""
    names = ((static_argnames,) if isinstance(static_argnames, str)
             else static_argnames)
    if not isinstance(names, (list, tuple)) or not all(
            isinstance(n, str) for n in names):
        raise FrontendError(
            f"named_computation({name!r}): static_argnames must be a "
            f"parameter name or a sequence of them, got {static_argnames!r}")
    names = tuple(names)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        unknown = [n for n in names if n not in signature.parameters]
        if unknown:
            raise FrontendError(
                f"named_computation({name!r}): static_argnames {unknown} "
                f"are not parameters of {getattr(fn, '__name__', fn)!r}")

    if signature is None or any(
            p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
            for p in signature.parameters.values()):
        raise FrontendError(
            f"not supported yet: named_computation({name!r}) with "
            "static_argnames of a function with positional-only or *args "
            "parameters")

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        # Every argument by keyword: the static ones bound into `fn`, the
        # others traced.
        arguments = dict(signature.bind(*args, **kwargs).arguments)
        static = {k: arguments.pop(k) for k in names if k in arguments}
        extra = arguments.pop(next(
            (p.name for p in signature.parameters.values()
             if p.kind == p.VAR_KEYWORD), ""), {})
        return named_computation(functools.partial(fn, **static),
                                 name=name)(**arguments, **extra)

    return wrapped
