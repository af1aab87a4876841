#!/usr/bin/env python3
"""Prints a StableHLO module lowered by JAX, in MLIR's generic form.

These modules are the interop fixtures of the compiler: they are exactly what
JAX hands to `mpmd-opt`, so the lit tests under test/Interop check that the
stablehlo compat dialect reads them and writes them back byte for byte. The
output is deterministic (fixed shapes, CPU only, no debug locations) and is
checked in:

  --module=mlp (default)  test/Interop/jax_mlp_train_step.generic.mlir
      One SGD step of a two-layer MLP with tanh: forward, mean squared error
      loss, `jax.value_and_grad`, parameter update.
  --module=ops            test/Interop/jax_op_zoo.generic.mlir
      Many other ops JAX emits (control flow, sort, gather/scatter, RNG,
      convolution, FFT, LAPACK custom calls, collectives under shard_map,
      Shardy sharding constraints, CHLO ops), to cover the opaque paths.

The text is printed with `print`, i.e. followed by one newline, which is how
MLIR tools (`mpmd-opt`, `mlir-opt`) end their output too; the checked-in
files are therefore fixed points of `mpmd-opt --mlir-print-op-generic`.

Usage: .venv/bin/python tools/gen_jax_module.py [--module=mlp|ops] > out.mlir
"""

import argparse
import os
import sys

# The op zoo needs a 2x2 mesh of devices.
ZOO_DEVICES = 4


def _import_jax():
    # JAX reads these when it initialises its backends, so they must be set
    # before the first import: the module must not depend on which
    # accelerators happen to be present.
    os.environ["JAX_PLATFORMS"] = "cpu"
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = (
        f"{flags} --xla_force_host_platform_device_count={ZOO_DEVICES}".strip()
    )
    import jax  # noqa: PLC0415

    return jax


def _generic_text(lowered) -> str:
    module = lowered.compiler_ir("stablehlo")
    return module.operation.get_asm(
        print_generic_op_form=True, enable_debug_info=False
    )


def mlp_train_step(jax) -> str:
    """Lowers one SGD step of a two-layer MLP."""
    import jax.numpy as jnp  # noqa: PLC0415

    batch, in_dim, hidden, out_dim = 8, 16, 32, 4
    learning_rate = 0.1

    def mlp(params, x):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        return h @ w2 + b2

    def loss_fn(params, x, y):
        return jnp.mean((mlp(params, x) - y) ** 2)

    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        new_params = tuple(p - learning_rate * g for p, g in zip(params, grads))
        return loss, new_params

    f32 = jnp.float32
    params = (
        jax.ShapeDtypeStruct((in_dim, hidden), f32),
        jax.ShapeDtypeStruct((hidden,), f32),
        jax.ShapeDtypeStruct((hidden, out_dim), f32),
        jax.ShapeDtypeStruct((out_dim,), f32),
    )
    x = jax.ShapeDtypeStruct((batch, in_dim), f32)
    y = jax.ShapeDtypeStruct((batch, out_dim), f32)
    return _generic_text(jax.jit(train_step).lower(params, x, y))


def op_zoo(jax) -> str:
    """Lowers a function touching many ops the compat dialect keeps opaque."""
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax import lax  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding  # noqa: PLC0415
    from jax.sharding import PartitionSpec as P  # noqa: PLC0415

    mesh = Mesh(np.array(jax.devices()[:ZOO_DEVICES]).reshape(2, 2), ("a", "b"))

    def collectives(x):
        return (
            lax.psum(x, "a"),
            lax.all_gather(x, "b"),
            lax.ppermute(x, "a", [(0, 1), (1, 0)]),
        )

    def zoo(x, idx, key, img, kern, sym):
        x = lax.with_sharding_constraint(x, NamedSharding(mesh, P("a", None)))
        loop = lax.fori_loop(0, 3, lambda i, c: c * 2.0 + jnp.sin(c), x)
        cond = lax.cond(x[0, 0] > 0, lambda: x + 1, lambda: x - 1)
        eigvals, eigvecs = jnp.linalg.eigh(sym)
        rbg = jax.random.bits(jax.random.key(1, impl="rbg"), (4,))
        return (
            loop,
            cond,
            jnp.sort(x, axis=0),
            jnp.argmax(x, axis=1),
            jnp.cumsum(x, axis=0),
            x[idx],
            x.at[idx].add(1.0),
            jax.random.normal(key, (4,)),
            jax.scipy.special.erf(x),
            lax.top_k(x, 2)[0],
            lax.conv(img, kern, (1, 1), "SAME"),
            lax.dynamic_slice(x, (idx[0], 0), (2, 3)),
            x.astype(jnp.int8).astype(jnp.bfloat16),
            jax.nn.logsumexp(x, axis=1),
            jnp.einsum("ij,kj->ik", x, x, precision=lax.Precision.HIGHEST),
            jnp.clip(x, -1.0, 1.0),
            x**3.5,
            jnp.expm1(x) + jnp.log1p(jnp.abs(x)) + jax.nn.sigmoid(x),
            jnp.arange(12).reshape(3, 4),
            jnp.concatenate([x, x], axis=0)[1:5:2],
            eigvals,
            eigvecs,
            jnp.fft.fft(x.astype(jnp.complex64)),
            lax.optimization_barrier(x),
            lax.reduce_precision(x, 5, 10),
            rbg,
            jax.shard_map(
                collectives,
                mesh=mesh,
                in_specs=P("a", "b"),
                out_specs=(P(None, "b"), P("a", None), P("a", "b")),
                check_vma=False,
            )(x),
        )

    f32 = jnp.float32
    args = (
        jax.ShapeDtypeStruct((4, 4), f32),
        jax.ShapeDtypeStruct((2,), jnp.int32),
        jax.random.key(0),
        jax.ShapeDtypeStruct((1, 2, 8, 8), f32),
        jax.ShapeDtypeStruct((3, 2, 3, 3), f32),
        jax.ShapeDtypeStruct((3, 3), f32),
    )
    jitted = jax.jit(
        zoo, in_shardings=(NamedSharding(mesh, P("a")),) + (None,) * 5
    )
    return _generic_text(jitted.lower(*args))


MODULES = {"mlp": mlp_train_step, "ops": op_zoo}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", choices=sorted(MODULES), default="mlp")
    args = parser.parse_args()
    jax = _import_jax()
    print(MODULES[args.module](jax))
    return 0


if __name__ == "__main__":
    sys.exit(main())
