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

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

import mpmd
import mpmd.distributed

DIM = 16
LAYERS = 4


def layer(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


def loss_fn(params, x, y):
    for i in range(LAYERS):
        x = mpmd.named_computation(layer, name=f"layer{i}")(
            params[f"layer{i}"], x)
    return jnp.mean((x - y) ** 2)


optimizer = optax.adam(1e-2)


def step(params, opt_state, xs, ys):
    def body(i, acc):
        loss, grads = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zero = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, xs.shape[0], body, zero)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def check_shards(actual, expected, what: str) -> int:
    count = 0
    for leaf, ref in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        ref = np.asarray(ref)
        for shard in leaf.addressable_shards:
            np.testing.assert_allclose(
                np.asarray(shard.data), ref[shard.index], rtol=2e-5,
                atol=1e-6, err_msg=f"{what} on device {shard.device}")
            count += 1
    return count


def main() -> None:
    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    devices = np.array(jax.devices()).reshape(LAYERS, 2)
    topology = {f"m{i}": Mesh(devices[i], ("x",)) for i in range(LAYERS)}
    config = mpmd.make_config(
        topology, {f"layer{i}": (f"m{i}", i) for i in range(LAYERS)},
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    keys = jax.random.split(jax.random.PRNGKey(0), LAYERS)
    params = {f"layer{i}": {"w": jax.random.normal(keys[i], (DIM, DIM)) * 0.1,
                            "b": jnp.zeros(DIM)} for i in range(LAYERS)}
    xs = jax.random.normal(jax.random.PRNGKey(1), (8, 4, DIM))
    ys = jax.random.normal(jax.random.PRNGKey(2), (8, 4, DIM))

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
