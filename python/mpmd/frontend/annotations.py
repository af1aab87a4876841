"""`broadcast` and `reduce`: annotations that let mesh inference move a
value across meshes (Shardy:MPMD's ops of the same names).

- `broadcast(x)`: `x` may be used on any mesh; the compiler moves it (or
  recomputes what it comes from) to each mesh that needs it.
- `reduce(x)`: `x` is the result of a reduction (`add`, `max`, `min`,
  `mul`, `or`, `and`, possibly nested) of values that live on several
  meshes; the compiler moves each operand to where `x` is used and reduces
  there, as `infer_cross_mesh_reductions` does for every such op.

Both are identities for JAX: the derivative of one is the other (the
gradient of a broadcast value is reduced over the meshes it went to).
"""

from __future__ import annotations

from typing import Any, Sequence

from jax.extend import core as jex_core
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import mpmd as mpmd_dialect
from jax.interpreters import ad, batching, mlir

from mpmd.frontend.context import labels_lower_to_ops

__all__ = ["broadcast", "broadcast_p", "reduce", "reduce_p"]


def _identity_primitive(name: str) -> jex_core.Primitive:
    primitive = jex_core.Primitive(name)
    primitive.def_impl(lambda x: x)
    primitive.def_abstract_eval(lambda aval: aval)
    batching.defvectorized(primitive)
    return primitive


broadcast_p = _identity_primitive("mpmd_broadcast")
reduce_p = _identity_primitive("mpmd_reduce")

ad.deflinear2(broadcast_p, lambda ct, x: [reduce_p.bind(ct)])
ad.deflinear2(reduce_p, lambda ct, x: [broadcast_p.bind(ct)])


def _broadcast_lowering(ctx: mlir.LoweringRuleContext,
                        x: Any) -> Sequence[Any]:
    del ctx
    if not labels_lower_to_ops():
        return [x]
    return [mpmd_dialect.BroadcastOp(x).result]


def _reduce_lowering(ctx: mlir.LoweringRuleContext, x: Any) -> Sequence[Any]:
    del ctx
    if not labels_lower_to_ops():
        return [x]
    # One operand, no reduction of its own: it marks its operand's
    # computation as the cross-mesh reduction.
    none = ir.Attribute.parse("#mpmd.reduction<none>")
    return [mpmd_dialect.ReduceOp([x], reduction=none).result]


mlir.register_lowering(broadcast_p, _broadcast_lowering)
mlir.register_lowering(reduce_p, _reduce_lowering)


def broadcast(x: Any) -> Any:
    """`x`, usable on every mesh that needs it (see the module doc)."""
    return broadcast_p.bind(x)


def reduce(x: Any) -> Any:
    """`x`, marked as the result of a cross-mesh reduction (see the module
    doc)."""
    return reduce_p.bind(x)
