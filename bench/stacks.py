#!/usr/bin/env python3
"""A scanned layer stack split over stages, beside the same layers labelled
one by one: compile time in depth, step time, and the call's boundary.

examples/llama.py's decoder (dim 64, 4 heads, 2 kv heads, vocab 128, seq
16), 4 meshes of 2 CPU devices, 8 microbatches of 2 sequences, AdamW,
1F1B, for L layers:

  labels  one named computation per block ("block0" ... ), L/4 per mesh
          (`llama.llama_assignment`): the program traces and partitions
          every block
  stack   the blocks stacked and run as one jax.lax.scan, the named
          computation "blocks" split over the 4 meshes
          ({"blocks": ["m0", "m1", "m2", "m3"]}, `docs/stacks.md`)
  jit     jax.jit of the stacked step on one device (the program a user
          of scanned layers has)

Per L: lower (trace + partition) and compile seconds, the median of
`--repeat` warm step times, and mpmd's distinct programs. A second table
times the boundary of the stack's call: the median time to cut the
stacked arguments (parameters and Adam's two moments) into their pieces
and to assemble the results (`mpmd.runtime.boundary`), per call.

Every configuration runs in a fresh process (no compilation cache). No
timing is asserted.

Usage:
  .venv/bin/python bench/stacks.py [--layers 4,8,16] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.path.join(ROOT, "examples"))
import jax, jax.numpy as jnp, numpy as np
import llama, mpmd

layers, kind, repeat = LAYERS, KIND, REPEAT
devices = np.array(jax.devices()[:8]).reshape(4, 2)
topology = {f"m{i}": jax.sharding.Mesh(devices[i], ("x",)) for i in range(4)}
meshes = list(topology)
params = llama.init_llama(jax.random.PRNGKey(0), layers=layers)
if kind != "labels":
    params = llama.stack_blocks(params)
optimizer = llama.default_optimizer()
opt_state = optimizer.init(params)
step = llama.make_train_step(optimizer)
tokens, targets = llama.make_data(jax.random.PRNGKey(1), 8, 2)
result = {}
start = time.perf_counter()
if kind == "jit":
    lowered = jax.jit(step).lower(params, opt_state, tokens, targets)
    result["lower"] = time.perf_counter() - start
    start = time.perf_counter()
    compiled = lowered.compile()
    result["compile"] = time.perf_counter() - start
    result["programs"] = 1
else:
    assignment = (llama.llama_assignment(layers, meshes) if kind == "labels"
                  else {"embed": "m0", "blocks": meshes, "head": "m3"})
    config = mpmd.make_config(topology, assignment, partitioning_options={
        **llama.PARTITIONING_OPTIONS, "pipeline_schedule": "1f1b"})
    lowered = mpmd.jit(step, config).lower(params, opt_state, tokens,
                                           targets)
    result["lower"] = time.perf_counter() - start
    start = time.perf_counter()
    compiled = lowered.compile()
    result["compile"] = time.perf_counter() - start
    result["programs"] = len(lowered.plan.programs)
state = (params, opt_state)
for _ in range(2):  # warm, and the arguments laid out as the results are
    *state, loss = compiled(*state, tokens, targets)
jax.block_until_ready(state)
times = []
for _ in range(repeat):
    start = time.perf_counter()
    *state, loss = compiled(*state, tokens, targets)
    jax.block_until_ready(loss)
    times.append(time.perf_counter() - start)
result["step_ms"] = 1e3 * sorted(times)[len(times) // 2]
if kind == "stack":
    boundary = compiled._boundary
    leaves = jax.tree.leaves((state[0], state[1], tokens, targets))
    stacked = [l for l, layout in zip(leaves, boundary.in_layouts)
               if layout is not None]
    cut, join = [], []
    for _ in range(max(repeat, 20)):
        start = time.perf_counter()
        pieces = boundary.inputs(leaves)
        cut.append(time.perf_counter() - start)
        outs = compiled.executor.run(pieces)
        jax.block_until_ready(outs)
        start = time.perf_counter()
        boundary.results(outs)
        join.append(time.perf_counter() - start)
    result["stacked_leaves"] = len(stacked)
    result["cut_us"] = 1e6 * sorted(cut)[len(cut) // 2]
    result["join_us"] = 1e6 * sorted(join)[len(join) // 2]
print("RESULT " + json.dumps(result))
"""


def run(layers: int, kind: str, repeat: int) -> dict:
    code = (_CHILD.replace("ROOT", repr(ROOT)).replace("LAYERS", str(layers))
            .replace("KIND", repr(kind)).replace("REPEAT", str(repeat)))
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["PYTHONPATH"] = os.path.join(ROOT, "build", "python_packages")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{kind} L={layers} failed:\n{out.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="4,8,16")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    depths = [int(x) for x in args.layers.split(",")]
    rows, boundary = [], []
    for layers in depths:
        for kind in ("labels", "stack", "jit"):
            result = run(layers, kind, args.repeat)
            rows.append((layers, kind, result))
            if kind == "stack":
                boundary.append((layers, result))
    print("Llama-style decoder, 4 meshes x 2 CPU devices, 8 microbatches, "
          "AdamW, 1F1B (jit: one device)")
    print(f"{'L':>3} {'kind':<7} {'lower s':>8} {'compile s':>10} "
          f"{'total s':>8} {'step ms':>8} {'programs':>9}")
    for layers, kind, r in rows:
        print(f"{layers:>3} {kind:<7} {r['lower']:8.2f} {r['compile']:10.2f} "
              f"{r['lower'] + r['compile']:8.2f} {r['step_ms']:8.2f} "
              f"{r['programs']:>9}")
    print()
    print("The stack's call boundary (per call, median)")
    print(f"{'L':>3} {'stacked args':>13} {'cut us':>8} {'join us':>8}")
    for layers, r in boundary:
        print(f"{layers:>3} {r['stacked_leaves']:>13} {r['cut_us']:8.1f} "
              f"{r['join_us']:8.1f}")


if __name__ == "__main__":
    main()
