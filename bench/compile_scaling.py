#!/usr/bin/env python3
"""How partitioning time grows with the number of microbatches.

The model is an MLP of 8 layers (width --width), one named computation per
layer, trained one step over m microbatches (`mpmd.fori_loop`, one
iteration per microbatch, gradients accumulated, one SGD update). Layer k is
stage k on mesh m{k+1}: 8 stages on 8 meshes of 1 CPU device. Schedule
1F1B. For each m (default 16, 64, 256) it times, separately:

  JAX s      tracing and lowering with `jax.jit(...).lower` (the fori_loop
             is unrolled at trace time, so this grows with m too), plus
             printing the module as text for the compiler
  mpmd s     the compiler only: `compile_to_plan(text, pipeline)`, the
             same call `mpmd.jit(...).lower()` makes (import, 1F1B schedule,
             export, the plan as JSON), then `ExecutionPlan.from_json`
  ms/frag    mpmd s per fragment of the exported program (program calls in
             the plan)

each the minimum over --repeat runs. Nothing is compiled by XLA or run.
Then (unless --no-timing) each size's JAX text goes through
`mpmd-opt --mlir-timing` with the same pipeline, and the passes slowest at
the largest m are printed for every size (wall seconds: the pipeline's
passes and mpmd-opt's parser and printer), with their growth over the last
size step against the growth of the fragment count.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/compile_scaling.py \\
    [--microbatches 16,64,256] [--repeat 2] [--no-timing] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
from mpmd.compiler import compile_to_plan  # noqa: E402
from mpmd.config import make_config  # noqa: E402
from mpmd.frontend import emit_named_computations  # noqa: E402
from mpmd.runtime.plan import ExecutionPlan  # noqa: E402
from mpmd.stages import (_add_topology, _import_pipeline,  # noqa: E402
                         _optimize_pipeline)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LAYERS = 8


def mlp_microbatched_step(params, xs, ys, lr=0.05):
    """One SGD step over stacked microbatches ([m, batch, width])."""
    num_microbatches = xs.shape[0]

    def body(i, acc):
        loss, grads = jax.value_and_grad(
            lambda p: models.mse(models.mlp_forward(p, xs[i]), ys[i]))(params)
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, num_microbatches, body, zeros)
    params = jax.tree.map(lambda p, g: p - lr * g / num_microbatches,
                          params, grads)
    return params, loss / num_microbatches


def config_for_eight_meshes():
    devices = jax.devices()[:LAYERS]
    meshes = {f"m{k + 1}": jax.sharding.Mesh(np.array([d]), ("x",))
              for k, d in enumerate(devices)}
    assignment = {f"layer{k}": (f"m{k + 1}", k) for k in range(LAYERS)}
    return make_config(meshes, assignment,
                       partitioning_options={"pipeline_schedule": "1f1b"})


def jax_text(config, m: int, width: int, batch: int) -> str:
    """What `mpmd.jit(...).lower()` hands the compiler (generic form, with
    the topology)."""
    params = models.init_mlp(jax.random.PRNGKey(0), [width] * (LAYERS + 1))
    xs = jax.random.normal(jax.random.PRNGKey(1), (m, batch, width))
    ys = jax.random.normal(jax.random.PRNGKey(2), (m, batch, width))
    jax.clear_caches()  # time a first trace, not JAX's cached one
    jitted = jax.jit(mlp_microbatched_step, keep_unused=True)
    with emit_named_computations():
        lowered = jitted.lower(params, xs, ys)
    module = lowered.compiler_ir("stablehlo")
    _add_topology(module.operation, config.topology_attr())
    return module.operation.get_asm(print_generic_op_form=True,
                                    enable_debug_info=True)


def pipeline_for(config) -> str:
    return (_import_pipeline(config, {}, {}) + "," +
            _optimize_pipeline(config, None, []))


def partition(text: str, pipeline: str) -> ExecutionPlan:
    _, plan_json = compile_to_plan(text, pipeline, source_name="<jax>")
    return ExecutionPlan.from_json(plan_json)


# ------------------------------------------------------------- mpmd-opt

_ROW = re.compile(r"^\s*([\d.]+)\s+\(\s*[\d.]+%\)\s+(.*\S)\s*$")


def mlir_timing(text: str, pipeline: str, workdir: str) -> list[tuple[float, str]]:
    """(seconds, name) rows of `mpmd-opt --mlir-timing` (wall column) on
    the text, with the pipeline (a private copy of the binary, so that a
    rebuild cannot interfere)."""
    source = os.path.join(ROOT, "build", "bin", "mpmd-opt")
    binary = os.path.join(workdir, "mpmd-opt")
    shutil.copy2(source, binary)
    path = os.path.join(workdir, "jax.mlir")
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    cmd = [binary, path, f"--pass-pipeline=builtin.module({pipeline})",
           "--mlir-timing", "-o", os.devnull]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"mpmd-opt failed (rc={proc.returncode}):\n"
                 f"{proc.stderr[-4000:]}")
    rows = []
    seen: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        match = _ROW.match(line)
        if match:
            name = match.group(2)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:  # a pass that runs twice: Canonicalizer #2
                name += f" #{seen[name]}"
            rows.append((float(match.group(1)), name))
    rows.append((wall, "(mpmd-opt process, wall)"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--microbatches", default="16,64,256")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs per size (the minimum is kept)")
    parser.add_argument("--no-timing", action="store_true",
                        help="skip the mpmd-opt --mlir-timing breakdown")
    parser.add_argument("--top", type=int, default=12,
                        help="rows of the --mlir-timing breakdown to print")
    parser.add_argument("--keep", metavar="DIR",
                        help="save each size's JAX text as DIR/mlp_m<m>.mlir")
    args = parser.parse_args()
    if len(jax.devices()) < LAYERS:
        sys.exit("needs 8 devices: XLA_FLAGS="
                 "--xla_force_host_platform_device_count=8")
    sizes = [int(s) for s in args.microbatches.split(",")]
    config = config_for_eight_meshes()
    pipeline = pipeline_for(config)
    print(f"MLP: {LAYERS} layers of width {args.width}, batch {args.batch}; "
          f"{LAYERS} stages on {LAYERS} meshes of 1 CPU device; 1f1b")
    print(f"pipeline: {pipeline}")
    print()
    header = (f"{'microbatches':>12} {'fragments':>9} {'user':>6} "
              f"{'text MB':>7} {'JAX s':>7} {'mpmd s':>7} {'ms/frag':>7} "
              f"{'vs first':>8}")
    print(header)
    print("-" * len(header))
    texts = {}
    fragment_counts: dict[int, int] = {}
    first = None
    total = time.perf_counter()
    for m in sizes:
        jax_s = mpmd_s = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            text = jax_text(config, m, args.width, args.batch)
            jax_s = min(jax_s, time.perf_counter() - start)
            start = time.perf_counter()
            plan = partition(text, pipeline)
            mpmd_s = min(mpmd_s, time.perf_counter() - start)
        texts[m] = text
        fragment_counts[m] = len(plan.calls())
        calls = plan.calls()
        fragments = len(calls)
        user = sum(1 for c in calls if c.origins)
        per = mpmd_s / fragments * 1000
        first = first or per
        print(f"{m:>12} {fragments:>9} {user:>6} {len(text) / 1e6:>7.2f} "
              f"{jax_s:>7.2f} {mpmd_s:>7.2f} {per:>7.2f} "
              f"{per / first:>7.2f}x", flush=True)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            with open(os.path.join(args.keep, f"mlp_m{m}.mlir"), "w",
                      encoding="utf-8") as file:
                file.write(text)
    print()
    print("fragments: program calls in the plan (user: with an origin; the "
          "rest is code mesh inference placed); vs first: ms/frag over the "
          "smallest size's")

    if not args.no_timing:
        per_size = {}
        with tempfile.TemporaryDirectory() as workdir:
            for m in sizes:
                per_size[m] = dict((name, sec) for sec, name in
                                   mlir_timing(texts[m], pipeline, workdir))
        largest = per_size[sizes[-1]]
        names = sorted(largest, key=largest.get, reverse=True)[:args.top]
        print()
        print("mpmd-opt --mlir-timing (wall s), the passes slowest at "
              f"m = {sizes[-1]}; growth = time ratio over the last step "
              f"(fragments x{fragment_counts[sizes[-1]] / fragment_counts[sizes[-2]]:.1f})"
              if len(sizes) > 1 else "")
        header = f"  {'pass':<30} " + " ".join(f"{f'm={m}':>8}" for m in sizes)
        header += f" {'growth':>7}" if len(sizes) > 1 else ""
        print(header)
        for name in names:
            cells = " ".join(f"{per_size[m].get(name, 0.0):>8.3f}"
                             for m in sizes)
            growth = ""
            if len(sizes) > 1:
                before = per_size[sizes[-2]].get(name, 0.0)
                growth = (f" {largest[name] / before:>6.1f}x" if before > 0
                          else "")
            print(f"  {name[:30]:<30} {cells}{growth}")
    print(f"total {time.perf_counter() - total:.0f} s")


if __name__ == "__main__":
    main()
