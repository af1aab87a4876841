"""mpmd.length_buckets: one program per bucket, compiled ahead; calls of
any length pad to the smallest bucket that holds them, never compile, and
give jax.jit's numbers on the unpadded data (the loss is masked); bad
buckets, padding specs and calls raise BucketError naming what is wrong."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.buckets import BucketError
from meshes import four_meshes, xla_compiles

D = 4
M = 2


def layer(w, x):
    return jnp.tanh(x @ w)


def masked_loss(params, x, mask):
    h = mpmd.named_computation(layer, name="first")(params[0], x)
    h = mpmd.named_computation(layer, name="second")(params[1], h)
    per_token = jnp.sum(h ** 2, -1)                      # [B, T]
    return jnp.sum(per_token * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def step(params, xs, masks):
    """xs [M, B, T, D], masks [M, B, T]: SGD on the microbatches' masked
    losses."""
    def body(i, acc):
        loss, grads = jax.value_and_grad(masked_loss)(params, xs[i],
                                                      masks[i])
        return jax.tree.map(jnp.add, acc, (loss, grads))
    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, M, body, zeros)
    return [p - 0.1 * g for p, g in zip(params, grads)], loss / M


def data(length: int, seed: int):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((M, 2, length, D)).astype(np.float32)
    masks = (rng.random((M, 2, length)) < 0.8).astype(np.float32)
    return xs, masks


def config():
    meshes = four_meshes()
    return mpmd.make_config(
        {"m1": meshes["m1"], "m2": meshes["m2"]},
        {"first": ("m1", 0), "second": ("m2", 1)},
        partitioning_options={"pipeline_schedule": "1f1b"})


def initial_params():
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    return [jax.random.normal(k, (D, D)) / 2 for k in keys]


def test_bucketed_calls_never_compile_and_equal_jax_jit():
    bucketed = mpmd.length_buckets(mpmd.jit(step, config()), [4, 8],
                                   pad={"xs": (2, 0.0), 2: (2, 0.0)})
    params = initial_params()
    with xla_compiles() as ahead:
        compiled = bucketed.compile(params, *data(8, 0))
    assert sorted(compiled) == [4, 8]
    assert ahead, "the count sees the programs compiled ahead"
    compiles = []

    reference = jax.jit(step)
    want_params = params
    lengths = [3, 7, 4, 1, 8, 5]
    for n, length in enumerate(lengths):
        xs, masks = data(length, n + 1)
        with xla_compiles() as seen:
            params, loss = bucketed(params, xs, masks)
            jax.block_until_ready(params)
        compiles += seen
        want_params, want_loss = reference(want_params, xs, masks)
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
        for got, want in zip(params, want_params):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want),
                                       rtol=1e-5, atol=1e-6)
    assert compiles == [], f"{len(compiles)} compiles during bucketed calls"
    assert [bucketed.bucket_for(n) for n in lengths] == [4, 8, 4, 4, 8, 8]


def test_a_bucket_not_compiled_ahead_compiles_once():
    bucketed = mpmd.length_buckets(mpmd.jit(step, config()), [4, 8],
                                   pad={1: (2, 0.0), 2: (2, 0.0)})
    params = initial_params()
    bucketed(params, *data(2, 0))
    first = bucketed.compiled[4]
    bucketed(params, *data(3, 1))
    assert bucketed.compiled == {4: first}


def test_bad_buckets_and_calls_are_named():
    function = mpmd.jit(step, config())
    with pytest.raises(BucketError, match="lengths must be a non-empty list"):
        mpmd.length_buckets(function, [], pad={1: (2, 0.0)})
    with pytest.raises(BucketError, match="lengths must be"):
        mpmd.length_buckets(function, [4, 0], pad={1: (2, 0.0)})
    with pytest.raises(BucketError, match="takes an mpmd.jit function"):
        mpmd.length_buckets(step, [4], pad={1: (2, 0.0)})
    with pytest.raises(BucketError, match="argument 'tokens', which the "
                       "function does not have"):
        mpmd.length_buckets(function, [4], pad={"tokens": (2, 0)})
    with pytest.raises(BucketError, match=r"pad\[1\] must be \(axis, pad "
                       r"value\)"):
        mpmd.length_buckets(function, [4], pad={1: 2})
    bucketed = mpmd.length_buckets(function, [4, 8],
                                   pad={1: (2, 0.0), 2: (2, 0.0)})
    params = initial_params()
    with pytest.raises(BucketError, match="length 9 is longer than the "
                       r"largest bucket \(8\); add a bucket of at least 9"):
        bucketed(params, *data(9, 0))
    xs, masks = data(5, 0)
    with pytest.raises(BucketError, match=r"argument 2 has length 3 on its "
                       "padded axis, argument 1 has 5"):
        bucketed(params, xs, masks[:, :, :3])
    with pytest.raises(BucketError, match=r"argument 2 has shape \[2, 2\]: "
                       "no axis 2"):
        bucketed(params, xs, masks[:, :, 0])


def test_a_buffer_cut_to_the_calls_length_shard_by_shard():
    """`call(length, ...)`: arrays on a mesh hold a buffer of the largest
    length; the first `length` positions count. Cut and padded per shard
    (the batch stays split over the mesh's devices), nothing compiles,
    and the numbers are jax.jit's on the cut data."""
    from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: PLC0415

    mesh = four_meshes()["m1"]
    batch_split = NamedSharding(mesh, P(None, "x"))
    on_m2 = NamedSharding(four_meshes()["m2"], P(None, "x"))
    bucketed = mpmd.length_buckets(mpmd.jit(step, config()), [4, 8],
                                   pad={"xs": (2, 0.0), "masks": (2, 0.0)})
    params = initial_params()
    xs, masks = data(8, 3)
    on_mesh = (jax.device_put(xs, batch_split),
               jax.device_put(masks, on_m2))
    bucketed.compile(params, *on_mesh)
    compiles = []

    reference = jax.jit(step)
    want_params = params
    for length in (3, 6, 8):
        with xla_compiles() as seen:
            params, loss = bucketed.call(length, params, *on_mesh)
            jax.block_until_ready(params)
        compiles += seen
        want_params, want_loss = reference(
            want_params, xs[:, :, :length], masks[:, :, :length])
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
        for got, want in zip(params, want_params):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want),
                                       rtol=1e-5, atol=1e-6)
    assert compiles == []
    resized = bucketed.padded((params, *on_mesh), 4, 3)
    assert resized[1].sharding == batch_split
    np.testing.assert_array_equal(np.asarray(resized[1])[:, :, 3], 0.0)
    np.testing.assert_array_equal(np.asarray(resized[1])[:, :, :3],
                                  xs[:, :, :3])
    with pytest.raises(BucketError, match="pad names argument 2, but the "
                       "call has 2 arguments"):
        bucketed.padded(on_mesh, 4, 3)
    with pytest.raises(BucketError, match="length 9: the padded arguments "
                       "hold 8 positions"):
        bucketed.call(9, params, *on_mesh)
    split_axis = NamedSharding(mesh, P(None, None, "x"))
    with pytest.raises(BucketError, match="not supported yet: padding "
                       "argument 1 along axis 2, which its sharding splits"):
        bucketed.call(4, params, jax.device_put(xs, split_axis),
                      on_mesh[1])
