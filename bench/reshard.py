#!/usr/bin/env python3
"""Weight sync between meshes: `mpmd.reshard` against `jax.device_put`.

One process, 8 CPU devices. A float32 [rows, 1024] array of S MiB (S = 64
by default) moves between meshes in five cases: the same layout on two
other devices (2->2), a new layout on two other devices, two devices to
four, two devices to a replicated layout on two others, and a (data=2,
model=2) mesh to a (x=4) mesh with another layout. Routes, each timed
until its result is ready (`jax.block_until_ready`), the median of
--repeat runs after one warm-up:

  reshard      mpmd.reshard(x, target)
  device_put   jax.device_put(x, target), what a user writes without mpmd
  host         jax.device_put(jax.device_get(x), target): the whole array
               gathered in host memory, then placed

Every run moves a new source array (the previous one plus one, computed
before the clock starts), as a weight sync after each update does.
`jax.device_put` of an array it has moved before is faster (it keeps the
array's host copy on the array, `x._npy_value`, and reuses it); the
column `put again` shows that case, which a sync of new weights never
meets. `ratio` is reshard / device_put (at most 1.2 is the goal);
`compiles` counts XLA compilations during three syncs of new arrays
after a warm-up (a sync whose layouts were seen before must compile
nothing).
The routes take turns within each round (interleaved), so that the
machine's state and load reach them alike.
Values are checked equal once per case.

On CPU, devices share the host's memory: mpmd.reshard cuts each target
piece once from the source shards in place (one memory copy of its bytes;
`docs/runtime.md`, weight sync); on accelerators it keeps the
device-to-device path (on-device reshard programs, then copies).

With --processes 2 (started with `python -m mpmd.launch`, 4 CPU devices
each), the array moves from two devices of process 0 to two devices of
process 1 with a new layout: mpmd.reshard (device to device over JAX's
collectives) against the host route a user has across processes
(`multihost_utils.process_allgather`, then `jax.device_put`).

Usage:
  .venv/bin/python bench/reshard.py [--sizes 16,64] [--repeat 9]
      [--processes 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def timed(routes: dict, fresh, repeat: int) -> dict:
    """Median seconds of each `routes[name](x)` over `repeat` rounds, each
    route once per round on a new array from `fresh()` (made before the
    clock starts), interleaved so that the machine's state and load reach
    every route alike; after one warm-up round. Returns name -> (seconds,
    last result)."""
    import jax  # noqa: PLC0415

    times: dict = {name: [] for name in routes}
    results: dict = {}
    for round_ in range(repeat + 1):
        for name, route in routes.items():
            x = jax.block_until_ready(fresh())
            start = time.perf_counter()
            results[name] = jax.block_until_ready(route(x))
            if round_:
                times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(times[name]), results[name])
            for name in routes}


class CompileCounter:
    """XLA compilations seen while active (JAX's monitoring events)."""

    def __init__(self) -> None:
        from jax._src import monitoring  # noqa: PLC0415

        self.count = 0
        self.active = False
        monitoring.register_event_duration_secs_listener(self._event)

    def _event(self, event: str, _duration: float, **_kwargs) -> None:
        if self.active and event == "/jax/core/compile/backend_compile_duration":
            self.count += 1


def one_process(options: argparse.Namespace) -> None:
    os.environ.setdefault("XLA_FLAGS",
                          "--xla_force_host_platform_device_count=8")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: PLC0415

    import mpmd  # noqa: PLC0415

    d = np.array(jax.devices()[:8])
    pair_a = Mesh(d[0:2], ("x",))
    pair_b = Mesh(d[2:4], ("x",))
    four = Mesh(d[4:8], ("x",))
    grid = Mesh(d[0:4].reshape(2, 2), ("data", "model"))
    cases = [
        ("same layout 2->2", NamedSharding(pair_a, P("x")),
         NamedSharding(pair_b, P("x"))),
        ("new layout 2->2", NamedSharding(pair_a, P("x")),
         NamedSharding(pair_b, P(None, "x"))),
        ("2->4 devices", NamedSharding(pair_a, P("x")),
         NamedSharding(four, P("x"))),
        ("replicated 2->2", NamedSharding(pair_a, P("x")),
         NamedSharding(pair_b, P())),
        ("(2,2)->(4) new layout", NamedSharding(grid, P("data", "model")),
         NamedSharding(four, P(None, "x"))),
    ]
    counter = CompileCounter()
    bump = jax.jit(lambda v: v + 1)
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, one process; "
          f"float32 [rows, 1024]; median of {options.repeat}, a new source "
          "array each run")
    print(f"{'case':<24} {'MiB':>4} {'reshard ms':>11} {'device_put':>11} "
          f"{'ratio':>6} {'put again':>10} {'host ms':>8} {'compiles':>9}")
    for mib in (int(s) for s in options.sizes.split(",")):
        rows = mib * 1024 * 1024 // (4 * 1024)
        data = np.arange(rows * 1024, dtype=np.float32).reshape(rows, 1024)
        for name, source, target in cases:
            state = {"x": jax.device_put(data, source)}

            def fresh(state=state):
                state["x"] = bump(state["x"])
                return state["x"]

            moved = mpmd.reshard(state["x"], target)
            assert moved.sharding == target
            np.testing.assert_array_equal(np.asarray(moved),
                                          np.asarray(state["x"]))
            del moved
            same = jax.block_until_ready(fresh())
            mpmd.reshard(fresh(), target)  # warm-up, outside the count
            counter.count, counter.active = 0, True
            for _ in range(3):
                jax.block_until_ready(mpmd.reshard(fresh(), target))
            counter.active = False
            compiles = counter.count
            measured = timed({
                "reshard": lambda x: mpmd.reshard(x, target),
                "device_put": lambda x: jax.device_put(x, target),
                "again": lambda _x: jax.device_put(same, target),
                "host": lambda x: jax.device_put(jax.device_get(x), target),
            }, fresh, options.repeat)
            ours, put, again, host = (measured[k][0] for k in (
                "reshard", "device_put", "again", "host"))
            print(f"{name:<24} {mib:>4} {ours * 1e3:11.2f} {put * 1e3:11.2f} "
                  f"{ours / put:6.2f} {again * 1e3:10.2f} {host * 1e3:8.2f} "
                  f"{compiles:>9}")


def worker(options: argparse.Namespace) -> None:
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax.experimental import multihost_utils  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: PLC0415

    import mpmd  # noqa: PLC0415
    import mpmd.distributed  # noqa: PLC0415

    mpmd.distributed.initialize()
    devices = jax.devices()
    first = [d for d in devices if d.process_index == 0][:2]
    second = [d for d in devices if d.process_index == 1][:2]
    source = NamedSharding(Mesh(np.array(first), ("x",)), P("x"))
    target = NamedSharding(Mesh(np.array(second), ("x",)), P(None, "x"))
    bump = jax.jit(lambda v: v + 1)
    me = jax.process_index()
    if me == 0:
        print(f"jax {jax.__version__}, {jax.process_count()} processes x "
              f"{jax.local_device_count()} CPU devices; 2 devices of process"
              " 0, P('x') -> 2 devices of process 1, P(None, 'x'); median of "
              f"{options.repeat}")
        print(f"{'MiB':>5} {'reshard ms':>11} {'host ms':>9} "
              f"{'host/reshard':>13}")
    for mib in (int(s) for s in options.sizes.split(",")):
        rows = mib * 1024 * 1024 // (4 * 1024)
        data = np.arange(rows * 1024, dtype=np.float32).reshape(rows, 1024)
        state = {"x": jax.make_array_from_callback(
            data.shape, source, lambda index: data[index], dtype=data.dtype)}

        def fresh(state=state):
            state["x"] = bump(state["x"])
            return state["x"]

        def host_route(x):
            # What a user has without mpmd: the source's process reads the
            # array into host memory and broadcasts it to every process
            # (JAX's multihost_utils), the target's process places it.
            value = (np.asarray(x) if x.is_fully_addressable
                     else np.zeros(x.shape, x.dtype))
            whole = multihost_utils.broadcast_one_to_all(value)
            return jax.make_array_from_callback(
                x.shape, target, lambda index: whole[index], dtype=x.dtype)

        multihost_utils.sync_global_devices("reshard bench")
        measured = timed({"reshard": lambda x: mpmd.reshard(x, target),
                          "host": host_route}, fresh, options.repeat)
        ours, host = measured["reshard"][0], measured["host"][0]
        last = state["x"]  # both routes move it alike
        moved, landed = mpmd.reshard(last, target), host_route(last)
        if me == 1:
            np.testing.assert_array_equal(
                np.asarray(moved.addressable_shards[0].data),
                np.asarray(landed.addressable_shards[0].data))
        if me == 0:
            print(f"{mib:>5} {ours * 1e3:11.2f} {host * 1e3:9.2f} "
                  f"{host / ours:13.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="16,64",
                        help="array sizes in MiB, comma-separated")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--processes", type=int, default=0,
                        help="also time a sync between two processes")
    parser.add_argument("--worker", action="store_true",
                        help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options)
        return
    one_process(options)
    if options.processes:
        if options.processes != 2:
            parser.error("--processes: only 2 is measured")
        print()
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)  # the launcher sets the device count
        command = [sys.executable, "-m", "mpmd.launch", "-n", "2",
                   "--devices-per-process", "4", "--timeout", "1200",
                   os.path.abspath(__file__), "--worker", "--sizes",
                   options.sizes, "--repeat", str(options.repeat)]
        subprocess.run(command, check=True, env=env)


if __name__ == "__main__":
    main()
