"""Helpers shared by the end-to-end tests: the 4-mesh topology over 8 CPU
devices, the example models, and tree comparison against jax.jit."""

from __future__ import annotations

import os
import sys

import jax
import numpy as np

# The example models live next to the demo.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples"))

MESHES = ["m1", "m2", "m3", "m4"]


def four_meshes() -> dict[str, jax.sharding.Mesh]:
    """Meshes m1..m4 of 2 CPU devices each."""
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {name: jax.sharding.Mesh(devices[i], ("x",))
            for i, name in enumerate(MESHES)}


def assert_trees_close(actual, expected, rtol=1e-5, atol=1e-6):
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol,
                                   atol=atol)
