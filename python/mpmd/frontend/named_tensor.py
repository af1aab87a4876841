"""`named_tensor`: a named identity, whose name an assignment may place.

    x = mpmd.named_tensor(x, "activations")

Lowered to `mpmd.named_tensor` under `mpmd.jit` (its plain value
otherwise); its cotangent is named the same, so a gradient lives where its
value lives.
"""

from __future__ import annotations

from typing import Any, Sequence

from jax.extend import core as jex_core
from jax.extend.mlir.dialects import mpmd as mpmd_dialect
from jax.interpreters import ad, batching, mlir

from mpmd.frontend.context import lowers_inline
from mpmd.frontend.primitives import check_name

__all__ = ["named_tensor", "named_tensor_p"]


named_tensor_p = jex_core.Primitive("mpmd_named_tensor")


@named_tensor_p.def_impl
def _nt_impl(x: Any, *, name: str) -> Any:
    del name
    return x


@named_tensor_p.def_abstract_eval
def _nt_abstract_eval(aval: Any, *, name: str) -> Any:
    del name
    return aval


def _nt_transpose(ct: Any, x: Any, *, name: str) -> list[Any]:
    del x
    return [named_tensor_p.bind(ct, name=name)]


def _nt_lowering(ctx: mlir.LoweringRuleContext, x: Any, *,
                 name: str) -> Sequence[Any]:
    del ctx
    if lowers_inline():
        return [x]
    return [mpmd_dialect.NamedTensorOp(x, name).result]


ad.deflinear2(named_tensor_p, _nt_transpose)
batching.defvectorized(named_tensor_p)
mlir.register_lowering(named_tensor_p, _nt_lowering)


def named_tensor(x: Any, name: str) -> Any:
    """Names the array `x` (an identity); lowers to `mpmd.named_tensor`."""
    check_name(name, "named_tensor")
    return named_tensor_p.bind(x, name=name)
