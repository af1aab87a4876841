#!/usr/bin/env python3
"""Warm step time of the README's first program under mpmd.jit beside jax.jit.

The model is README.md's "A first program": an MLP of 4 layers
(`tanh(x @ w + b)`), each layer a named computation, mean squared error,
optax's Adam (lr 1e-2), the gradient summed over M microbatches, one
Adam update per step. `train_step(params, opt_state, xs, ys)` is the same
Python function on every route but for the microbatch loop:

  mpmd 4x2   mpmd.jit, the README as written: 4 meshes of 2 CPU devices,
             layer i on mesh m{i} (stage i), `mpmd.fori_loop`, 1F1B; the
             arrays of each mesh replicated over its 2 devices
  mpmd 4x1   the same on 4 meshes of 1 device each
  jit 1      jax.jit of the step as the user had it before mpmd: the loop
             is `jax.lax.fori_loop` (rolled), on one device. The layers
             are still wrapped in `mpmd.named_computation`: outside
             mpmd.jit it only names a scope, so this is the same function
  jit DP 8   the same jax.jit, data parallel over all 8 devices: the batch
             dimension of xs / ys sharded with a NamedSharding, parameters
             and Adam's moments replicated (out_shardings keep them so).
             A batch not divisible by 8 is split over gcd(batch, 8)
             devices and replicated over the rest (batch 4: 4 x 2)
  jit TP 8   the same jax.jit, tensor parallel over 8 devices, Megatron
             style: even layers' w column-sharded (b sharded), odd layers'
             w row-sharded (b replicated), Adam's moments like their
             parameters, the batch replicated. FSDP is not run: on one
             host of 2 cores it would add only all-gathers to this

Every route's inputs are placed once where it takes them (mpmd's from
`Lowered.function_named_shardings`), so no route pays a host-to-device
copy of the batch per step; each step feeds the previous step's params
and optimizer state back in, as a training loop does.

Checked first: from the same initial state, each route's loss, Adam
moments (the summed gradient) and new params after one step equal those
of `jit 1` (assert_allclose, rtol 1e-5). Adam's first update is
lr * g / (|g| + eps), so where a gradient element nearly cancels over the
batch a different summation order (DP's all-reduce) moves it by up to
2 lr: params are compared where |g| > 1e-3 max |g| of their leaf, and the
count of the others that differ is printed (the mpmd routes match
everywhere).

Timed: after compile and --warmup steps, --steps rounds in which every
route runs one step (call + jax.block_until_ready), interleaved so that
noise from other work on the machine hits all routes alike; the median
per route. Table 1: step ms, and the ratio to `jit 1` and to `jit DP 8`,
computed in this run; the process's CPU time per step (time.process_time,
all threads: how much work the route makes the machine's cores do) and
that over the wall time (how many cores it kept busy). Below it, the
collectives each SPMD jax.jit step runs, counted in its compiled HLO.

Table 2 says where the mpmd step goes, from what mpmd offers (a `jit 1`
column beside it for scale):
  calls, transfers  program calls and cross-mesh transfers per step in
                    the plan (`Compiled.plan`), and its distinct programs
  step              the median warm step of table 1
  until returns     median time until the call returned, in the same
                    timed steps (not blocked): the host's work of placing
                    arguments, walking the plan and dispatching its
                    programs and transfers, plus whatever it waited for
                    (XLA's CPU client may run a program before its call
                    returns); per program call, and per call or transfer
  traced: calls     `Compiled.run_traced` (the profiler's device timeline
                    where it gives one, else host timestamps; the source
                    is printed), median of 3 runs by window: the sum of the
                    programs' execution times (and per call), the sum of
                    the transfers' recorded times (their dispatch and any
                    resharding program they launch, on CPU) and the window
                    from the first call's start to the last call's end
  replay            the traced calls re-timed with every mesh computing in
                    parallel and transfers free
                    (`mpmd.runtime.simulate.replay`): the step that the
                    programs' own times allow
  bubble            idle share of the meshes, simulated for the plan
                    (`mpmd.runtime.simulate.simulate`) with F=1, B=2 (1F1B
                    over S stages and M microbatches: (S-1)/(M+S-1)), and
                    with the traced durations

Runs on 8 host CPU devices (XLA_FLAGS), JAX_PLATFORMS=cpu unless set.
No timing is asserted. By default two sizes: width 16 / batch 4 and width
512 / batch 64 (the figures issue 33 quotes); about 30-40 s on 2 cores.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/step_vs_jit.py \\
    [--sizes 16x4,512x64 | --width 16 --batch 4] [--microbatches 8]
    [--steps 30] [--warmup 3] [--routes mpmd4x2,mpmd4x1,jit1,dp8,tp8]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import time
from typing import Any, Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402
from mpmd.runtime.plan import TransferStep  # noqa: E402
from mpmd.runtime.simulate import costs_from_trace, replay, simulate  # noqa: E402

LAYERS = 4
ROUTES = {
    "mpmd4x2": "mpmd 4x2",
    "mpmd4x1": "mpmd 4x1",
    "jit1": "jit 1",
    "dp8": "jit DP 8",
    "tp8": "jit TP 8",
}

# ------------------------------------------------------------ the program
# README.md's "A first program", the loop a parameter.


def layer(p: Any, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ p["w"] + p["b"])


def loss_fn(params: Any, x: jax.Array, y: jax.Array) -> jax.Array:
    for i, p in enumerate(params):               # each layer a named computation
        x = mpmd.named_computation(layer, name=f"layer{i}")(p, x)
    return jnp.mean((x - y) ** 2)


optimizer = optax.adam(1e-2)


def make_train_step(loop: Callable[..., Any]) -> Callable[..., Any]:
    def train_step(params, opt_state, xs, ys):     # xs: [microbatches, batch, ...]
        def body(i, acc):                          # iteration i is microbatch i
            loss, grads = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
            return jax.tree.map(jnp.add, acc, (loss, grads))
        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        loss, grads = loop(0, xs.shape[0], body, zeros)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    return train_step


def initial_state(width: int, batch: int, microbatches: int) -> tuple:
    keys = jax.random.split(jax.random.PRNGKey(0), LAYERS)
    params = [{"w": jax.random.normal(k, (width, width)) * 0.1,
               "b": jnp.zeros(width)} for k in keys]
    opt_state = optimizer.init(params)
    xs = jax.random.normal(jax.random.PRNGKey(1), (microbatches, batch, width))
    ys = jnp.sin(xs)
    return params, opt_state, xs, ys


# ------------------------------------------------------------ the routes

class Route:
    """A compiled step and its placed arguments."""

    def __init__(self, name: str, devices: int, step: Callable[..., Any],
                 args: tuple, compiled: Any = None):
        self.name, self.devices, self.step = name, devices, step
        self.args = args            # (params, opt_state, xs, ys), placed
        self.compiled = compiled    # mpmd's Compiled, for table 2
        self.state = args[:2]
        self.times: list[float] = []       # call + block, seconds
        self.dispatch: list[float] = []    # until the call returned
        self.cpu: list[float] = []         # process CPU seconds
        self.compile_s = 0.0

    def one_step(self) -> Any:
        return self.step(*self.args)

    def run(self) -> tuple[float, float]:
        """One warm step, fed the previous step's state: seconds until the
        call returned, and until its results were ready."""
        params, opt_state = self.state
        cpu = time.process_time()
        t = time.perf_counter()
        out = self.step(params, opt_state, *self.args[2:])
        returned = time.perf_counter() - t
        jax.block_until_ready(out)
        elapsed = time.perf_counter() - t
        self.cpu.append(time.process_time() - cpu)
        self.state = out[:2]
        return returned, elapsed

    @property
    def cores(self) -> float:
        """Cores busy on average in the timed steps: this process's CPU
        time over the wall time."""
        return sum(self.cpu[-len(self.times):]) / sum(self.times)


def _mpmd_route(name: str, per_mesh: int, state: tuple) -> Route:
    devices = np.array(jax.devices()[:LAYERS * per_mesh]).reshape(
        LAYERS, per_mesh)
    topology = {f"m{i}": Mesh(devices[i], ("x",)) for i in range(LAYERS)}
    config = mpmd.make_config(
        topology, {f"layer{i}": (f"m{i}", i) for i in range(LAYERS)},
        partitioning_options={"pipeline_schedule": "1f1b"})
    t = time.perf_counter()
    lowered = mpmd.jit(make_train_step(mpmd.fori_loop), config).lower(*state)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t
    placed = jax.device_put(state, lowered.function_named_shardings.inputs)
    route = Route(name, LAYERS * per_mesh, compiled, placed, compiled)
    route.compile_s = compile_s
    return route


def _jit_route(name: str, state: tuple, shardings: tuple | None) -> Route:
    """jax.jit of the rolled step; `shardings` (params, opt_state, xs, ys)
    over 8 devices, or None for one device."""
    train_step = make_train_step(jax.lax.fori_loop)
    if shardings is None:
        placed = jax.device_put(state, jax.devices()[0])
        jitted = jax.jit(train_step)
        devices = 1
    else:
        placed = jax.device_put(state, shardings)
        scalar = NamedSharding(shardings[2].mesh, P())
        jitted = jax.jit(train_step, in_shardings=shardings,
                         out_shardings=(shardings[0], shardings[1], scalar))
        devices = shardings[2].mesh.size
    t = time.perf_counter()
    compiled = jitted.lower(*placed).compile()
    route = Route(name, devices, compiled, placed)
    route.compile_s = time.perf_counter() - t
    return route


def _dp_shardings(state: tuple, batch: int) -> tuple:
    data = math.gcd(batch, 8)
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(data, 8 // data),
                ("data", "replica"))
    replicated = NamedSharding(mesh, P())
    params, opt_state, _, _ = state
    batched = NamedSharding(mesh, P(None, "data"))
    return (jax.tree.map(lambda _: replicated, params),
            jax.tree.map(lambda _: replicated, opt_state), batched, batched)


def _tp_shardings(state: tuple) -> tuple:
    mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
    params, opt_state, _, _ = state

    def layer_shardings(i: int) -> dict[str, NamedSharding]:
        if i % 2 == 0:   # column-parallel: its output features sharded
            return {"w": NamedSharding(mesh, P(None, "x")),
                    "b": NamedSharding(mesh, P("x"))}
        return {"w": NamedSharding(mesh, P("x", None)),   # row-parallel
                "b": NamedSharding(mesh, P())}

    param_sh = [layer_shardings(i) for i in range(len(params))]
    replicated = NamedSharding(mesh, P())
    # Adam's state: (ScaleByAdamState(count, mu, nu), EmptyState()); the
    # moments are laid out like their parameters.
    adam = opt_state[0]
    opt_sh = (adam._replace(count=replicated, mu=param_sh, nu=param_sh),
              *opt_state[1:])
    return param_sh, opt_sh, replicated, replicated


def build_routes(names: list[str], width: int, batch: int,
                 microbatches: int) -> list[Route]:
    state = initial_state(width, batch, microbatches)
    routes = []
    for name in names:
        if name == "mpmd4x2":
            routes.append(_mpmd_route(ROUTES[name], 2, state))
        elif name == "mpmd4x1":
            routes.append(_mpmd_route(ROUTES[name], 1, state))
        elif name == "jit1":
            routes.append(_jit_route(ROUTES[name], state, None))
        elif name == "dp8":
            routes.append(_jit_route(ROUTES[name], state,
                                     _dp_shardings(state, batch)))
        elif name == "tp8":
            if width % 8:
                print(f"  (skipping jit TP 8: width {width} not divisible by 8)")
                continue
            routes.append(_jit_route(ROUTES[name], state, _tp_shardings(state)))
    return routes


def check_numerics(routes: list[Route], reference: Route) -> list[str]:
    """One step from the same state against the reference: the loss and
    Adam's moments (mu = 0.1 g, nu = 0.001 g^2 after one step: the summed
    gradient) within rtol 1e-5 (atol 1e-5 of the leaf's largest value),
    and the new params within rtol 1e-5, atol 1e-6. Adam's first update
    is lr * g / (|g| + eps): where a gradient element nearly cancels over
    the batch, a different summation order (a cross-device all-reduce)
    moves it by up to 2 lr, so params are compared there only where
    |g| > 1e-3 max |g| of the leaf; how many elements that skips, and how
    many of those differ, is returned per route."""
    expected = jax.tree.map(np.asarray, reference.one_step())
    e_params, e_opt, e_loss = expected
    e_mu = e_opt[0].mu
    notes = []
    for route in routes:
        if route is reference:
            continue
        params, opt_state, loss = jax.tree.map(np.asarray, route.one_step())
        np.testing.assert_allclose(loss, e_loss, rtol=1e-5,
                                   err_msg=f"{route.name}: loss")
        for (path, e), g in zip(jax.tree_util.tree_leaves_with_path(e_opt),
                                jax.tree.leaves(opt_state)):
            np.testing.assert_allclose(
                g, e, rtol=1e-5, atol=1e-5 * float(np.abs(e).max(initial=0)),
                err_msg=f"{route.name}: opt_state{jax.tree_util.keystr(path)}")
        skipped = differ = 0
        for (path, e), g, mu in zip(
                jax.tree_util.tree_leaves_with_path(e_params),
                jax.tree.leaves(params), jax.tree.leaves(e_mu)):
            kept = np.abs(mu) > 1e-3 * np.abs(mu).max(initial=0)
            np.testing.assert_allclose(
                g[kept], e[kept], rtol=1e-5, atol=1e-6,
                err_msg=f"{route.name}: params{jax.tree_util.keystr(path)}")
            skipped += int((~kept).sum())
            differ += int((~np.isclose(g, e, rtol=1e-5, atol=1e-6)).sum())
        if differ:
            total = sum(p.size for p in jax.tree.leaves(e_params))
            notes.append(f"{route.name}: {differ} of {total} new params "
                         f"differ, all among the {skipped} with a "
                         "near-cancelling gradient")
    return notes


_COLLECTIVE = re.compile(r"\s(all-reduce|all-gather|reduce-scatter|"
                         r"collective-permute|all-to-all)(-start)?\(")


def collectives(compiled: Any, trips: int) -> str:
    """The collectives a jax.jit step runs, from its compiled HLO: those
    in the microbatch loop's body (run `trips` times) and outside it."""
    bodies, where, computation = set(), {}, None
    for line in compiled.as_text().splitlines():
        header = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", line)
        if header:
            computation = header.group(1)
        bodies.update(re.findall(r"body=%?([\w.\-]+)", line))
        for op, _ in _COLLECTIVE.findall(line):
            where.setdefault(op, []).append(computation)
    parts = []
    for op, places in sorted(where.items()):
        inside = sum(c in bodies for c in places)
        outside = len(places) - inside
        parts.append(f"{inside * trips + outside} {op}"
                     + (f" ({inside} per microbatch)" if inside else ""))
    return ", ".join(parts) or "none"


# ------------------------------------------------------------ table 2

def breakdown(route: Route) -> dict[str, Any]:
    """Where a step goes: for mpmd from the plan, the timed steps, traced
    runs and the simulator; for jax.jit (one program) the timed steps."""
    disp_ms = statistics.median(route.dispatch) * 1e3
    row: dict[str, Any] = {
        "calls": 1, "transfers": 0, "programs": 1,
        "step_ms": statistics.median(route.times) * 1e3,
        "cores": route.cores, "dispatch_ms": disp_ms, "dispatch_us_call": disp_ms * 1e3}
    compiled = route.compiled
    if compiled is None:
        return row
    plan = compiled.plan
    calls = len(plan.calls())
    transfers = sum(isinstance(s, TransferStep) for s in plan.steps)
    traced = []
    for _ in range(3):
        params, opt_state = route.state
        out, trace = compiled.run_traced(params, opt_state, *route.args[2:])
        jax.block_until_ready(out)
        route.state = out[:2]
        begin, end = trace.step_window()
        traced.append((sum(c.duration_us for c in trace.calls),
                       sum(t.duration_us for t in trace.transfers),
                       end - begin, trace.overlap_us(),
                       replay(trace, plan).total_us,
                       simulate(plan, costs_from_trace(trace)).bubble_fraction,
                       trace))
    traced.sort(key=lambda r: r[2])
    (call_us, transfer_us, window_us, overlap_us, replay_us, measured_bubble,
     trace) = traced[len(traced) // 2]
    return {
        **row, "calls": calls, "transfers": transfers,
        "programs": len(plan.programs),
        "dispatch_us_call": disp_ms * 1e3 / calls,
        "dispatch_us_any": disp_ms * 1e3 / (calls + transfers),
        "source": trace.source,
        "calls_ms": call_us / 1e3, "call_us": call_us / calls,
        "transfers_ms": transfer_us / 1e3, "window_ms": window_us / 1e3,
        "overlap_ms": overlap_us / 1e3,
        "replay_ms": replay_us / 1e3,
        "bubble_fb": simulate(plan).bubble_fraction,
        "bubble_measured": measured_bubble,
    }


def print_breakdown(columns: list[tuple[str, dict[str, Any]]]) -> None:
    rows = [
        ("program calls / step", "calls", "{:d}"),
        ("cross-mesh transfers / step", "transfers", "{:d}"),
        ("distinct programs", "programs", "{:d}"),
        ("step, median (ms)", "step_ms", "{:.2f}"),
        ("cores busy (CPU time / wall)", "cores", "{:.2f}"),
        ("until the call returns (ms)", "dispatch_ms", "{:.2f}"),
        ("  per program call (us)", "dispatch_us_call", "{:.1f}"),
        ("  per call or transfer (us)", "dispatch_us_any", "{:.1f}"),
        ("trace source", "source", "{}"),
        ("traced: sum of calls (ms)", "calls_ms", "{:.2f}"),
        ("  per program call (us)", "call_us", "{:.1f}"),
        ("traced: sum of transfers (ms)", "transfers_ms", "{:.2f}"),
        ("traced: window (ms)", "window_ms", "{:.2f}"),
        ("  2+ meshes computing (ms)", "overlap_ms", "{:.2f}"),
        ("replay, meshes parallel (ms)", "replay_ms", "{:.2f}"),
        ("bubble, simulated F=1 B=2", "bubble_fb", "{:.0%}"),
        ("bubble, traced durations", "bubble_measured", "{:.0%}"),
    ]
    width = max(12, *(len(c) for c, _ in columns))
    print("\nwhere the mpmd step goes")
    print(f"{'':31} " + " ".join(f"{c:>{width}}" for c, _ in columns))
    for label, key, fmt in rows:
        print(f"{label:31} " + " ".join(
            f"{fmt.format(d[key]) if key in d else '-':>{width}}"
            for _, d in columns))


# ------------------------------------------------------------ main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="16x4,512x64",
                        help="WIDTHxBATCH configurations, comma-separated")
    parser.add_argument("--width", type=int, default=None,
                        help="one configuration of this width (default 16); "
                        "overrides --sizes")
    parser.add_argument("--batch", type=int, default=None,
                        help="one configuration of this batch (default 4); "
                        "overrides --sizes")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=30,
                        help="timed rounds (one step of every route each)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed steps per route after compile")
    parser.add_argument("--routes", default=",".join(ROUTES),
                        help=f"comma-separated, of {', '.join(ROUTES)}")
    opts = parser.parse_args()
    if opts.width is not None or opts.batch is not None:
        sizes = [(opts.width or 16, opts.batch or 4)]
    else:
        sizes = [tuple(int(v) for v in s.split("x"))
                 for s in opts.sizes.split(",")]
    names = opts.routes.split(",")
    unknown = set(names) - set(ROUTES)
    if unknown:
        parser.error(f"unknown routes {sorted(unknown)}")
    if "jit1" not in names:
        names.insert(0, "jit1")   # the reference of the check and ratios

    start = time.perf_counter()
    print(f"jax {jax.__version__}, {jax.device_count()} "
          f"{jax.devices()[0].platform} devices, {os.cpu_count()} CPUs; "
          f"README's MLP, {LAYERS} layers, Adam, {opts.microbatches} "
          f"microbatches; median of {opts.steps} interleaved warm steps")
    results = []
    columns = []
    for width, batch in sizes:
        routes = build_routes(names, width, batch, opts.microbatches)
        by_name = {r.name: r for r in routes}
        notes = check_numerics(routes, by_name["jit 1"])
        print(f"width {width}, batch {batch}: compiled "
              + ", ".join(f"{r.name} {r.compile_s:.2f} s" for r in routes)
              + "; every route's loss, gradients (Adam's moments) and new "
              "params == jit 1's after one step")
        for note in notes:
            print(f"  ({note})")
        for route in routes:
            for _ in range(opts.warmup):
                route.run()
        for _ in range(opts.steps):
            for route in routes:
                returned, elapsed = route.run()
                route.dispatch.append(returned)
                route.times.append(elapsed)
        results.append((width, batch, routes))
        for route in routes:
            if route.compiled is not None or route.name == "jit 1":
                columns.append((f"{route.name} w{width}", breakdown(route)))

    print("\nwarm step (ms, median; ratios in this run; CPU ms: this "
          "process's CPU time per step, mean; cores: CPU time / wall)")
    print(f"{'width':>5} {'batch':>5} {'route':<9} {'devices':>7} "
          f"{'step ms':>9} {'/ jit 1':>8} {'/ DP 8':>8} {'CPU ms':>8} "
          f"{'cores':>6}")
    for width, batch, routes in results:
        ms = {r.name: statistics.median(r.times) * 1e3 for r in routes}
        one, dp = ms["jit 1"], ms.get("jit DP 8", float("nan"))
        for r in routes:
            print(f"{width:>5} {batch:>5} {r.name:<9} {r.devices:>7} "
                  f"{ms[r.name]:9.2f} {ms[r.name] / one:8.2f} "
                  f"{ms[r.name] / dp:8.2f} "
                  f"{statistics.mean(r.cpu[-len(r.times):]) * 1e3:8.2f} "
                  f"{r.cores:6.2f}")
    for width, batch, routes in results:
        for r in routes:
            if r.compiled is None and r.devices > 1:
                print(f"collectives per step, {r.name} w{width}: "
                      f"{collectives(r.step, opts.microbatches)}")
    if columns:
        print_breakdown(columns)
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
