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


LAYOUT_CHANGES = [
    # (source devices, source spec, target devices, target mesh shape, spec)
    ((0, 2), P("x"), (2, 4), (2,), P("x")),          # same layout
    ((0, 2), P("x"), (2, 4), (2,), P(None, "x")),    # new layout
    ((0, 2), P("x"), (4, 8), (4,), P("x")),          # 2 -> 4 devices
    ((0, 2), P("x"), (2, 4), (2,), P()),             # replicated
    ((0, 4), P("x"), (4, 6), (2,), P(None, "x")),    # 4 -> 2, new layout
    ((0, 2), P(), (2, 8), (2, 3), P("x", "y")),      # replicated -> grid
]


@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16, np.int8,
                                   np.bool_])
@pytest.mark.parametrize("change", LAYOUT_CHANGES,
                         ids=["same", "new", "2to4", "replicated", "4to2",
                              "grid"])
def test_cpu_syncs_copy_each_piece_once_and_share_nothing(change, dtype):
    """On CPU devices the sync cuts target pieces from the source shards
    in place: right values for every layout change and dtype, no buffer
    shared with the source (so donating the source still donates it), one
    buffer per distinct piece, and no program compiled."""
    from meshes import xla_compiles  # noqa: PLC0415

    (a0, a1), source_spec, (b0, b1), target_shape, target_spec = change
    devices = jax.devices()
    source = NamedSharding(Mesh(np.array(devices[a0:a1]), ("x",)),
                           source_spec)
    target_mesh = Mesh(np.array(devices[b0:b1]).reshape(target_shape),
                       ("x", "y")[:len(target_shape)])
    target = NamedSharding(target_mesh, target_spec)
    value = (np.arange(12 * 6) % 7).reshape(12, 6).astype(dtype)
    x = jax.device_put(value, source)
    with xla_compiles() as compiles:
        moved = mpmd.reshard(x, target)
        jax.block_until_ready(moved)
    assert compiles == []
    assert moved.sharding == target
    np.testing.assert_array_equal(np.asarray(moved), value)
    sources = [np.asarray(s.data) for s in x.addressable_shards]
    pieces = {}
    for shard in moved.addressable_shards:
        data = np.asarray(shard.data)
        np.testing.assert_array_equal(data, value[shard.index])
        assert not any(np.shares_memory(data, s) for s in sources)
        key = str(shard.index)
        # Devices holding the same piece share one buffer.
        if key in pieces:
            assert np.shares_memory(pieces[key], data)
        pieces[key] = data
    del sources, data, pieces
    donate = jax.jit(lambda v: v, donate_argnums=0)
    jax.block_until_ready(donate(x))
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(moved), value)


def test_syncs_that_keep_the_device_route():
    """Key arrays, a scalar and a host memory kind move too (key arrays
    and memory kinds through `transfer`, the scalar cut in place)."""
    train, generate = meshes()
    keys = jax.device_put(jax.random.split(jax.random.key(0), 4),
                          NamedSharding(train, P("data")))
    moved = mpmd.reshard(keys, NamedSharding(generate, P("x")))
    np.testing.assert_array_equal(jax.random.key_data(moved),
                                  jax.random.key_data(keys))
    scalar = jax.device_put(jnp.float32(2.5), NamedSharding(train, P()))
    assert float(mpmd.reshard(scalar, NamedSharding(generate, P()))) == 2.5
    pinned = NamedSharding(generate, P("x"), memory_kind="pinned_host")
    w = jax.device_put(jnp.arange(8.0), NamedSharding(train, P()))
    on_host = mpmd.reshard(w, pinned)
    assert on_host.sharding.memory_kind == "pinned_host"
    np.testing.assert_array_equal(np.asarray(on_host), np.arange(8.0))


def test_a_deleted_source_is_named():
    train, generate = meshes()
    x = jax.device_put(jnp.ones((4, 4)), NamedSharding(train, P("data")))
    x.delete()
    with pytest.raises(mpmd.ReshardError, match=r"leaf \['w'\]: cannot "
                       "transfer a deleted"):
        mpmd.reshard({"w": x}, NamedSharding(generate, P("x")))


def test_a_plan_steps_mover_remembers_its_route(monkeypatch):
    """The step loop's `Mover`: same-layout moves take the batched copy,
    decided once per source sharding; other layouts, key arrays and a
    failing copy go through `transfer`; values and shardings are right
    on every route, and a deleted input is a TransferError."""
    from mpmd.runtime import transfers  # noqa: PLC0415

    train, generate = meshes()
    source = NamedSharding(Mesh(np.array(jax.devices()[:2]), ("x",)),
                           P("x"))
    target = NamedSharding(Mesh(np.array(jax.devices()[2:4]), ("x",)),
                           P("x"))
    checks = []
    real_same_layout = transfers.same_layout
    monkeypatch.setattr(transfers, "same_layout", lambda *a: checks.append(
        a) or real_same_layout(*a))
    mover = transfers.Mover(target)
    for i in range(3):
        x = jax.device_put(jnp.arange(8.0) + i, source)
        moved = mover(x, target)
        assert moved.sharding == target and not x.is_deleted()
        np.testing.assert_array_equal(moved, np.arange(8.0) + i)
    assert len(checks) == 1  # decided at the first call only
    assert mover._fast
    # Another layout: transfer's route.
    other = transfers.Mover(NamedSharding(generate, P(None, "x")))
    w = jax.device_put(jnp.arange(16.0).reshape(4, 4),
                       NamedSharding(train, P("data", "model")))
    np.testing.assert_array_equal(other(w), np.arange(16.0).reshape(4, 4))
    assert not other._fast
    keys = jax.device_put(jax.random.split(jax.random.key(1), 2), source)
    np.testing.assert_array_equal(
        jax.random.key_data(transfers.Mover(target)(keys)),
        jax.random.key_data(keys))
    # A copy that fails falls back to transfer, which names the problem.
    gone = jax.device_put(jnp.ones(8), source)
    gone.delete()
    with pytest.raises(transfers.TransferError, match="deleted"):
        mover(gone)

    def broken(*_args):
        raise RuntimeError("no copy")

    monkeypatch.setattr(transfers, "_COPY", broken)
    x = jax.device_put(jnp.arange(8.0), source)
    np.testing.assert_array_equal(mover(x), np.arange(8.0))
