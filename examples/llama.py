"""A Llama-style decoder as an mpmd pipeline, in plain JAX.

The model: token embedding, `layers` decoder blocks (RMSNorm, causal
grouped-query attention with rotary position embeddings, RMSNorm, SwiGLU
MLP, both with residuals), a final RMSNorm and an output projection that
reuses the embedding matrix (tied embeddings: logits = x @ embed.T).

For mpmd the embedding lookup is the named computation "embed", block i is
"block{i}" and the final norm with the tied projection is "head"; the loss,
the gradient accumulation over microbatches and the optimizer update are
nameless and placed by mesh inference. `llama_assignment` puts embed on
the first mesh, head on the last and the blocks in contiguous runs in
between; `llama_shardings` adds Megatron-style tensor parallelism inside
each mesh that has a "model" axis.

The tied embedding is used on the first mesh (embed) and on the last
(head); it lives on the first mesh (`llama_shardings`), mpmd sends it to
the last one for the head (once per step), and its two gradient
contributions meet on the first mesh for the update. That sum adds values
of two meshes, which mesh inference does only when allowed: the config
needs `partitioning_options={"infer_cross_mesh_reductions": True}` (or
`"infer_transfers": True`); without it, lowering stops with "Mesh
assignment is not possible for op as its operands are on conflicting
meshes: 'stablehlo.add' ...". jax.grad sums the two contributions inside
each microbatch's backward; mesh inference sums the last mesh's
contributions over the microbatches there, so the head's [vocab, dim]
gradient crosses from the last mesh to the first once per step.

Run as a script for a short training run next to `jax.jit`:

  .venv/bin/python examples/llama.py
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

import jax
import jax.numpy as jnp
import optax
from jax.sharding import NamedSharding, PartitionSpec as P

import mpmd

Params = Any

# The small default configuration: fast to compile on CPU.
VOCAB, DIM, HEADS, KV_HEADS, LAYERS, SEQ = 128, 64, 4, 2, 4, 16
NORM_EPS = 1e-5
ROPE_BASE = 10000.0

# What a config for this model needs besides a schedule: the tied
# embedding's gradient adds the first and the last mesh's contributions.
PARTITIONING_OPTIONS = {"infer_cross_mesh_reductions": True}


def default_hidden(dim: int) -> int:
    """Llama's SwiGLU width: about 8/3 of dim, rounded up to a multiple of
    16 (so it splits evenly over a "model" axis of up to 16 devices)."""
    return 16 * math.ceil(8 * dim / 3 / 16)


# ------------------------------------------------------------- parameters

def init_llama(key: jax.Array, vocab: int = VOCAB, dim: int = DIM,
               heads: int = HEADS, kv_heads: int = KV_HEADS,
               layers: int = LAYERS, hidden: int | None = None,
               seq: int = SEQ) -> Params:
    """Parameters as a pytree of dicts, the blocks as a list.

    `seq` is the longest sequence the model is meant for; RoPE needs no
    table, so it only checks that the head size is even (as the rotation
    pairs the halves of each head)."""
    if dim % heads or heads % kv_heads:
        raise ValueError(f"dim {dim}, heads {heads}, kv_heads {kv_heads}: "
                         "dim must split into heads, heads into kv groups")
    head_dim = dim // heads
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head size, got {head_dim}")
    if seq < 1:
        raise ValueError(f"seq must be positive, got {seq}")
    hidden = hidden or default_hidden(dim)

    def dense(key, fan_in, fan_out):
        return jax.random.normal(key, (fan_in, fan_out)) / jnp.sqrt(fan_in)

    keys = jax.random.split(key, 1 + layers)
    blocks = []
    for index in range(layers):
        k = jax.random.split(keys[1 + index], 7)
        blocks.append({
            "attn_norm": jnp.ones((dim,)),
            "wq": dense(k[0], dim, heads * head_dim),
            "wk": dense(k[1], dim, kv_heads * head_dim),
            "wv": dense(k[2], dim, kv_heads * head_dim),
            "wo": dense(k[3], heads * head_dim, dim),
            "mlp_norm": jnp.ones((dim,)),
            "w_gate": dense(k[4], dim, hidden),
            "w_up": dense(k[5], dim, hidden),
            "w_down": dense(k[6], hidden, dim),
        })
    return {"embed": jax.random.normal(keys[0], (vocab, dim)) * 0.02,
            "blocks": blocks,
            "norm": jnp.ones((dim,))}


# ------------------------------------------------------------------ model

def rms_norm(weight: jax.Array, x: jax.Array) -> jax.Array:
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True)
                             + NORM_EPS) * weight


def rope(x: jax.Array) -> jax.Array:
    """Rotary position embedding of x: [batch, seq, heads, head_dim]. The
    first and second halves of each head form the rotated pairs; pair j
    turns by position * ROPE_BASE^(-2j / head_dim)."""
    seq, head_dim = x.shape[1], x.shape[-1]
    half = head_dim // 2
    inverse_freq = ROPE_BASE ** (-jnp.arange(half, dtype=jnp.float32) / half)
    angles = jnp.arange(seq, dtype=jnp.float32)[:, None] * inverse_freq
    cos = jnp.cos(angles)[None, :, None, :]
    sin = jnp.sin(angles)[None, :, None, :]
    first, second = x[..., :half], x[..., half:]
    return jnp.concatenate([first * cos - second * sin,
                            second * cos + first * sin], axis=-1)


def attention(p: Params, x: jax.Array, heads: int, kv_heads: int) -> jax.Array:
    """Causal grouped-query attention: each of the kv_heads key/value heads
    serves heads // kv_heads consecutive query heads."""
    batch, seq, _ = x.shape
    head_dim = p["wq"].shape[1] // heads
    group = heads // kv_heads
    q = rope((x @ p["wq"]).reshape(batch, seq, heads, head_dim))
    k = rope((x @ p["wk"]).reshape(batch, seq, kv_heads, head_dim))
    v = (x @ p["wv"]).reshape(batch, seq, kv_heads, head_dim)
    # Query head h = kv * group + g uses key/value head kv.
    q = q.reshape(batch, seq, kv_heads, group, head_dim)
    scores = jnp.einsum("bqkgd,bskd->bkgqs", q, k) / jnp.sqrt(head_dim)
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(causal, scores, jnp.finfo(scores.dtype).min)
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bkgqs,bskd->bqkgd", weights, v)
    return out.reshape(batch, seq, heads * head_dim) @ p["wo"]


def swiglu(p: Params, x: jax.Array) -> jax.Array:
    return (jax.nn.silu(x @ p["w_gate"]) * (x @ p["w_up"])) @ p["w_down"]


def decoder_block(p: Params, x: jax.Array, heads: int,
                  kv_heads: int) -> jax.Array:
    x = x + attention(p, rms_norm(p["attn_norm"], x), heads, kv_heads)
    return x + swiglu(p, rms_norm(p["mlp_norm"], x))


def llama_logits(params: Params, tokens: jax.Array, *, heads: int = HEADS,
                 kv_heads: int = KV_HEADS) -> jax.Array:
    """Logits [batch, seq, vocab] of tokens [batch, seq]."""
    def embed(table, tokens):
        return table[tokens]

    x = mpmd.named_computation(embed, name="embed")(params["embed"], tokens)
    if isinstance(params["blocks"], dict):
        # Stacked (`stack_blocks`): one scan over the layers, the named
        # computation "blocks", which an assignment may split over meshes
        # ({"blocks": ["m0", "m1", ...]}).
        def run_blocks(stack, x):
            def layer(x, p):
                return decoder_block(p, x, heads, kv_heads), None
            return jax.lax.scan(layer, x, stack)[0]
        x = mpmd.named_computation(run_blocks, name="blocks")(
            params["blocks"], x)
    for index, p in enumerate(params["blocks"]
                              if isinstance(params["blocks"], list) else []):
        def run_block(p, x):
            return decoder_block(p, x, heads, kv_heads)
        x = mpmd.named_computation(run_block, name=f"block{index}")(p, x)

    def head(norm, table, x):
        return rms_norm(norm, x) @ table.T  # tied: the embedding, transposed

    return mpmd.named_computation(head, name="head")(
        params["norm"], params["embed"], x)


def stack_blocks(params: Params) -> Params:
    """`params` with its list of blocks stacked into one dict of arrays
    with a leading layer axis, as scanned models (MaxText's scan_layers,
    flax nn.scan) keep them: the model then runs its blocks as one
    `jax.lax.scan`, the named computation "blocks"."""
    return {**params, "blocks": jax.tree.map(lambda *layers: jnp.stack(layers),
                                             *params["blocks"])}


def llama_loss(params: Params, tokens: jax.Array, targets: jax.Array, *,
               heads: int = HEADS, kv_heads: int = KV_HEADS) -> jax.Array:
    """Mean next-token cross-entropy of targets [batch, seq]."""
    logits = llama_logits(params, tokens, heads=heads, kv_heads=kv_heads)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


# ------------------------------------------------------------ training

def default_optimizer() -> optax.GradientTransformation:
    return optax.adamw(1e-3, weight_decay=0.01)


def make_train_step(optimizer: optax.GradientTransformation | None = None, *,
                    heads: int = HEADS, kv_heads: int = KV_HEADS) -> Callable:
    """`step(params, opt_state, tokens, targets) -> (params, opt_state,
    loss)` over stacked microbatches (tokens, targets: [microbatches,
    batch, seq]): each microbatch's loss and gradient in one
    `mpmd.fori_loop` iteration, summed, then averaged and applied with
    `optimizer` (AdamW by default). The loss is the mean over microbatches."""
    optimizer = optimizer or default_optimizer()

    def step(params, opt_state, tokens, targets):
        microbatches = tokens.shape[0]

        def body(i, acc):
            loss, grads = jax.value_and_grad(llama_loss)(
                params, tokens[i], targets[i], heads=heads, kv_heads=kv_heads)
            return jax.tree.map(jnp.add, acc, (loss, grads))

        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        loss, grads = mpmd.fori_loop(0, microbatches, body, zeros)
        grads = jax.tree.map(lambda g: g / microbatches, grads)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state,
                loss / microbatches)

    return step


def llama_microbatched_step(params, opt_state, tokens, targets,
                            optimizer: optax.GradientTransformation | None = None):
    """`make_train_step(optimizer)` called once (the default heads)."""
    return make_train_step(optimizer)(params, opt_state, tokens, targets)


# ---------------------------------------------------------- placement

def llama_assignment(layers: int, meshes: list[str]) -> dict[str, Any]:
    """embed on the first mesh, head on the last, the blocks in contiguous
    runs of (nearly) equal length, one stage per mesh."""
    count = len(meshes)
    if layers < count:
        raise ValueError(f"{layers} blocks cannot fill {count} meshes")
    assignment: dict[str, Any] = {"embed": (meshes[0], 0)}
    for index in range(layers):
        stage = index * count // layers
        assignment[f"block{index}"] = (meshes[stage], stage)
    assignment["head"] = (meshes[-1], count - 1)
    return assignment


def llama_specs(params: Params, axis: str | None = "model") -> Params:
    """PartitionSpecs: with `axis`, Megatron-style tensor parallelism (the
    q/k/v/gate/up matrices split over their output dimension, o/down over
    their input dimension, one all-reduce after attention and one after
    the MLP); norms and the embedding replicated. `axis=None`: all
    replicated."""
    column = P(None, axis) if axis else P()
    row = P(axis, None) if axis else P()
    block = {"attn_norm": P(), "mlp_norm": P(),
             "wq": column, "wk": column, "wv": column, "wo": row,
             "w_gate": column, "w_up": column, "w_down": row}
    return {"embed": P(), "blocks": [dict(block) for _ in params["blocks"]],
            "norm": P()}


def llama_shardings(params: Params, topology: dict[str, Any],
                    assignment: dict[str, Any]) -> Params:
    """A NamedSharding per parameter, on the mesh of the named computation
    that uses it: block i's on block i's mesh, tensor-parallel over "model"
    where that mesh has the axis; the final norm on the head's mesh; the
    tied embedding on its home, the first (embed's) mesh."""
    def on(name: str, specs: Any) -> Any:
        mesh = topology[assignment[name][0]]
        axis = "model" if "model" in mesh.axis_names else None
        if axis is None:  # drop the axis from specs built with it
            specs = jax.tree.map(lambda _: P(), specs,
                                 is_leaf=lambda s: isinstance(s, P))
        return jax.tree.map(lambda s: NamedSharding(mesh, s), specs,
                            is_leaf=lambda s: isinstance(s, P))

    specs = llama_specs(params)
    return {"embed": on("embed", specs["embed"]),
            "blocks": [on(f"block{i}", spec)
                       for i, spec in enumerate(specs["blocks"])],
            "norm": on("head", specs["norm"])}


def make_data(key: jax.Array, microbatches: int, batch: int, seq: int = SEQ,
              vocab: int = VOCAB) -> tuple[jax.Array, jax.Array]:
    """Random tokens [microbatches, batch, seq] and their next tokens (the
    sequence shifted left by one, wrapping)."""
    tokens = jax.random.randint(key, (microbatches, batch, seq), 0, vocab)
    return tokens, jnp.roll(tokens, -1, axis=-1)


# ---------------------------------------------------------------- script

def main() -> None:
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh  # noqa: PLC0415

    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    meshes = [f"m{i + 1}" for i in range(4)]
    topology = {name: Mesh(devices[i], ("model",))
                for i, name in enumerate(meshes)}
    assignment = llama_assignment(LAYERS, meshes)
    params = init_llama(jax.random.PRNGKey(0))
    optimizer = default_optimizer()
    step = make_train_step(optimizer)
    tokens, targets = make_data(jax.random.PRNGKey(1), microbatches=8,
                                batch=4)
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"pipeline_schedule": "1f1b",
                              **PARTITIONING_OPTIONS})
    placed = jax.device_put(params,
                            llama_shardings(params, topology, assignment))
    mp = (placed, optimizer.init(placed))
    ref = (params, optimizer.init(params))
    mp_step, ref_step = mpmd.jit(step, config), jax.jit(step)
    print(mp_step.lower(*mp, tokens, targets).schedule_text())
    for index in range(3):
        *mp, mp_loss = mp_step(*mp, tokens, targets)
        *ref, ref_loss = ref_step(*ref, tokens, targets)
        print(f"step {index}: mpmd {float(mp_loss):.6f}  "
              f"jax.jit {float(ref_loss):.6f}")


if __name__ == "__main__":
    # Before JAX starts its backends (at the first jax.devices()).
    os.environ.setdefault("XLA_FLAGS",
                          "--xla_force_host_platform_device_count=8")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
