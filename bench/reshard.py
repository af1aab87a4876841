#!/usr/bin/env python3
"""Weight sync between meshes: `mpmd.reshard` against a host round trip.

One float32 array of S MiB (S = 1, 4, 16, 64, 256 by default), laid out on
a "training" mesh of 4 CPU devices as (data=2, model=2) with
P("data", "model"), moves to a "generation" mesh of the other 4 devices as
(x=4) with P(None, "x"): another mesh and another layout. Routes:

  reshard   mpmd.reshard(x, target): an on-device reshard to the target's
            layout, then copies between the device sets (no host)
  host      jax.device_put(jax.device_get(x), target): what a user without
            it writes (the whole array through host memory)

Each is timed until the result is ready (`jax.block_until_ready`), the
median of --repeat runs after one warm-up, and printed in ms and GB/s of
array bytes, with host / reshard (above 1: reshard is faster). Values are
checked equal once per size. One process; the two-process case is tested
in python/tests/test_multiprocess.py. On CPU "devices" share the host's
memory, so both routes are memory copies: what this measures is the
number and kind of copies, not an interconnect.

Usage:
  .venv/bin/python bench/reshard.py [--sizes 1,4,16,64,256] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402


def timed(route, repeat: int) -> float:
    jax.block_until_ready(route())  # warm-up (compiles the reshard)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(route())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,4,16,64,256",
                        help="array sizes in MiB, comma-separated")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    devices = np.array(jax.devices()[:8])
    train = Mesh(devices[:4].reshape(2, 2), ("data", "model"))
    generate = Mesh(devices[4:], ("x",))
    source = NamedSharding(train, P("data", "model"))
    target = NamedSharding(generate, P(None, "x"))
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs; float32 [rows, "
          "1024] from (data=2, model=2) P('data', 'model') to (x=4) "
          f"P(None, 'x'); median of {options.repeat}")
    print(f"{'MiB':>5} {'reshard ms':>11} {'GB/s':>7} {'host ms':>9} "
          f"{'GB/s':>7} {'host/reshard':>13}")
    for mib in (int(s) for s in options.sizes.split(",")):
        rows = mib * 1024 * 1024 // (4 * 1024)
        x = jax.device_put(
            np.arange(rows * 1024, dtype=np.float32).reshape(rows, 1024),
            source)
        moved = mpmd.reshard(x, target)
        assert moved.sharding == target
        np.testing.assert_array_equal(np.asarray(moved), np.asarray(x))
        del moved
        fast = timed(lambda: mpmd.reshard(x, target), options.repeat)
        slow = timed(lambda: jax.device_put(jax.device_get(x), target),
                     options.repeat)
        size = rows * 1024 * 4
        print(f"{mib:>5} {fast * 1e3:11.2f} {size / fast / 1e9:7.2f} "
              f"{slow * 1e3:9.2f} {size / slow / 1e9:7.2f} {slow / fast:13.2f}")


if __name__ == "__main__":
    main()
