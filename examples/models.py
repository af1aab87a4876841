"""Small models used by the demo, the tests and the benchmarks.

Each model is plain JAX with its layers wrapped in `mpmd.named_computation`;
the loss and the optimizer update are left nameless for mesh inference.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

import mpmd

Params = Any


# ---------------------------------------------------------------- MLP

def init_mlp(key: jax.Array, sizes: list[int]) -> list[dict[str, jax.Array]]:
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, wkey = jax.random.split(key)
        params.append({"w": jax.random.normal(wkey, (fan_in, fan_out)) /
                       jnp.sqrt(fan_in),
                       "b": jnp.zeros((fan_out,))})
    return params


def mlp_forward(params: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    for index, layer in enumerate(params):
        last = index == len(params) - 1

        def dense(layer, x, last=last):
            y = x @ layer["w"] + layer["b"]
            return y if last else jnp.tanh(y)

        x = mpmd.named_computation(dense, name=f"layer{index}")(layer, x)
    return x


def mse(pred: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((pred - y) ** 2)


def mlp_train_step(params, x, y, lr=0.05):
    loss, grads = jax.value_and_grad(
        lambda p: mse(mlp_forward(p, x), y))(params)
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, loss


# ------------------------------------------- Two-stage MLP, sharded

def init_two_stage_mlp(key: jax.Array, dim: int, hidden: int,
                       out: int) -> Params:
    """Stage 0: x -> tanh(x @ w1) @ w2; stage 1: h -> tanh(h @ w3) @ w4."""
    k = jax.random.split(key, 4)
    scale = lambda fan_in: 1.0 / jnp.sqrt(fan_in)  # noqa: E731
    return {"stage0": {"w1": jax.random.normal(k[0], (dim, hidden)) * scale(dim),
                       "w2": jax.random.normal(k[1], (hidden, dim)) * scale(hidden)},
            "stage1": {"w3": jax.random.normal(k[2], (dim, hidden)) * scale(dim),
                       "w4": jax.random.normal(k[3], (hidden, out)) * scale(hidden)}}


def two_stage_mlp_specs() -> Params:
    """Megatron-style: first matrix of each stage split by columns, second
    by rows, along mesh axis "model"."""
    return {"stage0": {"w1": P(None, "model"), "w2": P("model", None)},
            "stage1": {"w3": P(None, "model"), "w4": P("model", None)}}


def two_stage_mlp_loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    def mlp(p, x):
        (first, second) = p.values()
        return jnp.tanh(x @ first) @ second

    h = mpmd.named_computation(mlp, name="stage0")(params["stage0"], x)
    pred = mpmd.named_computation(mlp, name="stage1")(params["stage1"], h)
    return mse(pred, y)


def two_stage_mlp_step(params: Params, xs: jax.Array, ys: jax.Array,
                       lr: float = 0.1):
    """One SGD step over stacked microbatches xs: [m, batch, dim]."""
    def body(i, acc):
        loss, grads = jax.value_and_grad(two_stage_mlp_loss)(params, xs[i],
                                                             ys[i])
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, xs.shape[0], body, zeros)
    params = jax.tree.map(lambda p, g: p - lr * g / xs.shape[0], params,
                          grads)
    return params, loss / xs.shape[0]


# -------------------------------------------------------- Transformer

def init_transformer(key: jax.Array, *, vocab: int, dim: int, heads: int,
                     layers: int, seq: int) -> Params:
    def dense(key, fan_in, fan_out):
        return jax.random.normal(key, (fan_in, fan_out)) / jnp.sqrt(fan_in)

    keys = jax.random.split(key, 2 + layers)
    blocks = []
    for index in range(layers):
        k = jax.random.split(keys[2 + index], 6)
        blocks.append({
            "ln1": {"scale": jnp.ones((dim,)), "bias": jnp.zeros((dim,))},
            "ln2": {"scale": jnp.ones((dim,)), "bias": jnp.zeros((dim,))},
            "wq": dense(k[0], dim, dim), "wk": dense(k[1], dim, dim),
            "wv": dense(k[2], dim, dim), "wo": dense(k[3], dim, dim),
            "w1": dense(k[4], dim, 4 * dim), "w2": dense(k[5], 4 * dim, dim),
        })
    return {"embed": jax.random.normal(keys[0], (vocab, dim)) * 0.1,
            "unembed": jax.random.normal(keys[1], (dim, vocab)) * 0.1,
            "pos": jnp.zeros((seq, dim)),
            "blocks": blocks,
            "ln_f": {"scale": jnp.ones((dim,)), "bias": jnp.zeros((dim,))}}


def layer_norm(p, x):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]


def attention(p, x, heads):
    batch, seq, dim = x.shape
    def split(t):
        return t.reshape(batch, seq, heads, dim // heads).transpose(0, 2, 1, 3)
    q, k, v = split(x @ p["wq"]), split(x @ p["wk"]), split(x @ p["wv"])
    scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(dim // heads)
    mask = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(mask, scores, -1e9)
    out = jax.nn.softmax(scores, axis=-1) @ v
    return out.transpose(0, 2, 1, 3).reshape(batch, seq, dim) @ p["wo"]


def block(p, x, heads):
    x = x + attention(p, layer_norm(p["ln1"], x), heads)
    h = jax.nn.gelu(layer_norm(p["ln2"], x) @ p["w1"])
    return x + h @ p["w2"]


def transformer_logits(params, tokens, heads):
    def embed(table, pos, tokens):
        return table[tokens] + pos
    x = mpmd.named_computation(embed, name="embed")(
        params["embed"], params["pos"], tokens)
    for index, p in enumerate(params["blocks"]):
        x = mpmd.named_computation(
            lambda p, x: block(p, x, heads), name=f"block{index}")(p, x)
    def head(ln, table, x):
        return layer_norm(ln, x) @ table
    return mpmd.named_computation(head, name="head")(
        params["ln_f"], params["unembed"], x)


def transformer_loss(params, tokens, targets, heads):
    logits = transformer_logits(params, tokens, heads)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


def transformer_train_step(params, tokens, targets, heads=2, lr=0.05):
    loss, grads = jax.value_and_grad(transformer_loss)(params, tokens,
                                                         targets, heads)
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, loss


def transformer_assignment(num_blocks: int, meshes: list[str]) -> dict[str, Any]:
    """embed on the first mesh, head on the last, blocks spread evenly."""
    assignment: dict[str, Any] = {"embed": (meshes[0], 0)}
    per_mesh = max(1, num_blocks // len(meshes))
    for index in range(num_blocks):
        stage = min(index // per_mesh, len(meshes) - 1)
        assignment[f"block{index}"] = (meshes[stage], stage)
    assignment["head"] = (meshes[-1], len(meshes) - 1)
    return assignment


def sgd_over_microbatches(loss_fn, params, tokens, targets, lr, *extra):
    """One step over stacked microbatches ([m, batch, seq]): each
    microbatch's gradient of `loss_fn(params, tokens, targets, *extra)` is
    computed in an `mpmd.fori_loop` iteration (its call counter) and
    accumulated; then one SGD update. Returns (params, mean loss)."""
    num_microbatches = tokens.shape[0]

    def body(i, acc):
        loss, grads = jax.value_and_grad(loss_fn)(
            params, tokens[i], targets[i], *extra)
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    loss, grads = mpmd.fori_loop(0, num_microbatches, body, zeros)
    params = jax.tree.map(lambda p, g: p - lr * g / num_microbatches,
                          params, grads)
    return params, loss / num_microbatches


def optimizer_over_microbatches(loss_fn, optimizer):
    """The training step `(params, opt_state, xs, ys) -> (params,
    opt_state, loss)`: each microbatch's value and gradient of
    `loss_fn(params, x, y)` in an `mpmd.fori_loop` iteration (its call
    counter), summed; then one update of the optax `optimizer`."""
    import optax  # noqa: PLC0415 - the models above need no optax

    def step(params, opt_state, xs, ys):
        def body(i, acc):
            loss, grads = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
            return jax.tree.map(jnp.add, acc, (loss, grads))

        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        loss, grads = mpmd.fori_loop(0, xs.shape[0], body, zeros)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def tanh_layer(p: Params, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ p["w"] + p["b"])


def layers_loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """MSE of `params["layer0"]`, `params["layer1"]`, ... applied in order
    (`tanh_layer`), each the named computation `layer<i>`."""
    for i in range(len(params)):
        x = mpmd.named_computation(tanh_layer, name=f"layer{i}")(
            params[f"layer{i}"], x)
    return jnp.mean((x - y) ** 2)


def transformer_microbatched_step(params, tokens, targets, heads=2, lr=0.05):
    """`sgd_over_microbatches` of the transformer's loss."""
    return sgd_over_microbatches(transformer_loss, params, tokens, targets,
                                 lr, heads)


def interleaved_assignment(num_blocks: int, meshes: list[str]) -> dict[str, Any]:
    """Virtual stages: block k is stage k, on mesh k mod p (two or more
    stages per mesh); embed joins stage 0 and head the last stage."""
    p = len(meshes)
    assignment: dict[str, Any] = {"embed": (meshes[0], 0)}
    for index in range(num_blocks):
        assignment[f"block{index}"] = (meshes[index % p], index)
    assignment["head"] = (meshes[(num_blocks - 1) % p], num_blocks - 1)
    return assignment


def v_assignment(num_blocks: int, meshes: list[str]) -> dict[str, Any]:
    """V-shaped stages (ZB-V, DualPipe-V): block k is stage k; stages k and
    2p - 1 - k share mesh k, so the forward goes down the meshes and back
    up. embed joins stage 0 and head the last stage, both on the first
    mesh. Needs num_blocks = 2p."""
    p = len(meshes)
    if num_blocks != 2 * p:
        raise ValueError(f"a V over {p} meshes has {2 * p} stages; got "
                         f"{num_blocks} blocks")
    assignment: dict[str, Any] = {"embed": (meshes[0], 0)}
    for index in range(num_blocks):
        mesh = index if index < p else 2 * p - 1 - index
        assignment[f"block{index}"] = (meshes[mesh], index)
    assignment["head"] = (meshes[0], num_blocks - 1)
    return assignment


def transformer_specs(params: Params) -> Params:
    """Megatron-style tensor parallelism along mesh axis "model": the query,
    key, value and first MLP matrices split by columns, the attention output
    and second MLP matrices by rows (one all-reduce each after attention
    and MLP), the unembedding by vocabulary; the rest replicated."""
    column, row, replicated = P(None, "model"), P("model", None), P()
    block = {"ln1": {"scale": replicated, "bias": replicated},
             "ln2": {"scale": replicated, "bias": replicated},
             "wq": column, "wk": column, "wv": column, "wo": row,
             "w1": column, "w2": row}
    return {"embed": replicated, "unembed": column, "pos": replicated,
            "blocks": [block for _ in params["blocks"]],
            "ln_f": {"scale": replicated, "bias": replicated}}


def transformer_shardings(params: Params, topology: dict[str, Any],
                          assignment: dict[str, Any]) -> Params:
    """A NamedSharding per parameter: on the mesh of the named computation
    that uses it, with `transformer_specs`."""
    specs = transformer_specs(params)

    def on(name: str, spec: Any) -> Any:
        mesh = topology[assignment[name][0]]
        return jax.tree.map(lambda s: NamedSharding(mesh, s), spec,
                            is_leaf=lambda s: isinstance(s, P))

    return {"embed": on("embed", specs["embed"]),
            "pos": on("embed", specs["pos"]),
            "blocks": [on(f"block{i}", spec)
                       for i, spec in enumerate(specs["blocks"])],
            "unembed": on("head", specs["unembed"]),
            "ln_f": on("head", specs["ln_f"])}


# An uneven model for automatic stage assignment: an embedding, residual MLP
# blocks of different widths and a large output head, so that splitting the
# named computations by count leaves one mesh far busier than the others.

UNEVEN_WIDTHS = (64, 96, 128, 256, 512, 512, 256, 64)


def init_uneven(key: jax.Array, *, vocab: int = 1024, dim: int = 64,
                widths: tuple[int, ...] = UNEVEN_WIDTHS) -> Params:
    keys = jax.random.split(key, 2 * len(widths) + 2)
    blocks = []
    for index, width in enumerate(widths):
        k1, k2 = keys[2 * index], keys[2 * index + 1]
        blocks.append({
            "w1": jax.random.normal(k1, (dim, width)) / jnp.sqrt(dim),
            "w2": jax.random.normal(k2, (width, dim)) / jnp.sqrt(width)})
    return {"embed": jax.random.normal(keys[-2], (vocab, dim)) * 0.02,
            "blocks": blocks,
            "head": jax.random.normal(keys[-1], (dim, vocab)) / jnp.sqrt(dim)}


def uneven_loss(params: Params, tokens: jax.Array, targets: jax.Array
                ) -> jax.Array:
    x = mpmd.named_computation(lambda e, t: e[t], name="embed")(
        params["embed"], tokens)
    for index, p in enumerate(params["blocks"]):
        x = mpmd.named_computation(
            lambda p, x: x + jnp.tanh(x @ p["w1"]) @ p["w2"],
            name=f"block{index}")(p, x)
    logits = mpmd.named_computation(lambda w, x: x @ w, name="head")(
        params["head"], x)
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], -1))


def uneven_microbatched_step(params, tokens, targets, lr=0.05):
    """`sgd_over_microbatches` of the uneven model's loss."""
    return sgd_over_microbatches(uneven_loss, params, tokens, targets, lr)


def uneven_names(num_blocks: int = len(UNEVEN_WIDTHS)) -> list[str]:
    """The named computations of `uneven_loss`, in program order."""
    return ["embed", *(f"block{i}" for i in range(num_blocks)), "head"]
