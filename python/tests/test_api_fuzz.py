"""The Python API's boundary, fuzzed: every odd value gets an mpmd error.

Generated topologies, assignments, partitioning options and argument
pytrees, well-formed and odd, go through `make_config` and `mpmd.jit(...)
.lower`. The property: it works, or it raises an `mpmd.MpmdError` (or, for
arguments, the error `jax.jit` itself gives for a value it cannot trace, a
`TypeError`), within the example's deadline, and the process survives.

`make test` runs a fixed seed and a bounded number of examples; set
`MPMD_API_FUZZ_EXAMPLES=N` for a longer run (`docs/fuzzing.md`).
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

import mpmd

SCALE = int(os.environ.get("MPMD_API_FUZZ_EXAMPLES", "0") or 0)
CONFIG_EXAMPLES = SCALE or 300
LOWER_EXAMPLES = max(SCALE // 10, 30) if SCALE else 30

DEVICES = np.array(jax.devices()[:4]).reshape(2, 2)
MESHES = {"m0": jax.sharding.Mesh(DEVICES[0], ("x",)),
          "m1": jax.sharding.Mesh(DEVICES[1], ("x",))}
NAMES = ["a", "b", "blocks", "m0", "", "main", "partir.x", "layer[0:2]"]

# Values of every kind a user might pass by mistake.
odd = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10), st.floats(allow_nan=True),
    st.text(max_size=6), st.just(np.bool_(True)), st.just(np.int64(2)),
    st.just(b"m0"), st.just(object()), st.just(len), st.just(1j),
    st.lists(st.sampled_from(["m0", "m1", 0, None]), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(0, 2), max_size=2),
    st.sets(st.sampled_from(["m0", "m1"]), max_size=2),
    st.tuples(st.sampled_from(["m0", "m1", "mx"]),
              st.one_of(st.integers(-2, 4), st.booleans(), st.text(max_size=2))),
)

def weighted(*choices):
    """One of the strategies, each as often as its weight says
    (`(weight, strategy)` pairs): well-formed values mostly, odd ones
    sometimes, so that the fuzz gets past the first check."""
    bag = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(bag).flatmap(lambda strategy: strategy)


def _stack_split(meshes, layers):
    """A StackSplit, or what made it fail (its own checks are tested
    apart): the meshes, as a list."""
    try:
        return mpmd.StackSplit(meshes, layers)
    except mpmd.ConfigError:
        return meshes


# Odd values that can be keys of a dict.
odd_keys = st.one_of(st.none(), st.booleans(), st.integers(-3, 10),
                     st.floats(allow_nan=False), st.text(max_size=6),
                     st.just(b"m0"), st.tuples(st.text(max_size=2)))

mesh_target = weighted(
    (6, st.sampled_from(["m0", "m1", "m0#pinned_host", "m1#device",
                         "auto"])),
    (3, st.tuples(st.sampled_from(["m0", "m1"]), st.integers(0, 3))),
    (2, st.lists(st.sampled_from(["m0", "m1"]), min_size=1, max_size=4)),
    (1, st.builds(_stack_split,
                  st.lists(st.sampled_from(["m0", "m1"]), min_size=2,
                           max_size=3),
                  st.one_of(st.none(), st.just("auto"),
                            st.lists(st.integers(0, 3), max_size=3)))),
    (2, odd),
)

assignments = weighted(
    (8, st.dictionaries(weighted((6, st.sampled_from(NAMES)),
                                 (1, odd_keys)), mesh_target, max_size=4)),
    (1, st.just("auto")), (1, odd))

OPTION_KEYS = ["infer_transfers", "infer_cross_mesh_reductions",
               "pipeline_schedule", "fragment_merge_rules",
               "merge_last_stage", "split_backward", "remat", "merge_remat",
               "offload_activations", "auto_memory_limit_bytes",
               "mpmd_infer_transfers", "mpmd_pipeline_schedule",
               "mpmd_split_bwd_fragments", "mpmd_fragment_remat",
               "mpmd_apply_merge_transfers_pass", "pipline_schedule"]
option_value = weighted(
    (3, st.booleans()),
    (2, st.sampled_from(["1f1b", "GPipe", "zero-bubble-v",
                         "interleaved-1f1b", "bogus", "None"])),
    (1, st.lists(st.tuples(st.sampled_from(["a", "b(1)"]),
                           st.sampled_from(["a", "b"])), max_size=2)),
    (1, st.just(lambda a, b: False)), (2, odd))
options = weighted(
    (3, st.none()),
    (6, st.dictionaries(st.sampled_from(OPTION_KEYS), option_value,
                        max_size=3)),
    (1, odd))
topologies = weighted(
    (8, st.just(MESHES)), (2, st.just({"m0": MESHES["m0"]})),
    (1, st.just({"m0": MESHES["m0"], "m1": MESHES["m0"]})),  # shared
    (1, st.dictionaries(st.one_of(st.text(max_size=3), odd_keys),
                        st.sampled_from([MESHES["m0"], None, 3]),
                        max_size=2)),
    (1, odd))


def _make(topology, assignment, partitioning_options, extra):
    return mpmd.make_config(topology, assignment,
                            partitioning_options=partitioning_options,
                            **extra)


extras = st.fixed_dictionaries({}, optional={
    "name_to_stage_assignment": st.one_of(
        st.dictionaries(st.sampled_from(NAMES), st.one_of(
            st.integers(-1, 3), odd), max_size=2), odd),
    "input_mesh_assignment": st.one_of(st.sampled_from(["m0", "m1"]), odd),
    "output_mesh_assignment": st.one_of(st.sampled_from(["m0", "m1"]), odd),
    "read_input_output_mesh_from_shardings": st.one_of(st.booleans(), odd),
    "pipeline_schedule": option_value,
})


@seed(31337)
@settings(max_examples=CONFIG_EXAMPLES, deadline=2000, database=None,
          suppress_health_check=list(HealthCheck))
@given(topologies, assignments, options, extras)
def test_make_config_works_or_raises_an_mpmd_error(topology, assignment,
                                                  partitioning_options,
                                                  extra):
    try:
        config = _make(topology, assignment, partitioning_options, extra)
    except mpmd.MpmdError as error:
        event(f"mpmd error: {type(error).__name__}")
        return
    event("config made")
    assert isinstance(config, mpmd.MpmdConfig)
    # A config that was made holds what its options say, typed.
    opts = config.partitioning_options
    for switch in ("infer_transfers", "infer_cross_mesh_reductions",
                   "merge_last_stage", "split_backward", "remat",
                   "merge_remat"):
        assert type(getattr(opts, switch)) is bool, switch
    rules = opts.fragment_merge_rules
    assert callable(rules) or all(
        isinstance(rule, tuple) and len(rule) == 2 for rule in rules)


def two_names(tree, x):
    """Uses every leaf of `tree` (summed into `x`), then two named
    computations."""
    def value(leaf):
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool,
                                 int, float)):
            return jnp.zeros(())  # a static non-array: nothing to add
        if jax.dtypes.issubdtype(jnp.result_type(leaf), jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        return jnp.sum(leaf).astype(jnp.float32)

    total = sum((value(leaf) for leaf in jax.tree.leaves(tree)),
                jnp.zeros(()))
    y = mpmd.named_computation(lambda x: x * 2.0 + total, name="a")(x)
    return mpmd.named_computation(lambda y: jnp.tanh(y), name="b")(y)


leaf_values = st.one_of(
    st.builds(lambda shape, dtype: np.ones(shape, dtype),
              st.lists(st.integers(1, 3), max_size=2).map(tuple),
              st.sampled_from([np.float32, np.int32, np.bool_, np.float16])),
    st.integers(-5, 5), st.floats(-2, 2), st.booleans(),
    st.just(jax.random.key(0)), st.just(jax.random.PRNGKey(0)),
    st.text(max_size=3), st.just(object()))
pytrees = st.recursive(
    leaf_values,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=3), children,
                        max_size=3),
        st.tuples(children, children)),
    max_leaves=6)


@seed(7)
@settings(max_examples=LOWER_EXAMPLES, deadline=20000, database=None,
          suppress_health_check=list(HealthCheck))
@given(pytrees, st.sampled_from([None, "1f1b", "gpipe"]),
       st.one_of(st.none(), st.sampled_from([0, (0,), (1,), "x", (0, 0)])))
def test_lower_works_or_raises_an_mpmd_error(tree, schedule, static):
    config = mpmd.make_config(MESHES, {"a": "m0", "b": "m1"},
                              pipeline_schedule=schedule)
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)
    try:
        function = mpmd.jit(two_names, config,
                            static_argnums=() if static is None else static)
        lowered = function.lower(tree, x)
    except mpmd.MpmdError as error:
        event(f"mpmd error: {type(error).__name__}")
        return
    except TypeError as error:
        # jax.jit's own refusal of an argument it cannot trace (a string,
        # an object), or of an unhashable static argument.
        assert "JAX type" in str(error) or "abstract array" in str(
            error) or "hashable" in str(error), error
        return
    except ValueError as error:  # jax.jit: a static argnum out of range
        assert "static_argnums" in str(error) or "argnum" in str(error), \
            error
        return
    event("lowered, compiled and run")
    compiled = lowered.compile()
    got = compiled(tree, x)
    reference = jax.jit(two_names, static_argnums=function.static_argnums)
    np.testing.assert_allclose(np.asarray(got),
                               np.asarray(reference(tree, x)),
                               rtol=1e-5, atol=1e-6)


# --- the cases of issue 37, each named -----------------------------------------

@pytest.mark.parametrize("options, message", [
    ({"infer_transfers": "yes"}, r"\['infer_transfers'\] is 'yes' of type "
     r"str; give True or False"),
    ({"merge_last_stage": "no"}, r"\['merge_last_stage'\] is 'no'"),
    ({"remat": 1.5}, r"\['remat'\] is 1.5 of type float"),
    ({"fragment_merge_rules": "x"}, r"\['fragment_merge_rules'\] is 'x' of "
     r"type str; give a list of \(label, label\) pairs"),
    ({"fragment_merge_rules": [("a",)]}, r"\('a',\) is not such a pair"),
    ({"split_backward": [1]}, r"\['split_backward'\] is \[1\] of type list"),
    ({"auto_memory_limit_bytes": 1.5}, r"give a number of bytes per mesh"),
    ({"offload_activations": {"a": 1}}, "offload_activations is"),
    (["x"], r"`partitioning_options` is \['x'\] of type list; give a "
     r"mapping"),
])
def test_options_of_the_wrong_type_name_the_option(options, message):
    with pytest.raises(mpmd.ConfigError, match=message):
        mpmd.make_config(MESHES, {"a": "m0"}, partitioning_options=options)


def test_numpy_bools_are_bools():
    config = mpmd.make_config(MESHES, {"a": "m0"}, partitioning_options={
        "remat": np.bool_(True), "infer_transfers": np.bool_(False)})
    assert config.partitioning_options.remat is True
    assert config.partitioning_options.infer_transfers is False
    assert mpmd.PartitioningOptions(merge_last_stage=np.bool_(True)) \
        .merge_last_stage is True


@pytest.mark.parametrize("call, message", [
    (lambda: mpmd.make_config([1, 2], {"a": "m0"}),
     r"`topology` is a list"),
    (lambda: mpmd.make_config(MESHES, {"a": ("m0", True)}),
     r"assignment\['a'\] has stage True"),
    (lambda: mpmd.make_config(MESHES, {"a": "m0"},
                              name_to_stage_assignment=["a"]),
     r"name_to_stage_assignment is a list"),
    (lambda: mpmd.make_config(MESHES, {"a": "m0"},
                              read_input_output_mesh_from_shardings="yes"),
     r"read_input_output_mesh_from_shardings is 'yes'"),
    # Found by the long fuzz run: the topology's names were sorted for a
    # stack split's message before they were checked.
    (lambda: mpmd.make_config({None: MESHES["m0"], "": MESHES["m1"]},
                              {"a": ["m0", "m0"]}),
     "mesh name None is not a valid name"),
    (lambda: mpmd.make_config(MESHES, {"layer": [["a"]]}),
     r"assignment\['layer'\]: a stack split lists meshes by name"),
    (lambda: mpmd.jit(3, mpmd.make_config(MESHES, {"a": "m0"})),
     "mpmd.jit partitions a function; got int"),
    (lambda: mpmd.jit(two_names, mpmd.make_config(MESHES, {"a": "m0"}),
                      static_argnums="a"),
     "static_argnums is 'a'; give an int or a sequence of ints"),
    (lambda: mpmd.jit(two_names, mpmd.make_config(MESHES, {"a": "m0"}),
                      donate_argnums=[True]),
     r"donate_argnums is \[True\]"),
])
def test_malformed_arguments_name_the_argument(call, message):
    with pytest.raises(mpmd.ConfigError, match=message):
        call()


def test_argnums_are_taken_as_jax_jit_takes_them():
    """An int (zero included), NumPy ints and sequences of them."""
    config = mpmd.make_config(MESHES, {"a": "m0"})
    for given, kept in ((0, (0,)), (np.int64(1), (1,)), ([0, 1], (0, 1)),
                        (None, ()), ((), ())):
        assert mpmd.jit(two_names, config,
                        donate_argnums=given).donate_argnums == kept
    assert mpmd.jit(two_names, config,
                    static_argnums=0).static_argnums == (0,)


def test_other_doors_name_the_argument():
    """The rest of the public API: each malformed argument is an mpmd
    error (a subclass of MpmdError) that names it."""
    from mpmd.runtime.fetch import FetchError  # noqa: PLC0415
    from mpmd.runtime.module import ModuleError  # noqa: PLC0415

    with pytest.raises(mpmd.MpmdError, match="static_argnames must be a "
                       "parameter name or a sequence of them, got 3"):
        mpmd.named_computation(lambda x: x, name="a", static_argnames=3)
    with pytest.raises(mpmd.MpmdError, match="spec must be a jax.sharding"
                       r".PartitionSpec or None, got 3"):
        mpmd.stack_sharding(MESHES, ["m0", "m1"], 3)
    with pytest.raises(mpmd.MpmdError, match="meshes must be a list of "
                       "mesh names, got 'm0'"):
        mpmd.stack_sharding(MESHES, "m0")
    with pytest.raises(mpmd.ConfigError, match="override_func_name must "
                       "be a str, got 3"):
        mpmd.jit(two_names, mpmd.make_config(MESHES, {"a": "m0"}),
                 override_func_name=3)
    with pytest.raises(ModuleError, match="source_name must be a str"):
        mpmd.runtime.compile_module("module {}", MESHES, source_name=3)
    with pytest.raises(mpmd.ConfigError, match="`pipeline_required_options`"
                       " is 3 of type int"):
        mpmd.validate_and_merge_partitioning_options(3, {})
    with pytest.raises(mpmd.ConfigError, match="`user_provided_options` is"):
        mpmd.validate_and_merge_partitioning_options({}, [1])
    for timeout in ("x", 0, -1.0, True, float("nan")):
        with pytest.raises(FetchError, match="timeout_s must be a positive"):
            mpmd.fetch(np.ones(2), timeout_s=timeout)
    np.testing.assert_array_equal(mpmd.fetch(np.ones(2), timeout_s=5),
                                  np.ones(2))


@pytest.mark.parametrize("kwargs, message", [
    ({"command": "train.py", "count": 2}, "command is 'train.py'"),
    ({"command": ["python"], "count": 0}, r"count \(the number of "
     r"processes\) is 0"),
    ({"command": ["python"], "count": 2, "devices": 0}, "devices"),
    ({"command": ["python"], "count": 2, "port": 70000}, "port is 70000"),
    ({"command": ["python"], "count": 2, "grace": -1}, "grace is -1"),
    ({"command": ["python"], "count": 2, "timeout": 0}, "timeout is 0"),
])
def test_launch_arguments_name_the_argument(kwargs, message):
    from mpmd.launch import LaunchError, launch  # noqa: PLC0415

    with pytest.raises(LaunchError, match=message):
        launch(**kwargs)
