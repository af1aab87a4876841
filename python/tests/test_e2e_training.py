"""Training steps partitioned over 4 meshes of 2 CPU devices each train
exactly like plain jax.jit (rtol 1e-5) for 3 steps."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from meshes import MESHES, assert_trees_close, four_meshes
import models  # noqa: E402  (examples/, put on the path by meshes)

from mpmd.config import make_config  # noqa: E402
from mpmd.stages import jit  # noqa: E402


def test_mlp_training_matches_jax_jit():
    key = jax.random.PRNGKey(0)
    params = models.init_mlp(key, [16, 32, 32, 32, 8])
    x = jax.random.normal(jax.random.PRNGKey(1), (8, 16))
    y = jax.random.normal(jax.random.PRNGKey(2), (8, 8))
    config = make_config(four_meshes(),
                         {f"layer{i}": (MESHES[i], i) for i in range(4)})
    lowered = jit(models.mlp_train_step, config).lower(params, x, y)
    # Each layer's backward runs on the mesh of its forward.
    order = lowered.mesh_order()
    for i, mesh in enumerate(MESHES):
        labels = " ".join(order[mesh])
        assert f"layer{i}" in labels and f"layer{i}(1)" in labels, order
    compiled = lowered.compile()
    reference = jax.jit(models.mlp_train_step)
    mp_params, ref_params = params, params
    for _ in range(3):
        mp_params, mp_loss = compiled(mp_params, x, y)
        ref_params, ref_loss = reference(ref_params, x, y)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp_params, ref_params)
    # Parameters stay on the meshes of their layers.
    for i, layer in enumerate(mp_params):
        devices = {d.id for d in layer["w"].sharding.device_set}
        assert devices == {d.id for d in config.topology[MESHES[i]].devices.flat}


@pytest.mark.parametrize("num_blocks", [4])
def test_transformer_training_matches_jax_jit(num_blocks):
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                     heads=2, layers=num_blocks, seq=8)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (4, 8), 0, 32)
    targets = jax.random.randint(jax.random.PRNGKey(2), (4, 8), 0, 32)
    config = make_config(four_meshes(),
                         models.transformer_assignment(num_blocks, MESHES))
    step = jit(models.transformer_train_step, config)
    reference = jax.jit(models.transformer_train_step)
    mp_params, ref_params = params, params
    for _ in range(3):
        mp_params, mp_loss = step(mp_params, tokens, targets)
        ref_params, ref_loss = reference(ref_params, tokens, targets)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp_params, ref_params)
