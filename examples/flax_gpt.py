"""A small GPT written with flax.nnx and trained with optax, pipelined by
mpmd over 4 meshes of 2 CPU devices with 1F1B over 8 microbatches.

    .venv/bin/python examples/flax_gpt.py

What a user brings, unchanged: `flax.nnx` layers (Embed, LayerNorm,
MultiHeadAttention, Linear, gelu), `optax.chain(clip_by_global_norm,
adamw(warmup-cosine schedule))`, `jax.checkpoint` around each block. What
mpmd needs on top: `labelled(module, name)` runs a module inside a named
computation (its parameters are the computation's explicit inputs), an
assignment of the names to meshes, and two partitioning options, because
global-norm clipping sums over every mesh's gradients (a cross-mesh
reduction) and then scales every mesh's gradients by the result (a
transfer of the norm). The script trains 3 steps next to plain `jax.jit`
on the same inputs and prints both losses.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402

import mpmd  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]


class Block(nnx.Module):
    def __init__(self, dim: int, heads: int, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(dim, rngs=rngs)
        # No biases in attention (as in many GPTs): the key bias has a
        # gradient of exactly zero (softmax ignores a shift per query), so
        # Adam would turn its rounding noise into lr-sized updates that no
        # two programs share.
        self.attention = nnx.MultiHeadAttention(
            num_heads=heads, in_features=dim, decode=False, use_bias=False,
            rngs=rngs)
        self.ln2 = nnx.LayerNorm(dim, rngs=rngs)
        self.up = nnx.Linear(dim, 4 * dim, rngs=rngs)
        self.down = nnx.Linear(4 * dim, dim, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        causal = nnx.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
        x = x + self.attention(self.ln1(x), mask=causal)
        return x + self.down(nnx.gelu(self.up(self.ln2(x))))


class Embedding(nnx.Module):
    def __init__(self, vocab: int, dim: int, seq: int, rngs: nnx.Rngs):
        self.tokens = nnx.Embed(vocab, dim, rngs=rngs)
        self.positions = nnx.Embed(seq, dim, rngs=rngs)

    def __call__(self, tokens: jax.Array) -> jax.Array:
        return self.tokens(tokens) + self.positions(jnp.arange(tokens.shape[1]))


class Head(nnx.Module):
    def __init__(self, dim: int, vocab: int, rngs: nnx.Rngs):
        self.ln = nnx.LayerNorm(dim, rngs=rngs)
        self.out = nnx.Linear(dim, vocab, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(self.ln(x))


class GPT(nnx.Module):
    def __init__(self, *, vocab: int, dim: int, heads: int, layers: int,
                 seq: int, rngs: nnx.Rngs):
        self.embedding = Embedding(vocab, dim, seq, rngs)
        self.blocks = nnx.List([Block(dim, heads, rngs)
                                for _ in range(layers)])
        self.head = Head(dim, vocab, rngs)


def labelled(module: nnx.Module, name: str, *args: Any,
             remat: bool = False) -> Any:
    """`module(*args)` as the named computation `name`: the module's state
    goes in as an explicit input, so its parameters live (and are updated)
    on the computation's mesh. With `remat`, the computation is recomputed
    in the backward pass (`jax.checkpoint` around the label)."""
    graphdef, state = nnx.split(module)

    def apply(state: nnx.State, *args: Any) -> Any:
        return nnx.merge(graphdef, state)(*args)

    call = mpmd.named_computation(apply, name=name)
    if remat:
        call = jax.checkpoint(call)
    return call(state, *args)


def loss_fn(model: GPT, tokens: jax.Array, targets: jax.Array) -> jax.Array:
    x = labelled(model.embedding, "embed", tokens)
    for index, block in enumerate(model.blocks):
        x = labelled(block, f"block{index}", x, remat=True)
    logits = labelled(model.head, "head", x)
    return optax.softmax_cross_entropy_with_integer_labels(
        logits, targets).mean()


def make_optimizer(steps: int = 100) -> optax.GradientTransformation:
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=3e-3, warmup_steps=2, decay_steps=steps)
    return optax.chain(optax.clip_by_global_norm(1.0),
                       optax.adamw(schedule, weight_decay=0.01))


def make_train_step(graphdef: nnx.GraphDef, optimizer):
    """(params, opt_state, tokens, targets) -> (params, opt_state, loss);
    tokens and targets are stacked microbatches [m, batch, seq]."""

    def train_step(params, opt_state, tokens, targets):
        def microbatch_loss(params, tokens, targets):
            return loss_fn(nnx.merge(graphdef, params), tokens, targets)

        def body(i, acc):
            loss, grads = jax.value_and_grad(microbatch_loss)(
                params, tokens[i], targets[i])
            return jax.tree.map(jnp.add, acc, (loss, grads))

        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        loss, grads = mpmd.fori_loop(0, tokens.shape[0], body, zeros)
        count = tokens.shape[0]
        grads = jax.tree.map(lambda g: g / count, grads)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss / count

    return train_step


def assignment(layers: int) -> dict[str, tuple[str, int]]:
    """embed with block 0 on m1, the head with the last block on m4."""
    result = {"embed": (MESHES[0], 0), "head": (MESHES[-1], len(MESHES) - 1)}
    per_mesh = max(1, layers // len(MESHES))
    for index in range(layers):
        stage = min(index // per_mesh, len(MESHES) - 1)
        result[f"block{index}"] = (MESHES[stage], stage)
    return result


def setup(layers: int = 4, microbatches: int = 8, seed: int = 0):
    """The model's parameters, the optimizer and its state, a batch, and
    the mpmd configuration over 4 meshes of 2 devices."""
    model = GPT(vocab=64, dim=32, heads=2, layers=layers, seq=16,
                rngs=nnx.Rngs(seed))
    graphdef, params = nnx.split(model)
    optimizer = make_optimizer()
    opt_state = optimizer.init(params)
    tokens = jax.random.randint(jax.random.PRNGKey(seed + 1),
                                (microbatches, 4, 16), 0, 64)
    targets = jnp.roll(tokens, -1, axis=2)
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    topology = {name: jax.sharding.Mesh(devices[i], ("x",))
                for i, name in enumerate(MESHES)}
    config = mpmd.make_config(
        topology, assignment(layers),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True,
                              "infer_cross_mesh_reductions": True})
    return (make_train_step(graphdef, optimizer), params, opt_state, tokens,
            targets, config)


def main() -> None:
    train_step, params, opt_state, tokens, targets, config = setup()
    lowered = mpmd.jit(train_step, config).lower(params, opt_state, tokens,
                                                 targets)
    print(lowered.schedule_text())
    compiled = lowered.compile()
    reference = jax.jit(train_step)
    mp = (params, opt_state)
    ref = (params, opt_state)
    print(f"{'step':>4}  {'mpmd loss':>12}  {'jax.jit loss':>12}")
    for step in range(3):
        *mp, mp_loss = compiled(*mp, tokens, targets)
        *ref, ref_loss = reference(*ref, tokens, targets)
        print(f"{step:>4}  {float(mp_loss):>12.6f}  {float(ref_loss):>12.6f}")
    worst = max(float(np.linalg.norm(np.asarray(a) - np.asarray(b)) /
                      max(np.linalg.norm(np.asarray(b)), 1e-12))
                for a, b in zip(jax.tree.leaves(mp[0]),
                                jax.tree.leaves(ref[0])))
    print(f"largest per-tensor relative L2 difference of the parameters: "
          f"{worst:.2e}")


if __name__ == "__main__":
    main()
