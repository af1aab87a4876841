"""A pipeline written against Shardy:MPMD's API, run by mpmd.

Only the imports differ from a Shardy:MPMD script:

    from shardy.integrations.python.jax import mpmd
    from shardy.integrations.python.jax.mpmd import pipeline_registry

become the two lines below. A 4-stage MLP, one stage per mesh, trained on
gradients accumulated over microbatches with `mpmd.fori_loop`: first with
Shardy's built-in 1F1B (`mpmd_pipeline_schedule`), then with the
zero-bubble schedule of `pipeline_registry`. Both are checked against
`jax.jit` of the same function; the MPMD program is printed with
`as_text("mpmd")`.

    .venv/bin/python examples/shardy_style.py
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import mpmd  # noqa: E402
from mpmd import pipeline_registry  # noqa: E402

STAGES = 4
MICROBATCHES = 8


def init_params(key: jax.Array, dim: int = 16) -> list[dict[str, jax.Array]]:
    keys = jax.random.split(key, STAGES)
    return [{"w": jax.random.normal(k, (dim, dim)) / np.sqrt(dim),
             "b": jnp.zeros((dim,))} for k in keys]


def forward(params: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    for stage, p in enumerate(params):
        x = mpmd.named_computation(
            lambda p, x: jnp.tanh(x @ p["w"] + p["b"]),
            name=f"stage{stage}")(p, x)
    return x


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


def train_step(params, xs, ys):
    def body(i, carry):
        grads, total = carry
        value, g = jax.value_and_grad(loss)(params, xs[i], ys[i])
        return jax.tree.map(jnp.add, grads, g), total + value

    zeros = jax.tree.map(jnp.zeros_like, params)
    grads, total = mpmd.fori_loop(MICROBATCHES, body, (zeros, 0.0))
    new = jax.tree.map(lambda p, g: p - 0.1 * g / MICROBATCHES, params, grads)
    return new, total / MICROBATCHES


def topology() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:2 * STAGES]).reshape(STAGES, 2)
    return {f"mesh{i}": jax.sharding.Mesh(devices[i], ("data",))
            for i in range(STAGES)}


def run(config: mpmd.MpmdConfig, params, xs, ys, title: str) -> str:
    lowered = mpmd.jit(train_step, config).lower(params, xs, ys)
    got = lowered.compile()(params, xs, ys)
    want = jax.jit(train_step)(params, xs, ys)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    print(f"{title}: equals jax.jit; loss {float(got[1]):.5f}")
    print(lowered.schedule_text())
    return lowered.as_text("mpmd")


def main() -> dict[str, str]:
    meshes = topology()
    names = {f"stage{i}": f"mesh{i}" for i in range(STAGES)}
    stages = {f"stage{i}": i for i in range(STAGES)}
    params = init_params(jax.random.PRNGKey(0))
    xs = jax.random.normal(jax.random.PRNGKey(1), (MICROBATCHES, 4, 16))
    ys = jax.random.normal(jax.random.PRNGKey(2), (MICROBATCHES, 4, 16))

    one_f_one_b = mpmd.make_config(
        meshes, names, name_to_stage_assignment=stages,
        partitioning_options={"mpmd_pipeline_schedule": "1F1B"})
    zero_bubble = mpmd.make_config(
        meshes, names, name_to_stage_assignment=stages,
        pipeline_schedule=pipeline_registry.get_pipeline_schedule(
            "ZERO_BUBBLE_H1"))
    texts = {"1F1B": run(one_f_one_b, params, xs, ys, "1F1B"),
             "ZERO_BUBBLE_H1": run(zero_bubble, params, xs, ys,
                                   "ZERO_BUBBLE_H1")}
    print("\n".join(texts["1F1B"].splitlines()[:6]))
    return texts


if __name__ == "__main__":
    main()
