"""A flax.nnx GPT trained with optax (AdamW, global-norm clipping, a
warmup-cosine schedule, remat around every block), pipelined over 4 meshes
with 8 microbatches and 1F1B, equals jax.jit for 3 steps."""

from __future__ import annotations

import jax
import numpy as np

from meshes import MESHES  # noqa: F401  (puts examples/ on the path)

import flax_gpt  # noqa: E402

import mpmd  # noqa: E402


def relative_l2(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12))


def test_flax_gpt_with_optax_matches_jax_jit():
    train_step, params, opt_state, tokens, targets, config = flax_gpt.setup(
        layers=4, microbatches=8)
    lowered = mpmd.jit(train_step, config).lower(params, opt_state, tokens,
                                                 targets)
    # Every block is a stage's work on its mesh, in 1F1B order. On m4:
    # block3 and the head forward, the head backward, then block3 again
    # (jax.checkpoint around each block: R) right before its backward.
    schedule = lowered.schedule_text().splitlines()
    assert [line.split(":")[0] for line in schedule] == MESHES
    assert schedule[-1].startswith("m4: F0 F0 B0 R0 B0 F1")
    compiled = lowered.compile()
    reference = jax.jit(train_step)
    mp, ref = (params, opt_state), (params, opt_state)
    for _ in range(3):
        *mp, mp_loss = compiled(*mp, tokens, targets)
        *ref, ref_loss = reference(*ref, tokens, targets)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    # Adam divides by the root of the second moment: rounding noise in a
    # gradient becomes noise of the update's size, elementwise. Per tensor,
    # the difference stays small.
    for (path, got), want in zip(jax.tree_util.tree_flatten_with_path(mp)[0],
                                 jax.tree.leaves(ref)):
        assert relative_l2(got, want) <= 1e-4, jax.tree_util.keystr(path)
    # The optimizer state of each parameter lives with the parameter.
    block0 = mp[0]["blocks"][0]["up"]["kernel"].value
    devices = {d.id for d in block0.sharding.device_set}
    assert devices == {d.id for d in config.topology["m1"].devices.flat}
