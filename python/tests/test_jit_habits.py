"""Habits of `jax.jit` that `mpmd.jit` keeps: a compiled step called with
another pytree than it was lowered for names the paths that differ; a typo
in an option or a malformed assignment names the argument and the key; and
one rule for arrays committed to devices outside the topology (moved like
host data, at lowering and at call time, single-device or sharded)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
from mpmd import arguments


def topology() -> dict[str, Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    return {"m0": Mesh(devices[0], ("x",)), "m1": Mesh(devices[1], ("x",))}


def config() -> mpmd.MpmdConfig:
    return mpmd.make_config(topology(), {"a": "m0", "b": "m1"})


def step(params, x):
    h = mpmd.named_computation(lambda p, x: jnp.tanh(x @ p["w1"]),
                               name="a")(params, x)
    return mpmd.named_computation(lambda h, p: h @ p["w2"], name="b")(
        h, params)


def params() -> dict[str, jax.Array]:
    key1, key2 = jax.random.split(jax.random.PRNGKey(0))
    return {"w1": jax.random.normal(key1, (4, 4)),
            "w2": jax.random.normal(key2, (4, 4))}


X = np.linspace(0.0, 1.0, 8, dtype=np.float32).reshape(2, 4)


@pytest.fixture(scope="module")
def compiled():
    return mpmd.jit(step, config()).lower(params(), X).compile()


# --- 1. a call whose pytree is not the lowered one -------------------------

def test_the_lowered_pytree_runs(compiled):
    np.testing.assert_allclose(compiled(params(), X),
                               jax.jit(step)(params(), X), rtol=1e-6)


def test_missing_key_is_named(compiled):
    p = params()
    with pytest.raises(mpmd.InputError, match=r"'step' was called with "
                       r"arguments whose pytree differs from the one it was "
                       r"lowered for \(Lowered.in_tree\):\n  \* missing: "
                       r"params\['w2'\] \(float32\[4,4\]\)"):
        compiled({"w1": p["w1"]}, X)


def test_extra_key_is_named(compiled):
    p = dict(params(), w3=jnp.ones(3))
    with pytest.raises(mpmd.InputError,
                       match=r"\* extra: params\['w3'\] \(float32\[3\]\)")\
            as raised:
        compiled(p, X)
    assert "missing" not in str(raised.value)


def test_renamed_key_with_the_same_leaf_count_is_refused(compiled):
    # Before: the two leaves ran in the lowered order, w3 as w2.
    p = params()
    with pytest.raises(mpmd.InputError, match=r"missing: params\['w2'\] .*"
                       r"\n  \* extra: params\['w3'\]"):
        compiled({"w1": p["w1"], "w3": p["w2"]}, X)


def test_another_container_with_the_same_leaf_count_is_refused(compiled):
    p = params()
    with pytest.raises(mpmd.InputError, match=r"another type: params is a "
                       r"tuple of 2, lowered as a dict with keys "
                       r"\{'w1', 'w2'\}"):
        compiled((p["w1"], p["w2"]), X)


def test_swapped_arguments_are_refused(compiled):
    with pytest.raises(mpmd.InputError, match=r"another type: params is "
                       r"float32\[2,4\], lowered as a dict with keys "
                       r"\{'w1', 'w2'\}; x is a dict with keys "
                       r"\{'w1', 'w2'\}, lowered as float32\[2,4\]"):
        compiled(X, params())


def test_wrong_shape_is_named(compiled):
    p = dict(params(), w1=jnp.ones((4, 5)))
    with pytest.raises(mpmd.InputError, match=r"argument params\['w1'\] has "
                       r"shape \(4, 5\) and dtype float32, but the program "
                       r"was lowered for shape \(4, 4\)"):
        compiled(p, X)


def test_wrong_dtype_is_named(compiled):
    p = dict(params(), w2=jnp.ones((4, 4), jnp.int32))
    with pytest.raises(mpmd.InputError, match=r"argument params\['w2'\] has "
                       r"shape \(4, 4\) and dtype int32, but the program was "
                       r"lowered for shape \(4, 4\) and dtype float32"):
        compiled(p, X)


def test_structure_is_reported_before_shapes(compiled):
    p = {"w1": jnp.ones((4, 5))}
    with pytest.raises(mpmd.InputError, match=r"missing: params\['w2'\] .*"
                       r"\n  \* another shape or dtype: params\['w1'\] is "
                       r"float32\[4,5\], lowered for float32\[4,4\]"):
        compiled(p, X)


def test_keyword_instead_of_positional_is_named(compiled):
    with pytest.raises(mpmd.InputError, match=r"missing: x .*\n.*extra: x "
                       r".*\n.*passed another way: x is passed as a keyword "
                       r"argument but was lowered as a positional one"):
        compiled(params(), x=X)


def test_keyword_arguments_are_compared_by_name():
    compiled = mpmd.jit(step, config()).lower(params(), x=X).compile()
    np.testing.assert_allclose(compiled(params(), x=X),
                               jax.jit(step)(params(), X), rtol=1e-6)
    with pytest.raises(mpmd.InputError, match=r"missing: x \(float32\[2,4\]\)"
                       r"\n  \* extra: args\[1\] \(float32\[2,4\]\)"):
        compiled(params(), X)
    with pytest.raises(mpmd.InputError, match=r"another type: x is None, "
                       r"lowered as float32\[2,4\]"):
        compiled(params(), x=None)


def test_placed_arguments_of_another_pytree_take_no_fast_path(compiled):
    # Arrays already on their meshes, in another container of as many
    # leaves: the fast path (no check beyond the leaves) must not run them.
    shardings = compiled.lowered.function_named_shardings.inputs
    placed = jax.device_put(params(), shardings[0])
    x = jax.device_put(X, shardings[1])
    np.testing.assert_allclose(compiled(placed, x),
                               jax.jit(step)(params(), X), rtol=1e-6)
    with pytest.raises(mpmd.InputError, match=r"params is a list of 2"):
        compiled([placed["w1"], placed["w2"]], x)


def _describe(lowered_args, given_args, paths):
    tree = jax.tree_util.tree_structure((lowered_args, {}))
    specs = [(leaf.shape, leaf.dtype)
             for leaf in jax.tree_util.tree_leaves(lowered_args)]
    return arguments.describe_mismatch(tree, (given_args, {}), paths, specs,
                                       function="f")


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: jax.Array
    activation: str = dataclasses.field(metadata={"static": True},
                                        default="tanh")


class Strict:
    """A pytree node that cannot be rebuilt from stand-in leaves."""

    def __init__(self, w):
        if not hasattr(w, "shape"):
            raise TypeError("w must be an array")
        self.w = w


jax.tree_util.register_pytree_node(Strict, lambda s: ((s.w,), None),
                                   lambda _, children: Strict(*children))


def test_custom_nodes_are_compared():
    w = jnp.ones(2)
    assert ("layer is a Layer whose static fields (pytree auxiliary data) "
            "('relu',) differ from the lowered ('tanh',)") in _describe(
                (Layer(w),), (Layer(w, "relu"),), ["layer.w"])
    assert "layer is a dict with keys {'w'}, lowered as a Layer" in \
        _describe((Layer(w),), ({"w": w},), ["layer.w"])
    # Without stand-in leaves: the two trees.
    assert "the arguments are laid out as PyTreeDef(((CustomNode(Strict" in \
        _describe((Strict(w),), (Strict(w), w), ["s.w"])


def test_long_lists_are_cut():
    w = jnp.ones(2)
    text = _describe(([w] * 20,), ([w],), [f"xs[{i}]" for i in range(20)])
    assert "missing: xs[1] (float32[2]); xs[2]" in text
    assert "xs[8] (float32[2]); and 11 more" in text


# --- 2. option typos and malformed assignments -------------------------------

def test_option_typo_in_the_dict_names_partitioning_options():
    with pytest.raises(mpmd.ConfigError, match=r"`partitioning_options` "
                       r"contains unsupported options \{'pipline_schedule'\}: "
                       r"unknown partitioning option \('pipline_schedule': "
                       r"did you mean 'pipeline_schedule'\?\); valid: "
                       r"\[.*'pipeline_schedule'.*\] or Shardy's "
                       r"\[.*'mpmd_pipeline_schedule'.*\]"):
        mpmd.make_config(topology(), {"a": "m0"},
                         partitioning_options={"pipline_schedule": "1f1b"})


def test_option_typo_in_partitioning_options_names_the_class():
    with pytest.raises(mpmd.ConfigError, match=r"`PartitioningOptions\(...\)` "
                       r"contains unsupported options "
                       r"\{'mpmd_infer_transfer'\}: unknown partitioning "
                       r"option \('mpmd_infer_transfer': did you mean "
                       r"'mpmd_infer_transfers'\?\)"):
        mpmd.PartitioningOptions(mpmd_infer_transfer=True)


def test_option_far_from_any_key_gets_no_suggestion():
    with pytest.raises(mpmd.ConfigError, match=r"\{'zzz'\}: unknown "
                       r"partitioning option; valid: ") as raised:
        mpmd.make_config(topology(), {"a": "m0"},
                         partitioning_options={"zzz": True})
    assert "did you mean" not in str(raised.value)


def test_assignment_that_is_a_list_names_the_argument():
    with pytest.raises(mpmd.ConfigError, match=r"name_to_mesh_assignment is a "
                       r"list \(\['a', 'b'\]\); give a mapping"):
        mpmd.make_config(topology(), ["a", "b"])
    with pytest.raises(mpmd.ConfigError, match=r"^assignment is a list"):
        mpmd.make_config(topology(), assignment=["a", "b"])


@pytest.mark.parametrize("value, kind", [({"mesh": "m0"}, "dict"),
                                         ({"m0"}, "set"),
                                         (({"m0": 1}, 0), "dict")])
def test_assignment_value_that_is_a_dict_or_set_names_the_key(value, kind):
    with pytest.raises(mpmd.ConfigError,
                       match=rf"name_to_mesh_assignment\['a'\] is .*, which "
                       rf"holds a {kind}; give a mesh name"):
        mpmd.make_config(topology(), {"a": value, "b": "m1"})


# --- 3. arrays committed outside the topology --------------------------------

def outside_arrays(value: np.ndarray) -> dict[str, jax.Array]:
    """`value` on device 6 alone, and sharded over devices 4-7: both
    outside the meshes m0 (devices 0, 1) and m1 (devices 2, 3)."""
    other = Mesh(np.array(jax.devices()[4:8]), ("y",))
    return {"single": jax.device_put(value, jax.devices()[6]),
            "named": jax.device_put(value, NamedSharding(other, P(None, "y")))}


@pytest.mark.parametrize("kind", ["single", "named"])
def test_outside_array_lowers_as_host_data(kind):
    function = mpmd.jit(step, config())
    host = function.lower(params(), X)
    outside = function.lower(params(), outside_arrays(X)[kind])
    # Its layout is no fixed point: the program is the host data's.
    assert outside.as_text() == host.as_text()
    assert outside.sharding_text() == host.sharding_text()


@pytest.mark.parametrize("kind", ["single", "named"])
def test_outside_array_is_moved_at_call_time(kind, compiled):
    x = outside_arrays(X)[kind]
    result = compiled(params(), x)
    np.testing.assert_allclose(result, jax.jit(step)(params(), X),
                               rtol=1e-6)
    assert result.sharding.device_set <= set(topology()["m1"].devices.flat)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), X)


def test_outside_arrays_reuse_the_host_data_program():
    function = mpmd.jit(step, config())
    expected = jax.jit(step)(params(), X)
    for x in (X, *outside_arrays(X).values()):
        np.testing.assert_allclose(function(params(), x), expected,
                                   rtol=1e-6)
    # Lowered once: the outside arrays key as host data does.
    assert len({id(c) for c in function._cache.values()}) == 1


def test_donated_outside_array_is_copied_first():
    function = mpmd.jit(step, config(), donate_argnums=(1,))
    for x in outside_arrays(X).values():
        np.testing.assert_allclose(function(params(), x),
                                   jax.jit(step)(params(), X), rtol=1e-6)
        assert not x.is_deleted()


def test_outside_array_takes_the_input_mesh_assignment():
    # An assignment elsewhere than the data is no conflict: the array's
    # devices are not a topology mesh.
    conf = mpmd.make_config(topology(), {"a": "m0", "b": "m1"},
                            input_mesh_assignment=(None, "m1"))
    lowered = mpmd.jit(step, conf).lower(params(),
                                         outside_arrays(X)["named"])
    assert lowered.function_mesh_assignment.input_meshes[1] == "m1"


def test_array_on_topology_devices_but_no_topology_mesh_is_refused():
    # Devices 0-3 are the topology's, but not as one of its meshes.
    other = Mesh(np.array(jax.devices()[:4]), ("y",))
    x = jax.device_put(X, NamedSharding(other, P()))
    with pytest.raises(mpmd.ShardingError, match=r"argument x: the array's "
                       r"sharding \(lowering_args\) is a NamedSharding on "
                       r"mesh <y=4> on devices \[0, 1, 2, 3\], which is not "
                       r"in the topology"):
        mpmd.jit(step, config()).lower(params(), x)


# --- 4. typed PRNG keys ------------------------------------------------------

def keyed(key, x):
    """A typed key split on one mesh, each half used on its own mesh; the
    second half is returned (a key result)."""
    k1, k2 = jax.random.split(key)
    y = mpmd.named_computation(
        lambda k, x: x + jax.random.normal(k, x.shape), name="a")(k1, x)
    z = mpmd.named_computation(
        lambda k, y: y * jax.random.uniform(k, y.shape), name="b")(k2, y)
    return z, k2


def test_typed_keys_are_arguments_results_and_cross_meshes():
    key = jax.random.key(3)
    x = jnp.ones((2, 4))
    function = mpmd.jit(keyed, config())
    lowered = function.lower(key, x)
    # The program takes and returns the key's data; the user sees keys.
    assert lowered.plan.inputs[0].dtype == np.uint32
    (value, out_key), (expected, expected_key) = function(key, x), \
        jax.jit(keyed)(key, x)
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    assert jax.dtypes.issubdtype(out_key.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(jax.random.key_data(out_key),
                                  jax.random.key_data(expected_key))
    # The key that came back goes in again (placed, on its mesh).
    again, _ = function(out_key, x)
    np.testing.assert_allclose(again, jax.jit(keyed)(expected_key, x)[0],
                               rtol=1e-6)
    # Another key implementation is another signature.
    rbg = jax.random.key(3, impl="rbg")
    np.testing.assert_allclose(function(rbg, x)[0],
                               jax.jit(keyed)(rbg, x)[0], rtol=1e-6)


def test_a_raw_uint32_where_a_typed_key_was_lowered_is_refused():
    compiled = mpmd.jit(keyed, config()).lower(jax.random.key(0),
                                                jnp.ones((2, 4))).compile()
    with pytest.raises(mpmd.InputError, match=r"has shape \(2,\) and dtype "
                       r"uint32, but the program was lowered for shape \(\) "
                       r"and dtype key<fry>"):
        compiled(jax.random.key_data(jax.random.key(0)), jnp.ones((2, 4)))


# --- 5. JAX's tracing context is left alone ------------------------------------

_COUNT_TRACES = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
traces = []

@jax.jit
def sampler(x):
    traces.append(1)
    return jnp.sin(x) * 2

x = jnp.ones(4)
sampler(x)
import mpmd  # imported after the user's first jax.jit, on purpose
devices = np.array(jax.devices()[:4]).reshape(2, 2)
topology = {f"m{i}": jax.sharding.Mesh(devices[i], ("x",)) for i in range(2)}
config = mpmd.make_config(topology, {"a": "m0", "b": "m1"})

def step(x):
    y = mpmd.named_computation(lambda x: x * 2, name="a")(x)
    z = mpmd.fori_loop(0, 2, lambda i, c: c + mpmd.named_computation(
        lambda y: y + 1, name="b")(y), jnp.zeros_like(y))
    return z

mpmd.jit(step, config).lower(x).compile()(x)
sampler(x)
with mpmd.frontend.emit_named_computations():
    sampler(x)
print("traces", len(traces))
"""


def test_an_mpmd_lowering_retraces_no_jax_jit_function():
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    out = subprocess.run([sys.executable, "-c", _COUNT_TRACES],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "traces 1", out.stderr
