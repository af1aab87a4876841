#!/usr/bin/env python3
"""Automatic stage assignment against the split by count.

`mpmd.make_config(topology, "auto")` assigns the named computations, in
program order, to one contiguous stage per mesh (topology order) so that
the busiest mesh has the least estimated work (FLOPs of each forward and
backward, measured by the compiler). This script sets that choice beside
the split by count (the same names cut into runs of nearly equal length,
`lowered.auto_choice.by_count`, given back to `make_config` as a hand
assignment) on two models over 4 meshes of 2 CPU devices, 1F1B:

  uneven       examples/models.py's `init_uneven` /
               `uneven_microbatched_step`: an embedding, 8 residual MLP
               blocks of widths 64..512 and a large head (10 named
               computations); tokens and targets int32
               [microbatches, 8, 16] in [0, 1024)
  transformer  the demo transformer (`init_transformer`, vocab 64, dim 32,
               2 heads, 8 blocks, seq 16; `transformer_microbatched_step`):
               embed, block0..block7, head (10 named computations);
               tokens and targets [microbatches, 4, 16]

Per model it prints `lowered.assignment_report()` of the automatic
assignment (each mesh's names, estimated MFLOP per microbatch, memory, and
simulated busy and idle time, for both splits), checks once that the
automatic step's outputs equal `jax.jit(step)` of the same arguments
(rtol 2e-5, atol 1e-6), and then one row per split:

  names/mesh   how many named computations each mesh holds
  busiest      the busiest mesh's estimated MFLOP per microbatch
  sim step     the step simulated by `mpmd.runtime.simulate.simulate` on the
               split's own plan, each call costing its FLOPs
               (`mpmd.auto_assign.flop_costs`), in MFLOP-time; transfers
               and inferred work cost nothing
  bubble       the simulated bubble fraction
  serial       the meshes' simulated busy time added up (the same for
               every split: the work does not change, only where it runs)
  lower s      `lower` of the split (the automatic one includes measuring
               the named computations and choosing)
  compile s    `compile` of the split (XLA, every program), with mpmd's
               program cache cleared first so that neither split reuses
               the other's programs; the first compile of the run also
               pays XLA's start-up, so read it as a rough size only
  programs     the plan's distinct programs (in parentheses the
               executables XLA compiled; the others were loaded for a
               mesh of the same shape)
  step ms      MEASURED: compiled call + jax.block_until_ready with the
               inputs already on their meshes, the median of --steps calls
               after 2 warm-up calls; the two splits' calls alternate so
               that load from other processes falls on both alike

and the ratio auto / by count of the simulated and measured step times.

On CPU the meshes take turns: XLA's CPU client does not run two programs
over several devices at the same time, even on disjoint devices (see
examples/demo.py). A measured step is then closer to the sum of the
meshes' work (`serial`) than to the simulated pipeline, and a better
balance shows much less there than in the simulation; on accelerators,
where each device runs its own queue, the simulated step is the one to
expect (not measured here).

Usage:
  .venv/bin/python bench/auto_assign.py [--models uneven,transformer]
      [--microbatches 8] [--steps 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples"))
import models  # noqa: E402

import mpmd  # noqa: E402
from mpmd.auto_assign import flop_costs  # noqa: E402
from mpmd.runtime.program import clear_program_cache, compile_counts  # noqa: E402
from mpmd.runtime.simulate import simulate  # noqa: E402

MODELS = ("uneven", "transformer")
MESHES = ["m1", "m2", "m3", "m4"]
OPTIONS = {"pipeline_schedule": "1f1b"}
WARMUP = 2


def four_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def setup(model: str, microbatches: int) -> tuple[Callable, tuple, str]:
    """The step, its arguments (params, tokens, targets) and a description."""
    if model == "uneven":
        params = models.init_uneven(jax.random.PRNGKey(0))
        shape, vocab = (microbatches, 8, 16), 1024
        step = models.uneven_microbatched_step
        what = (f"init_uneven (embed, blocks of widths "
                f"{','.join(map(str, models.UNEVEN_WIDTHS))}, head), "
                f"tokens {list(shape)}")
    else:
        params = models.init_transformer(jax.random.PRNGKey(0), vocab=64,
                                         dim=32, heads=2, layers=8, seq=16)
        shape, vocab = (microbatches, 4, 16), 64
        step = models.transformer_microbatched_step
        what = (f"init_transformer (vocab 64, dim 32, 2 heads, 8 blocks, seq 16), "
                f"tokens {list(shape)}")
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, vocab,
                                dtype=np.int32)
    targets = jax.random.randint(jax.random.PRNGKey(2), shape, 0, vocab,
                                 dtype=np.int32)
    return step, (params, tokens, targets), what


def lower_and_compile(step: Callable, assignment: Any, args: tuple
                      ) -> tuple[Any, Any, dict[str, Any]]:
    """The lowered and compiled step, the seconds of each, and the
    executables XLA compiled. The process's program cache is cleared first,
    so that a split does not reuse the programs another split compiled."""
    config = mpmd.make_config(four_meshes(), assignment,
                              partitioning_options=dict(OPTIONS))
    start = time.perf_counter()
    lowered = mpmd.jit(step, config).lower(*args)
    lowered_at = time.perf_counter()
    clear_program_cache()
    compiled = lowered.compile()
    done = time.perf_counter()
    return lowered, compiled, {"lower": lowered_at - start,
                               "compile": done - lowered_at,
                               "programs": len(lowered.plan.programs),
                               "compiled": compile_counts()["compiled"]}


def check_against_jit(step: Callable, compiled: Any, placed: tuple,
                      args: tuple) -> int:
    """Asserts the compiled step's outputs equal jax.jit's; returns the
    number of arrays compared."""
    got = jax.tree.leaves(compiled(*placed))
    want = jax.tree.leaves(jax.jit(step)(*args))
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=2e-5, atol=1e-6)
    return len(got)


def measure(runs: dict[str, Callable[[], Any]], steps: int) -> dict[str, float]:
    """Per route: the median ms of `steps` calls + block_until_ready, after
    WARMUP calls; the routes alternate call by call."""
    for run in runs.values():
        for _ in range(WARMUP):
            jax.block_until_ready(run())
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(steps):
        for name, run in runs.items():
            start = time.perf_counter()
            jax.block_until_ready(run())
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * float(np.median(t)) for name, t in times.items()}


def names_per_mesh(split: dict[str, Any]) -> str:
    counts = [0] * len(MESHES)
    for stage in split["stage_of"]:
        counts[stage] += 1
    return "+".join(map(str, counts))


def run_model(model: str, args: argparse.Namespace) -> None:
    step, step_args, what = setup(model, args.microbatches)
    print(f"\n=== {model}: {what}; {args.microbatches} microbatches, 1F1B, "
          f"4 meshes x 2 CPU devices")

    auto_lowered, auto_compiled, auto_s = lower_and_compile(step, "auto",
                                                            step_args)
    choice = auto_lowered.auto_choice
    print(f"named computations: {len(choice.costs)} "
          f"({', '.join(c['name'] for c in choice.costs)})")
    print(auto_lowered.assignment_report())

    count_assignment = choice.assignment_of(choice.by_count)
    count_lowered, count_compiled, count_s = lower_and_compile(
        step, count_assignment, step_args)
    if auto_lowered.assignment == count_lowered.assignment:
        print("note: the automatic split is the split by count")

    placed = {}
    for label, lowered in (("auto", auto_lowered), ("by count", count_lowered)):
        placed[label] = jax.block_until_ready(jax.device_put(
            step_args, lowered.function_named_shardings.inputs))
    compared = check_against_jit(step, auto_compiled, placed["auto"],
                                 step_args)
    print(f"check: the auto step's {compared} outputs equal "
          f"jax.jit(step) (rtol 2e-5, atol 1e-6)")

    costs = flop_costs(choice)
    rows = []
    for label, split, lowered, compile_s in (
            ("auto", choice.chosen, auto_lowered, auto_s),
            ("by count", choice.by_count, count_lowered, count_s)):
        simulation = simulate(lowered.plan, costs)
        rows.append({"label": label, "split": split, "sim": simulation,
                     "compile": compile_s})
    measured = measure({"auto": lambda: auto_compiled(*placed["auto"]),
                        "by count": lambda: count_compiled(*placed["by count"])},
                       args.steps)

    header = (f"{'split':<9} {'names/mesh':>10} {'busiest':>9} "
              f"{'sim step':>9} {'bubble':>7} {'serial':>9} "
              f"{'lower s':>7} {'compile s':>9} {'programs':>8} {'step ms':>8}")
    print(f"\n{model}: busiest in MFLOP per microbatch; sim step and serial "
          f"in MFLOP-time (each call costs its FLOPs); step ms measured, "
          f"median of {args.steps}")
    print(header)
    print("-" * len(header))
    for row in rows:
        simulation = row["sim"]
        print(f"{row['label']:<9} {names_per_mesh(row['split']):>10} "
              f"{max(row['split']['flops']) / 1e6:9.3f} "
              f"{simulation.step_time / 1e6:9.3f} "
              f"{simulation.bubble_fraction:7.3f} "
              f"{sum(simulation.busy.values()) / 1e6:9.3f} "
              f"{row['compile']['lower']:7.2f} {row['compile']['compile']:9.2f} "
              f"{row['compile']['programs']:>3} ({row['compile']['compiled']:>2}) "
              f"{measured[row['label']]:8.2f}")
    auto_row, count_row = rows
    sim_ratio = auto_row["sim"].step_time / count_row["sim"].step_time
    busiest_ratio = (max(auto_row["split"]["flops"])
                     / max(count_row["split"]["flops"]))
    print(f"{'auto / by count':<20} busiest {busiest_ratio:.3f}, "
          f"simulated step {sim_ratio:.3f}, measured step "
          f"{measured['auto'] / measured['by count']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated: uneven, transformer")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5,
                        help="timed calls per split (the median is kept)")
    args = parser.parse_args()
    chosen = [m for m in args.models.split(",") if m]
    unknown = sorted(set(chosen) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; "
                     f"choose from {', '.join(MODELS)}")
    if len(jax.devices()) < 8:
        sys.exit(f"auto_assign: needs 8 devices, found {len(jax.devices())} "
                 f"({jax.devices()[0].platform})")
    print(f"automatic stage assignment vs the split by count "
          f"({jax.devices()[0].platform}, {args.microbatches} microbatches, "
          f"1F1B)")
    for model in chosen:
        run_model(model, args)
    print("\nnote: on CPU the meshes take turns (XLA's CPU client does not "
          "run two programs over several devices at the same time, even on "
          "disjoint devices; see examples/demo.py), so a measured step is "
          "closer to the sum of the meshes' work (serial) than to the "
          "simulated pipeline, and a better balance shows far less in it; "
          "on accelerators the meshes overlap as simulated (not measured "
          "here)")


if __name__ == "__main__":
    main()
