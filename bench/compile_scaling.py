#!/usr/bin/env python3
"""How the compile path grows with the number of microbatches.

A 4-stage training step: the transformer of `examples/models.py` (embedding
and 4 blocks and a head, labelled), one block per mesh on 4 meshes of 2 CPU
devices, gradients accumulated over M microbatches with `mpmd.fori_loop`,
one SGD update, 1F1B. For each M (default 8, 32, 128, 512, 1024), in one
run, from `Lowered.timings` / `Compiled.timings`:

  trace      JAX traces and lowers the step (the loop body once)
  partition  the mpmd compiler: unroll, import, schedule, sharding, export
  plan       reading the execution plan
  compile    XLA compiles every distinct program for its mesh (caches
             cleared before each M; one warm-up run first)
  programs   distinct programs (bounded by stages x kinds, not by M)
  steps      steps of the plan (calls and transfers)
  path       trace + partition + plan + compile, and its ratio to the
             smallest M
  1st step   the first call (places the constant arguments once, then runs)
  step       the median of --steps later calls (blocked on), ms

With --partition-only, each M is only lowered (traced and partitioned),
--repeat times, and the medians of trace, partition and plan are printed:
the part of the path that is the mpmd compiler's, for before/after
comparisons of it.

Usage:
  .venv/bin/python bench/compile_scaling.py [--microbatches 8,32,128,512,1024]
      [--steps 3] [--dim 32] [--partition-only [--repeat 5]]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples"))
import models  # noqa: E402

import mpmd  # noqa: E402
from mpmd.runtime import clear_program_cache  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]
BLOCKS = 4


def setup(m: int, dim: int) -> tuple:
    """The config and the step's arguments for M microbatches."""
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    topology = {name: jax.sharding.Mesh(devices[i], ("x",))
                for i, name in enumerate(MESHES)}
    config = mpmd.make_config(
        topology, models.transformer_assignment(BLOCKS, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b"})
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=64,
                                     dim=dim, heads=2, layers=BLOCKS, seq=16)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (m, 2, 16), 0, 64)
    targets = jnp.roll(tokens, -1, axis=2)
    return config, params, tokens, targets


def measure(m: int, dim: int, steps: int) -> dict[str, float]:
    config, params, tokens, targets = setup(m, dim)
    # A first trace and compile, not JAX's or the runtime's cached ones.
    jax.clear_caches()
    clear_program_cache()
    step = mpmd.jit(models.transformer_microbatched_step, config)
    lowered = step.lower(params, tokens, targets)
    compiled = lowered.compile()
    start = time.perf_counter()
    out = jax.block_until_ready(compiled(params, tokens, targets))
    first = time.perf_counter() - start
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(params, tokens, targets))
        times.append(time.perf_counter() - start)
    del out
    row = dict(compiled.timings)
    row.update(programs=len(lowered.plan.programs),
               steps=len(lowered.plan.steps), first=first,
               step=float(np.median(times)))
    row["path"] = sum(row[k] for k in ("trace", "partition", "plan",
                                       "compile"))
    return row


def measure_partition(m: int, dim: int, repeat: int) -> dict[str, float]:
    """Medians of the lowering phases over `repeat` lowerings."""
    config, params, tokens, targets = setup(m, dim)
    runs = []
    for _ in range(repeat):
        step = mpmd.jit(models.transformer_microbatched_step, config)
        lowered = step.lower(params, tokens, targets)
        runs.append(dict(lowered.timings, steps=len(lowered.plan.steps)))
    return {key: float(np.median([run[key] for run in runs]))
            for key in runs[0]}


def main_partition_only(sizes: list[int], dim: int, repeat: int) -> None:
    header = (f"{'M':>5} {'steps':>7} {'trace s':>8} {'partition s':>12} "
              f"{'plan s':>7}")
    print(f"transformer, {BLOCKS} blocks on 4 meshes, 1F1B: lowering only, "
          f"median of {repeat}")
    print(header)
    print("-" * len(header))
    measure_partition(2, dim, 1)  # warm-up
    for m in sizes:
        row = measure_partition(m, dim, repeat)
        print(f"{m:>5} {int(row['steps']):>7} {row['trace']:>8.3f} "
              f"{row['partition']:>12.3f} {row['plan']:>7.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--microbatches", default="8,32,128,512,1024")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--partition-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(m) for m in args.microbatches.split(",")]
    if args.partition_only:
        main_partition_only(sizes, args.dim, args.repeat)
        return
    header = (f"{'M':>5} {'trace s':>8} {'partition s':>12} {'plan s':>7} "
              f"{'compile s':>10} {'programs':>9} {'steps':>7} {'path s':>7} "
              f"{'vs first':>9} {'1st step s':>11} {'step ms':>8}")
    print(f"transformer, {BLOCKS} blocks on 4 meshes of 2 CPU devices, "
          f"dim {args.dim}, 1F1B, mpmd.fori_loop over M microbatches")
    print(header)
    print("-" * len(header))
    measure(2, args.dim, 1)  # warm-up: JAX and XLA initialize once
    base = None
    for m in sizes:
        row = measure(m, args.dim, args.steps)
        base = base or row["path"]
        print(f"{m:>5} {row['trace']:>8.2f} {row['partition']:>12.2f} "
              f"{row['plan']:>7.2f} {row['compile']:>10.2f} "
              f"{row['programs']:>9} {row['steps']:>7} {row['path']:>7.2f} "
              f"{row['path'] / base:>8.2f}x {row['first']:>11.2f} "
              f"{row['step'] * 1e3:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
