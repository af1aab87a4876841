#!/usr/bin/env python3
"""What an export costs and saves: `mpmd.export` against `mpmd.jit`.

The pipelined Adam step of the tests (4 layers of width --dim on 4 meshes
of 2 CPU devices, 8 microbatches, 1F1B) made three ways, in one run:

  mpmd.jit         lower (trace + partition) and compile, then steps
  export           lower + export every program with jax.export, and the
                   payload's size
  load             deserialize the payload, then the first call (compiles
                   every program from its jax.export payload) and steps;
                   with the C++ step loop, and with its Python twin
                   (what runs where the extension is missing)

Steps: the median of --steps calls on the previous call's results
(parameters and moments stay on their meshes), each waited for. Values
are checked equal to mpmd.jit's once.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/export.py [--dim 256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh  # noqa: E402

import mpmd  # noqa: E402
import mpmd.export  # noqa: E402
from mpmd.runtime import executor, program  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples"))
import models  # noqa: E402  (the step of test_training_loop.py)

LAYERS = 4


def model(dim: int):
    optimizer = optax.adam(1e-3)
    step = models.optimizer_over_microbatches(models.layers_loss, optimizer)
    keys = jax.random.split(jax.random.PRNGKey(0), LAYERS + 2)
    params = {f"layer{i}": {"w": jax.random.normal(keys[i], (dim, dim))
                            / np.sqrt(dim), "b": jnp.zeros(dim)}
              for i in range(LAYERS)}
    xs = jax.random.normal(keys[-2], (8, 16, dim))
    ys = jax.random.normal(keys[-1], (8, 16, dim))
    return step, params, optimizer.init(params), xs, ys


def steps_ms(call, params, state, xs, ys, count: int) -> float:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        params, state, loss = jax.block_until_ready(call(params, state, xs,
                                                         ys))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    step, params, state, xs, ys = model(args.dim)
    devices = np.array(jax.devices()[:8]).reshape(LAYERS, 2)
    topology = {f"m{i}": Mesh(devices[i], ("x",)) for i in range(LAYERS)}
    config = mpmd.make_config(
        topology, {f"layer{i}": (f"m{i}", i) for i in range(LAYERS)},
        partitioning_options={"pipeline_schedule": "1f1b"})
    rows = []

    start = time.perf_counter()
    lowered = mpmd.jit(step, config).lower(params, state, xs, ys)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    expected = compiled(params, state, xs, ys)
    rows.append(("mpmd.jit: lower", lowered_at - start))
    rows.append(("mpmd.jit: compile", compiled_at - lowered_at))
    jit_step = steps_ms(compiled, params, state, xs, ys, args.steps)

    program.clear_program_cache()
    start = time.perf_counter()
    exported = mpmd.export.export(mpmd.jit(step, config))(params, state, xs,
                                                          ys)
    data = exported.serialize()
    rows.append(("export: lower + export", time.perf_counter() - start))

    results = {}
    for native in (True, False):
        program.clear_program_cache()
        executor._native = None if native else False  # noqa: SLF001
        start = time.perf_counter()
        loaded = mpmd.export.deserialize(data)
        read_at = time.perf_counter()
        got = loaded.call(params, state, xs, ys, topology=topology)
        called_at = time.perf_counter()
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b),
                                       rtol=1e-6, atol=1e-7)
        loop = "C++ loop" if native else "Python loop"
        if native:
            rows.append(("load: deserialize", read_at - start))
            rows.append(("load: first call (compile + step)",
                         called_at - read_at))
        results[loop] = steps_ms(loaded.compile(topology), params, state,
                                 xs, ys, args.steps)
    executor._native = None  # noqa: SLF001

    print(f"pipelined Adam step: {LAYERS} layers of width {args.dim} on "
          f"{LAYERS} meshes x 2 CPU devices, 8 microbatches, 1F1B; "
          f"{len(exported.plan.programs)} programs, "
          f"{len(exported.plan.steps)} plan steps")
    print(f"payload: {len(data) / 1024:.0f} KiB")
    print()
    print(f"{'phase':<36} {'s':>8}")
    for name, seconds in rows:
        print(f"{name:<36} {seconds:>8.3f}")
    print()
    print(f"{'step (median of %d)' % args.steps:<36} {'ms':>8}")
    print(f"{'mpmd.jit (C++ loop)':<36} {jit_step:>8.2f}")
    for loop, ms in results.items():
        print(f"{'export, ' + loop:<36} {ms:>8.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
