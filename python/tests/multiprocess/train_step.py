"""One process of a multi-controller job (started by `python -m mpmd.launch`
from test_multiprocess.py): trains the 4-stage microbatched transformer of
examples/models.py for 3 steps under 1F1B on 4 meshes over the job's global
devices, and checks every shard this process holds against `jax.jit` on
this process.

    train_step.py TOPOLOGY [--sharded] [--fail-process K] [--die-process K]
                  [--mismatch-process K] [--catch-lost] [--trace FILE]
                  [--skip-compile-process K] [--global-inputs]

TOPOLOGY names how the 4 meshes of 2 devices sit on the global devices D:
  blocks   mesh i is D[2i], D[2i+1] (with 2 processes of 4 devices, two
           meshes per process; with 4 processes of 2, one each)
  span     m1 = D0 D1, m2 = D2 D4, m3 = D3 D5, m4 = D6 D7: with 2 processes
           of 4 devices, m2 and m3 span both processes
  mlp      a smaller job: the two-stage MLP of examples/models.py on two
           meshes, the first and the second half of D
  uneven   the same MLP, m1 = D0 D1 and m2 = the rest (with 2 processes
           of 3 devices: meshes of different sizes across processes)
--sharded shards the blocks' parameters over the mesh axis (SPMD inside each
stage, across processes where the mesh spans them).
--fail-process K makes a program raise on process K in the second step.
--die-process K kills process K (SIGKILL) in the middle of the second step.
--catch-lost: after each step, read the parameters with mpmd.fetch,
catching mpmd.ProcessLostError (printed; exit code 3).
--mismatch-process K compiles GPipe on process K, 1F1B on the others.
--skip-compile-process K: process K does not compile (the others wait 5 s
for it).
--global-inputs: the first step's parameters are global jax.Arrays
replicated on m4 (moved to their meshes across processes by the call).
--trace FILE: a fourth, traced step; process 0 writes the merged trace of
all processes to FILE (Chrome JSON).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import mpmd  # noqa: E402
import mpmd.distributed  # noqa: E402
from mpmd.runtime import coordination  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]


def topology(kind: str) -> dict[str, jax.sharding.Mesh]:
    devices = jax.devices()
    if kind in ("mlp", "uneven"):
        half = len(devices) // 2 if kind == "mlp" else 2
        return {"m1": jax.sharding.Mesh(np.array(devices[:half]), ("model",)),
                "m2": jax.sharding.Mesh(np.array(devices[half:]), ("model",))}
    if len(devices) != 8:
        raise SystemExit(f"expected 8 global devices, got {len(devices)}")
    if kind == "blocks":
        groups = [devices[2 * i: 2 * i + 2] for i in range(4)]
    elif kind == "span":
        d = devices
        groups = [[d[0], d[1]], [d[2], d[4]], [d[3], d[5]], [d[6], d[7]]]
    else:
        raise SystemExit(f"unknown topology {kind}")
    return {name: jax.sharding.Mesh(np.array(group), ("model",))
            for name, group in zip(MESHES, groups)}


def check(mp, ref, what: str) -> int:
    """Compares the shards this process holds; returns how many."""
    count = 0
    for leaf, expected in zip(jax.tree.leaves(mp), jax.tree.leaves(ref)):
        expected = np.asarray(expected)
        for shard in leaf.addressable_shards:
            np.testing.assert_allclose(
                np.asarray(shard.data), expected[shard.index], rtol=2e-5,
                atol=1e-6, err_msg=f"{what} on device {shard.device}")
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("topology")
    parser.add_argument("--sharded", action="store_true")
    parser.add_argument("--fail-process", type=int, default=None)
    parser.add_argument("--die-process", type=int, default=None)
    parser.add_argument("--catch-lost", action="store_true")
    parser.add_argument("--mismatch-process", type=int, default=None)
    parser.add_argument("--trace", default=None)
    parser.add_argument("--skip-compile-process", type=int, default=None)
    parser.add_argument("--global-inputs", action="store_true")
    options = parser.parse_args()

    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    import models  # noqa: PLC0415

    me = jax.process_index()
    meshes = topology(options.topology)
    schedule = "gpipe" if options.mismatch_process == me else "1f1b"
    if options.topology in ("mlp", "uneven"):
        function = models.two_stage_mlp_step
        assignment = {"stage0": "m1", "stage1": "m2"}
        params = models.init_two_stage_mlp(jax.random.PRNGKey(0), 8, 16, 4)
        tokens = jax.random.normal(jax.random.PRNGKey(1), (4, 4, 8))
        targets = jax.random.normal(jax.random.PRNGKey(2), (4, 4, 4))
    else:
        function = models.transformer_microbatched_step
        assignment = models.transformer_assignment(4, MESHES)
        params = models.init_transformer(jax.random.PRNGKey(0), vocab=32,
                                         dim=16, heads=2, layers=4, seq=8)
        tokens = jax.random.randint(jax.random.PRNGKey(1), (4, 2, 8), 0, 32)
        targets = jax.random.randint(jax.random.PRNGKey(2), (4, 2, 8), 0, 32)
    config = mpmd.make_config(
        meshes, assignment, partitioning_options={"pipeline_schedule": schedule})
    in_shardings = None
    if options.sharded:
        in_shardings = (models.transformer_shardings(params, meshes,
                                                     assignment), None, None)
    step = mpmd.jit(function, config, in_shardings=in_shardings)
    if options.skip_compile_process is not None:
        coordination.AGREE_TIMEOUT_S = 5.0
        if options.skip_compile_process == me:
            time.sleep(15)
            return
    compiled = step.lower(params, tokens, targets).compile()
    reference = jax.jit(function)

    if options.fail_process == me:
        executor = compiled.executor
        name = sorted(executor.programs)[0]
        original = executor.programs[name]

        class Failing:
            calls = 0

            def __call__(self, *args):
                Failing.calls += 1
                if Failing.calls > original_calls:
                    raise RuntimeError("injected failure")
                return original(*args)

        original_calls = sum(1 for s in compiled.plan.calls()
                             if s.program == name)
        executor.programs[name] = Failing()

    mp, ref = params, params
    if options.global_inputs:
        last = list(meshes.values())[-1]
        mp = jax.device_put(
            jax.tree.map(np.asarray, params),
            jax.sharding.NamedSharding(last, jax.sharding.PartitionSpec()))
    shards = 0
    for number in range(3):
        if number == 1 and options.die_process == me:
            os.kill(os.getpid(), signal.SIGKILL)
        mp, mp_loss = compiled(mp, tokens, targets)
        ref, ref_loss = reference(ref, tokens, targets)
        if options.catch_lost:
            # What a user may catch: the parameters, read with mpmd.fetch
            # after a peer died (the first stage's, on the survivor's
            # mesh, come first and fail at once).
            try:
                mpmd.fetch(mp)
            except mpmd.ProcessLostError as error:
                print(f"process {me}: caught ProcessLostError: processes "
                      f"{error.processes}, meshes {error.meshes}, step "
                      f"{error.step}: {error}", flush=True)
                sys.exit(3)
        shards += check(mp, ref, f"params after step {number + 1}")
        shards += check(mp_loss, ref_loss, f"loss of step {number + 1}")
    if options.trace:
        (mp, mp_loss), trace = compiled.run_traced(mp, tokens, targets)
        ref, ref_loss = reference(ref, tokens, targets)
        shards += check(mp, ref, "params after the traced step")
        if me == 0:
            trace.write_chrome_json(options.trace)
    print(f"process {me}: {shards} shards equal jax.jit", flush=True)


if __name__ == "__main__":
    main()
