"""One process of a multi-controller job (started by `python -m mpmd.launch`
from test_multiprocess.py) that reads results on every process, or fails
to: the two-stage MLP of examples/models.py on m1 (the first half of the
global devices: process 0's with 2 processes) and m2 (the second half:
process 1's), so the loss lives on process 1 only.

    loss.py MODE [--jax-initialize]

MODE:
  fetch           every process reads the loss, the parameters and arrays
                  laid out in other ways with mpmd.fetch and checks them
                  against jax.jit on this process
  float           process 0 calls float(loss) (its data is process 1's),
                  then every process runs another step
  raise-late      process 1 raises after the others finished their script
  fetch-mismatch  process 1 fetches another array than the others
  fetch-missing   process 1 does not call mpmd.fetch (the others wait 3 s)
  stuck           process 1 sleeps 60 s after its step, process 0 finishes
                  its script and waits at exit for 3 s only
--jax-initialize joins the job with jax.distributed.initialize itself
(mpmd's failure handling then starts with the first compile).
"""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402
import mpmd.distributed  # noqa: E402
from mpmd.runtime import failures  # noqa: E402


def main() -> None:
    mode = sys.argv[1]
    if "--jax-initialize" in sys.argv:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(
            num_processes=int(os.environ["MPMD_NUM_PROCESSES"]),
            process_id=int(os.environ["MPMD_PROCESS_ID"]),
            heartbeat_timeout_seconds=10)
    else:
        mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    import models  # noqa: PLC0415

    me = jax.process_index()
    devices = jax.devices()
    half = len(devices) // 2
    meshes = {"m1": Mesh(np.array(devices[:half]), ("model",)),
              "m2": Mesh(np.array(devices[half:]), ("model",))}
    config = mpmd.make_config(
        meshes, {"stage0": "m1", "stage1": "m2"},
        partitioning_options={"pipeline_schedule": "1f1b"})
    params = models.init_two_stage_mlp(jax.random.PRNGKey(0), 8, 16, 4)
    xs = jax.random.normal(jax.random.PRNGKey(1), (4, 4, 8))
    ys = jax.random.normal(jax.random.PRNGKey(2), (4, 4, 4))
    step = mpmd.jit(models.two_stage_mlp_step, config)
    new_params, loss = step(params, xs, ys)
    ref_params, ref_loss = jax.jit(models.two_stage_mlp_step)(params, xs, ys)

    if mode == "float":
        if me == 0:
            print("loss", float(loss), flush=True)
        step(new_params, xs, ys)
        print(f"process {me}: the second step ended", flush=True)
    elif mode == "fetch":
        fetch(me, meshes, new_params, loss, ref_params, ref_loss)
    elif mode == "raise-late":
        mpmd.fetch(loss)
        if me == 1:
            time.sleep(3)  # the others are waiting at exit by then
            raise ValueError("a late failure on process 1")
        print(f"process {me}: finished", flush=True)
    elif mode == "fetch-mismatch":
        value = new_params["stage1"]["w3"] if me == 1 else loss
        mpmd.fetch(value)
        print(f"process {me}: fetched", flush=True)
    elif mode == "fetch-missing":
        if me != 1:
            mpmd.fetch(loss, timeout_s=3)
        print(f"process {me}: done", flush=True)
    elif mode == "stuck":
        failures.EXIT_WAIT_S = 3.0
        if me == 1:
            time.sleep(60)
        print(f"process {me}: finished", flush=True)
    else:
        raise SystemExit(f"unknown mode {mode}")


def fetch(me, meshes, new_params, loss, ref_params, ref_loss) -> None:
    """Every value fetched on every process equals this process's
    jax.jit result."""
    fetched = mpmd.fetch(loss)
    assert isinstance(fetched, np.ndarray) and fetched.shape == (), fetched
    np.testing.assert_allclose(fetched, np.asarray(ref_loss), rtol=1e-5)
    # A pytree: parameters on m1 and on m2, a NumPy array, a float.
    tree = {"params": new_params, "host": np.arange(3.0), "scale": 0.5}
    got = mpmd.fetch(tree)
    for actual, expected in zip(jax.tree.leaves(got["params"]),
                                jax.tree.leaves(ref_params)):
        assert isinstance(actual, np.ndarray)
        np.testing.assert_allclose(actual, np.asarray(expected), rtol=2e-5,
                                   atol=1e-6)
    np.testing.assert_array_equal(got["host"], np.arange(3.0))
    assert got["scale"] == 0.5
    # Sharded over every device of the job (no process holds all of it),
    # replicated on every device, and in bfloat16 on m2 only.
    everywhere = Mesh(np.array(jax.devices()), ("all",))
    host = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    spread = jax.make_array_from_callback(
        host.shape, NamedSharding(everywhere, P("all")), lambda i: host[i])
    copied = jax.make_array_from_callback(
        host.shape, NamedSharding(everywhere, P()), lambda i: host[i])
    low = jax.make_array_from_callback(
        host.shape, NamedSharding(meshes["m2"], P("model")),
        lambda i: host[i].astype(jax.numpy.bfloat16),
        dtype=jax.numpy.bfloat16)
    spread, copied, low = mpmd.fetch((spread, copied, low))
    np.testing.assert_array_equal(spread, host)
    np.testing.assert_array_equal(copied, host)
    assert low.dtype == jax.numpy.bfloat16
    np.testing.assert_array_equal(low.astype(np.float32), host)
    # Many fetches in a row (the service's keys are cleared as read).
    for _ in range(20):
        np.testing.assert_allclose(mpmd.fetch(loss), fetched)
    print(f"process {me}: loss {float(fetched):.6f} fetched, equal to "
          "jax.jit", flush=True)


if __name__ == "__main__":
    main()
