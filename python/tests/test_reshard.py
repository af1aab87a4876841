"""mpmd.reshard: a pytree moved to new shardings on other meshes, device to
device, in one process (the two-process case is in test_multiprocess.py);
bad requests name the leaf."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd


def meshes():
    devices = np.array(jax.devices()[:8])
    return (Mesh(devices[:4].reshape(2, 2), ("data", "model")),
            Mesh(devices[4:], ("x",)))


def tree_on(train):
    return {"w": jax.device_put(jnp.arange(64.0).reshape(8, 8),
                                NamedSharding(train, P("data", "model"))),
            "b": [jax.device_put(jnp.arange(8.0), NamedSharding(train, P()))],
            "step": 3}


def test_a_tree_moves_to_another_mesh_and_layout():
    train, generate = meshes()
    tree = tree_on(train)
    shardings = {"w": NamedSharding(generate, P(None, "x")),
                 "b": NamedSharding(generate, P("x")),
                 "step": NamedSharding(generate, P())}
    moved = mpmd.reshard(tree, shardings)
    assert moved["w"].sharding == shardings["w"]
    assert moved["b"][0].sharding == shardings["b"]
    assert moved["step"].sharding == shardings["step"]
    np.testing.assert_array_equal(moved["w"], np.arange(64.0).reshape(8, 8))
    np.testing.assert_array_equal(moved["b"][0], np.arange(8.0))
    assert int(moved["step"]) == 3
    # Each target device holds only its piece, and the source is intact.
    assert {s.data.shape for s in moved["w"].addressable_shards} == {(8, 2)}
    assert not tree["w"].is_deleted()
    # One sharding for every leaf; back again.
    back = mpmd.reshard(moved, NamedSharding(train, P()))
    np.testing.assert_array_equal(back["w"], tree["w"])


def test_shardings_that_do_not_match_the_tree():
    train, generate = meshes()
    tree = tree_on(train)
    with pytest.raises(mpmd.ReshardError, match="do not match the tree"):
        mpmd.reshard(tree, {"w": NamedSharding(generate, P())})
    with pytest.raises(mpmd.ReshardError,
                       match=r"leaf \['b'\]\[0\]: its sharding is .*not a "
                             r"jax.sharding.NamedSharding"):
        mpmd.reshard(tree, {"w": NamedSharding(generate, P()),
                            "b": [P("x")], "step": NamedSharding(generate, P())})


def test_a_layout_that_does_not_fit_names_the_leaf():
    train, generate = meshes()
    odd = {"v": jax.device_put(jnp.ones(6), NamedSharding(train, P()))}
    with pytest.raises(mpmd.ReshardError, match=r"leaf \['v'\]"):
        mpmd.reshard(odd, NamedSharding(generate, P("x")))


def test_devices_outside_the_job_are_named():

    train, _ = meshes()

    class Foreign:
        """A device of no process of this job."""
        id = 1234
        process_index = 0
        platform = "cpu"

    sharding = NamedSharding(train, P())
    outside = type("Outside", (), {
        "device_set": property(lambda self: {Foreign()}),
        "__class__": NamedSharding})()
    with pytest.raises(mpmd.ReshardError, match=r"devices \[1234\], which "
                       "are not devices of this job"):
        mpmd.reshard({"w": jnp.ones(4)}, {"w": outside})
    assert mpmd.reshard({"w": jnp.ones(4)}, {"w": sharding})["w"].sharding \
        == sharding
