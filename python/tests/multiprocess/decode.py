"""One process of a multi-controller job (started by `python -m mpmd.launch
-n 2 --devices-per-process 2` from test_while_loops.py): the two-stage
greedy decoder of test_while_loops.py under jax.lax.while_loop, stage 0 on
process 0's devices (m1), stage 1 on process 1's (m2). Every process
fetches the results and checks them against jax.jit on its own devices,
for prompts that stop after different numbers of steps.
"""

from __future__ import annotations

import os
import sys

import jax
import numpy as np
from jax.sharding import Mesh

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import mpmd  # noqa: E402
import mpmd.distributed  # noqa: E402
from test_while_loops import PROMPT, decode, params_and_prompts  # noqa: E402


def main() -> None:
    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    devices = jax.devices()
    meshes = {name: Mesh(np.array([d for d in devices
                                   if d.process_index == process]), ("x",))
              for name, process in (("m1", 0), ("m2", 1))}
    config = mpmd.make_config(meshes, {"stage0": "m1", "stage1": "m2"})
    step = mpmd.jit(decode, config)
    params, prompts = params_and_prompts()
    reference = jax.jit(decode)
    steps = []
    for prompt in prompts:
        got = mpmd.fetch(step(params, prompt))
        want = jax.device_get(reference(params, prompt))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        steps.append(int(got[1]) - PROMPT)
    print(f"process {me}: decode steps {steps} equal jax.jit", flush=True)


if __name__ == "__main__":
    main()
