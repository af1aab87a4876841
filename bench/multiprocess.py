#!/usr/bin/env python3
"""The same pipeline as 1, 2 or 4 processes, and transfers between processes.

The 4-stage transformer of `examples/models.py` (1F1B, M microbatches with
`mpmd.fori_loop`, 4 meshes of 2 CPU devices) runs as 1 process x 8
devices, 2 x 4 (two meshes per process) and 4 x 2 (one mesh per process),
each started with `python -m mpmd.launch`. Per layout it prints the compile
time and the median step time of --steps calls (each process times its own
part, blocked on its results; a step takes the slowest process's time).

Then, between mesh m1 (process 0) and mesh m2 (process 1) of the 2 x 4 job,
it moves float32 arrays of --sizes MiB (sharded over the 2 devices of each
mesh) and prints the time and bandwidth of a transfer (the median of
--repeat, all processes released together by a barrier of JAX's
coordination service), beside the same transfer within one process
(device-to-device copies of the 1 x 8 job).

Usage:
  .venv/bin/python bench/multiprocess.py [--steps 5] [--microbatches 8]
      [--dim 64] [--sizes 1,4,16,64,256] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(args: argparse.Namespace) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: PLC0415

    import models  # noqa: PLC0415
    import mpmd  # noqa: PLC0415
    import mpmd.distributed  # noqa: PLC0415
    from mpmd.runtime import processes, remote, transfer  # noqa: PLC0415

    mpmd.distributed.initialize()
    me = jax.process_index()
    devices = jax.devices()
    names = ["m1", "m2", "m3", "m4"]
    meshes = {name: Mesh(np.array(devices[2 * i: 2 * i + 2]), ("x",))
              for i, name in enumerate(names)}
    config = mpmd.make_config(
        meshes, models.transformer_assignment(4, names),
        partitioning_options={"pipeline_schedule": "1f1b"})
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=64,
                                     dim=args.dim, heads=2, layers=4, seq=16)
    tokens = jax.random.randint(jax.random.PRNGKey(1),
                                (args.microbatches, 4, 16), 0, 64)
    targets = jax.random.randint(jax.random.PRNGKey(2),
                                 (args.microbatches, 4, 16), 0, 64)
    start = time.perf_counter()
    step = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets).compile()
    compile_s = time.perf_counter() - start
    out = jax.block_until_ready(step(params, tokens, targets))
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        out = jax.block_until_ready(step(out[0], tokens, targets))
        times.append(time.perf_counter() - start)
    result = {"process": me, "compile": compile_s,
              "step": float(np.median(times)), "transfers": {}}

    source, target = meshes["m1"], meshes["m2"]
    client = processes._client()
    spec = P("x")
    for size in args.sizes:
        count = size * (1 << 20) // 4
        x = jax.device_put(np.ones(count, np.float32),
                           NamedSharding(source, spec))
        want = NamedSharding(target, spec)

        def move(x=x, want=want, count=count):
            if processes.fully_addressable(
                    (*source.devices.flat, *target.devices.flat)):
                return transfer(x, want)
            return remote.cross_process_transfer(
                x if processes.holds(source) else None, x.sharding, want,
                (count,), np.float32)

        taking_part = processes.holds(source) or processes.holds(target)
        seconds = []
        for rep in range(args.repeat + 1):  # the first compiles
            client.wait_at_barrier(f"mpmd_bench_{size}_{rep}", 600_000)
            if not taking_part:
                continue
            start = time.perf_counter()
            moved = move()
            if moved is not None:
                jax.block_until_ready(moved)
            else:
                jax.block_until_ready(x)
            if rep:
                seconds.append(time.perf_counter() - start)
        if processes.holds(target):
            result["transfers"][size] = float(np.median(seconds))
    print("RESULT " + json.dumps(result), flush=True)


def run_layout(processes_: int, devices: int, args: argparse.Namespace,
               ) -> list[dict]:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    command = [sys.executable, "-m", "mpmd.launch", "-n", str(processes_),
               "--devices-per-process", str(devices), "--timeout", "1200",
               os.path.abspath(__file__), "--worker",
               "--steps", str(args.steps), "--microbatches",
               str(args.microbatches), "--dim", str(args.dim),
               "--sizes", ",".join(map(str, args.sizes)),
               "--repeat", str(args.repeat)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    results = [json.loads(line.split("RESULT ", 1)[1])
               for line in done.stdout.splitlines() if "RESULT " in line]
    if done.returncode != 0 or len(results) != processes_:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the {processes_} x {devices} job failed")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", action="store_true",
                        help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--sizes", default="1,4,16,64,256",
                        type=lambda s: [int(v) for v in s.split(",")])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    print(f"transformer, 4 blocks on 4 meshes of 2 CPU devices, dim "
          f"{args.dim}, 1F1B, {args.microbatches} microbatches")
    header = (f"{'layout':>14} {'compile s':>10} {'step ms':>9} "
              f"{'vs 1 x 8':>9}")
    print(header)
    print("-" * len(header))
    layouts = {}
    base = None
    for count, devices in ((1, 8), (2, 4), (4, 2)):
        results = run_layout(count, devices, args)
        layouts[(count, devices)] = results
        step = max(r["step"] for r in results)
        compile_s = max(r["compile"] for r in results)
        base = base or step
        print(f"{f'{count} x {devices}':>14} {compile_s:>10.2f} "
              f"{step * 1e3:>9.1f} {step / base:>8.2f}x", flush=True)

    print()
    print("transfer of a float32 array sharded over 2 devices, m1 -> m2")
    header = (f"{'MiB':>5} {'1 process ms':>13} {'GB/s':>6} "
              f"{'2 processes ms':>15} {'GB/s':>6}")
    print(header)
    print("-" * len(header))

    def seconds(results: list[dict], size: int) -> float:
        return max(r["transfers"][str(size)] for r in results
                   if str(size) in r["transfers"])

    for size in args.sizes:
        local = seconds(layouts[(1, 8)], size)
        remote = seconds(layouts[(2, 4)], size)
        nbytes = size * (1 << 20)
        print(f"{size:>5} {local * 1e3:>13.2f} {nbytes / local / 1e9:>6.2f} "
              f"{remote * 1e3:>15.2f} {nbytes / remote / 1e9:>6.2f}",
              flush=True)


if __name__ == "__main__":
    main()
