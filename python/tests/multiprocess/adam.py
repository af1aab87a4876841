"""One process of a multi-controller job (started by `python -m mpmd.launch`
from test_multiprocess.py): the training loop as users write it, in two
processes. An MLP of 4 named layers (layer0..layer3) on meshes m0..m3 of 2
of the job's global devices each (with 2 processes of 4 devices, m0 and m1
are process 0's, m2 and m3 process 1's), stages 0..3, optax.adam, 8
microbatches with `mpmd.fori_loop`, 1F1B with inferred transfers, and
`p, o, loss = f(p, o, xs, ys)` called 6 times on its own results.

After every call, each process checks that layer i's parameters and Adam's
mu and nu of layer i are on m{i}'s devices, that the loss (read with
mpmd.fetch) and every shard it holds equal `jax.jit(step)` on this process;
after the sixth, that `f` compiled at most twice.
"""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import mpmd  # noqa: E402
import mpmd.distributed  # noqa: E402
# The model and data of the one-process test, and the shard check of the
# other workers.
from test_training_loop import (data, init_params, make_step,  # noqa: E402
                                meshes, stage_assignment)
from train_step import check as check_shards  # noqa: E402

optimizer = optax.adam(1e-2)
step = make_step(optimizer)


def main() -> None:
    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    topology = meshes()  # over the job's 8 global devices
    config = mpmd.make_config(
        topology, stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    params = init_params()
    xs, ys = data()

    f = mpmd.jit(step, config)
    reference = jax.jit(step)
    p, o = params, optimizer.init(params)
    rp, ro = params, optimizer.init(params)
    shards = 0
    for call in range(1, 7):
        p, o, loss = f(p, o, xs, ys)
        rp, ro, ref_loss = reference(rp, ro, xs, ys)
        for path, leaf in jax.tree_util.tree_leaves_with_path((p, o)):
            name = jax.tree_util.keystr(path)
            match = re.search(r"layer(\d)", name)
            if match is None:
                continue  # Adam's step count
            mesh = topology[f"m{match.group(1)}"]
            held = sorted(d.id for d in leaf.sharding.device_set)
            assert set(leaf.sharding.device_set) == set(mesh.devices.flat), (
                f"call {call}: {name} is on devices {held}, not on "
                f"m{match.group(1)}")
        np.testing.assert_allclose(mpmd.fetch(loss), np.asarray(ref_loss),
                                   rtol=1e-5, err_msg=f"loss of call {call}")
        shards += check_shards((p, o), (rp, ro), f"state after call {call}")
    assert len(f._cache) <= 2, f"{len(f._cache)} compiles in 6 calls"
    print(f"process {me}: 6 calls, {len(f._cache)} compiles, {shards} shards "
          "and the losses equal jax.jit, every layer's state on its mesh",
          flush=True)


if __name__ == "__main__":
    main()
