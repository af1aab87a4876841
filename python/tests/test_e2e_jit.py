"""End to end: mpmd.jit lowers, compiles and runs on 8 CPU devices, with the
numbers of plain jax.jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.config import ConfigError, make_config
from mpmd.stages import InputError, jit


def meshes(count: int, axis: str = "x") -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(count, -1)
    return {f"m{i + 1}": jax.sharding.Mesh(devices[i], (axis,))
            for i in range(count)}


def rfc_step(x):
    c1 = mpmd.named_computation(lambda y: y + y, name="c1")(x)
    c2 = mpmd.named_computation(lambda y: y + y, name="c2")(c1)
    return c2


def test_rfc_snippet_matches_jax_jit():
    config = make_config(meshes(2), {"c1": "m1", "c2": "m2"})
    samples = jnp.ones((512, 512))
    lowered = jit(rfc_step, config).lower(samples)
    compiled = lowered.compile()
    placed = jax.device_put(samples, lowered.function_named_shardings.inputs[0])
    result = compiled(placed)
    np.testing.assert_array_equal(result, jax.jit(rfc_step)(samples))
    # The result lives on the second mesh; the transfer is in the plan.
    assert result.sharding.mesh.devices.tolist() == \
        config.topology["m2"].devices.tolist()
    assert "mpmd.transfer" in lowered.as_text()
    assert lowered.programs_by_mesh() == {"m1": ["p0_c1_fwd"],
                                          "m2": ["p1_c2_fwd"]}


def test_inputs_on_their_mesh_are_not_copied(monkeypatch):
    config = make_config(meshes(2), {"c1": "m1", "c2": "m2"})
    x = jnp.arange(16.0).reshape(4, 4)
    lowered = jit(rfc_step, config).lower(x)
    compiled = lowered.compile()
    placed = jax.device_put(x, lowered.function_named_shardings.inputs[0])
    calls = []
    original = jax.device_put
    monkeypatch.setattr(jax, "device_put",
                        lambda *a, **k: calls.append(a) or original(*a, **k))
    compiled(placed)
    assert not any(args[0] is placed for args in calls)
    host = np.asarray(x)
    compiled(host)  # a host array is moved to its mesh
    assert any(args[0] is host for args in calls)


def test_call_without_lower_caches_per_signature():
    config = make_config(meshes(2), {"c1": "m1", "c2": "m2"})
    fn = jit(rfc_step, config)
    a = fn(jnp.ones((4,)))
    b = fn(jnp.ones((4,)) * 2)
    c = fn(jnp.ones((2, 2)))
    np.testing.assert_array_equal(a, 4 * np.ones(4))
    np.testing.assert_array_equal(b, 8 * np.ones(4))
    assert c.shape == (2, 2)
    assert len(fn._cache) == 2


# Bad input: each raises an mpmd error naming the culprit.

def test_assignment_names_unknown_mesh():
    with pytest.raises(ConfigError, match=r"Invalid mesh name\(s\): {'m9'} "
                       r"not in the topology's meshes \['m1', 'm2'\] "
                       r"\(assignment\['c2'\] names 'm9'\)"):
        make_config(meshes(2), {"c1": "m1", "c2": "m9"})


def test_meshes_share_devices():
    devices = np.array(jax.devices()[:4])
    topology = {"a": jax.sharding.Mesh(devices, ("x",)),
                "b": jax.sharding.Mesh(devices[2:], ("x",))}
    with pytest.raises(ConfigError, match=r"meshes 'a' and 'b' share device 2"):
        make_config(topology, {})


def test_topology_value_must_be_a_mesh():
    with pytest.raises(ConfigError, match=r"topology\['m1'\] must be a jax.sharding.Mesh"):
        make_config({"m1": [0, 1]}, {})


def test_unknown_partitioning_option():
    with pytest.raises(ConfigError, match=r"`partitioning_options` contains "
                       r"unsupported options {'infer_everything'}: unknown "
                       r"partitioning option.*; valid: \[.*'infer_transfers'"):
        make_config(meshes(2), {}, partitioning_options={"infer_everything": True})


def test_name_assigned_to_no_mesh():
    config = make_config(meshes(2), {"c1": "m1"})
    with pytest.raises(ConfigError, match=r"Top-level NamedComputation 'c2' "
                       r"is not assigned to a mesh"):
        jit(rfc_step, config).lower(jnp.ones(4))


def test_wrong_shape_and_dtype_at_call_time():
    config = make_config(meshes(2), {"c1": "m1", "c2": "m2"})
    compiled = jit(rfc_step, config).lower(jnp.ones((4,))).compile()
    with pytest.raises(InputError, match=r"argument x has shape \(5,\) and dtype float32, but the program was lowered for shape \(4,\)"):
        compiled(jnp.ones((5,)))
    with pytest.raises(InputError, match=r"dtype int32"):
        compiled(jnp.ones((4,), jnp.int32))
    with pytest.raises(InputError, match=r"'rfc_step' was called with "
                       r"arguments whose pytree differs .*\n.* extra: "
                       r"args\[1\] \(float32\[4\]\)"):
        compiled(jnp.ones((4,)), jnp.ones((4,)))


def test_transfer_needed_without_permission_is_a_compiler_error():
    def step(x):
        a = mpmd.named_computation(lambda y: y * 2, name="a")(x)
        b = jnp.sin(a)  # nameless, between two meshes
        return mpmd.named_computation(lambda y: y + 1, name="b")(b)

    config = make_config(meshes(2), {"a": "m1", "b": "m2"})
    with pytest.raises(mpmd.CompilerError, match="needs a transfer that mesh inference may not add"):
        jit(step, config).lower(jnp.ones(4))
    allowed = make_config(meshes(2), {"a": "m1", "b": "m2"},
                          partitioning_options={"infer_transfers": True})
    x = jnp.arange(4.0)
    np.testing.assert_allclose(jit(step, allowed)(x), jax.jit(step)(x),
                               rtol=1e-6)


def test_chlo_ops_outside_named_computations():
    """The minimal form of what crashed the process: a CHLO op (jnp.square
    lowers to chlo.square) outside every named computation, over two
    meshes."""
    def f(x):
        y = mpmd.named_computation(lambda x: x * 2, name="a")(x)
        z = mpmd.named_computation(lambda y: y + 1, name="b")(y)
        return jnp.square(z).sum(), jax.scipy.special.erf(z)

    config = make_config(meshes(2), {"a": "m1", "b": "m2"})
    x = jnp.arange(8.0)
    for got, want in zip(jit(f, config)(x), jax.jit(f)(x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mesh", ["m2", "m1"])
def test_named_tensor_of_a_constant(mesh):
    # A constant pinned to a mesh by named_tensor and read there, or moved
    # to the other mesh (it used to fail with the internal "mpmd.assign
    # still used after mesh inference").
    def step(x):
        table = mpmd.named_tensor(jnp.arange(4.0), name="table")
        y = mpmd.named_computation(lambda x: x * 2, name="a")(x)
        return mpmd.named_computation(lambda y, t: y + t, name="b")(y, table)

    config = make_config(meshes(2), {"a": "m1", "b": "m2", "table": mesh})
    lowered = jit(step, config).lower(jnp.ones(4))
    x = jnp.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(lowered.compile()(x), jax.jit(step)(x))
    moves = [s for s in lowered.plan.steps if not hasattr(s, "program")]
    assert len(moves) == (1 if mesh == "m2" else 2)


@pytest.mark.parametrize("donate", [False, True])
def test_donated_parameters_are_reused_and_deleted(donate):
    import sys, os  # noqa: E401
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "examples"))
    import models

    config = make_config(meshes(2), {"stage0": "m1", "stage1": "m2"},
                         partitioning_options={"pipeline_schedule": "1f1b"})
    params = models.init_two_stage_mlp(jax.random.PRNGKey(0), 8, 16, 4)
    xs = jax.random.normal(jax.random.PRNGKey(1), (4, 4, 8))
    ys = jax.random.normal(jax.random.PRNGKey(2), (4, 4, 4))
    expected = jax.jit(models.two_stage_mlp_step)(params, xs, ys)
    step = jit(models.two_stage_mlp_step, config,
               donate_argnums=(0,) if donate else ())
    lowered = step.lower(params, xs, ys)
    shardings = lowered.function_named_shardings.inputs
    placed = jax.device_put(params, shardings[0])
    data = [jax.device_put(v, s) for v, s in zip((xs, ys), shardings[1:])]
    new_params, loss = lowered.compile()(placed, *data)
    np.testing.assert_allclose(loss, expected[1], rtol=1e-5)
    for got, want in zip(jax.tree.leaves(new_params),
                         jax.tree.leaves(expected[0])):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Donated parameters were consumed by the update that reads them last;
    # the data was not donated.
    assert all(leaf.is_deleted() == donate for leaf in jax.tree.leaves(placed))
    assert not any(d.is_deleted() for d in data)
    donated = sum(len(p.donated_args) for p in lowered.plan.programs.values())
    assert donated >= 1
    if donate:
        # Calling again with the consumed parameters is an error naming
        # the argument, not a crash.
        with pytest.raises(mpmd.errors.MpmdError, match=r"argument "
                           r"params\['stage0'\]\['w1'\] was deleted \(donated to an "
                           r"earlier call\?\)"):
            lowered.compile()(placed, *data)
