#!/usr/bin/env python3
"""What reading IFRT IR costs: the execution plan from IFRT IR against the
plan from the MPMD module it was lowered from.

For each module the real Shardy:MPMD partitioned (python/tests/data/shardy/:
GPipe with tensor parallelism, 1F1B, ZB-H1 with split backward), jaxlib's
own `_sdy_mpmd.lower_to_ifrt` writes its IFRT IR (jaxlib's printed form).
Timed, each the minimum of `--repeat` runs in this process:

  mpmd   `compile_to_plan(text, "builtin.module()")`: parse the exported
         MPMD module, build the plan (what `compile_module` does with it)
  ifrt   `compile_to_plan(ifrt, "builtin.module(mpmd-import-ifrt)")`:
         parse the IFRT IR with the IFRT subset dialect, rewrite it as an
         exported MPMD module, build the plan

Then one call of `compile_module` on each, cold (the programs compiled),
reported with its `timings` (plan, compile). No timing is asserted.

Usage:
  PYTHONPATH=build/python_packages .venv/bin/python bench/ifrt_read.py \\
      [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402

import mpmd  # noqa: E402
from mpmd import jaxlib_dialects  # noqa: E402
from mpmd.compiler import compile_to_plan  # noqa: E402
from mpmd.runtime import program  # noqa: E402

DATA = (pathlib.Path(__file__).resolve().parents[1] / "python" / "tests"
        / "data" / "shardy")


def lower_to_ifrt(text: str) -> str:
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    with jaxlib_dialects.context():
        module = ir.Module.parse(text)
        jaxlib_dialects.sdy_mpmd().lower_to_ifrt(module)
        return str(module)


def best_ms(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def topology_of(case: dict) -> dict[str, Mesh]:
    devices = np.array(jax.devices(), dtype=object)
    return {name: Mesh(devices[mesh["devices"]].reshape(mesh["shape"]),
                       tuple(mesh["axes"]))
            for name, mesh in case["topology"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    cases = json.loads((DATA / "manifest.json").read_text())["cases"]
    print("Plan from IFRT IR vs from the MPMD module (ms, min of "
          f"{args.repeat}); compile_module cold (s)")
    print(f"{'module':<30} {'KiB mpmd/ifrt':>13} {'plan mpmd':>9} "
          f"{'plan ifrt':>9} {'ratio':>6} {'cold mpmd':>9} {'cold ifrt':>9}")
    for case in cases:
        text = (DATA / f"{case['name']}.mlir").read_text()
        ifrt = lower_to_ifrt(text)
        plan_mpmd = best_ms(lambda: compile_to_plan(text, "builtin.module()"),
                            args.repeat)
        plan_ifrt = best_ms(lambda: compile_to_plan(
            ifrt, "builtin.module(mpmd-import-ifrt)"), args.repeat)
        program.clear_program_cache()
        start = time.perf_counter()
        mpmd.runtime.compile_module(text, topology_of(case))
        cold_mpmd = time.perf_counter() - start
        program.clear_program_cache()
        start = time.perf_counter()
        mpmd.runtime.compile_module(ifrt)
        cold_ifrt = time.perf_counter() - start
        sizes = f"{len(text) // 1024}/{len(ifrt) // 1024}"
        print(f"{case['name']:<30} {sizes:>13} {plan_mpmd:>9.1f} "
              f"{plan_ifrt:>9.1f} {plan_ifrt / plan_mpmd:>6.2f} "
              f"{cold_mpmd:>9.2f} {cold_ifrt:>9.2f}")


if __name__ == "__main__":
    main()
