"""What Shardy:MPMD's own test suite asks of its API, kept here as our
tests: its `mpmd_*` keywords, the words of its errors (inside ours) and
their Python classes, numpy inputs to its loops, layouts stated on the
abstract `config.sharding_mesh`, and named computations under plain
`jax.jit` lowered as functions of their own."""

from __future__ import annotations

import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import mpmd
from mpmd import pipeline_registry
from mpmd.config import SHARDY_OPTIONS


def meshes(count: int = 2) -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(count, -1)
    return {f"m{i + 1}": jax.sharding.Mesh(devices[i], ("x",))
            for i in range(count)}


def two_stages(w1, w2, x):
    h = mpmd.named_computation(lambda x, w: x @ w, name="stage1")(x, w1)
    return mpmd.named_computation(lambda h, w: h @ w, name="stage2")(h, w2)


# --- PartitioningOptions with Shardy's keywords --------------------------------

_BOOLEAN_KEYS = sorted(k for k in SHARDY_OPTIONS
                       if k != "mpmd_pipeline_schedule")


@pytest.mark.parametrize("key", _BOOLEAN_KEYS)
@pytest.mark.parametrize("value", [True, False])
def test_every_boolean_shardy_keyword(key, value):
    target = SHARDY_OPTIONS[key]
    if target == "unsupported" and value:
        with pytest.raises(mpmd.ConfigError, match="not supported yet"):
            mpmd.PartitioningOptions(**{key: value})
        return
    if key == "mpmd_merge_remat_fragments" and value:
        # Fusing recomputed forwards needs them recomputed.
        options = mpmd.PartitioningOptions(mpmd_fragment_remat=True,
                                           **{key: value})
    else:
        options = mpmd.PartitioningOptions(**{key: value})
    if target not in (None, "unsupported"):
        assert getattr(options, target) is value
        assert options[key] is value
    mpmd.make_config(meshes(), {}, partitioning_options=options)


@pytest.mark.parametrize("name, ours", [
    ("None", None), ("1F1B", "1f1b"), ("GPipe", "gpipe"),
    ("ZeroBubbleH1", "zero-bubble-h1")])
def test_shardy_schedule_keyword_names_a_builtin(name, ours):
    options = mpmd.PartitioningOptions(mpmd_pipeline_schedule=name)
    assert options.pipeline_schedule == ours


@pytest.mark.parametrize("name, registry", [
    ("Circular", "CIRCULAR"),
    ("CircularWithReversedBackward", "CIRCULAR_WITH_REVERSED_BACKWARD"),
    ("GPipeBut1F1BForLastMesh", "GPIPE_BUT_1F1B_FOR_LAST_MESH"),
    ("ZeroBubbleH2ZeroTxLatency", "ZERO_BUBBLE_H2_ZERO_TX_LATENCY"),
    ("ZeroBubbleH2HalfTxLatency", "ZERO_BUBBLE_H2_HALF_TX_LATENCY"),
    ("ZeroBubbleH2FullTxLatency", "ZERO_BUBBLE_H2_FULL_TX_LATENCY"),
    ("ParallelPipelinesWithWrapAround",
     "PARALLEL_PIPELINES_WITH_WRAP_AROUND")])
def test_shardy_schedule_keyword_names_a_registry_schedule(name, registry):
    options = mpmd.PartitioningOptions(mpmd_pipeline_schedule=name)
    assert options.pipeline_schedule is \
        pipeline_registry.get_pipeline_schedule(registry)


def test_partitioning_options_keyword_errors():
    with pytest.raises(ValueError, match=r"`PartitioningOptions\(...\)` "
                       r"contains unsupported options {'mpmd_nope'}: unknown "
                       r"partitioning option; valid: .*'infer_transfers'"):
        mpmd.PartitioningOptions(mpmd_nope=True)
    with pytest.raises(ValueError, match="Option mpmd_infer_transfers has "
                       "value None, which is not a boolean"):
        mpmd.PartitioningOptions(mpmd_infer_transfers=None)
    with pytest.raises(ValueError, match="Option mpmd_pipeline_schedule has "
                       "value INVALID, which is not a valid pipeline "
                       "schedule"):
        mpmd.PartitioningOptions(mpmd_pipeline_schedule="INVALID")
    with pytest.raises(ValueError, match="partitioning options set "
                       "'infer_transfers' twice"):
        mpmd.PartitioningOptions(infer_transfers=False,
                                 mpmd_infer_transfers=True)


def test_partitioning_options_keywords_reach_the_compiler():
    config = mpmd.make_config(
        meshes(), {"stage1": "m1", "stage2": "m2"},
        partitioning_options=mpmd.PartitioningOptions(
            mpmd_infer_transfers=True))
    assert config.partitioning_options.infer_transfers

    def f(x):
        x = mpmd.named_computation(lambda x: x + 1, name="stage1")(x)
        x = x + 1  # on both meshes: a transfer mesh inference adds
        y = mpmd.named_computation(lambda x: x + 1, name="stage2")(x)
        return x + y

    x = np.ones((4, 4), np.float32)
    lowered = mpmd.jit(f, config).lower(x)
    assert "mpmd.transfer" in lowered.as_text("mpmd")
    np.testing.assert_allclose(lowered.compile()(x), jax.jit(f)(x))


def test_schedule_given_as_option_and_as_registry_schedule():
    # Shardy's test suite gives both; they name one schedule.
    schedule = pipeline_registry.get_pipeline_schedule(
        "CIRCULAR_WITH_REVERSED_BACKWARD")
    config = mpmd.make_config(
        meshes(), {"stage1": "m1", "stage2": "m2"},
        partitioning_options=mpmd.PartitioningOptions(
            mpmd_pipeline_schedule="CircularWithReversedBackward"),
        pipeline_schedule=schedule)
    assert config.pipeline_schedule is schedule
    with pytest.raises(ValueError, match="given twice"):
        mpmd.make_config(
            meshes(), {"stage1": "m1", "stage2": "m2"},
            partitioning_options=mpmd.PartitioningOptions(
                mpmd_pipeline_schedule="GPipe"),
            pipeline_schedule=schedule)


# --- make_config, mesh_names and option merging: Shardy's words ----------------

def test_make_config_messages():
    topology = meshes()
    with pytest.raises(ValueError, match="`topology` must have at least one "
                       "mesh"):
        mpmd.make_config({}, {})
    with pytest.raises(ValueError, match=r"m@1 uses one of the reserved "
                       r"substrings \({'@'}\)"):
        mpmd.make_config({"m@1": topology["m1"]}, {})
    for kind in ("pinned_host", "device"):
        with pytest.raises(ValueError, match="reserved for memory_kinds"):
            mpmd.make_config({f"m#{kind}": topology["m1"]}, {})
    with pytest.raises(ValueError, match=r"Invalid mesh name\(s\): "
                       r"{'m3', 'nope'} not in the topology's meshes "
                       r"\['m1', 'm2'\] \(assignment\['a'\] names 'nope', "
                       r"assignment\['c'\] names 'm3'\)"):
        mpmd.make_config(topology, {"a": "nope", "b": "m1#pinned_host",
                                    "c": ("m3", 1), "d": "nope"})
    with pytest.raises(ValueError, match=r"Invalid mesh name\(s\) in "
                       r"input_mesh_assignment: {'m9'} not in"):
        mpmd.make_config(topology, {}, input_mesh_assignment=("m9#device",))
    with pytest.raises(ValueError, match=r"Invalid mesh name\(s\) in "
                       r"output_mesh_assignment: {'m9'} not in"):
        mpmd.make_config(topology, {}, output_mesh_assignment=("m1", "m9"))
    with pytest.raises(ValueError, match="Stage ids must be positive "
                       "integers, but got: -1,-2. Stages are integers >= 0"):
        mpmd.make_config(topology, {},
                         name_to_stage_assignment={"a": -1, "b": -2})


def test_mesh_names_messages():
    with pytest.raises(ValueError, match="Mesh .* with devices "):
        mpmd.mesh_names(jax.sharding.Mesh(jax.devices(), ("x",)), meshes())
    with pytest.raises(ValueError, match="Unexpected type: <class 'str'>"):
        mpmd.mesh_names("x", meshes())


def test_merging_required_options_logs_and_refuses_conflicts(caplog):
    merge = mpmd.validate_and_merge_partitioning_options
    with caplog.at_level(logging.WARNING, logger="mpmd"):
        merged = merge({"mpmd_infer_transfers": True}, None)
    assert merged == {"mpmd_infer_transfers": True}
    assert any("mpmd_infer_transfers" in r.getMessage()
               and "required by pipeline schedule" in r.getMessage()
               for r in caplog.records)
    with pytest.raises(ValueError, match=r"(?s)Conflicting partitioning "
                       r"options detected:.*mpmd_pipeline_schedule.*"
                       r"pipeline schedule requires 1F1B.*user specified "
                       r"GPipe"):
        merge({"mpmd_pipeline_schedule": "1F1B"},
              {"mpmd_pipeline_schedule": "GPipe"})


# --- assignments: errors of Shardy's compiler are RuntimeErrors too -----------

def test_unassigned_top_level_computation():
    config = mpmd.make_config(meshes(), {"stage1": "m1"})
    w, x = np.ones((4, 4), np.float32), np.ones((2, 4), np.float32)
    with pytest.raises(RuntimeError, match="Top-level NamedComputation "
                       "'stage2' is not assigned to a mesh in the "
                       "user-defined named-to-mesh assignment") as raised:
        mpmd.jit(two_stages, config).lower(w, w, x)
    assert isinstance(raised.value, mpmd.AssignmentError)
    assert isinstance(raised.value, mpmd.ConfigError)
    assert isinstance(raised.value, ValueError)


def nested(w1, w2, x):
    inner = mpmd.named_computation(lambda a: a @ w2, name="inner")
    return mpmd.named_computation(lambda a: inner(a @ w1), name="outer")(x)


def test_nested_computation_left_out_runs_in_its_parent():
    config = mpmd.make_config(meshes(), {"outer": "m2"})
    args = (np.ones((4, 4), np.float32),) * 2 + (np.ones((2, 4), np.float32),)
    lowered = mpmd.jit(nested, config).lower(*args)
    assert lowered.as_text("mpmd").count("fragment_call") == 1
    np.testing.assert_allclose(lowered.compile()(*args),
                               jax.jit(nested)(*args))


def test_nested_computation_on_another_mesh():
    config = mpmd.make_config(meshes(), {"outer": "m1", "inner": "m2"})
    args = (np.ones((4, 4), np.float32),) * 2 + (np.ones((2, 4), np.float32),)
    with pytest.raises(RuntimeError, match="NamedComputation 'inner' is "
                       "nested in a NamedComputation 'outer' which has a "
                       "different mesh or stage assignment: 'inner' is "
                       "assigned to 'm2', 'outer' to 'm1'") as raised:
        mpmd.jit(nested, config).lower(*args)
    assert isinstance(raised.value, mpmd.AssignmentError)
    staged = mpmd.make_config(meshes(), {"outer": ("m1", 0),
                                         "inner": ("m1", 1)})
    with pytest.raises(mpmd.AssignmentError, match=r"'inner' is assigned "
                       r"to 'm1' \(stage 1\), 'outer' to 'm1' \(stage 0\)"):
        mpmd.jit(nested, staged).lower(*args)


# --- names, counters, jit keywords -------------------------------------------

def test_reserved_computation_names():
    with pytest.raises(ValueError, match="computation names that start with "
                       "`partir.` are reserved for the compiler"):
        mpmd.named_computation(jnp.add, name="partir.foo")
    with pytest.raises(mpmd.InvalidNameError, match='not allowed to have '
                       '"main" as their name'):
        mpmd.named_computation(jnp.add, name="main")
    # Anything else goes, as before.
    mpmd.named_computation(jnp.add, name="partir")
    mpmd.named_computation(jnp.add, name="layer 1 (main)")


def test_negative_call_counter():
    with pytest.raises(ValueError, match="call_counter must be non-negative, "
                       "got call_counter=-1 instead"):
        mpmd.call(lambda x: x, call_counter=-1)
    with pytest.raises(mpmd.InvalidCallCounterError, match="it is a ui32"):
        mpmd.call(lambda x: x, call_counter=2**32)


def test_donate_argnums_none():
    config = mpmd.make_config(meshes(), {"stage1": "m1"})

    def f(x, y):
        return mpmd.named_computation(jnp.add, name="stage1")(x, y)

    function = mpmd.jit(f, config, donate_argnums=None)
    assert function.donate_argnums == ()
    assert float(function(1.0, 2.0)) == 3.0


def test_committed_array_off_the_topology_names_lowering_args():
    topology = meshes()
    config = mpmd.make_config(topology, {})
    other = jax.sharding.Mesh(jax.devices(), ("x",))
    x = jax.device_put(np.ones((8, 2), np.float32),
                       NamedSharding(other, P()))
    with pytest.raises(mpmd.ShardingError, match=r"argument x: the array's "
                       r"sharding \(lowering_args\) is a NamedSharding on mesh "
                       r"<x=8> .* which is not in the topology"):
        mpmd.jit(lambda x: x, config).lower(x)


# --- frontend errors are ValueErrors; loops ---------------------------------

def test_frontend_errors_are_value_errors():
    assert issubclass(mpmd.FrontendError, ValueError)
    assert issubclass(mpmd.FrontendError, mpmd.MpmdError)


@pytest.mark.parametrize("unroll", [True, False])
def test_enumerated_for_messages(unroll):
    def run(init, inputs):
        return mpmd.enumerated_for(lambda c, _, x: c, init, inputs,
                                   unroll=unroll)

    with pytest.raises(ValueError, match=r"Expected all leaves of the "
                       r"`inputs` tree to be Sequences. Got leaf at path \(\) "
                       r"of type <class 'float'>"):
        run(0.0, 1.0)
    with pytest.raises(ValueError, match=r"Expected all leaves of the "
                       r"`inputs` tree to be sequences of arrays. Got leaf at "
                       r"path \[0\]"):
        run(0.0, ["a"])
    with pytest.raises(ValueError, match="Expected all leaves of the "
                       "`inputs` tree to be lists of the same length. Got "
                       "list lengths: {3, 4}"):
        run(0.0, {"a": [1.0] * 3, "b": [1.0] * 4})
    with pytest.raises(mpmd.FrontendError, match="no lists to iterate"):
        run(0.0, {})


@pytest.mark.parametrize("unroll", [True, False])
def test_enumerated_for_numpy_carry(unroll):
    def body(carry, i, mb):
        return {"c": carry["c"].at[i].set(mb["a"] + mb["b"])}

    carry = {"c": np.zeros(3)}
    inputs = {"a": [1.0, 2.0, 3.0], "b": (4.0, 5.0, 6.0)}
    result = mpmd.enumerated_for(body, carry, inputs, unroll=unroll)
    np.testing.assert_allclose(result["c"], [5.0, 7.0, 9.0])
    nested_lists = mpmd.enumerated_for(
        lambda c, i, mb: c.at[i].set(mb[0] + mb[1]), np.zeros(3),
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], unroll=unroll)
    np.testing.assert_allclose(nested_lists, [5.0, 7.0, 9.0])


def test_fori_loop_carry_must_keep_its_type():
    init = np.zeros((1, 1), np.float32)
    with pytest.raises(ValueError, match="Input and output avals must "
                       r"match. Got float32\[1, 1\] and int32\[\] "
                       "respectively"):
        mpmd.fori_loop(2, lambda i, x: i, init)
    with pytest.raises(ValueError, match="Tree structs of init_val and the "
                       "result of the fori_loop must match"):
        mpmd.fori_loop(2, lambda i, x: (x, x), init)
    # Python objects a loop may carry unrolled are not typed.
    assert mpmd.fori_loop(2, lambda i, s: s + "a", "") == "aa"

    config = mpmd.make_config(meshes(), {"stage1": "m1"})

    def traced(x):
        return mpmd.fori_loop(2, lambda i, c: c.astype(jnp.int32), x)

    with pytest.raises(mpmd.FrontendError, match="Input and output avals "
                       "must match"):
        mpmd.jit(traced, config).lower(init)


# --- layouts on the abstract sharding mesh --------------------------------------

def test_in_and_out_shardings_on_the_abstract_mesh():
    topology = meshes()
    config = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"})
    on_x = NamedSharding(config.sharding_mesh, P("x"))
    args = (np.ones((4, 4), np.float32), np.ones((4, 4), np.float32),
            np.arange(32, dtype=np.float32).reshape(8, 4))
    function = mpmd.jit(two_stages, config, in_shardings=(None, None, on_x),
                        out_shardings=on_x)
    lowered = function.lower(*args)
    specs = lowered.function_named_shardings
    # The meshes come from mesh inference, the layouts from the shardings.
    assert specs.input_specs[2] == NamedSharding(topology["m1"], P("x"))
    assert specs.output_specs == NamedSharding(topology["m2"], P("x"))
    assert lowered.function_mesh_assignment.input_meshes == ("m1", "m2",
                                                             "m1")
    np.testing.assert_allclose(function(*args), jax.jit(two_stages)(*args))


def test_abstract_mesh_layout_errors():
    topology = meshes()
    config = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"},
                              input_mesh_assignment=(None, None, "m1"))
    args = (np.ones((4, 4), np.float32),) * 2 + (np.ones((8, 4), np.float32),)
    other = jax.sharding.AbstractMesh((2,), ("y",))
    with pytest.raises(mpmd.ShardingError, match=r"argument x: in_shardings "
                       r"gives a NamedSharding on an abstract mesh with axes "
                       r"{'y': 2}, but the value is on mesh 'm1', whose axes "
                       r"are {'x': 4}"):
        mpmd.jit(two_stages, config, in_shardings=(
            None, None, NamedSharding(other, P("y")))).lower(*args)
    # Checked on the abstract mesh before mesh inference places the value.
    unplaced = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"})
    with pytest.raises(mpmd.ShardingError, match=r"result: dimension 0 "
                       r"\(size 6\) is not divisible by 4"):
        mpmd.jit(lambda x: x, unplaced, out_shardings=NamedSharding(
            config.sharding_mesh, P("x"))).lower(np.ones((6,), np.float32))


# --- named computations under plain jax.jit ----------------------------------

def test_plain_jit_lowers_a_named_computation_as_a_function():
    @mpmd.named_computation(name="x", static_argnames="config")
    def static(x, config):
        with jax.named_scope("scope"):
            return x * config

    @mpmd.named_computation(name="x")
    def dynamic(x, config):
        return x * config

    x = jnp.ones(10)
    text = jax.jit(static, static_argnames="config").lower(x, 10).as_text(
        debug_info=True)
    header = re.search(r"func\.func private @named_computation_x\(.*", text)
    assert header is not None and "%arg0" in header.group(0)
    assert "%arg1" not in header.group(0)
    assert "x/scope/mul" in text
    text = jax.jit(dynamic, static_argnames="config").lower(x, 10).as_text()
    header = re.search(r"func\.func private @named_computation_x\(.*", text)
    assert header is not None and "%arg1" in header.group(0)
    assert float(jax.jit(static, static_argnames="config")(x, 3)[0]) == 3.0


# --- a topology of abstract meshes lowers without devices ------------------------

def test_abstract_topology_lowers_and_refuses_to_compile():
    shape = jax.sharding.AbstractMesh((4,), ("x",))
    topology = {"m1": shape, "m2": jax.sharding.AbstractMesh((4,), ("x",))}
    config = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"})
    assert config.sharding_mesh == shape
    args = (np.ones((4, 4), np.float32),) * 2 + (np.ones((8, 4), np.float32),)
    function = mpmd.jit(two_stages, config, in_shardings=(
        None, None, NamedSharding(topology["m1"], P("x"))))
    lowered = function.lower(*args)
    assert "mpmd.fragment_call" in lowered.as_text("mpmd")
    assignment = lowered.function_mesh_assignment
    assert assignment.input_meshes == ("m1", "m2", "m1")
    assert assignment.output_meshes == "m2"
    assert lowered.function_named_shardings.input_specs[2].spec == P("x")
    for what, action in (("compile", lowered.compile),
                         ("estimate costs", lowered.cost_analysis),
                         ("compile", lambda: function(*args))):
        with pytest.raises(mpmd.ConfigError, match=re.escape(
                f"cannot {what}: the topology's meshes ['m1', 'm2'] are "
                "jax.sharding.AbstractMesh, which have no devices")):
            action()
    # Equal abstract meshes may be one object: a sharding on it names no
    # mesh of the two.
    shared = topology["m1"] is topology["m2"]
    assert mpmd.mesh_names(NamedSharding(shape, P()), topology) == (
        None if shared else "m1")
    unique = {"m1": jax.sharding.AbstractMesh((2,), ("y",)), "m2": shape}
    assert mpmd.mesh_names(unique["m1"], unique) == "m1"
