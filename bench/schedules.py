#!/usr/bin/env python3
"""Pipeline schedules side by side on a microbatched transformer.

For each built-in schedule (gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1)
the script lowers `models.transformer_microbatched_step` (m microbatches,
one `mpmd.fori_loop` iteration each) over 4 meshes of 2 CPU devices,
compiles it, checks once that the result equals `jax.jit` of the same step
(rtol 1e-5), and reports:

  sim (unit)    simulated bubble fraction with unit costs: F=1, B=2, W=1 for
                gpipe / 1f1b / interleaved; F=1, B=1, W=1 for zero-bubble-h1
                (the ZB paper's setting: the split backward's input-gradient
                part B and weight-gradient part W cost one forward each);
                inferred fragments and transfers cost 0
  sim (traced)  simulated bubble fraction with costs measured by a traced run
                (`costs_from_trace`: each call's mean duration by label, so
                inferred fragments count too) and the mean traced transfer
                time per transfer; with the simulated step time in ms
  step ms       measured step time: compiled call + block_until_ready, the
                minimum of --repeat calls after warm-up (the inputs already
                on their meshes)
  jit ms        the same for `jax.jit` of the step on one CPU device
                (for scale: no pipeline, no transfers)

A second table gives the peak live buffers per mesh. It walks the plan as
the executor's environment does: the inputs, then each step's outputs are
added (a call's outputs on its mesh, a transfer's on its target), donated
inputs die at their call (their buffers become outputs), and each step's
`free` list is dropped after it. Per mesh it reports the maximum number of
arrays alive at once and the maximum bytes alive at once (per device: each
array's shard size from its sharding). Arrays the caller still holds (the
step's arguments) are not counted once the plan frees them.

Block assignments: interleaved-1f1b uses `interleaved_assignment` with 8
blocks (stage k on mesh k mod 4: v = 2 stages per mesh); the others use
`transformer_assignment` with --blocks blocks (default 8: 2 consecutive
blocks per mesh, one stage per mesh), so every schedule runs the same model
unless --blocks says otherwise.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/schedules.py \\
    [--microbatches 8] [--blocks 8] [--dim 32] [--repeat 10]
    [--schedules gpipe,1f1b,interleaved-1f1b,zero-bubble-h1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples"))
import models  # noqa: E402

from mpmd.config import make_config  # noqa: E402
from mpmd.runtime.executor import sharding_for  # noqa: E402
from mpmd.runtime.plan import CallStep, ExecutionPlan  # noqa: E402
from mpmd.runtime.simulate import Costs, costs_from_trace, simulate  # noqa: E402
from mpmd.stages import jit as mpmd_jit  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]
SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "zero-bubble-h1"]
INTERLEAVED_BLOCKS = 8


def four_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def unit_costs(schedule: str) -> Costs:
    if schedule == "zero-bubble-h1":
        return Costs(forward=1, backward=1, weight_gradient=1)
    return Costs(forward=1, backward=2, weight_gradient=1)


def data(args: argparse.Namespace, num_blocks: int):
    params = models.init_transformer(
        jax.random.PRNGKey(0), vocab=args.vocab, dim=args.dim, heads=2,
        layers=num_blocks, seq=args.seq)
    shape = (args.microbatches, args.batch, args.seq)
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, args.vocab)
    targets = jax.random.randint(jax.random.PRNGKey(2), shape, 0, args.vocab)
    return params, tokens, targets


def min_time(fn, repeat: int) -> float:
    """Seconds: the minimum over `repeat` calls of fn() + block (after one
    warm-up call)."""
    jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


# ---------------------------------------------------------------- liveness

def _shard_bytes(shape, dtype, sharding) -> int:
    shard = sharding.shard_shape(tuple(shape))
    return int(np.prod(shard, dtype=np.int64)) * np.dtype(dtype).itemsize


def peak_live(plan: ExecutionPlan, executor) -> dict[str, tuple[int, int]]:
    """Per mesh: (max arrays alive at once, max bytes alive at once per
    device), walking the plan like `PlanExecutor.run` walks its env."""
    where: dict[int, tuple[str, int]] = {}  # value -> (mesh, bytes)
    for index, (spec, sharding) in enumerate(
            zip(plan.inputs, executor.input_shardings())):
        where[index] = (spec.mesh, _shard_bytes(spec.shape, spec.dtype,
                                                sharding))
    count = {m.name: 0 for m in plan.meshes}
    size = {m.name: 0 for m in plan.meshes}
    peak_count = dict(count)
    peak_size = dict(size)
    live: set[int] = set()

    def add(value: int, mesh: str, nbytes: int) -> None:
        where[value] = (mesh, nbytes)
        live.add(value)
        count[mesh] += 1
        size[mesh] += nbytes

    def drop(value: int) -> None:
        if value in live:
            live.remove(value)
            mesh, nbytes = where[value]
            count[mesh] -= 1
            size[mesh] -= nbytes

    def note() -> None:
        for mesh in count:
            peak_count[mesh] = max(peak_count[mesh], count[mesh])
            peak_size[mesh] = max(peak_size[mesh], size[mesh])

    for index in range(len(plan.inputs)):
        add(index, *where[index])
    note()
    for step in plan.steps:
        if isinstance(step, CallStep):
            program = executor.programs[step.program]
            donated = plan.programs[step.program].donated_args
            # A donated input's buffers become an output's: it dies as the
            # call starts, and the inputs and outputs are alive together.
            for arg in donated:
                drop(step.inputs[arg])
            for value, aval, sharding in zip(step.outputs, program.out_avals,
                                             program.out_shardings):
                add(value, step.mesh,
                    _shard_bytes(aval.shape, aval.dtype, sharding))
        else:
            sharding = sharding_for(step.type, executor.meshes)
            add(step.output, step.target,
                _shard_bytes(step.type.shape, step.type.dtype, sharding))
        note()
        for value in step.free:
            drop(value)
    return {mesh: (peak_count[mesh], peak_size[mesh]) for mesh in count}


# ---------------------------------------------------------------- one schedule

def run_schedule(schedule: str, args: argparse.Namespace) -> dict[str, Any]:
    interleaved = schedule == "interleaved-1f1b"
    num_blocks = INTERLEAVED_BLOCKS if interleaved else args.blocks
    assignment = (models.interleaved_assignment(num_blocks, MESHES)
                  if interleaved else
                  models.transformer_assignment(num_blocks, MESHES))
    config = make_config(four_meshes(), assignment,
                         partitioning_options={"pipeline_schedule": schedule})
    params, tokens, targets = data(args, num_blocks)

    start = time.perf_counter()
    lowered = mpmd_jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    lower_s = time.perf_counter() - start
    start = time.perf_counter()
    compiled = lowered.compile()
    compile_s = time.perf_counter() - start
    plan = lowered.plan

    # Inputs on their meshes once, so that the timed calls copy nothing.
    placed = jax.block_until_ready(jax.device_put(
        (params, tokens, targets), lowered.function_named_shardings.inputs))

    # Correctness, once: the same step with jax.jit.
    reference = jax.jit(models.transformer_microbatched_step)
    ref_params, ref_loss = reference(params, tokens, targets)
    out_params, out_loss = compiled(*placed)
    np.testing.assert_allclose(np.asarray(out_loss), np.asarray(ref_loss),
                               rtol=1e-5)
    for a, b in zip(jax.tree.leaves(out_params), jax.tree.leaves(ref_params)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5,
                                   atol=1e-6)

    unit = simulate(plan, unit_costs(schedule))

    # Traced runs: the one with the smallest total time gives the costs.
    best_trace = None
    for _ in range(args.traces):
        _, trace = compiled.run_traced(*placed)
        if best_trace is None or trace.total_us < best_trace.total_us:
            best_trace = trace
    transfers = [t.end_us - t.start_us for t in best_trace.transfers]
    transfer_us = sum(transfers) / len(transfers) if transfers else 0.0
    traced = simulate(plan, costs_from_trace(best_trace),
                      transfer_cost=transfer_us)

    step_s = min_time(lambda: compiled(*placed), args.repeat)
    jit_s = min_time(lambda: reference(params, tokens, targets), args.repeat)

    calls = plan.calls()
    return {
        "schedule": schedule,
        "blocks": num_blocks,
        "assignment": ("interleaved_assignment" if interleaved
                       else "transformer_assignment"),
        "calls": len(calls),
        "transfers": len(plan.steps) - len(calls),
        "programs": len(plan.programs),
        "unit": unit,
        "unit_costs": "F1 B1 W1" if schedule == "zero-bubble-h1"
                      else "F1 B2 W1",
        "traced": traced,
        "traced_us": best_trace.total_us,
        "transfer_us": transfer_us,
        "step_s": step_s,
        "jit_s": jit_s,
        "lower_s": lower_s,
        "compile_s": compile_s,
        "peak": peak_live(plan, compiled.executor),
        "schedule_text": lowered.schedule_text(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--microbatches", "-m", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=8,
                        help="blocks for gpipe / 1f1b / zero-bubble-h1 "
                             "(interleaved-1f1b always uses 8)")
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed calls per route (the minimum is kept)")
    parser.add_argument("--traces", type=int, default=3,
                        help="traced runs per schedule (the fastest is kept)")
    parser.add_argument("--schedules", default=",".join(SCHEDULES))
    parser.add_argument("--show-orders", action="store_true",
                        help="print each schedule's per-mesh order")
    args = parser.parse_args()
    if len(jax.devices()) < 8:
        sys.exit("needs 8 devices: XLA_FLAGS="
                 "--xla_force_host_platform_device_count=8")

    print(f"transformer: dim {args.dim}, seq {args.seq}, batch {args.batch}, "
          f"vocab {args.vocab}; m = {args.microbatches} microbatches; "
          f"4 meshes x 2 CPU devices")
    total = time.perf_counter()
    results = []
    for schedule in args.schedules.split(","):
        result = run_schedule(schedule, args)
        results.append(result)
        print(f"  {schedule}: lower {result['lower_s']:.1f} s, compile "
              f"{result['compile_s']:.1f} s, {result['calls']} calls, "
              f"{result['transfers']} transfers, {result['programs']} "
              "programs; equals jax.jit", flush=True)
        if args.show_orders:
            print("    " + result["schedule_text"].replace("\n", "\n    "))

    print()
    header = (f"{'schedule':<17} {'blocks':<10} {'unit costs':<10} "
              f"{'sim(unit)':>9} {'sim(traced)':>11} {'sim ms':>7} "
              f"{'traced ms':>9} {'step ms':>8} {'jit ms':>7}")
    print(header)
    print("-" * len(header))
    for r in results:
        blocks = f"{r['blocks']}{' interl.' if 'interleaved' in r['assignment'] else ''}"
        print(f"{r['schedule']:<17} {blocks:<10} {r['unit_costs']:<10} "
              f"{r['unit'].bubble_fraction:>9.3f} "
              f"{r['traced'].bubble_fraction:>11.3f} "
              f"{r['traced'].step_time / 1000:>7.2f} "
              f"{r['traced_us'] / 1000:>9.2f} "
              f"{r['step_s'] * 1000:>8.2f} {r['jit_s'] * 1000:>7.2f}")
    print()
    print("peak live buffers per mesh (arrays / KiB per device, max over the "
          "step; the plan's env)")
    header = f"{'schedule':<17} " + " ".join(f"{m:>14}" for m in MESHES)
    print(header)
    print("-" * len(header))
    for r in results:
        cells = " ".join(
            f"{f'{c} / {b / 1024:.0f}':>14}"
            for c, b in (r["peak"][m] for m in MESHES))
        print(f"{r['schedule']:<17} {cells}")
    print()
    print(f"sim(unit): F=1 B=2 W=1 (zero-bubble-h1: F=B=W=1); sim(traced): "
          "costs_from_trace of the fastest traced run, transfers at their "
          "mean traced time; sim ms: its simulated step; traced ms: the "
          "traced run (serialized); step ms / jit ms: min of "
          f"{args.repeat} calls")
    print(f"total {time.perf_counter() - total:.0f} s")


if __name__ == "__main__":
    main()
