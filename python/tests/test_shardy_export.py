"""What `Lowered.as_text("mpmd")` prints is a program the real Shardy:MPMD
(jaxlib's `_sdy_mpmd`, the pinned jaxlib) parses, verifies and lowers to
IFRT IR: homogeneous and heterogeneous topologies, sharded and replicated
values, donation, and programs shared by microbatches through constant
arguments."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
import shardy_dialects
from meshes import MESHES, four_meshes, transformer_data


def calls_and_copies(text: str) -> tuple[int, int]:
    return (len(re.findall(r"mpmd\.fragment_call", text)),
            len(re.findall(r"mpmd\.transfer", text)))


def check_with_shardy(text: str) -> str:
    """Parses, verifies and lowers `text` with jaxlib's Shardy; checks that
    IFRT IR has a call per fragment_call and a copy or reshard per
    transfer."""
    shardy_dialects.parse(text)
    ifrt = shardy_dialects.lower_to_ifrt(text)
    calls, transfers = calls_and_copies(text)
    assert ifrt.count("ifrt.Call ") == calls
    # A copy or reshard may move several arrays at once.
    moved = sum(group.count("%") for group in re.findall(
        r"ifrt\.(?:CopyArrays|Reshard)\(([^)]*)\)", ifrt))
    assert moved == transfers
    return ifrt


def test_adam_pipeline_with_shared_programs():
    """The README's program: 1F1B over 8 microbatches, one program per
    stage and kind shared through constant arguments (a microbatch's
    index), each call passing all its callee's arguments."""
    import test_training_loop as loop

    optimizer = optax.adam(1e-2)
    params = loop.init_params()
    config = mpmd.make_config(
        loop.meshes(), loop.stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    lowered = mpmd.jit(loop.make_step(optimizer), config).lower(
        params, optimizer.init(params), *loop.data())
    text = lowered.as_text("mpmd")
    assert "mpmd.specializes" in text  # programs shared by microbatches
    assert "sdy.mesh @mesh = " in text
    check_with_shardy(text)
    # The specializations do not change what runs: one program per shared
    # body in the plan.
    assert not any(".c" in name for name in lowered.plan.programs)


def test_tensor_parallel_transformer_with_donation():
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
    lowered = mpmd.jit(models.transformer_microbatched_step, config,
                       donate_argnums=0).lower(placed, tokens, targets)
    text = lowered.as_text()
    assert '{"model"}' in text and "tf.aliasing_output" in text
    ifrt = check_with_shardy(text)
    assert "donated" in ifrt or "io_aliases" in ifrt


def test_heterogeneous_meshes():
    """2 devices ("x",) feeding 2x2 ("x", "y"), which Shardy itself cannot
    partition: each mesh shape has its own sdy.mesh, and Shardy lowers the
    program (the move between the layouts is a reshard)."""
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
    lowered = mpmd.jit(f, mpmd.make_config(topology, {"a": "m1", "b": "m2"})
                       ).lower(w1, w2, jnp.ones((4, 8)))
    text = lowered.as_text()
    declared = dict(re.findall(r"sdy\.mesh @(\w+) = <(\[[^]]*\])>", text))
    assert sorted(declared.values()) == ['["x"=2, "y"=2]', '["x"=2]']
    ifrt = check_with_shardy(text)
    assert "ifrt.Reshard" in ifrt


@pytest.mark.parametrize("schedule", ["gpipe", "zero-bubble-h1"])
def test_schedules_export_for_shardy(schedule):
    import models

    params, tokens, targets = transformer_data(4, 4)
    options = {"pipeline_schedule": schedule}
    if schedule == "zero-bubble-h1":
        options["split_backward"] = True
    config = mpmd.make_config(four_meshes(),
                              models.transformer_assignment(4, MESHES),
                              partitioning_options=options)
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    check_with_shardy(lowered.as_text())
