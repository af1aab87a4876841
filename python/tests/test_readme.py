"""The README's first program runs as written: it trains with Adam on 4
meshes for 6 calls with jax.jit's numbers, compiles once, and its
parameters and optimizer moments stay on their layers' meshes."""

from __future__ import annotations

import os
import re

import jax
import numpy as np

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def first_program() -> str:
    text = open(README, encoding="utf-8").read()
    section = text[text.index("## A first program"):]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the README's first program has no python block"
    return match.group(1)


def test_readme_first_program_trains_like_jax_jit(capsys):
    source = first_program()
    namespace: dict = {"__name__": "readme"}
    exec(compile(source, README, "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out.splitlines()

    # The schedule it prints is the one the comment shows.
    shown = re.search(r"# (m0: [^(\n]*?)\s+\(", source).group(1)
    assert printed[0] == shown, printed[:4]

    step, train_step = namespace["step"], namespace["train_step"]
    optimizer, xs, ys = (namespace["optimizer"], namespace["xs"],
                         namespace["ys"])
    # One program for all six calls (host inputs, then its own results).
    assert len({id(c) for c in step._cache.values()}) == 1

    # Parameters and Adam's moments of layer i are on mesh m{i}.
    topology = namespace["topology"]
    for path, leaf in jax.tree_util.tree_leaves_with_path(
            (namespace["params"], namespace["opt_state"])):
        text = jax.tree_util.keystr(path)
        index = re.search(r"\[(\d)\]\['[wb]'\]", text)
        if index is None:
            continue
        mesh = topology[f"m{index.group(1)}"]
        assert set(leaf.sharding.device_set) == set(mesh.devices.flat), text

    # The same six steps with jax.jit.
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    params = [{"w": jax.random.normal(k, (16, 16)) * 0.1,
               "b": jax.numpy.zeros(16)} for k in keys]
    opt_state = optimizer.init(params)
    reference = jax.jit(train_step)
    for _ in range(6):
        params, opt_state, loss = reference(params, opt_state, xs, ys)
    np.testing.assert_allclose(float(printed[-1]), float(loss), rtol=1e-5)
    for actual, expected in zip(jax.tree.leaves(namespace["params"]),
                                jax.tree.leaves(params)):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected),
                                   rtol=2e-5, atol=1e-6)
