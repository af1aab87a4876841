"""Shardy:MPMD's spellings are ours too: make_config's signature and
option keys, jit's keywords, the ops, and the errors' base classes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.config import SHARDY_OPTIONS


def meshes(count: int = 2) -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(count, -1)
    return {f"m{i + 1}": jax.sharding.Mesh(devices[i], ("x",))
            for i in range(count)}


def two_stages(w1, w2, x):
    h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w), name="stage1")(
        w1, x)
    return mpmd.named_computation(lambda w, h: h @ w, name="stage2")(w2, h)


def test_make_config_with_shardys_signature():
    topology = meshes()
    config = mpmd.make_config(
        topology, {"stage1": "m1", "stage2": "m2"},
        name_to_stage_assignment={"stage1": 0, "stage2": 1},
        input_mesh_assignment=(), output_mesh_assignment=(),
        partitioning_options={"mpmd_pipeline_schedule": "1F1B",
                              "mpmd_infer_transfers": True,
                              "mpmd_split_bwd_fragments": False,
                              "mpmd_merge_inferred_after_scheduling": True,
                              "mpmd_assume_homogeneous_devices": True,
                              "mpmd_fragment_remat": False})
    assert config.assignment == {"stage1": ("m1", 0), "stage2": ("m2", 1)}
    assert config.name_to_mesh_assignment == {"stage1": "m1", "stage2": "m2"}
    assert config.name_to_stage_assignment == {"stage1": 0, "stage2": 1}
    assert config.mesh_and_stage_assignment == {"stage1": ("m1", 0),
                                                "stage2": ("m2", 1)}
    assert config.pipeline_schedule == "1f1b"
    assert config.partitioning_options.infer_transfers
    assert config.input_mesh_assignment is None
    assert config.sharding_mesh == topology["m1"].abstract_mesh


@pytest.mark.parametrize("options, message", [
    ({"mpmd_no_such_option": True}, "`partitioning_options` contains "
     "unsupported options {'mpmd_no_such_option'}: unknown partitioning "
     "option.*; valid: .*mpmd_infer_transfers"),
    ({"mpmd_infer_transfers": "yes"}, "Option mpmd_infer_transfers has value "
     "'yes', which is not a boolean"),
    ({"mpmd_pipeline_schedule": "Zigzag"}, "Option mpmd_pipeline_schedule "
     "has value Zigzag, which is not a valid pipeline schedule; give one of "
     "Shardy's names .*'1F1B'"),
    ({"mpmd_apply_merge_transfers_pass": True}, "not supported yet: "
     "partitioning option 'mpmd_apply_merge_transfers_pass' = True"),
    ({"mpmd_apply_merge_transfers_pass": True}, "not supported yet"),
    ({"mpmd_infer_transfers": True, "infer_transfers": False},
     "set 'infer_transfers' twice"),
])
def test_option_errors_are_value_errors(options, message):
    with pytest.raises(ValueError, match=message) as raised:
        mpmd.make_config(meshes(), {"stage1": "m1"},
                         partitioning_options=options)
    assert isinstance(raised.value, mpmd.ConfigError)


def test_every_shardy_option_is_known():
    # Shardy's MPMD_OPTIONS (partitioning_options.py).
    assert set(SHARDY_OPTIONS) == {
        "mpmd_infer_transfers", "mpmd_infer_cross_mesh_reductions",
        "mpmd_fragment_remat", "mpmd_merge_remat_fragments",
        "mpmd_split_bwd_fragments", "mpmd_assume_homogeneous_devices",
        "mpmd_absorb_inferred_fragments_on_entry_point_function",
        "mpmd_copy_constant_creation_from_producer_to_consumer",
        "mpmd_apply_merge_transfers_pass",
        "mpmd_merge_inferred_after_scheduling", "mpmd_pipeline_schedule"}


def test_config_errors():
    topology = meshes()
    with pytest.raises(ValueError, match="name_to_stage_assignment names "
                                         "'ghost'"):
        mpmd.make_config(topology, {"stage1": "m1"},
                         name_to_stage_assignment={"ghost": 0})
    with pytest.raises(ValueError, match="Stage ids must be positive "
                       "integers, but got: -1. Stages are integers >= 0"):
        mpmd.make_config(topology, {"stage1": "m1"},
                         name_to_stage_assignment={"stage1": -1})
    with pytest.raises(ValueError, match="must be empty when "
                                         "read_input_output_mesh_from_shardings"):
        mpmd.make_config(topology, {"stage1": "m1"},
                         input_mesh_assignment=("m1",),
                         read_input_output_mesh_from_shardings=True)
    # A mesh with a memory kind is for named tensors (whether "stage1" is
    # one is known at lowering: test_offload_activations.py); an unknown
    # kind is refused at once.
    assert mpmd.make_config(topology, {"stage1": "m1#pinned_host"}) \
        .name_to_mesh_assignment["stage1"] == "m1#pinned_host"
    with pytest.raises(ValueError, match="memory kind 'hbm' is not one of"):
        mpmd.make_config(topology, {"stage1": "m1#hbm"})
    with pytest.raises(ValueError, match="the pipeline schedule is given "
                                         "twice"):
        mpmd.make_config(topology, {"stage1": "m1"}, pipeline_schedule="gpipe",
                         partitioning_options={"mpmd_pipeline_schedule": "1F1B"})


def test_io_memory_kinds():
    # Shardy's "mesh#memory_kind" in the io assignments: the argument lives
    # in m1's pinned host memory, the result in m2's; the compiler moves
    # them to and from device memory around the programs that use them.
    topology = meshes()
    config = mpmd.make_config(
        topology, {"stage1": "m1", "stage2": "m2"},
        input_mesh_assignment=("m1#pinned_host", "m2#device", "m1"),
        output_mesh_assignment="m2#pinned_host")
    w1, w2 = jnp.ones((4, 8)) * 0.1, jnp.ones((8, 2)) * 0.2
    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    lowered = mpmd.jit(two_stages, config).lower(w1, w2, x)
    text = lowered.as_text("mpmd")
    assert ('%arg0: !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, '
            'memory_kind="pinned_host">') in text
    assert '%arg1: !mpmd.mesh_tensor<"m2", tensor<8x2xf32>>' in text
    assert lowered.plan.inputs[0].memory_kind == "pinned_host"
    assert lowered.plan.outputs[0].memory_kind == "pinned_host"
    assert lowered.function_mesh_assignment.input_meshes == ("m1", "m2", "m1")
    result = lowered.compile()(w1, w2, x)
    assert result.sharding.memory_kind == "pinned_host"
    assert result.sharding.mesh == topology["m2"]
    np.testing.assert_allclose(result, jax.jit(two_stages)(w1, w2, x),
                               rtol=1e-6)
    with pytest.raises(ValueError, match=r"input_mesh_assignment names "
                       r"'m1#hbm': 'hbm' is not a memory kind; use one of "
                       r"\['device', 'pinned_host', 'unpinned_host'\]"):
        mpmd.make_config(topology, {"stage1": "m1"},
                         input_mesh_assignment=("m1#hbm",))
    with pytest.raises(ValueError, match=r"Invalid mesh name\(s\) in "
                       r"output_mesh_assignment: {'m7'} not in the topology"):
        mpmd.make_config(topology, {"stage1": "m1"},
                         output_mesh_assignment="m7#pinned_host")


def test_partitioning_options_read_as_shardy_dict():
    topology = meshes()
    config = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"},
                              partitioning_options={
                                  "mpmd_infer_transfers": True,
                                  "mpmd_pipeline_schedule": "1F1B"})
    options = config.partitioning_options
    assert options["mpmd_infer_transfers"] is True
    assert options.get("mpmd_split_bwd_fragments") is False
    assert options["mpmd_pipeline_schedule"] == "1f1b"
    assert options["mpmd_fragment_remat"] is False
    assert options["infer_transfers"] is True  # our field names too
    assert "mpmd_infer_transfers" in options and "nope" not in options
    assert options.get("nope", 7) == 7
    with pytest.raises(KeyError):
        options["mpmd_nope"]
    # The dict view goes back into make_config unchanged.
    again = mpmd.make_config(topology, {"stage1": "m1", "stage2": "m2"},
                             partitioning_options=dict(options))
    assert again.partitioning_options == options
    assert dict(again.partitioning_options) == dict(options)


def test_validate_and_merge_partitioning_options():
    merge = mpmd.validate_and_merge_partitioning_options
    assert merge({"mpmd_split_bwd_fragments": True},
                 {"mpmd_infer_transfers": True}) == {
        "mpmd_split_bwd_fragments": True, "mpmd_infer_transfers": True}
    assert merge(None, None) is None
    with pytest.raises(ValueError, match="Conflicting partitioning options "
                       "detected:\n  - 'mpmd_split_bwd_fragments': pipeline "
                       "schedule requires True, but user specified False"):
        merge({"mpmd_split_bwd_fragments": True},
              {"mpmd_split_bwd_fragments": False})


def test_jit_keywords_shardings_and_mesh_assignment():
    topology = meshes()
    config = mpmd.make_config(
        topology, {"stage1": "m1", "stage2": "m2"},
        # A prefix: one mesh for the whole first argument.
        input_mesh_assignment=("m1", "m2", None))
    w1, w2 = jnp.ones((4, 8)) * 0.1, jnp.ones((8, 2)) * 0.2
    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    step = mpmd.jit(two_stages, mpmd_config=config, keep_unused=False,
                    override_func_name="my_step")
    lowered = step.lower(w1, w2, x)
    assert "jit_my_step" in lowered.as_text("stablehlo")
    np.testing.assert_allclose(lowered.compile()(w1, w2, x),
                               jax.jit(two_stages)(w1, w2, x), rtol=1e-6)
    shardings = lowered.function_named_shardings
    assert shardings.input_specs == shardings.inputs
    assert shardings.output_specs == shardings.outputs
    assignment = lowered.function_mesh_assignment
    assert assignment.input_meshes == ("m1", "m2", "m1")
    assert assignment.output_meshes == "m2"
    placed = jax.device_put(w2, shardings.input_specs[1])
    assert mpmd.mesh_names({"w": placed, "none": None}, topology) == {
        "w": "m2", "none": None}
    with pytest.raises(ValueError, match="is not in the topology"):
        mpmd.mesh_names(jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",)),
                        topology)


def test_compile_errors_are_runtime_errors():
    config = mpmd.make_config(meshes(), {"stage1": "m1", "stage2": "m2"})

    def two_meshes(x, y):
        # A sum of values of two meshes, outside any named computation.
        a = mpmd.named_computation(lambda x: x * 2.0, name="stage1")(x)
        b = mpmd.named_computation(lambda y: y * 3.0, name="stage2")(y)
        return a + b

    with pytest.raises(RuntimeError, match="infer-cross-mesh-reductions=true "
                                           "or mark its result with "
                                           "mpmd.reduce") as raised:
        mpmd.jit(two_meshes, config).lower(jnp.ones(4), jnp.ones(4))
    assert isinstance(raised.value, mpmd.CompilerError)
    assert "mpmd_infer_cross_mesh_reductions" in str(raised.value)


def test_shardy_style_loop_ops_match_jax_jit():
    config = mpmd.make_config(meshes(), {"stage1": "m1", "stage2": "m2"},
                              name_to_stage_assignment={"stage1": 0,
                                                        "stage2": 1},
                              partitioning_options={
                                  "mpmd_pipeline_schedule": "1F1B"})
    ws = (jnp.eye(4) * 0.5, jnp.eye(4) * 0.25)

    def loss(ws, x):
        return jnp.sum(two_stages(ws[0], ws[1], x) ** 2)

    def with_fori(ws, xs):
        def body(i, acc):
            return jax.tree.map(jnp.add, acc, jax.grad(loss)(ws, xs[i]))
        return mpmd.fori_loop(xs.shape[0], body,
                              jax.tree.map(jnp.zeros_like, ws))

    def with_enumerated(ws, xs):
        def body(acc, i, x):
            del i
            return jax.tree.map(jnp.add, acc, jax.grad(loss)(ws, x))
        return mpmd.enumerated_for(body, jax.tree.map(jnp.zeros_like, ws),
                                   [xs[i] for i in range(xs.shape[0])])

    xs = jnp.linspace(-1.0, 1.0, 32).reshape(4, 2, 4)
    want = jax.jit(with_fori)(ws, xs)
    for fn in (with_fori, with_enumerated):
        lowered = mpmd.jit(fn, config).lower(ws, xs)
        for got, expected in zip(lowered.compile()(ws, xs), want):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        # Four microbatches, scheduled 1F1B on the first mesh.
        assert lowered.schedule_text().splitlines()[0] == \
            "m1: F0 F1 B0 F2 B1 F3 B2 B3"


def test_call_without_counter_and_named_computation_static_argnames():
    config = mpmd.make_config(meshes(), {"scaled": "m1"})

    @mpmd.named_computation(name="scaled", static_argnames="power")
    def scaled(x, power, *, shift=0.0):
        return x ** power + shift

    def step(x):
        return mpmd.call(lambda x: scaled(x, 3, shift=1.0))(x)

    x = jnp.arange(4.0)
    np.testing.assert_allclose(mpmd.jit(step, config)(x), x ** 3 + 1.0)
    np.testing.assert_allclose(jax.jit(step)(x), x ** 3 + 1.0)
    with pytest.raises(mpmd.FrontendError, match="static_argnames \\['n'\\] "
                                                 "are not parameters"):
        mpmd.named_computation(lambda x: x, name="f", static_argnames="n")


def test_broadcast_and_reduce_annotations():
    config = mpmd.make_config(meshes(), {"a": "m1", "b": "m2"})

    def step(x):
        # An argument and a table used on both meshes, a sum over both.
        x = mpmd.broadcast(x)
        table = mpmd.broadcast(jnp.arange(4.0))
        a = mpmd.named_computation(lambda x, t: x * t, name="a")(x, table)
        b = mpmd.named_computation(lambda x, t: x + t, name="b")(x, table)
        return mpmd.reduce(a + b)

    x = jnp.linspace(0.0, 1.0, 4)
    lowered = mpmd.jit(step, config).lower(x)
    np.testing.assert_allclose(lowered.compile()(x), jax.jit(step)(x),
                               rtol=1e-6)
    # Under jax.grad the two are each other's transpose.
    grad = jax.grad(lambda x: jnp.sum(step(x)))
    np.testing.assert_allclose(mpmd.jit(grad, config)(x), jax.jit(grad)(x),
                               rtol=1e-6)


def test_shardy_style_script_runs_with_only_imports_changed():
    import importlib.util
    import pathlib

    path = (pathlib.Path(__file__).resolve().parents[2] / "examples"
            / "shardy_style.py")
    spec = importlib.util.spec_from_file_location("shardy_style", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    # main() checks both pipelines against jax.jit itself.
    texts = script.main()
    assert "mpmd.fragment_call" in texts["1F1B"]
    assert "mpmd.weight_gradient" not in texts["1F1B"]
    # Zero bubble split the backwards: separate weight-gradient calls.
    assert "weight_gradient" in texts["ZERO_BUBBLE_H1"]
    assert texts["ZERO_BUBBLE_H1"].count("fragment_call") > \
        texts["1F1B"].count("fragment_call")
    # The same program as IFRT IR: a call per fragment_call.
    ifrt = texts["1F1B_ifrt"]
    assert ifrt.count("ifrt.Call") == texts["1F1B"].count(
        "mpmd.fragment_call")


def test_schedule_impl_names_the_registry_predicates():
    from mpmd import pipeline_registry, schedule_impl

    assert schedule_impl.one_fwd_one_bwd_schedule_predicate is \
        pipeline_registry.one_fwd_one_bwd_schedule_predicate
    assert set(schedule_impl.__all__) == set(pipeline_registry.__all__)
