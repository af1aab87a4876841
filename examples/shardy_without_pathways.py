"""Run what Shardy:MPMD partitions, without Pathways.

Shardy:MPMD's `mpmd.jit(f, config).lower(*args)` gives an `MpmdLowered`
whose `as_text()` is IFRT IR, the program Pathways would run: atom
programs called on lists of devices, arrays copied between them. mpmd
runs that IFRT IR on JAX's own runtime, in one call:

    run = mpmd.runtime.compile_shardy(lowered)   # Shardy's Lowered
    new_params, loss = run(params, xs, ys)       # f's own pytrees

(`mpmd.runtime.compile_module(ifrt_text)` takes the IFRT IR as text, in
jaxlib's printed form or generic, and runs it on `main`'s flat
arguments; the calls name their devices, so no topology is needed.)

With Shardy's Python package importable
(`shardy.integrations.python.jax.mpmd`, see
/work/shared/tools/shardy/README.md), this script partitions a 4-stage
MLP's training step with Shardy's own `mpmd.jit` and 1F1B, and runs it
with `compile_shardy`. Without it, it takes the module the real
Shardy:MPMD partitioned from the same step (stored with the tests by
tools/make_shardy_modules.py), lowers it to IFRT IR with jaxlib's own
`_sdy_mpmd.lower_to_ifrt` (what Shardy's `lower` calls) and runs that
with `compile_module`. Either way the results equal `jax.jit`'s.

One process, 8 CPU devices:

    .venv/bin/python examples/shardy_without_pathways.py

Two processes of 4 devices each (meshes 0 and 1 on the first, 2 and 3 on
the second; each process runs its meshes' programs):

    .venv/bin/python -m mpmd.launch -n 2 --devices-per-process 4 \\
        examples/shardy_without_pathways.py
"""

from __future__ import annotations

import os
import pathlib
import sys

if "MPMD_PROCESS_ID" not in os.environ and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import mpmd  # noqa: E402

STAGES = 4
MICROBATCHES = 4
WIDTH = 8
STORED = (pathlib.Path(__file__).resolve().parents[1] / "python" / "tests"
          / "data" / "shardy")


def layer(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


def train_step(params, xs, ys, *, labels=None):
    """One SGD step on gradients accumulated over microbatches; with
    `labels` (Shardy's module), layer i is the named computation
    `stage<i>` and the loop is Shardy's `fori_loop`."""

    def loss(params, x, y):
        for i, p in enumerate(params):
            x = (labels.named_computation(layer, name=f"stage{i}")(p, x)
                 if labels else layer(p, x))
        return jnp.mean((x - y) ** 2)

    def body(i, carry):
        grads, total = carry
        value, g = jax.value_and_grad(loss)(params, xs[i], ys[i])
        return jax.tree.map(jnp.add, grads, g), total + value

    zeros = (jax.tree.map(jnp.zeros_like, params), jnp.zeros(()))
    loop = labels.fori_loop if labels else jax.lax.fori_loop
    grads, total = (loop(MICROBATCHES, body, zeros) if labels
                    else loop(0, MICROBATCHES, body, zeros))
    new = jax.tree.map(lambda p, g: p - 0.1 * g / MICROBATCHES, params,
                       grads)
    return new, total / MICROBATCHES


def data():
    keys = jax.random.split(jax.random.PRNGKey(0), STAGES + 2)
    params = [{"w": jax.random.normal(k, (WIDTH, WIDTH)) / 3,
               "b": jax.random.normal(k, (WIDTH,)) / 10}
              for k in keys[:STAGES]]
    xs = jax.random.normal(keys[-2], (MICROBATCHES, 4, WIDTH))
    ys = jax.random.normal(keys[-1], (MICROBATCHES, 4, WIDTH))
    return params, xs, ys


def check(results, want, what: str) -> None:
    count = 0
    for got, expected in zip(jax.tree.leaves(results),
                             jax.tree.leaves(want)):
        for shard in got.addressable_shards:  # this process's part
            np.testing.assert_allclose(np.asarray(shard.data),
                                       np.asarray(expected)[shard.index],
                                       rtol=2e-5, atol=1e-6)
            count += 1
    print(f"process {jax.process_index()}: {what}: {count} shards equal "
          "jax.jit", flush=True)


def with_shardy(shardy) -> None:
    """Shardy's own mpmd.jit partitions; mpmd's runtime runs."""
    devices = np.array(jax.devices()[:2 * STAGES]).reshape(STAGES, 2)
    topology = {f"mesh{i}": jax.sharding.Mesh(devices[i], ("data",))
                for i in range(STAGES)}
    config = shardy.make_config(
        topology, {f"stage{i}": f"mesh{i}" for i in range(STAGES)},
        partitioning_options={"mpmd_pipeline_schedule": "1F1B"})
    params, xs, ys = data()
    lowered = shardy.jit(lambda p, x, y: train_step(p, x, y, labels=shardy),
                         config).lower(params, xs, ys)
    run = mpmd.runtime.compile_shardy(lowered)  # the one call
    check(run(params, xs, ys), jax.jit(train_step)(params, xs, ys),
          "Shardy's mpmd.jit, run by mpmd.runtime.compile_shardy")
    for name, programs in run.module.programs_by_mesh().items():
        print(f"  {name}: {len(programs)} programs")


def with_stored_module() -> None:
    """The module the real Shardy:MPMD partitioned, lowered to IFRT IR by
    jaxlib, run by compile_module."""
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    from mpmd import jaxlib_dialects  # noqa: PLC0415

    with jaxlib_dialects.context():
        module = ir.Module.parse(
            (STORED / "1f1b_fori_4meshes.mlir").read_text())
        jaxlib_dialects.sdy_mpmd().lower_to_ifrt(module)
        ifrt = str(module)
    run = mpmd.runtime.compile_module(ifrt)  # no topology: the IR says
    stored = np.load(STORED / "1f1b_fori_4meshes.npz")
    flat = [stored[f"arg{i}"] for i in range(len(run.inputs))]
    params = [{"b": flat[2 * i], "w": flat[2 * i + 1]}
              for i in range(STAGES)]
    want = jax.jit(train_step)(params, flat[-2], flat[-1])
    check(run(*flat), want, "IFRT IR of Shardy's 1F1B module, run by "
          "mpmd.runtime.compile_module")
    for name, mesh in run.meshes.items():
        print(f"  {name}: devices {[d.id for d in mesh.devices.flat]}")


def main() -> None:
    if "MPMD_PROCESS_ID" in os.environ:
        import mpmd.distributed  # noqa: PLC0415

        mpmd.distributed.initialize()
    try:
        from shardy.integrations.python.jax import mpmd as shardy
    except ImportError:
        shardy = None
    if shardy is not None and "--stored" not in sys.argv:
        with_shardy(shardy)
    else:
        with_stored_module()


if __name__ == "__main__":
    main()
