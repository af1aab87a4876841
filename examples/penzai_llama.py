"""penzai's Llama-like transformer, unchanged, pipelined over 2 or 4 meshes.

The model is penzai's own (`llamalike_common.build_llamalike_transformer`
with `use_layer_stack=True`): its decoder blocks are one `LayerStack`, run
as one `jax.lax.scan` over their stacked parameters. Nothing of it is
edited: `mpmd.label_modules` labels its layers from outside by their paths
(`body.sublayers.1` is the LayerStack), and the assignment splits the
LayerStack's layers over the meshes (`docs/stacks.md`), the embedding on
the first mesh, the final norm and the output projection on the last. It
trains with optax's Adam over microbatches with 1F1B, next to `jax.jit`
of the same step on the same data:

  .venv/bin/python examples/penzai_llama.py --meshes 4 --steps 5
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from penzai import pz  # noqa: E402
from penzai.models.transformer.variants import llamalike_common  # noqa: E402

import mpmd  # noqa: E402

VOCAB, SEQ = 64, 16


def build_model(layers: int = 8, dim: int = 32) -> Any:
    """penzai's Llama-like transformer, its blocks in a LayerStack."""
    config = llamalike_common.LlamalikeTransformerConfig(
        num_kv_heads=2, query_head_multiplier=2, embedding_dim=dim,
        projection_dim=dim // 4, mlp_hidden_dim=2 * dim,
        num_decoder_blocks=layers, vocab_size=VOCAB, mlp_variant="swiglu",
        tie_embedder_and_logits=False, use_layer_stack=True)
    return llamalike_common.build_llamalike_transformer(
        config, init_base_rng=jax.random.key(0))


def assignment(meshes: list[str]) -> dict[str, Any]:
    """The embedding on the first mesh, the LayerStack's layers over all,
    the final norm and the projection on the last."""
    return {"body.sublayers.0": meshes[0],
            "body.sublayers.1": meshes,
            "body.sublayers.2": meshes[-1],
            "body.sublayers.3": meshes[-1]}


def make_step(unbound: Any, optimizer: Any) -> Any:
    """`step(params, opt_state, tokens)`: the mean next-token loss of each
    microbatch (tokens: [microbatches, batch, seq]), gradients summed over
    them in an `mpmd.fori_loop`, one Adam update."""
    def loss(params, tokens):
        model = unbound.bind_variables(params)
        logits = model(pz.nx.wrap(tokens[:, :-1]).tag("batch", "seq"))
        logp = jax.nn.log_softmax(
            logits.unwrap("batch", "seq", "vocabulary"), axis=-1)
        return -jnp.mean(jnp.take_along_axis(
            logp, tokens[:, 1:, None], axis=-1))

    def step(params, opt_state, tokens):
        microbatches = tokens.shape[0]

        def body(i, acc):
            value, grads = jax.value_and_grad(loss)(params, tokens[i])
            return jax.tree.map(jnp.add, acc, (value, grads))

        zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
        value, grads = mpmd.fori_loop(0, microbatches, body, zeros)
        grads = jax.tree.map(lambda g: g / microbatches, grads)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state,
                value / microbatches)

    return step


def train(meshes: int = 4, steps: int = 3, microbatches: int = 4,
          layers: int = 8) -> tuple[list[float], list[float], Any, Any]:
    """`steps` steps with mpmd.jit and with jax.jit from the same start:
    (mpmd's losses, jax.jit's, mpmd's parameters, jax.jit's)."""
    devices = np.array(jax.devices()[:2 * meshes]).reshape(meshes, 2)
    topology = {f"m{i}": jax.sharding.Mesh(devices[i], ("x",))
                for i in range(meshes)}
    model = mpmd.label_modules(build_model(layers),
                               [f"body.sublayers.{i}" for i in range(4)])
    unbound, params = pz.unbind_params(model, freeze=True)
    optimizer = optax.adam(3e-3)
    step = make_step(unbound, optimizer)
    config = mpmd.make_config(topology, assignment(list(topology)),
                              partitioning_options={
                                  "pipeline_schedule": "1f1b"})
    tokens = jax.random.randint(jax.random.key(1),
                                (microbatches, 2, SEQ + 1), 0, VOCAB)
    pipelined, reference = mpmd.jit(step, config), jax.jit(step)
    ours = theirs = (params, optimizer.init(params))
    our_losses, their_losses = [], []
    for _ in range(steps):
        *ours, loss = pipelined(*ours, tokens)
        *theirs, expected = reference(*theirs, tokens)
        our_losses.append(float(loss))
        their_losses.append(float(expected))
    return our_losses, their_losses, ours[0], theirs[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meshes", type=int, default=4, choices=(2, 4))
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    ours, theirs, _, _ = train(args.meshes, args.steps)
    print(f"penzai Llama-like, 8 layers in a LayerStack over {args.meshes} "
          "meshes, 1F1B, 4 microbatches, Adam")
    print(f"{'step':>4} {'mpmd loss':>12} {'jax.jit loss':>13}")
    for index, (a, b) in enumerate(zip(ours, theirs)):
        print(f"{index:>4} {a:12.6f} {b:13.6f}")


if __name__ == "__main__":
    main()
