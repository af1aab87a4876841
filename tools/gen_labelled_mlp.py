#!/usr/bin/env python3
"""Prints a labelled MLP training step lowered by JAX, in MLIR's generic form.

This is the input of the import tests (test/Transforms/Import/jax_mlp_import*):
one SGD step of a three-layer MLP with tanh, each layer a `named_computation`
(`layer1`..`layer3`); the mean squared error loss and the parameter update
are not named. `jax.value_and_grad` makes the backward of each layer a named
computation with transpose count 1. The public `main` function gets the
topology `m1`, `m2`, `m3` (each `["x"=2]`).

Arguments of `main`: w1, b1, w2, b2, w3, b3, x, y (indices 0..7).
Results: loss, then the updated w1, b1, w2, b2, w3, b3.

The output is deterministic (fixed shapes, CPU only, no debug locations) and
is checked in as
test/Transforms/Import/Inputs/labelled_mlp_train_step.generic.mlir.

Usage: PYTHONPATH=build/python_packages .venv/bin/python \\
           tools/gen_labelled_mlp.py > out.mlir
"""

from __future__ import annotations

import os
import sys
from typing import Any

TOPOLOGY = (
    '#mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>, '
    '<"m3" : <["x"=2]>>>'
)
BATCH, IN_DIM, HIDDEN, OUT_DIM = 8, 16, 32, 4
LEARNING_RATE = 0.1


def _import_jax() -> Any:
    # Set before the first import: the module must not depend on which
    # accelerators are present.
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax  # noqa: PLC0415

    return jax


def labelled_mlp_train_step(jax: Any) -> Any:
    """Returns `jax.jit(step).lower(...)` of the labelled training step."""
    import jax.numpy as jnp  # noqa: PLC0415

    from mpmd.frontend import emit_named_computations, named_computation  # noqa: PLC0415

    def dense(w: Any, b: Any, x: Any) -> Any:
        return jnp.tanh(x @ w + b)

    layers = [named_computation(dense, name=f"layer{i}") for i in (1, 2, 3)]

    def loss_fn(params: Any, x: Any, y: Any) -> Any:
        h = x
        for layer, (w, b) in zip(layers, params):
            h = layer(w, b, h)
        return jnp.mean((h - y) ** 2)

    def train_step(params: Any, x: Any, y: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        new_params = jax.tree_util.tree_map(
            lambda p, g: p - LEARNING_RATE * g, params, grads)
        return loss, new_params

    f32 = jnp.float32
    dims = [(IN_DIM, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, OUT_DIM)]
    params = tuple(
        (jax.ShapeDtypeStruct(d, f32), jax.ShapeDtypeStruct(d[1:], f32))
        for d in dims)
    x = jax.ShapeDtypeStruct((BATCH, IN_DIM), f32)
    y = jax.ShapeDtypeStruct((BATCH, OUT_DIM), f32)
    with emit_named_computations():
        return jax.jit(train_step).lower(params, x, y)


def generic_text_with_topology(lowered: Any) -> str:
    """The lowered module with the topology on `main`, printed generic."""
    from jax.extend.mlir import ir  # noqa: PLC0415

    module = lowered.compiler_ir("stablehlo")
    with module.context:
        mains = [op for op in module.body.operations
                 if op.operation.name == "func.func"
                 and ir.StringAttr(op.attributes["sym_name"]).value == "main"]
        if len(mains) != 1:
            raise RuntimeError(f"expected one main function, found {len(mains)}")
        mains[0].attributes["topology"] = ir.Attribute.parse(TOPOLOGY)
    return module.operation.get_asm(
        print_generic_op_form=True, enable_debug_info=False)


def main() -> int:
    jax = _import_jax()
    print(generic_text_with_topology(labelled_mlp_train_step(jax)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
