#!/usr/bin/env python3
"""JAX's persistent compilation cache across processes, as users set it.

The step: the 4-block transformer of `examples/models.py` (embedding, 4
blocks, head), one block per mesh on 4 meshes of 2 CPU devices, 8
microbatches with `mpmd.fori_loop`, SGD, 1F1B. Each run is a fresh
process that sets only `jax_compilation_cache_dir` (as JAX users do) and
times lower (trace + partition) and compile (XLA, every program):

  first    an empty cache directory
  second   the same directory, written by the first

The table gives each process's seconds and the second's total as a
fraction of the first's. Also with the cache off, for reference.

Usage:
  .venv/bin/python bench/compile_cache.py [--microbatches 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, os, sys, time
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, sys.argv[1])
import jax
if sys.argv[2]:
    jax.config.update("jax_compilation_cache_dir", sys.argv[2])
import models, mpmd, numpy as np
microbatches = int(sys.argv[3])
devices = np.array(jax.devices()[:8]).reshape(4, 2)
meshes = [f"m{i + 1}" for i in range(4)]
topology = {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(meshes)}
params = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                 heads=2, layers=4, seq=8)
tokens = jax.random.randint(jax.random.PRNGKey(1), (microbatches, 2, 8),
                            0, 32)
config = mpmd.make_config(topology, models.transformer_assignment(4, meshes),
                          partitioning_options={"pipeline_schedule": "1f1b"})
start = time.perf_counter()
lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
    params, tokens, tokens)
lowered_at = time.perf_counter()
compiled = lowered.compile()
done = time.perf_counter()
print(json.dumps({"lower": lowered_at - start, "compile": done - lowered_at,
                  "programs": len(lowered.plan.programs)}))
"""


def run(cache: str, microbatches: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(HERE, "..", "examples"),
         cache, str(microbatches)],
        capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--microbatches", type=int, default=8)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        rows.append(("cache off", run("", args.microbatches)))
        rows.append(("first", run(cache, args.microbatches)))
        rows.append(("second", run(cache, args.microbatches)))
        entries = len(os.listdir(cache))
    first = rows[1][1]["lower"] + rows[1][1]["compile"]
    print(f"{'process':10s} {'lower s':>8s} {'compile s':>10s} "
          f"{'total s':>8s} {'/ first':>8s} programs")
    for name, row in rows:
        total = row["lower"] + row["compile"]
        print(f"{name:10s} {row['lower']:8.2f} {row['compile']:10.2f} "
              f"{total:8.2f} {total / first:8.2f} {row['programs']:8d}")
    print(f"cache entries written: {entries}")


if __name__ == "__main__":
    main()
