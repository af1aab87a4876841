#!/usr/bin/env python3
"""Compile time of mpmd.jit beside jax.jit, cold and with JAX's cache.

Two training steps, each compiled two ways:

  demo    examples/demo.py's transformer as the demo configures it: 2
          meshes of 2x2 devices, axes ("data", "model"), parameters
          sharded with models.transformer_shardings, 8 microbatches, SGD,
          1F1B
  llama   examples/llama.py's decoder: 4 meshes of 2 devices, axis
          "model" (tensor parallelism), 8 microbatches, AdamW, 1F1B

  jit rolled  jax.jit(step).lower(*args).compile() of the step as the
          user had it: its microbatch loop as jax.lax.fori_loop (rolled),
          the arguments unsharded on the default device; the baseline
  jit SPMD  the same rolled step with SPMD over all 8 devices: a mesh of
          4 x 2 with axes ("data", "model"), the batch over "data", the
          parameters (and Adam's moments, which follow them) laid out
          over "model" as the model's specs say (tensor parallelism):
          what a user compiles to run on the job's devices without mpmd
          (cold only)
  jit     the same with the step's mpmd.fori_loop, which jax.jit unrolls
          at trace time (labelled "unrolled": a larger program than the
          user had)
  mpmd    mpmd.jit(step, config).lower(*args).compile() with the
          arguments placed as the model's shardings say

Every measurement is a fresh process:

  cold    no persistent compilation cache
  warm    two processes on a fresh, shared jax_compilation_cache_dir (the
          only option set, as JAX users set it): the first fills it, the
          second reads it; the second is the warm time

Per model, one table: lower and compile seconds (mpmd's lower split into
trace, partition and plan from Lowered.timings), the first call of the
compiled step until its result is ready ("1st step") and the time from
the start of lower to that result ("result"), mpmd over the rolled
and the unrolled jit, the warm
process over the first process on the same cache and over the cold one,
the cache entries written, and mpmd's programs (distinct, and per mesh;
how many XLA compiled and how many were loaded from a twin on a mesh of
the same shape, from mpmd.runtime.program.compile_counts) with the
threads that compiled them. mpmd does not record per-program compile
times, so compile parallelism shows as the worker count of
mpmd.runtime.executor.compile_programs (MPMD_COMPILE_WORKERS, else the
CPU count; at most one per program it compiles). No timing is asserted.

The two routes do not compile the same amount of code: under jax.jit,
mpmd.fori_loop is unrolled at trace time (the body traced once per
microbatch, one XLA program holding every microbatch); under mpmd.jit
the body is traced once and each distinct fragment compiles once, shared
by every microbatch. A program equal to one on another mesh of the same
shape is not compiled again but loaded for its devices, so the cache can
hold fewer entries than there are programs (mpmd-partition/, mpmd's
partition results, is one more entry).

Children use 8 host devices (XLA_FLAGS) and JAX_PLATFORMS=cpu unless the
environment sets JAX_PLATFORMS.

Usage:
  .venv/bin/python bench/compile_vs_jit.py [--models demo,llama]
      [--repeat 1] [--microbatches 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
MODELS = ("demo", "llama")

CHILD = r"""
import json, os, sys, time
request = json.loads(sys.argv[1])
flag = "--xla_force_host_platform_device_count=8"
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, request["examples"])
import jax
if request["cache"]:
    jax.config.update("jax_compilation_cache_dir", request["cache"])
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import mpmd

if len(jax.devices()) < 8:
    print(json.dumps({"error": f"needs 8 devices, found {len(jax.devices())} "
                               f"({jax.devices()[0].platform})"}))
    sys.exit(0)
microbatches = request["microbatches"]


def spmd(params, specs, *batch):
    # The rolled step's SPMD placement over all 8 devices: parameters laid
    # out by `specs` over "model", the batch over "data".
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("data", "model"))
    placed = jax.tree.map(lambda a, s: jax.device_put(a, NamedSharding(mesh, s)),
                          params, specs,
                          is_leaf=lambda s: isinstance(s, P))
    batched = NamedSharding(mesh, P(None, "data"))
    return placed, [jax.device_put(b, batched) for b in batch]


def demo():
    import models
    devices = np.array(jax.devices()[:8]).reshape(2, 2, 2)
    topology = {name: Mesh(devices[i], ("data", "model"))
                for i, name in enumerate(["m1", "m2"])}
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=64, dim=32,
                                     heads=2, layers=4, seq=16)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (microbatches, 4, 16),
                                0, 64)
    targets = jax.numpy.roll(tokens, -1, axis=1)
    step = models.transformer_microbatched_step
    if request["route"] == "jit" and request["spmd"]:
        params, (tokens, targets) = spmd(
            params, models.transformer_specs(params), tokens, targets)
    if request["route"] == "jit":
        return step, (params, tokens, targets), None
    assignment = models.transformer_assignment(4, ["m1", "m2"])
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": "1f1b"})
    batch = P(None, "data")
    args = (jax.device_put(params, models.transformer_shardings(
                params, topology, assignment)),
            jax.device_put(tokens, NamedSharding(topology["m1"], batch)),
            jax.device_put(targets, NamedSharding(topology["m2"], batch)))
    return step, args, config


def llama_model():
    import llama
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    meshes = ["m1", "m2", "m3", "m4"]
    topology = {name: Mesh(devices[i], ("model",))
                for i, name in enumerate(meshes)}
    params = llama.init_llama(jax.random.PRNGKey(0))
    optimizer = llama.default_optimizer()
    step = llama.make_train_step(optimizer)
    tokens, targets = llama.make_data(jax.random.PRNGKey(1), microbatches,
                                      batch=4)
    if request["route"] == "jit" and request["spmd"]:
        params, (tokens, targets) = spmd(params, llama.llama_specs(params),
                                         tokens, targets)
    if request["route"] == "jit":
        return step, (params, optimizer.init(params), tokens, targets), None
    assignment = llama.llama_assignment(llama.LAYERS, meshes)
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"pipeline_schedule": "1f1b",
                              **llama.PARTITIONING_OPTIONS})
    placed = jax.device_put(params, llama.llama_shardings(params, topology,
                                                          assignment))
    return step, (placed, optimizer.init(placed), tokens, targets), config


request["spmd"] = request["route"] == "jit_spmd"
if request["route"] in ("jit_rolled", "jit_spmd"):
    # The step as the user had it before mpmd: the microbatch loop as
    # jax.lax.fori_loop (traced once, one rolled loop in one program).
    mpmd.fori_loop = lambda lower, upper, body, init, **_: \
        jax.lax.fori_loop(lower, upper, body, init)
    request["route"] = "jit"
step, args, config = {"demo": demo, "llama": llama_model}[request["model"]]()
jax.block_until_ready(args)
result = {}
if config is None:
    start = time.perf_counter()
    lowered = jax.jit(step).lower(*args)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
else:
    start = time.perf_counter()
    lowered = mpmd.jit(step, config).lower(*args)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    by_mesh = lowered.programs_by_mesh()
    programs = len(lowered.plan.programs)
    try:  # executables XLA compiled, and those loaded for a twin mesh
        from mpmd.runtime.program import compile_counts
        counts = compile_counts()
    except ImportError:
        counts = None
    # compile_programs' thread count (mpmd/runtime/executor.py): one per
    # program it compiles, at most MPMD_COMPILE_WORKERS or the CPU count.
    workers = min(counts["compiled"] if counts else programs,
                  int(os.environ.get("MPMD_COMPILE_WORKERS", "0") or 0)
                  or os.cpu_count() or 1)
    result.update(phases=dict(lowered.timings),
                  compile_timing=compiled.timings["compile"],
                  programs=programs, counts=counts,
                  by_mesh={mesh: len(names) for mesh, names in by_mesh.items()},
                  workers=workers)
# The first step's result: what a user waits for before training starts.
jax.block_until_ready(compiled(*args))
result.update(lower=lowered_at - start, compile=done - lowered_at,
              first_step=time.perf_counter() - done,
              platform=jax.devices()[0].platform)
print(json.dumps(result))
"""


def child(model: str, route: str, cache: str, microbatches: int) -> dict:
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)  # cold means no cache
    request = {"model": model, "route": route, "cache": cache,
               "microbatches": microbatches,
               "examples": os.path.abspath(EXAMPLES)}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(request)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"compile_vs_jit: {model}/{route} failed "
                 f"(exit {out.returncode}):\n{out.stderr[-4000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    if "error" in row:
        sys.exit(f"compile_vs_jit: {model}/{route}: {row['error']}")
    row["total"] = row["lower"] + row["compile"]
    return row


def fastest(rows: list[dict]) -> dict:
    return min(rows, key=lambda row: row["total"])


def measure(model: str, repeat: int, microbatches: int) -> dict:
    """Per route: the fastest cold process, and the warm pair (first,
    second) whose second was fastest, with the cache entries it wrote."""
    results: dict = {}
    for route in ("jit_rolled", "jit_spmd", "jit", "mpmd"):
        cold = [child(model, route, "", microbatches) for _ in range(repeat)]
        if route == "jit_spmd":  # cold only
            results[route] = {"cold": fastest(cold)}
            continue
        pairs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="compile_vs_jit-") as cache:
                first = child(model, route, cache, microbatches)
                entries = len(os.listdir(cache))
                second = child(model, route, cache, microbatches)
            pairs.append((first, second, entries))
        results[route] = {"cold": fastest(cold),
                          "first": fastest([p[0] for p in pairs]),
                          "warm": fastest([p[1] for p in pairs]),
                          "entries": min(p[2] for p in pairs)}
    return results


def to_result(row: dict) -> float:
    """Seconds from the start of lower to the first step's result."""
    return row["total"] + row["first_step"]


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


def print_table(model: str, results: dict, repeat: int) -> None:
    rolled, jit, mp = results["jit_rolled"], results["jit"], results["mpmd"]
    platform = mp["cold"]["platform"]
    print(f"\n{model} ({platform}; seconds, min over {repeat} "
          f"process{'es' if repeat > 1 else ''} each)")
    header = (f"{'':30s} {'lower':>7s} {'compile':>8s} {'total':>7s} "
              f"{'/ cold':>7s} {'1st step':>8s} {'result':>7s}  notes")
    print(header)
    print("-" * len(header))

    def line(label, row, cold=None, notes=""):
        relative = ratio(row["total"], cold["total"]) if cold else ""
        print(f"{label:30s} {row['lower']:7.2f} {row['compile']:8.2f} "
              f"{row['total']:7.2f} {relative:>7s} {row['first_step']:8.2f} "
              f"{to_result(row):7.2f}  {notes}")

    phases = mp["cold"]["phases"]
    line("jit cold (rolled loop)", rolled["cold"],
         notes="jax.lax.fori_loop: the step the user had")
    spmd = results["jit_spmd"]
    line("jit cold (rolled, SPMD 8)", spmd["cold"],
         notes="the same over 8 devices: batch over 4, TP over 2")
    line("jit cold (unrolled)", jit["cold"],
         notes="mpmd.fori_loop under jax.jit: one body per microbatch")
    line("mpmd cold", mp["cold"], notes=(
        f"lower = trace {phases['trace']:.2f} + partition "
        f"{phases['partition']:.2f} + plan {phases['plan']:.2f}"))
    for label, base in (("mpmd / jit rolled, cold", rolled),
                        ("mpmd / jit SPMD 8, cold", spmd),
                        ("mpmd / jit unrolled, cold", jit)):
        print(f"{label:30s} "
              f"{ratio(mp['cold']['lower'], base['cold']['lower']):>7s} "
              f"{ratio(mp['cold']['compile'], base['cold']['compile']):>8s} "
              f"{ratio(mp['cold']['total'], base['cold']['total']):>7s} "
              f"{'':7s} {'':8s} "
              f"{ratio(to_result(mp['cold']), to_result(base['cold'])):>7s}")
    for route, results_ in (("jit rolled", rolled), ("jit", jit),
                            ("mpmd", mp)):
        first = results_["first"]
        line(f"{route} cache, 1st process", first, results_["cold"],
             notes=f"{results_['entries']} cache entries written")
        line(f"{route} warm (2nd process)", results_["warm"],
             results_["cold"],
             notes=f"/ 1st process "
                   f"{ratio(results_['warm']['total'], first['total'])}")
    print(f"{'mpmd / jit rolled, warm':30s} "
          f"{ratio(mp['warm']['lower'], rolled['warm']['lower']):>7s} "
          f"{ratio(mp['warm']['compile'], rolled['warm']['compile']):>8s} "
          f"{ratio(mp['warm']['total'], rolled['warm']['total']):>7s}")
    cold = mp["cold"]
    per_mesh = ", ".join(f"{mesh} {count}"
                         for mesh, count in cold["by_mesh"].items())
    counts = cold.get("counts")
    made = (f"XLA compiled {counts['compiled']}, loaded for a mesh of the "
            f"same shape {counts['relocated']}; " if counts else "")
    print(f"programs: {cold['programs']} distinct ({per_mesh}); {made}"
          f"compile threads: {cold['workers']} (per-program compile times "
          f"are not recorded)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated: demo, llama")
    parser.add_argument("--repeat", type=int, default=1,
                        help="processes per measurement (the fastest is kept)")
    parser.add_argument("--microbatches", type=int, default=8)
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; "
                     f"choose from {', '.join(MODELS)}")
    print(f"compile time, mpmd.jit vs jax.jit: {args.microbatches} "
          f"microbatches, 1F1B; every row a fresh process")
    for model in models:
        print_table(model, measure(model, max(1, args.repeat),
                                   args.microbatches), max(1, args.repeat))
    print(f"\nnote: the rolled jax.jit is the baseline; jax.jit unrolls "
          f"mpmd.fori_loop ({args.microbatches} bodies traced and compiled "
          "in one program); mpmd.jit traces the body once and compiles "
          "each distinct program once")


if __name__ == "__main__":
    main()
