"""Helpers shared by the end-to-end tests: the 4-mesh topology over 8 CPU
devices, the example models, and tree comparison against jax.jit."""

from __future__ import annotations

import contextlib
import os
import sys

import jax
import numpy as np

# The example models live next to the demo.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples"))

MESHES = ["m1", "m2", "m3", "m4"]


def four_meshes() -> dict[str, jax.sharding.Mesh]:
    """Meshes m1..m4 of 2 CPU devices each."""
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def transformer_data(microbatches: int, layers: int):
    """The small transformer of the pipelining tests (vocab 32, dim 16,
    2 heads, seq 8) and a batch of token/target microbatches [m, 2, 8]."""
    import models

    params = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                     heads=2, layers=layers, seq=8)
    shape = (microbatches, 2, 8)
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, 32)
    targets = jax.random.randint(jax.random.PRNGKey(2), shape, 0, 32)
    return params, tokens, targets


def assert_trains_like_jit(compiled, step, params, *data, steps: int = 2):
    """`steps` training steps of `compiled` (params, *data) -> (params,
    loss) equal those of `jax.jit(step)`: losses and final parameters."""
    reference = jax.jit(step)
    mp, ref = params, params
    for _ in range(steps):
        mp, mp_loss = compiled(mp, *data)
        ref, ref_loss = reference(ref, *data)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp, ref)


def assert_trees_close(actual, expected, rtol=1e-5, atol=1e-6):
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol,
                                   atol=atol)


def lower_transformer(schedule: str, microbatches: int = 4, **options):
    """The 4-block transformer step over m1..m4 (one block per mesh, embed
    on m1, head on m4) with `schedule` and more partitioning options,
    lowered; and its inputs (params, tokens, targets)."""
    import models

    import mpmd

    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": schedule, **options})
    args = transformer_data(microbatches, 4)
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        *args)
    return lowered, args


@contextlib.contextmanager
def xla_compiles():
    """Counts the XLA compilations inside the block (JAX's monitoring
    events): yields a list that gets one entry per compile."""
    from jax._src import monitoring  # noqa: PLC0415

    seen: list[str] = []

    def listen(event, _duration, **_kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            seen.append(event)

    monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        monitoring.unregister_event_duration_listener(listen)
