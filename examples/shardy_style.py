"""A pipeline written against Shardy:MPMD's API, run by mpmd.

Only the imports differ from a Shardy:MPMD script:

    from shardy.integrations.python.jax import mpmd
    from shardy.integrations.python.jax.mpmd import pipeline_registry

become the two lines below. A 4-stage MLP, one stage per mesh, trained on
gradients accumulated over microbatches with `mpmd.fori_loop`: first with
Shardy's built-in 1F1B (`mpmd_pipeline_schedule`), then with the
zero-bubble schedule of `pipeline_registry`. Both are checked against
`jax.jit` of the same function; the MPMD program is printed with
`as_text("mpmd")`, and the start of its IFRT IR (what Shardy:MPMD hands to
Pathways) with `as_text("ifrt")`; pass a path to write the whole IFRT IR
there.

Last, what Shardy:MPMD cannot do without Pathways: a module that the real
Shardy:MPMD partitioned (this `train_step` at 4 microbatches of width 8,
1F1B, stored under python/tests/data/shardy/ by
tools/make_shardy_modules.py) runs on mpmd's runtime through
`mpmd.runtime.compile_module`, and equals `jax.jit` and the results stored
with it. That part is mpmd's API, not Shardy's.

    .venv/bin/python examples/shardy_style.py
"""

from __future__ import annotations

import os
import pathlib
import sys

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

    microbatches = xs.shape[0]
    zeros = jax.tree.map(jnp.zeros_like, params)
    grads, total = mpmd.fori_loop(microbatches, body, (zeros, 0.0))
    new = jax.tree.map(lambda p, g: p - 0.1 * g / microbatches, params, grads)
    return new, total / microbatches


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
    IFRT[title] = lowered.as_text("ifrt")
    return lowered.as_text("mpmd")


# Each pipeline's program as IFRT IR, by title.
IFRT: dict[str, str] = {}


SHARDY_MODULES = (pathlib.Path(__file__).resolve().parents[1] / "python"
                  / "tests" / "data" / "shardy")


def run_shardy_partitioned(meshes: dict[str, jax.sharding.Mesh]) -> str:
    """Runs the 1F1B module Shardy:MPMD made of `train_step` on mpmd's
    runtime and checks it against `jax.jit`; returns its schedule."""
    text = (SHARDY_MODULES / "1f1b_fori_4meshes.mlir").read_text()
    stored = np.load(SHARDY_MODULES / "1f1b_fori_4meshes.npz")
    run = mpmd.runtime.compile_module(text, meshes)
    # main's arguments are train_step's, flat: each stage's b and w, xs, ys.
    args = [stored[f"arg{i}"] for i in range(len(run.inputs))]
    results = run(*args)  # numpy data, put on the meshes by the call
    params = [{"b": args[2 * i], "w": args[2 * i + 1]}
              for i in range(STAGES)]
    want = jax.tree.leaves(jax.jit(train_step)(params, args[-2], args[-1]))
    for index, (got, expected) in enumerate(zip(results, want)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, stored[f"out{index}"], rtol=1e-5,
                                   atol=1e-6)
    print("1F1B partitioned by Shardy:MPMD, run by mpmd.runtime."
          f"compile_module: equals jax.jit; loss {float(results[-1]):.5f}")
    print(run.schedule_text())
    return run.schedule_text()


def main(ifrt_path: str | None = None) -> dict[str, str]:
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
    texts["1F1B_ifrt"] = IFRT["1F1B"]
    calls = [line.strip() for line in IFRT["1F1B"].splitlines()
             if '"ifrt.Call"' in line or "ifrt.Call " in line]
    print(f"as IFRT IR: {len(calls)} ifrt.Call ops, the first:")
    print(calls[0][:160] if calls else "(none)")
    if ifrt_path is not None:
        pathlib.Path(ifrt_path).write_text(IFRT["1F1B"])
        print(f"wrote the IFRT IR of 1F1B to {ifrt_path}")
    texts["shardy_partitioned_schedule"] = run_shardy_partitioned(meshes)
    return texts


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
