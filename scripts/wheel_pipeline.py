"""Run by scripts/wheel_check.sh in a fresh venv holding the wheel: a
2-mesh pipeline (two named stages, 4 microbatches, GPipe) partitioned by
the wheel's compiler and run by its runtime, equal to jax.jit; and the
process maps no libMLIR/libLLVM."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

import mpmd

# The installed wheel, not the source tree or the build's package.
assert os.sep + "site-packages" + os.sep in mpmd.__file__, \
    f"mpmd imported from {mpmd.__file__}, not the venv's site-packages"


def stage(w, x):
    return jnp.tanh(x @ w)


def loss(params, x, y):
    h = mpmd.named_computation(stage, name="stage0")(params[0], x)
    h = mpmd.named_computation(stage, name="stage1")(params[1], h)
    return jnp.mean((h - y) ** 2)


def step(params, xs, ys):
    def body(i, acc):
        return jax.tree.map(jnp.add, acc,
                            jax.value_and_grad(loss)(params, xs[i], ys[i]))

    zero = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    total, grads = mpmd.fori_loop(0, xs.shape[0], body, zero)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), total


devices = np.array(jax.devices()[:4]).reshape(2, 2)
topology = {"m0": Mesh(devices[0], ("x",)), "m1": Mesh(devices[1], ("x",))}
config = mpmd.make_config(topology, {"stage0": ("m0", 0), "stage1": ("m1", 1)},
                          partitioning_options={"pipeline_schedule": "gpipe"})
keys = jax.random.split(jax.random.PRNGKey(0), 4)
params = [jax.random.normal(keys[i], (8, 8)) * 0.3 for i in range(2)]
xs = jax.random.normal(keys[2], (4, 2, 8))
ys = jax.random.normal(keys[3], (4, 2, 8))
compiled = mpmd.jit(step, config).lower(params, xs, ys).compile()
got = compiled(params, xs, ys)
expected = jax.jit(step)(params, xs, ys)
for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5,
                               atol=1e-6)
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if ".so" in line}
linked = sorted(path for path in mapped
                if "libMLIR" in path or "libLLVM" in path)
assert not linked, f"the process maps {linked}"
print(f"wheel_check: a 2-mesh pipeline from {os.path.dirname(mpmd.__file__)} "
      f"equals jax.jit ({len(compiled.plan.programs)} programs; "
      f"schedule {compiled.plan.schedule_text().splitlines()[0]}); "
      "no libMLIR/libLLVM mapped")
