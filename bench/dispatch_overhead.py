#!/usr/bin/env python3
"""Per-call overhead of a compiled `mpmd.jit` program against plain `jax.jit`.

The function is a chain of K named computations on one mesh (m1):

    x = named_computation(lambda a, b: a * b + 1.0, name=f"f{i}")(x, y)

for i < K, on small inputs (8x8 f32) so that execution is negligible. With
every fragment assigned to m1, the plan holds K program calls on m1 (the
compiler dedups the identical programs: one executable, called K times).
Routes, all on the same inputs already placed on m1 (replicated; with
`--input-sharding single`, on a one-device m1, placed as users often do
with `jax.device_put(x, device)`, a SingleDeviceSharding, which mpmd takes
as it is since it is equivalent to m1's layout):

  jit      `jax.jit(f, in_shardings=..., out_shardings=...)`: one executable
  jit*K    the one-fragment `jax.jit` called K times in a chain: the floor for
           dispatching K executables from Python
  mpmd     `mpmd.jit(f, config).lower(x, y).compile()` called on the arrays

Timed after warm-up, in interleaved rounds, min over --repeat rounds:
  latency   median time of one call + block_until_ready (idle devices)
  dispatch  N calls back to back without blocking, one block at the end,
            divided by N (N = --calls / K, at least 50: as many executable
            dispatches for every K)
  chained   the same with x = f(x, y): each call takes the previous call's
            result, still pending (the pattern of a training loop); a
            runtime that waits for its inputs shows it here

Overhead per fragment = (mpmd - jit) / K; `rt/frag` = (mpmd - jit*K) / K is
what the runtime adds over dispatching the same K executables with jax.jit.
A breakdown table splits the mpmd dispatch time into layers (argument
handling in `Compiled.__call__`, the plan walk in `PlanExecutor.run`, the
input check in `MeshProgram.__call__`, JAX's `Compiled` dispatch).
An async check times 10 chained calls of a 512x512 matmul (dispatch loop
alone, then until ready) to tell whether an mpmd call waits for its pending
inputs. `--profile` adds a cProfile of the mpmd call path (smallest mesh,
largest K).

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/dispatch_overhead.py \\
    [--repeat 5] [--calls 1000] [--ks 1,4,16] [--mesh-sizes 1,4] [--profile]
    [--input-sharding named|single]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time
from typing import Any, Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402
from mpmd.config import make_config  # noqa: E402
from mpmd.stages import jit as mpmd_jit  # noqa: E402

SHAPE = (8, 8)


def fragment(a: jax.Array, b: jax.Array) -> jax.Array:
    return a * b + 1.0


def chain(k: int) -> Callable[[jax.Array, jax.Array], jax.Array]:
    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        for i in range(k):
            x = mpmd.named_computation(fragment, name=f"f{i}")(x, y)
        return x

    return f


def _time(fn: Callable[[], Any], calls: int, latency: bool = True) -> tuple[float, float]:
    """(median latency, dispatch) in us per call."""
    lat = float("nan")
    if latency:
        single = []
        for _ in range(min(calls, 200)):
            t = time.perf_counter()
            jax.block_until_ready(fn())
            single.append(time.perf_counter() - t)
        single.sort()
        lat = single[len(single) // 2] * 1e6
    r = None
    t = time.perf_counter()
    for _ in range(calls):
        r = fn()
    jax.block_until_ready(r)
    return lat, (time.perf_counter() - t) / calls * 1e6


def _time_chained(fn: Callable[[Any], Any], x: Any, calls: int) -> float:
    """Dispatch in us per call when each call takes the previous result."""
    r = x
    t = time.perf_counter()
    for _ in range(calls):
        r = fn(r)
    jax.block_until_ready(r)
    return (time.perf_counter() - t) / calls * 1e6


class Config:
    """One (mesh size, K) configuration and its routes."""

    def __init__(self, size: int, k: int, single: bool = False):
        self.size, self.k = size, k
        mesh = Mesh(np.array(jax.devices()[:size]), ("x",))
        rep = NamedSharding(mesh, P())
        rng = np.random.default_rng(0)
        # The inputs' placement: m1's NamedSharding, or (one device) the
        # device itself, a SingleDeviceSharding.
        placed = (jax.sharding.SingleDeviceSharding(jax.devices()[0])
                  if single else rep)
        x = jax.device_put(rng.random(SHAPE, np.float32), placed)
        y = jax.device_put(rng.random(SHAPE, np.float32), placed)
        f = chain(k)
        config = make_config({"m1": mesh}, {f"f{i}": "m1" for i in range(k)})
        lowered = mpmd_jit(f, config).lower(x, y)
        calls = lowered.plan.calls()
        assert len(calls) == k, f"expected {k} program calls, plan has {len(calls)}"
        compiled = lowered.compile()
        # The arrays are taken as they are (no device_put per call).
        assert all(a.sharding.is_equivalent_to(s, 2) for a, s in
                   zip((x, y), compiled._input_shardings)), "inputs not in place"  # noqa: SLF001
        ins = (placed, placed)
        jitted = jax.jit(f, in_shardings=ins, out_shardings=placed)
        one = jax.jit(fragment, in_shardings=ins, out_shardings=placed)

        def one_k(r: jax.Array) -> jax.Array:
            for _ in range(k):
                r = one(r, y)
            return r

        def jit_k() -> jax.Array:
            return one_k(x)

        expected = np.asarray(jitted(x, y))
        got = compiled(x, y)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jit_k()), expected, rtol=1e-6)
        assert got.sharding.is_equivalent_to(rep, 2), got.sharding

        self.routes: dict[str, Callable[[], Any]] = {
            "jit": lambda: jitted(x, y),
            "jit*K": jit_k,
            "mpmd": lambda: compiled(x, y),
        }
        # x <- f(x, y): each call's input is the previous call's pending result.
        self.chained: dict[str, Callable[[Any], Any]] = {
            "jit": lambda r: jitted(r, y),
            "jit*K": one_k,
            "mpmd": lambda r: compiled(r, y),
        }
        # Layers of the mpmd call, outermost first (dispatch only).
        executor = compiled.executor
        program = executor.programs[calls[0].program]
        exe = program.compiled
        function = mpmd_jit(f, config)
        function(x, y)  # lowers and compiles once, cached by signature

        def programs() -> Any:
            r = x
            for _ in range(k):
                r = program(r, y)[0]
            return r

        def executables() -> Any:
            r = x
            for _ in range(k):
                r = exe(r, y)[0]
            return r

        self.layers: dict[str, Callable[[], Any]] = {
            "mpmd.jit(f)": lambda: function(x, y),
            "Compiled": lambda: compiled(x, y),
            "executor.run": lambda: executor.run([x, y]),
            "MeshProgram*K": programs,
            "jax Compiled*K": executables,
        }
        self.compiled = compiled
        self.args = (x, y)
        for fn in [*self.routes.values(), *self.layers.values()]:
            _time(fn, 50)  # warm-up
        for fn in self.chained.values():
            _time_chained(fn, x, 50)
        self.best = {n: [float("inf")] * 3 for n in self.routes}
        self.best_layers = {n: float("inf") for n in self.layers}

    def round(self, calls: int) -> None:
        # A K-fragment call dispatches K executables: calls/K calls time as
        # many executable dispatches as `calls` calls of K = 1.
        calls = max(calls // self.k, 50)
        x = self.args[0]
        for name, fn in self.routes.items():
            lat, disp = _time(fn, calls)
            chained = _time_chained(self.chained[name], x, calls)
            best = self.best[name]
            best[:] = min(best[0], lat), min(best[1], disp), min(best[2], chained)
        for name, fn in self.layers.items():
            _, disp = _time(fn, calls, latency=False)
            self.best_layers[name] = min(self.best_layers[name], disp)


def _table(configs: list[Config], which: int, title: str) -> None:
    print(f"\n{title} (us/call)")
    print(f"{'devices':>7} {'K':>3} {'jit':>8} {'jit*K':>8} {'mpmd':>8} "
          f"{'ratio':>6} {'ovh/frag':>9} {'rt/frag':>8}")
    for c in configs:
        jit, jit_k, mp = (c.best[n][which] for n in ("jit", "jit*K", "mpmd"))
        print(f"{c.size:>7} {c.k:>3} {jit:8.1f} {jit_k:8.1f} {mp:8.1f} "
              f"{mp / jit:6.2f} {(mp - jit) / c.k:9.1f} {(mp - jit_k) / c.k:8.1f}")


def _layers(configs: list[Config]) -> None:
    names = list(configs[0].layers)
    print("\nbreakdown of the mpmd dispatch (us/call; outermost first)")
    print(f"{'devices':>7} {'K':>3} " + " ".join(f"{n:>14}" for n in names))
    for c in configs:
        print(f"{c.size:>7} {c.k:>3} " +
              " ".join(f"{c.best_layers[n]:14.1f}" for n in names))


def _async_check(size: int, calls: int = 10) -> None:
    """Does a call wait for its pending inputs? Chained 512x512 matmuls: time
    the dispatch loop alone (before the block) for jit and mpmd."""
    mesh = Mesh(np.array(jax.devices()[:size]), ("x",))
    rep = NamedSharding(mesh, P())
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.random((512, 512), np.float32), rep)
    y = jax.device_put(rng.random((512, 512), np.float32) / 512, rep)

    def f(a: jax.Array, b: jax.Array) -> jax.Array:
        return mpmd.named_computation(lambda u, v: jnp.tanh(u @ v), name="f")(a, b)

    config = make_config({"m1": mesh}, {"f": "m1"})
    routes = {"jit": jax.jit(f, in_shardings=(rep, rep), out_shardings=rep),
              "mpmd": mpmd_jit(f, config).lower(x, y).compile()}
    best = {name: [float("inf"), float("inf")] for name in routes}
    for _ in range(3):
        for name, fn in routes.items():
            jax.block_until_ready(fn(x, y))
            r = x
            t = time.perf_counter()
            for _ in range(calls):
                r = fn(r, y)
            loop = time.perf_counter() - t
            jax.block_until_ready(r)
            total = time.perf_counter() - t
            best[name] = [min(best[name][0], loop * 1e3),
                          min(best[name][1], total * 1e3)]
    print(f"\nasync: {calls} chained calls x = tanh(x @ y), f32[512, 512], "
          f"devices={size} (ms)")
    print(f"{'route':>5} {'dispatch loop':>14} {'until ready':>12}")
    for name, (loop, total) in best.items():
        print(f"{name:>5} {loop:14.2f} {total:12.2f}")
    loop, total = best["mpmd"]
    waits = loop > 0.5 * total
    print("mpmd " + ("WAITS for its pending inputs: the dispatch loop takes "
                     "the compute time" if waits else
                     "dispatches without waiting for its inputs"))


def _profile(c: Config, calls: int) -> None:
    compiled, (x, y) = c.compiled, c.args
    profiler = cProfile.Profile()
    profiler.enable()
    r = None
    for _ in range(calls):
        r = compiled(x, y)
    jax.block_until_ready(r)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(14)
    print(f"\ncProfile of {calls} mpmd calls, devices={c.size}, K={c.k} "
          "(tottime = own time; cProfile inflates Python-heavy frames)")
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    for line in lines[start:]:
        if line.strip():
            print(line[:150])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="interleaved timing rounds; the min is reported")
    parser.add_argument("--calls", type=int, default=1000,
                        help="calls per dispatch measurement for K = 1; "
                        "K fragments: calls/K (at least 50); latency: at most 200")
    parser.add_argument("--ks", default="1,4,16",
                        help="fragments in the chain, comma-separated")
    parser.add_argument("--mesh-sizes", default="1,4",
                        help="devices of mesh m1, comma-separated")
    parser.add_argument("--input-sharding", choices=("named", "single"),
                        default="named",
                        help="inputs as m1's NamedSharding, or (one-device "
                        "meshes only) as jax.device_put(x, device) places them")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the mpmd call of the largest config")
    opts = parser.parse_args()
    ks = [int(k) for k in opts.ks.split(",")]
    sizes = [int(s) for s in opts.mesh_sizes.split(",")]

    start = time.perf_counter()
    print(f"jax {jax.__version__}, {jax.device_count()} "
          f"{jax.devices()[0].platform} devices, {os.cpu_count()} CPUs; "
          f"f32{list(SHAPE)} inputs, min over {opts.repeat} rounds, "
          f"{opts.calls}/K calls per dispatch measurement")
    single = opts.input_sharding == "single"
    if single and sizes != [1]:
        parser.error("--input-sharding single needs --mesh-sizes 1")
    print(f"inputs placed as {'SingleDeviceSharding' if single else 'NamedSharding'}")
    configs = [Config(size, k, single) for size in sizes for k in ks]
    print(f"compiled and checked {len(configs)} configs (mpmd == jit) in "
          f"{time.perf_counter() - start:.1f} s")
    for _ in range(opts.repeat):
        for c in configs:
            c.round(opts.calls)
    _table(configs, 0, "latency: one call + block_until_ready, median")
    _table(configs, 1, f"dispatch: {opts.calls}/K calls without blocking, per call")
    _table(configs, 2, "chained dispatch: x = f(x, y), "
           f"{opts.calls}/K calls without blocking, per call")
    _layers(configs)
    _async_check(sizes[0])
    if opts.profile:
        # The smallest mesh: there Python dominates the executable dispatch.
        _profile(max(configs, key=lambda c: (-c.size, c.k)), opts.calls)
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
