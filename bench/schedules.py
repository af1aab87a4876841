#!/usr/bin/env python3
"""Pipeline schedules side by side on a microbatched transformer.

For each built-in schedule (gpipe, 1f1b, interleaved-1f1b, zero-bubble-h1),
and with `--schedules all` each of Shardy:MPMD's registry schedules that
trains this step (mpmd.pipeline_registry: ONE_FWD_ONE_BWD, GPIPE,
GPIPE_BUT_1F1B_FOR_LAST_MESH, ZERO_BUBBLE_H1, ZERO_BUBBLE_H2_* and CIRCULAR
on the interleaved assignment) and our V schedules ZERO_BUBBLE_V and
DUALPIPE_V (on `v_assignment`: 8 blocks, stages k and 7 - k on one mesh),
the script lowers `models.transformer_microbatched_step` (m microbatches,
one `mpmd.fori_loop` iteration each) over 4 meshes of 2 CPU devices,
compiles it, checks once that the result equals `jax.jit` of the same step
(rtol 1e-5), and reports (one row per schedule):

  closed   the bubble fraction docs/architecture.md#optimize gives for p = 4 equal
           stages: (p-1)/(m+p-1) for gpipe and 1f1b, (p-1)/(v*m+p-1) with
           v = 2 for interleaved, (p-1)/(3m+p-1) for zero-bubble-h1,
           (p-1)/(6m+p-1) for the V schedules (chunks of half a stage)
  sim      simulated bubble fraction with unit costs: F=1, B=2, W=1 for
           gpipe / 1f1b / interleaved; F=1, B=1, W=1 for zero-bubble-h1
           and the V schedules
           (the ZB paper's setting: the split backward's input-gradient
           part B and weight-gradient part W cost one forward each);
           inferred fragments and transfers cost 0
  sim-bl   the same with the `embed` and `head` origins costing 0: then
           every mesh has the same work (2 blocks per microbatch), as the
           closed forms assume; with them, m1 and m4 carry 3 fragments per
           microbatch and m2, m3 carry 2
  traced   simulated bubble fraction with costs measured by a traced run with
           host timestamps (serialized: each step's own cost)
           (`costs_from_trace`: each call's mean duration by label, so
           inferred fragments count too), transfers at their mean traced
           time; `sim ms` is its simulated step time
  serial   the traced run's calls and transfers added up (no overlap)
  step ms  measured step time: compiled call + block_until_ready, the
           minimum of --repeat calls after warm-up, inputs already on their
           meshes; the last row is `jax.jit` of the step on one CPU device

For zero-bubble-h1 it also says how many backward fragments were split
(`mpmd-split-backward` leaves whole a backward none of whose results leave
its mesh) and the unit-cost bubbles with each unsplit backward costing
B + W = 2.

A second table gives the peak live buffers per mesh predicted by
`mpmd.runtime.memory.predict_peaks`, which walks the plan as the executor's
environment does: the inputs, then each step's outputs are added (a call's
outputs on its mesh, a transfer's on its target), donated inputs die at
their call (their buffers become outputs), and each step's `free` list is
dropped after it. Per mesh it reports the maximum number of arrays alive at
once and the maximum bytes alive at once (per device: each array's shard
size from its sharding). Arrays the caller still holds (the step's
arguments) are not counted once the plan frees them; in these plans it
frees none of them (the update reads them last).

A third table sets beside it what one run really holds
(`Compiled.run_with_memory`, docs/runtime.md#memory): per mesh, the peak
bytes per device of the arrays the step makes, predicted / measured (live
`jax.Array`s between steps), and the measured peak of everything alive on
the mesh, the placed arguments included. The two step numbers agree when
the runtime drops every value where the plan says; a row whose numbers
differ is flagged.

A fourth table gives how long each mesh waits inside one step as it really
runs (no waiting between steps), from JAX's profiler where the profile maps
onto the plan (`run_traced(source="auto")`, `Trace.idle_us()`).

`--memory-sweep` prints only that table, for `--memory-schedules`
(gpipe,gpipe+offload,1f1b,1f1b+remat,1f1b+offload) at each of
`--memory-microbatches` (8,32), with the step time of each run: 1F1B's
peak is bounded by the number of stages in flight, GPipe's grows with m;
`+remat` (forwards recomputed before their backward) and `+offload`
(residuals kept in pinned host memory until their backward; the host
columns) show what each saves of device memory and costs in time.

Block assignments: interleaved-1f1b uses `interleaved_assignment` with 8
blocks (stage k on mesh k mod 4: v = 2 stages per mesh); the others use
`transformer_assignment` with --blocks blocks (default 8: 2 consecutive
blocks per mesh, one stage per mesh), so every schedule runs the same model
unless --blocks says otherwise.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/schedules.py \\
    [--microbatches 8] [--blocks 8] [--dim 32] [--repeat 10]
    [--schedules gpipe,1f1b,interleaved-1f1b,zero-bubble-h1]
  ... bench/schedules.py --memory-sweep [--memory-microbatches 8,32]
    [--memory-schedules gpipe,gpipe+offload,1f1b,1f1b+remat,1f1b+offload]
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

from mpmd import pipeline_registry  # noqa: E402
from mpmd.config import make_config  # noqa: E402
from mpmd.runtime.memory import predict_peaks  # noqa: E402
from mpmd.runtime.plan import CallStep, ExecutionPlan  # noqa: E402
from mpmd.runtime.simulate import Costs, costs_from_trace, simulate  # noqa: E402
from mpmd.stages import jit as mpmd_jit  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]
SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "zero-bubble-h1"]
# Shardy:MPMD's registry schedules (mpmd.pipeline_registry) that train the
# microbatched step as written: CIRCULAR_WITH_REVERSED_BACKWARD needs the
# gradients accumulated last microbatch first, and
# PARALLEL_PIPELINES_WITH_WRAP_AROUND forward-only programs.
REGISTRY = ["ONE_FWD_ONE_BWD", "GPIPE", "GPIPE_BUT_1F1B_FOR_LAST_MESH",
            "ZERO_BUBBLE_H1", "ZERO_BUBBLE_H2_ZERO_TX_LATENCY",
            "ZERO_BUBBLE_H2_HALF_TX_LATENCY", "ZERO_BUBBLE_H2_FULL_TX_LATENCY",
            "CIRCULAR"]
# Ours beyond Shardy's registry (mpmd.v_schedules): 2p stages in a V.
V_SCHEDULES = ["ZERO_BUBBLE_V", "DUALPIPE_V"]
INTERLEAVED_BLOCKS = 8
# Schedules with several stages per mesh, and with split backwards.
_INTERLEAVED = ("interleaved-1f1b", "CIRCULAR")
_SPLIT = ("zero-bubble-h1", "ZERO_BUBBLE_H1", "ZERO_BUBBLE_H2_ZERO_TX_LATENCY",
          "ZERO_BUBBLE_H2_HALF_TX_LATENCY", "ZERO_BUBBLE_H2_FULL_TX_LATENCY",
          *V_SCHEDULES)


def four_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def unit_costs(schedule: str) -> Costs:
    if schedule in _SPLIT:
        return Costs(forward=1, backward=1, weight_gradient=1)
    return Costs(forward=1, backward=2, weight_gradient=1)


def closed_form(schedule: str, p: int, m: int, v: int) -> float | None:
    """docs/architecture.md#optimize: the bubble of p equal stages (v per
    mesh); None for schedules without a closed form here."""
    if schedule in ("interleaved-1f1b", "CIRCULAR"):
        return (p - 1) / (v * m + p - 1)
    if schedule in ("zero-bubble-h1", "ZERO_BUBBLE_H1"):
        return (p - 1) / (3 * m + p - 1)  # F = B = W, every backward split
    if schedule in V_SCHEDULES:
        # Chunks of half a stage, F = B = W: exact for DualPipe-V (m >= 2p)
        # and for ZB-V when p divides m (tests/test_v_schedules.py).
        return (p - 1) / (6 * m + p - 1)
    if schedule in ("gpipe", "1f1b", "GPIPE", "ONE_FWD_ONE_BWD"):
        return (p - 1) / (m + p - 1)
    return None


def blocks_only(costs: Costs, skip=("embed", "head")):
    """`costs`, with the origins in `skip` costing nothing: every mesh then
    holds the same work (2 blocks per microbatch), as the closed forms
    assume."""
    def cost(step: CallStep) -> float:
        kept = [o for o in step.origins if o.name not in skip]
        if not kept:
            return 0.0
        if step.weight_gradient:
            return costs.weight_gradient
        return sum(costs.backward if o.is_backward else costs.forward
                   for o in kept)
    return cost


def unsplit_as_whole(plan: ExecutionPlan, cost):
    """`cost`, with each backward fragment that was not split (no
    weight-gradient part) costing twice (B + W = 2 under F = B = W = 1):
    such a fragment computes its weight gradients too."""
    split = {(s.mesh, s.origins, s.call_counter) for s in plan.calls()
             if s.weight_gradient}

    def whole(step: CallStep) -> float:
        base = cost(step)
        if step.kind == "B" and (step.mesh, step.origins,
                                 step.call_counter) not in split:
            return 2 * base
        return base
    return whole


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


# ---------------------------------------------------------------- one schedule

def run_schedule(schedule: str, args: argparse.Namespace) -> dict[str, Any]:
    interleaved = schedule in _INTERLEAVED
    v_shaped = schedule in V_SCHEDULES
    num_blocks = (INTERLEAVED_BLOCKS if interleaved else
                  2 * len(MESHES) if v_shaped else args.blocks)
    assignment = (models.interleaved_assignment(num_blocks, MESHES)
                  if interleaved else
                  models.v_assignment(num_blocks, MESHES) if v_shaped else
                  models.transformer_assignment(num_blocks, MESHES))
    chosen = (pipeline_registry.get_pipeline_schedule(schedule)
              if schedule in pipeline_registry.PIPELINE_SCHEDULES
              else schedule)
    config = make_config(four_meshes(), assignment,
                         partitioning_options={"pipeline_schedule": chosen})
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

    costs = unit_costs(schedule)
    unit = simulate(plan, costs)
    blocks = simulate(plan, blocks_only(costs))
    fair = None
    if schedule in _SPLIT:
        fair = (simulate(plan, unsplit_as_whole(plan, costs.of)),
                simulate(plan, unsplit_as_whole(plan, blocks_only(costs))))
    backwards = [st for st in plan.calls() if st.kind == "B"]
    weights = [st for st in plan.calls() if st.weight_gradient]

    # Traced runs: the one with the smallest total time gives the costs.
    best_trace = None
    for _ in range(args.traces):
        # Host timestamps: each step's own cost, not slowed down by the
        # meshes' concurrency (the costs feed a simulation).
        _, trace = compiled.run_traced(*placed, source="host")
        if best_trace is None or trace.total_us < best_trace.total_us:
            best_trace = trace
    transfers = [t.end_us - t.start_us for t in best_trace.transfers]
    transfer_us = sum(transfers) / len(transfers) if transfers else 0.0
    traced = simulate(plan, costs_from_trace(best_trace),
                      transfer_cost=transfer_us)

    # One step as it really runs (no waiting between steps), from JAX's
    # profiler where it maps: how long each mesh waits inside the step.
    _, profiled = compiled.run_traced(*placed, source="auto")

    step_s = min_time(lambda: compiled(*placed), args.repeat)
    jit_s = min_time(lambda: reference(params, tokens, targets), args.repeat)
    serial_us = sum(c.end_us - c.start_us for c in best_trace.calls) + \
        sum(transfers)

    calls = plan.calls()
    return {
        "schedule": schedule,
        "blocks": num_blocks,
        "assignment": ("interleaved_assignment" if interleaved
                       else "v_assignment" if v_shaped
                       else "transformer_assignment"),
        "calls": len(calls),
        "transfers": len(plan.steps) - len(calls),
        "programs": len(plan.programs),
        "unit": unit,
        "blocks_only": blocks,
        "closed": closed_form(schedule, len(MESHES), args.microbatches,
                              2 if interleaved else 1),
        "fair": fair,
        "split": (len(weights), len(backwards)),
        "serial_us": serial_us,
        "unit_costs": "F1 B1 W1" if schedule in _SPLIT else "F1 B2 W1",
        "traced": traced,
        "traced_us": best_trace.total_us,
        "profiled": profiled,
        "transfer_us": transfer_us,
        "step_s": step_s,
        "jit_s": jit_s,
        "lower_s": lower_s,
        "compile_s": compile_s,
        "peak": predict_peaks(compiled.executor),
        "measured": compiled.run_with_memory(*placed)[1],
        "schedule_text": lowered.schedule_text(),
    }


# ---------------------------------------------------------------- memory

def print_memory(rows: list[tuple[str, Any]],
                 step_ms: dict[str, float] | None = None) -> None:
    """One row per (name, MemoryTable): per mesh, the peak KiB per device of
    the arrays the step makes in device memory, predicted (plan walk) /
    measured (live arrays between steps), the measured peak of everything
    alive in device memory on the mesh (the caller's parameters and inputs
    included), and the measured peak in host memory (offloaded values).
    `step_ms`: a step time per row name, printed last."""
    print("peak KiB per device made by the step in device memory, predicted"
          " / measured (mpmd.runtime.memory); total: every live array in "
          "device memory on the mesh, measured; host: measured peak in "
          "pinned host memory")
    header = (f"{'run':<26} " + " ".join(f"{m:>15}" for m in MESHES) +
              "  " + " ".join(f"{'total ' + m:>8}" for m in MESHES) +
              "  " + " ".join(f"{'host ' + m:>7}" for m in MESHES) +
              (f" {'step ms':>8}" if step_ms else ""))
    print(header)
    print("-" * len(header))
    for name, table in rows:
        cells = " ".join(
            f"{f'{r.predicted.step_bytes / 1024:.1f} / {r.measured.step_bytes / 1024:.1f}':>15}"
            for r in (table[m] for m in MESHES))
        totals = " ".join(f"{table[m].measured.bytes / 1024:>8.1f}"
                          for m in MESHES)
        hosts = " ".join(f"{table[m].measured.host_bytes / 1024:>7.1f}"
                         for m in MESHES)
        timing = f" {step_ms[name]:>8.2f}" if step_ms else ""
        differ = [r.mesh for r in table
                  if r.predicted.step_bytes != r.measured.step_bytes
                  or r.predicted.host_bytes != r.measured.host_bytes]
        note = f"  measured != predicted on {', '.join(differ)}" if differ \
            else ""
        print(f"{name:<26} {cells}  {totals}  {hosts}{timing}{note}")
    if rows and not all(table.stats_available for _, table in rows):
        print("  device memory statistics (memory_stats) are not available "
              "on this backend")


def memory_sweep(args: argparse.Namespace) -> None:
    """--memory-sweep: each of --memory-schedules at each of
    --memory-microbatches, lowered, compiled and run once with
    `run_with_memory`; prints the memory table and, per schedule, how much
    the largest measured per-mesh peak grew from the first m to the last."""
    counts = [int(m) for m in args.memory_microbatches.split(",")]
    rows = []
    step_ms: dict[str, float] = {}
    growth: dict[str, list[int]] = {}
    for schedule in args.memory_schedules.split(","):
        # "1f1b+remat": the schedule with forwards recomputed in the
        # backward (the remat option); "+offload": residuals in pinned
        # host memory until their backward (offload_activations).
        name, _, variant = schedule.partition("+")
        options = {"pipeline_schedule": name}
        if variant == "remat":
            options["remat"] = True
        elif variant == "offload":
            options["offload_activations"] = True
        elif variant:
            sys.exit(f"unknown variant {variant!r} in {schedule!r}; "
                     "use SCHEDULE, SCHEDULE+remat or SCHEDULE+offload")
        assignment = models.transformer_assignment(args.blocks, MESHES)
        config = make_config(four_meshes(), assignment,
                             partitioning_options=options)
        for m in counts:
            run_args = argparse.Namespace(**{**vars(args), "microbatches": m})
            params, tokens, targets = data(run_args, args.blocks)
            start = time.perf_counter()
            lowered = mpmd_jit(models.transformer_microbatched_step,
                               config).lower(params, tokens, targets)
            compiled = lowered.compile()
            placed = jax.block_until_ready(jax.device_put(
                (params, tokens, targets),
                lowered.function_named_shardings.inputs))
            _, table = compiled.run_with_memory(*placed)
            print(f"  {schedule}, m = {m}: {len(lowered.plan.steps)} steps, "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
            row = f"{schedule}, m = {m}"
            rows.append((row, table))
            step_ms[row] = 1e3 * min_time(lambda: compiled(*placed),
                                          args.memory_repeat)
            growth.setdefault(schedule, []).append(
                max(r.measured.step_bytes for r in table))
            del placed, compiled, lowered
    print()
    print_memory(rows, step_ms)
    print(f"  step ms: the fastest of {args.memory_repeat} calls after one "
          "warm-up")
    for schedule, peaks in growth.items():
        print(f"  {schedule}: largest measured step peak {peaks[0] / 1024:.1f}"
              f" KiB at m = {counts[0]}, {peaks[-1] / 1024:.1f} KiB at m = "
              f"{counts[-1]} (x{peaks[-1] / peaks[0]:.2f})")


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
    parser.add_argument("--schedules", default=",".join(SCHEDULES),
                        help="comma-separated built-in names and/or "
                             "Shardy registry names; 'all' for every one")
    parser.add_argument("--show-orders", action="store_true",
                        help="print each schedule's per-mesh order")
    parser.add_argument("--memory-sweep", action="store_true",
                        help="only the memory table: --memory-schedules at "
                             "each of --memory-microbatches")
    parser.add_argument("--memory-schedules",
                        default="gpipe,gpipe+offload,1f1b,1f1b+remat,"
                                "1f1b+offload",
                        help="schedules, each optionally +remat or +offload")
    parser.add_argument("--memory-microbatches", default="8,32")
    parser.add_argument("--memory-repeat", type=int, default=5,
                        help="timed steps per --memory-sweep run")
    args = parser.parse_args()
    if len(jax.devices()) < 8:
        sys.exit("needs 8 devices: XLA_FLAGS="
                 "--xla_force_host_platform_device_count=8")
    if args.memory_sweep:
        print(f"transformer: dim {args.dim}, seq {args.seq}, batch "
              f"{args.batch}, vocab {args.vocab}, {args.blocks} blocks; "
              "4 meshes x 2 CPU devices")
        memory_sweep(args)
        return

    print(f"transformer: dim {args.dim}, seq {args.seq}, batch {args.batch}, "
          f"vocab {args.vocab}; m = {args.microbatches} microbatches; "
          f"4 meshes x 2 CPU devices")
    total = time.perf_counter()
    results = []
    names = (SCHEDULES + REGISTRY + V_SCHEDULES if args.schedules == "all"
             else args.schedules.split(","))
    for schedule in names:
        result = run_schedule(schedule, args)
        results.append(result)
        print(f"  {schedule}: lower {result['lower_s']:.1f} s, compile "
              f"{result['compile_s']:.1f} s, {result['calls']} calls, "
              f"{result['transfers']} transfers, {result['programs']} "
              "programs; equals jax.jit", flush=True)
        if args.show_orders:
            print("    " + result["schedule_text"].replace("\n", "\n    "))

    jit_s: dict[int, float] = {}
    for r in results:
        jit_s[r["blocks"]] = min(jit_s.get(r["blocks"], float("inf")),
                                 r["jit_s"])
    print()
    header = (f"{'schedule':<31} {'blocks':<10} {'unit':<8} {'closed':>6} "
              f"{'sim':>6} {'sim-bl':>6} {'traced':>6} {'sim ms':>7} "
              f"{'serial':>7} {'step ms':>8}")
    print(header)
    print("-" * len(header))
    for r in results:
        blocks = f"{r['blocks']}" + (
            " interl." if "interleaved" in r["assignment"] else
            " V" if r["assignment"] == "v_assignment" else "")
        closed = "-" if r["closed"] is None else f"{r['closed']:.3f}"
        print(f"{r['schedule']:<31} {blocks:<10} {r['unit_costs']:<8} "
              f"{closed:>6} {r['unit'].bubble_fraction:>6.3f} "
              f"{r['blocks_only'].bubble_fraction:>6.3f} "
              f"{r['traced'].bubble_fraction:>6.3f} "
              f"{r['traced'].step_time / 1000:>7.2f} "
              f"{r['serial_us'] / 1000:>7.2f} {r['step_s'] * 1000:>8.2f}")
    for blocks, seconds in sorted(jit_s.items()):
        print(f"{f'jax.jit, 1 CPU device ({blocks} blocks)':<87} "
              f"{seconds * 1000:>8.2f}")
    print()
    print("  closed: docs/architecture.md#optimize for p = 4 equal stages (v = 2 for "
          "interleaved; F = B = W and every backward split for zero-bubble)")
    print("  sim: simulated bubble fraction, unit costs (F=1 B=2 W=1; "
          "zero-bubble-h1: F=B=W=1), inferred fragments and transfers 0")
    print("  sim-bl: the same with embed and head costing 0 (equal work per "
          "mesh, as the closed forms assume)")
    print("  traced: simulated with costs_from_trace (the fastest of "
          f"{args.traces} traced runs) and transfers at their mean traced "
          "time; sim ms: its simulated step")
    print("  serial: the traced calls and transfers added up (no overlap); "
          f"step ms: compiled call + block_until_ready, min of {args.repeat}")
    for r in results:
        if r["fair"] is not None:
            split, whole = r["split"]
            print(f"  {r['schedule']}: {split} of {whole} backward fragments "
                  "were split (a backward none of whose results leave its "
                  "mesh stays whole); costing the unsplit ones B+W = 2: sim "
                  f"{r['fair'][0].bubble_fraction:.3f}, sim-bl "
                  f"{r['fair'][1].bubble_fraction:.3f}")
    print()
    print("peak live buffers per mesh: arrays / KiB per device alive at once "
          "(the executor's env over the plan)")
    header = f"{'schedule':<31} " + " ".join(f"{m:>13}" for m in MESHES)
    print(header)
    print("-" * len(header))
    for r in results:
        cells = " ".join(
            f"{f'{p.arrays} / {p.bytes / 1024:.0f}':>13}"
            for p in (r["peak"][m] for m in MESHES))
        print(f"{r['schedule']:<31} {cells}")
    print()
    print("waiting per mesh inside one step (ms), from a trace of the step "
          "as it runs (Trace.idle_us: gaps between a mesh's calls, before "
          "its first and after its last)")
    header = (f"{'schedule':<31} {'source':<9} {'step':>7} "
              + " ".join(f"{m:>7}" for m in MESHES))
    print(header)
    print("-" * len(header))
    for r in results:
        trace = r["profiled"]
        idle = trace.idle_us()
        cells = " ".join(f"{idle.get(m, 0.0) / 1000:>7.2f}" for m in MESHES)
        print(f"{r['schedule']:<31} {trace.source:<9} "
              f"{trace.end_us() / 1000:>7.2f} {cells}")
    print("  on XLA:CPU programs of multi-device meshes run one at a time "
          "(docs/runtime.md), so meshes here wait for each other's programs "
          "as well as for data")
    print()
    print_memory([(r["schedule"], r["measured"]) for r in results])
    print(f"total {time.perf_counter() - total:.0f} s")


if __name__ == "__main__":
    main()
