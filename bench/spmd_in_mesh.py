#!/usr/bin/env python3
"""SPMD within meshes: what sharding inside each mesh buys, for one model.

The demo's transformer (embed + blocks + head, microbatched training step
with SGD), 8 CPU devices. Three ways to run the same step:
  * mpmd replicated   2 meshes of 2x2 ("data", "model"), 1F1B; every array
                      replicated on its mesh (host inputs, nothing sharded)
  * mpmd sharded      the same meshes; weights split over "model"
                      (Megatron-style), the batch over "data"
  * jax.jit SPMD      one 4x2 ("data", "model") mesh over all 8 devices, the
                      same PartitionSpecs, no pipeline
Printed per way: the parameter bytes one device holds (largest over devices),
the distinct programs / executables, compile time (lower + compile), and the
step time (median over --steps calls after one warm-up, each call blocked
on). Also checked: the three agree on the loss (rtol 1e-5), and the sharded
parameters come back with their shardings. Ratios are against mpmd
replicated, measured in the same run.

The CPU "devices" share this machine's cores, so step times say how much
overhead the collectives and the pipeline add here, not what a real
accelerator mesh would gain; the parameter bytes are exact.

Usage:
  .venv/bin/python bench/spmd_in_mesh.py [--dim 128] [--layers 4] [--steps 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import models  # noqa: E402

import mpmd  # noqa: E402

MESHES = ["m1", "m2"]


def per_device_bytes(tree: Any) -> int:
    """Bytes of `tree`'s arrays held by the device that holds the most."""
    held: dict[Any, int] = {}
    for leaf in jax.tree.leaves(tree):
        for shard in leaf.addressable_shards:
            held[shard.device] = held.get(shard.device, 0) + shard.data.nbytes
    return max(held.values())


def time_steps(run: Callable[[], Any], steps: int) -> tuple[float, Any]:
    out = jax.block_until_ready(run())  # warm-up
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        out = jax.block_until_ready(run())
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    devices = np.array(jax.devices()[:8])
    topology = {name: Mesh(devices[4 * i:4 * i + 4].reshape(2, 2),
                           ("data", "model"))
                for i, name in enumerate(MESHES)}
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=256,
                                     dim=args.dim, heads=4, layers=args.layers,
                                     seq=args.seq)
    shape = (args.microbatches, args.batch, args.seq)
    tokens = np.asarray(jax.random.randint(jax.random.PRNGKey(1), shape, 0, 256))
    targets = np.roll(tokens, -1, axis=2)
    assignment = models.transformer_assignment(args.layers, MESHES)
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": "1f1b"})
    step = models.transformer_microbatched_step
    batch = P(None, "data")
    rows = []

    def run_mpmd(label: str, inputs: tuple) -> tuple[Any, Any]:
        start = time.perf_counter()
        compiled = mpmd.jit(step, config).lower(*inputs).compile()
        compile_time = time.perf_counter() - start
        step_time, out = time_steps(lambda: compiled(*inputs), args.steps)
        rows.append((label, per_device_bytes(out[0]),
                     len(compiled.plan.programs), compile_time, step_time))
        return out, compiled

    replicated, _ = run_mpmd("mpmd replicated", (params, tokens, targets))
    shardings = models.transformer_shardings(params, topology, assignment)
    sharded_inputs = (jax.device_put(params, shardings),
                      jax.device_put(tokens, NamedSharding(topology["m1"], batch)),
                      jax.device_put(targets, NamedSharding(topology["m2"], batch)))
    sharded, _ = run_mpmd("mpmd sharded", sharded_inputs)

    spmd_mesh = Mesh(devices.reshape(4, 2), ("data", "model"))
    spmd_shardings = jax.tree.map(lambda s: NamedSharding(spmd_mesh, s),
                                  models.transformer_specs(params),
                                  is_leaf=lambda s: isinstance(s, P))
    spmd_inputs = (jax.device_put(params, spmd_shardings),
                   jax.device_put(tokens, NamedSharding(spmd_mesh, batch)),
                   jax.device_put(targets, NamedSharding(spmd_mesh, batch)))
    start = time.perf_counter()
    spmd_step = jax.jit(step).lower(*spmd_inputs).compile()
    compile_time = time.perf_counter() - start
    step_time, spmd = time_steps(lambda: spmd_step(*spmd_inputs), args.steps)
    rows.append(("jax.jit SPMD", per_device_bytes(spmd[0]), 1, compile_time,
                 step_time))

    for name, out in (("mpmd sharded", sharded), ("jax.jit SPMD", spmd)):
        np.testing.assert_allclose(out[1], replicated[1], rtol=1e-5,
                                   err_msg=f"{name} loss differs")
    kept = all(a.sharding.is_equivalent_to(b, a.ndim) for a, b in
               zip(jax.tree.leaves(sharded[0]), jax.tree.leaves(shardings)))

    total = sum(x.nbytes for x in jax.tree.leaves(params))
    print(f"transformer: dim {args.dim}, {args.layers} blocks, "
          f"{total / 2**20:.2f} MiB of parameters; {args.microbatches} "
          f"microbatches of {args.batch}x{args.seq} tokens; 8 CPU devices")
    base_bytes, base_time = rows[0][1], rows[0][4]
    header = (f"{'way':<16} {'param bytes/device':>19} {'vs repl.':>9} "
              f"{'programs':>9} {'compile s':>10} {'step ms':>9} {'vs repl.':>9}")
    print(header)
    print("-" * len(header))
    for label, nbytes, programs, compile_s, step_s in rows:
        print(f"{label:<16} {nbytes:>19,} {nbytes / base_bytes:>9.2f} "
              f"{programs:>9} {compile_s:>10.1f} {step_s * 1e3:>9.1f} "
              f"{step_s / base_time:>9.2f}")
    print(f"losses agree (rtol 1e-5); sharded parameters keep their "
          f"shardings: {kept}")


if __name__ == "__main__":
    main()
