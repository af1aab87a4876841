"""examples/llama.py as users would run it: the Llama-style decoder (RoPE,
grouped-query attention, SwiGLU, tied embeddings) on 4 meshes of 2 CPU
devices with tensor parallelism over "model", 8 microbatches, AdamW,
1F1B. Two calls, the second on the first's results, give jax.jit's
numbers, and every parameter comes back on its mesh with its sharding."""

from __future__ import annotations

import jax
import numpy as np
import optax
import pytest
from jax.sharding import Mesh

import meshes as _meshes  # noqa: F401  (puts examples/ on the path)
import llama  # noqa: E402

import mpmd

MESHES = ["m1", "m2", "m3", "m4"]
LR = 1e-3


def topology() -> dict[str, Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: Mesh(devices[i], ("model",))
            for i, name in enumerate(MESHES)}


def mesh_of(array: jax.Array, topo: dict[str, Mesh]) -> str:
    devices = set(array.sharding.device_set)
    return next(name for name, mesh in topo.items()
                if set(mesh.devices.flat) == devices)


@pytest.fixture(scope="module")
def two_steps():
    """Two mpmd calls and two jax.jit calls of the same step from the same
    inputs, and what the test needs to check them."""
    topo = topology()
    assignment = llama.llama_assignment(llama.LAYERS, MESHES)
    params = llama.init_llama(jax.random.PRNGKey(0))
    optimizer = optax.adamw(LR, weight_decay=0.01)
    step = llama.make_train_step(optimizer)
    tokens, targets = llama.make_data(jax.random.PRNGKey(1), microbatches=8,
                                      batch=4)
    shardings = llama.llama_shardings(params, topo, assignment)
    placed = jax.device_put(params, shardings)
    config = mpmd.make_config(
        topo, assignment,
        partitioning_options={"pipeline_schedule": "1f1b",
                              **llama.PARTITIONING_OPTIONS})
    mp_step, ref_step = mpmd.jit(step, config), jax.jit(step)
    mp = (placed, optimizer.init(placed))
    ref = (params, optimizer.init(params))
    losses = []
    for _ in range(2):
        *mp, mp_loss = mp_step(*mp, tokens, targets)
        *ref, ref_loss = ref_step(*ref, tokens, targets)
        losses.append((mp_loss, ref_loss))
    return {"topology": topo, "assignment": assignment, "shardings": shardings,
            "mp": mp, "ref": ref, "losses": losses, "jit": mp_step}


def test_loss_and_parameters_match_jax_jit(two_steps):
    for mp_loss, ref_loss in two_steps["losses"]:
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    (params, state), (ref_params, ref_state) = two_steps["mp"], two_steps["ref"]
    # Adam's moments hold the accumulated gradients (first moments up to
    # about 1e-2 here; measured: at most 1.4e-8 apart).
    for actual, expected in zip(jax.tree.leaves(state),
                                jax.tree.leaves(ref_state)):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected),
                                   rtol=1e-5, atol=1e-7)
    # Adam's update is lr * m / (sqrt(v) + eps): where a gradient element
    # is near eps, summation order alone moves its update by a fraction of
    # lr (measured: at most 1.6e-5 = 0.016 lr apart after two steps).
    for path, actual in jax.tree_util.tree_leaves_with_path(params):
        expected = ref_params
        for key in path:
            expected = expected[getattr(key, "key", getattr(key, "idx", None))]
        np.testing.assert_allclose(
            np.asarray(actual), np.asarray(expected), rtol=1e-5,
            atol=5e-2 * LR, err_msg=jax.tree_util.keystr(path))


def test_parameters_stay_on_their_mesh(two_steps):
    """Each block's parameters on its block's mesh, the final norm on the
    head's, the tied embedding on its home (the first mesh), all with the
    shardings they came in with; the second call reused the first's
    program."""
    topo, assignment = two_steps["topology"], two_steps["assignment"]
    params, _ = two_steps["mp"]
    for index, block in enumerate(params["blocks"]):
        home = assignment[f"block{index}"][0]
        for name, leaf in block.items():
            assert mesh_of(leaf, topo) == home, (
                f"blocks[{index}][{name!r}] is on {mesh_of(leaf, topo)}, "
                f"not {home}")
    assert mesh_of(params["norm"], topo) == MESHES[-1]
    assert mesh_of(params["embed"], topo) == MESHES[0]
    for path, leaf in jax.tree_util.tree_leaves_with_path(params):
        expected = two_steps["shardings"]
        for key in path:
            expected = expected[getattr(key, "key", getattr(key, "idx", None))]
        assert leaf.sharding.is_equivalent_to(expected, leaf.ndim), (
            f"{jax.tree_util.keystr(path)}: {leaf.sharding} != {expected}")
    programs = {id(compiled) for compiled in two_steps["jit"]._cache.values()}
    assert len(programs) == 1, "the second call compiled again"


def test_tied_embedding_gradient_crosses_once_per_step(two_steps):
    """The head's gradient of the tied embedding (last mesh) meets embed's
    on the first mesh: summed over the 8 microbatches on the last mesh
    first, it crosses once per step."""
    from mpmd.runtime.plan import TransferStep

    compiled = next(iter(two_steps["jit"]._cache.values()))
    vocab_dim = f"float32[{llama.VOCAB}x{llama.DIM}]"
    crossings = [step for step in compiled.plan.steps
                 if isinstance(step, TransferStep)
                 and (step.source, step.target) == (MESHES[-1], MESHES[0])
                 and step.type.short().startswith(vocab_dim)]
    assert len(crossings) == 1, crossings


def test_equal_blocks_share_programs_on_every_mesh(two_steps):
    """The four meshes run equal blocks: their forward, backward, weight
    update and gradient zeros are one program text each, on all four
    meshes (compiled once, loaded for the others), although the first
    mesh also holds the embedding and the last the head and loss: the
    loss's target one-hot goes with the head that reads it, and each
    mesh's update after the loop is split by named computation, the step
    counter's bias corrections copied into each."""
    compiled = next(iter(two_steps["jit"]._cache.values()))
    meshes_of: dict[str, set[str]] = {}
    for program in compiled.plan.programs.values():
        meshes_of.setdefault(program.module, set()).add(program.mesh)
    shared = [text for text, meshes in meshes_of.items()
              if meshes == set(MESHES)]
    assert len(shared) == 4, sorted(map(sorted, meshes_of.values()))


def test_tied_embedding_needs_cross_mesh_reduction():
    """Without infer_cross_mesh_reductions (or infer_transfers) the sum of
    the tied embedding's two gradients, from the first and the last mesh,
    is refused and the error says which option fixes it."""
    topo = topology()
    assignment = llama.llama_assignment(llama.LAYERS, MESHES)
    params = llama.init_llama(jax.random.PRNGKey(0), layers=llama.LAYERS)
    optimizer = optax.sgd(LR)
    tokens, targets = llama.make_data(jax.random.PRNGKey(1), microbatches=2,
                                      batch=2)
    config = mpmd.make_config(topo, assignment,
                              partitioning_options={"pipeline_schedule": "1f1b"})
    with pytest.raises(mpmd.CompilerError) as caught:
        mpmd.jit(llama.make_train_step(optimizer), config).lower(
            params, optimizer.init(params), tokens, targets)
    headline = str(caught.value).splitlines()[0]
    assert "conflicting meshes" in headline, headline
    assert "infer_cross_mesh_reductions" in headline, headline
