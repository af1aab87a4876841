"""Programs lowered for the export tests (what the real Shardy:MPMD accepts,
and their IFRT IR): each returns a `Lowered`."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
from meshes import MESHES, four_meshes, transformer_data


def adam_pipeline(schedule: str = "1f1b") -> Any:
    """The README's program: Adam, 4 meshes, 8 microbatches; programs
    shared by microbatches through their constants."""
    import test_training_loop as loop

    optimizer = optax.adam(1e-2)
    params = loop.init_params()
    config = mpmd.make_config(
        loop.meshes(), loop.stage_assignment(),
        partitioning_options={"pipeline_schedule": schedule,
                              "infer_transfers": True})
    return mpmd.jit(loop.make_step(optimizer), config).lower(
        params, optimizer.init(params), *loop.data())


def tensor_parallel_transformer() -> Any:
    """The transformer over 2 meshes of 2x2 devices, Megatron-style
    layouts, its parameters donated."""
    import models

    devices = np.array(jax.devices()[:8]).reshape(2, 2, 2)
    topology = {name: Mesh(devices[i], ("data", "model"))
                for i, name in enumerate(MESHES[:2])}
    params, tokens, targets = transformer_data(4, 4)
    assignment = models.transformer_assignment(4, MESHES[:2])
    placed = jax.device_put(params, models.transformer_shardings(
        params, topology, assignment))
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"pipeline_schedule": "1f1b"})
    return mpmd.jit(models.transformer_microbatched_step, config,
                    donate_argnums=0).lower(placed, tokens, targets)


def heterogeneous_meshes() -> Any:
    """2 devices ("x",) feeding 2x2 ("x", "y"), with a constraint inside
    the second named computation (which Shardy itself cannot partition)."""
    devices = jax.devices()
    topology = {"m1": Mesh(np.array(devices[:2]), ("x",)),
                "m2": Mesh(np.array(devices[2:6]).reshape(2, 2), ("x", "y"))}

    def f(w1, w2, x):
        h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                                   name="a")(w1, x)

        def b(w, h):
            h = jax.lax.with_sharding_constraint(h, P(None, "y"))
            return h @ w

        return mpmd.named_computation(b, name="b")(w2, h).sum()

    w1 = jax.device_put(jnp.ones((8, 16)),
                        NamedSharding(topology["m1"], P(None, "x")))
    w2 = jax.device_put(jnp.ones((16, 4)),
                        NamedSharding(topology["m2"], P("y", None)))
    return mpmd.jit(f, mpmd.make_config(topology, {"a": "m1", "b": "m2"})
                    ).lower(w1, w2, jnp.ones((4, 8)))


def transformer_with(schedule: str) -> Any:
    """The 4-mesh transformer step under `schedule` (zero-bubble-h1 splits
    the backward)."""
    import models

    params, tokens, targets = transformer_data(4, 4)
    options = {"pipeline_schedule": schedule}
    if schedule == "zero-bubble-h1":
        options["split_backward"] = True
    config = mpmd.make_config(four_meshes(),
                              models.transformer_assignment(4, MESHES),
                              partitioning_options=options)
    return mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
