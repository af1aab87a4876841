"""SPMD within meshes: sharded parameters and batches, shardings propagated
over the MPMD program, heterogeneous meshes; numbers equal jax.jit's."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from meshes import assert_trees_close
import models  # noqa: E402  (examples/, put on the path by meshes)

import mpmd  # noqa: E402

DIM, HIDDEN, OUT, MICROBATCHES, BATCH = 16, 32, 8, 4, 8
COLLECTIVES = re.compile(r"\b(all-reduce|all-gather|reduce-scatter|"
                         r"collective-permute|all-to-all)\b")


def square_meshes() -> dict[str, Mesh]:
    """Two 2x2 ("data", "model") meshes over devices 0-3 and 4-7."""
    devices = np.array(jax.devices()[:8])
    return {"m1": Mesh(devices[:4].reshape(2, 2), ("data", "model")),
            "m2": Mesh(devices[4:].reshape(2, 2), ("data", "model"))}


def mixed_meshes() -> dict[str, Mesh]:
    """A 2x2 ("data", "model") mesh feeding a 2-device ("model",) mesh."""
    devices = np.array(jax.devices()[:8])
    return {"m1": Mesh(devices[:4].reshape(2, 2), ("data", "model")),
            "m2": Mesh(devices[4:6], ("model",))}


def problem():
    params = models.init_two_stage_mlp(jax.random.PRNGKey(0), DIM, HIDDEN,
                                       OUT)
    xs = jax.random.normal(jax.random.PRNGKey(1), (MICROBATCHES, BATCH, DIM))
    ys = jax.random.normal(jax.random.PRNGKey(2), (MICROBATCHES, BATCH, OUT))
    return params, xs, ys


def place(params, xs, ys, topology, ys_spec):
    specs = models.two_stage_mlp_specs()
    meshes = {"stage0": topology["m1"], "stage1": topology["m2"]}
    shardings = {stage: {name: NamedSharding(meshes[stage], spec)
                         for name, spec in specs[stage].items()}
                 for stage in specs}
    return (jax.device_put(params, shardings),
            jax.device_put(xs, NamedSharding(topology["m1"],
                                             P(None, "data"))),
            jax.device_put(ys, NamedSharding(topology["m2"], ys_spec)),
            shardings)


def config_for(topology):
    return mpmd.make_config(topology, {"stage0": ("m1", 0),
                                       "stage1": ("m2", 1)},
                            partitioning_options={"pipeline_schedule": "1f1b"})


@pytest.fixture(scope="module")
def square_run():
    topology = square_meshes()
    params, xs, ys = problem()
    sparams, sxs, sys_, shardings = place(params, xs, ys, topology,
                                          P(None, "data"))
    lowered = mpmd.jit(models.two_stage_mlp_step,
                       config_for(topology)).lower(sparams, sxs, sys_)
    compiled = lowered.compile()
    return (topology, params, xs, ys, sparams, sxs, sys_, shardings,
            lowered, compiled)


def test_tensor_and_data_parallel_meshes_match_jax_jit(square_run):
    (_, params, xs, ys, sparams, sxs, sys_, shardings, lowered,
     compiled) = square_run
    reference = jax.jit(models.two_stage_mlp_step)
    mp_params, ref_params = sparams, params
    for _ in range(2):  # the second step takes the first step's outputs
        mp_params, mp_loss = compiled(mp_params, sxs, sys_)
        ref_params, ref_loss = reference(ref_params, xs, ys)
        np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp_params, ref_params, rtol=1e-5)
    assert lowered.schedule_text().splitlines() == [
        "m1: F0 F1 B0 F2 B1 F3 B2 B3", "m2: F0 B0 F1 B1 F2 B2 F3 B3"]
    # Every parameter comes back with the sharding it went in with, one
    # shard per device of global size / axis size along the split dimension.
    for stage in shardings:
        for name, sharding in shardings[stage].items():
            out = mp_params[stage][name]
            assert out.sharding.is_equivalent_to(sharding, 2), (stage, name)
            split = [d for d, axis in enumerate(sharding.spec) if axis]
            for shard in out.addressable_shards:
                expected = list(out.shape)
                expected[split[0]] //= 2
                assert list(shard.data.shape) == expected


@pytest.mark.parametrize("schedule", ["gpipe", "zero-bubble-h1"])
def test_other_schedules_with_sharded_meshes(schedule):
    """Split backward (zero bubble) and merges run before the sharding
    phase; the layouts cover what they create."""
    topology = square_meshes()
    params, xs, ys = problem()
    sparams, sxs, sys_, shardings = place(params, xs, ys, topology,
                                          P(None, "data"))
    config = mpmd.make_config(topology, {"stage0": ("m1", 0),
                                         "stage1": ("m2", 1)},
                              partitioning_options={"pipeline_schedule":
                                                    schedule})
    mp_params, mp_loss = mpmd.jit(models.two_stage_mlp_step,
                                  config)(sparams, sxs, sys_)
    ref_params, ref_loss = jax.jit(models.two_stage_mlp_step)(params, xs, ys)
    np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp_params, ref_params, rtol=1e-5)
    assert mp_params["stage1"]["w4"].sharding.is_equivalent_to(
        shardings["stage1"]["w4"], 2)


def test_layouts_are_visible_before_compiling(square_run):
    lowered = square_run[8]
    text = lowered.as_text()
    assert ('!mpmd.mesh_tensor<"m1", tensor<16x32xf32>, '
            'sharding=<@mesh, [{}, {"model"}]>>') in text
    # Activations crossing from m1 to m2 stay data-parallel.
    assert re.search(r'mpmd\.transfer .*-> !mpmd\.mesh_tensor<"m2", '
                     r'tensor<8x16xf32>, sharding=<@mesh, \[\{"data"\}, '
                     r'\{\}\]>>', text)
    named = lowered.function_named_shardings
    params_in = named.inputs[0]
    assert params_in["stage0"]["w1"].spec == P(None, "model")
    assert params_in["stage1"]["w4"].spec == P("model")
    assert named.outputs[0]["stage0"]["w2"].spec == P("model")
    assert named.inputs[1].spec == P(None, "data")
    table = lowered.sharding_text()
    assert "m1  in   params['stage0']['w1']  float32[16x32] {-, model}" in table
    assert "m2  out  result[1]  float32[] replicated" in table


def test_tensor_parallel_stage_has_collectives_and_half_the_memory(
        square_run):
    topology, params, xs, ys, sparams, sxs, sys_, _, lowered, compiled = \
        square_run
    forward = [name for name in lowered.plan.programs
               if "_stage0_fwd" in name]
    hlo = compiled.executor.programs[forward[0]].compiled.as_text()
    # The row-parallel second matrix leaves partial sums to add.
    assert "all-reduce" in COLLECTIVES.findall(hlo)
    # The same step with every array replicated on its mesh.
    replicated = mpmd.jit(models.two_stage_mlp_step,
                          config_for(topology))(params, xs, ys)
    sharded = compiled(sparams, sxs, sys_)

    def per_device_bytes(tree):
        return sum(shard.data.nbytes for leaf in jax.tree.leaves(tree)
                   for shard in leaf.addressable_shards[:1])

    assert per_device_bytes(sharded[0]) * 2 == per_device_bytes(replicated[0])
    assert_trees_close(sharded[0], replicated[0], rtol=1e-5)


def test_donated_sharded_buffers_are_reused(square_run):
    lowered, compiled = square_run[8], square_run[9]
    sharded_donations = [
        name for name, spec in lowered.plan.programs.items()
        if any(spec.in_shardings[i] is not None for i in spec.donated_args)]
    assert sharded_donations
    for name in sharded_donations:
        hlo = compiled.executor.programs[name].compiled.as_text()
        assert "input_output_alias" in hlo, name


def test_heterogeneous_meshes_match_jax_jit():
    topology = mixed_meshes()
    params, xs, ys = problem()
    sparams, sxs, sys_, shardings = place(params, xs, ys, topology, P())
    lowered = mpmd.jit(models.two_stage_mlp_step,
                       config_for(topology)).lower(sparams, sxs, sys_)
    # m2 has no "data" axis: the activations arrive replicated there.
    assert re.search(r'mpmd\.transfer .*-> !mpmd\.mesh_tensor<"m2", '
                     r'tensor<8x16xf32>>', lowered.as_text())
    mp_params, mp_loss = lowered.compile()(sparams, sxs, sys_)
    ref_params, ref_loss = jax.jit(models.two_stage_mlp_step)(params, xs, ys)
    np.testing.assert_allclose(mp_loss, ref_loss, rtol=1e-5)
    assert_trees_close(mp_params, ref_params, rtol=1e-5)
    w3 = mp_params["stage1"]["w3"]
    assert w3.sharding == shardings["stage1"]["w3"]
    assert [s.data.shape for s in w3.addressable_shards] == [(DIM, HIDDEN // 2)] * 2


def test_in_and_out_shardings_as_jax_jit_takes_them():
    topology = square_meshes()
    params, xs, ys = problem()
    specs = models.two_stage_mlp_specs()
    m1, m2 = topology["m1"], topology["m2"]
    in_shardings = ({"stage0": {k: NamedSharding(m1, s)
                                for k, s in specs["stage0"].items()},
                     "stage1": {k: NamedSharding(m2, s)
                                for k, s in specs["stage1"].items()}},
                    NamedSharding(m1, P(None, "data")),
                    NamedSharding(m2, P(None, "data")))
    # PartitionSpecs resolve on each result's mesh: the parameters come
    # back replicated there; the loss is left to propagation.
    out_shardings = (P(), None)
    config = mpmd.make_config(
        topology, {"stage0": ("m1", 0), "stage1": ("m2", 1)},
        output_mesh_assignment=({"stage0": {"w1": "m1", "w2": "m1"},
                                 "stage1": {"w3": "m2", "w4": "m2"}}, "m2"))
    step = mpmd.jit(models.two_stage_mlp_step, config,
                    in_shardings=in_shardings, out_shardings=out_shardings)
    lowered = step.lower(params, xs, ys)  # host data, placed as asked
    assert lowered.function_named_shardings.inputs[0]["stage0"]["w1"].spec \
        == P(None, "model")
    new_params, loss = step(params, xs, ys)
    assert new_params["stage0"]["w1"].sharding.spec == P()
    ref_params, ref_loss = jax.jit(models.two_stage_mlp_step)(params, xs, ys)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    assert_trees_close(new_params, ref_params, rtol=1e-5)


def sgd_step(loss_fn):
    def step(w, x):
        loss, grad = jax.value_and_grad(loss_fn)(w, x)
        return w - 0.1 * grad, loss
    return step


def sgd_inputs():
    return (jax.random.normal(jax.random.PRNGKey(0), (DIM, HIDDEN)),
            jax.random.normal(jax.random.PRNGKey(1), (BATCH, DIM)))


def assert_matches_plain(results, w, x, plain_loss):
    """`results` (new w, loss) equal one jax.jit SGD step on `plain_loss`."""
    new_w, loss = results
    ref_w, ref_loss = jax.jit(sgd_step(plain_loss))(w, x)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    np.testing.assert_allclose(new_w, ref_w, rtol=1e-5, atol=1e-6)


def test_sharding_constraint_resolves_on_the_computations_mesh():
    topology = square_meshes()

    def loss_fn(w, x):
        def first(w, x):
            h = jnp.tanh(x @ w)
            # A bare PartitionSpec: the mesh of this named computation.
            return jax.lax.with_sharding_constraint(h, P("data", "model"))
        h = mpmd.named_computation(first, name="first")(w, x)
        return mpmd.named_computation(lambda h: jnp.sum(h ** 2),
                                      name="second")(h)

    w, x = sgd_inputs()
    config = mpmd.make_config(topology, {"first": "m1", "second": "m2"})
    lowered = mpmd.jit(sgd_step(loss_fn), config).lower(w, x)
    # The constraint fixes the layout of the activation that crosses.
    assert re.search(r'-> !mpmd\.mesh_tensor<"m2", tensor<8x32xf32>, '
                     r'sharding=<@mesh, \[\{"data"\}, \{"model"\}\]>>',
                     lowered.as_text())
    assert_matches_plain(lowered.compile()(w, x), w, x,
                         lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2))


def test_shard_map_inside_a_named_computation():
    topology = square_meshes()

    def layer(w, x):
        def local(w, x):  # per device: a block of rows and of features
            return jax.lax.psum(x @ w, "model")
        return jax.shard_map(local, in_specs=(P("model", None),
                                              P("data", "model")),
                             out_specs=P("data", None))(w, x)

    def loss_fn(w, x):
        h = mpmd.named_computation(layer, name="first")(w, x)
        return mpmd.named_computation(lambda h: jnp.mean(h ** 2),
                                      name="second")(h)

    w, x = sgd_inputs()
    config = mpmd.make_config(topology, {"first": "m1", "second": "m2"})
    assert_matches_plain(mpmd.jit(sgd_step(loss_fn), config)(w, x), w, x,
                         lambda w, x: jnp.mean((x @ w) ** 2))


def test_a_new_layout_of_committed_inputs_lowers_again():
    topology = square_meshes()
    params, xs, ys = problem()
    step = mpmd.jit(models.two_stage_mlp_step, config_for(topology))
    replicated_out, _ = step(params, xs, ys)
    sparams, sxs, sys_, shardings = place(params, xs, ys, topology,
                                          P(None, "data"))
    sharded_out, _ = step(sparams, sxs, sys_)
    assert len(step._cache) == 2
    assert replicated_out["stage0"]["w1"].sharding.spec == P()
    assert sharded_out["stage0"]["w1"].sharding == shardings["stage0"]["w1"]
    # Fed back, the results (laid out as the plan says) are served by the
    # same lowering.
    step(*step(sparams, sxs, sys_)[:1], sxs, sys_)
    assert len(step._cache) == 2


def test_static_arguments_are_not_inputs():
    topology = square_meshes()
    config = mpmd.make_config(topology, {"f": "m1"})

    def scaled(x, factor):
        return mpmd.named_computation(lambda x: x * factor, name="f")(x)

    step = mpmd.jit(scaled, config, static_argnums=(1,))
    x = jnp.arange(8.0)
    np.testing.assert_allclose(step(x, 2.0), x * 2.0)
    np.testing.assert_allclose(step(x, 3.0), x * 3.0)
    assert len(step._cache) == 2


# ---------------------------------------------------------------- errors

def simple_step(w, x):
    return mpmd.named_computation(lambda w, x: x @ w, name="f")(w, x)


def test_sharding_on_a_mesh_outside_the_topology():
    topology = square_meshes()
    other = Mesh(np.array(jax.devices()[:2]), ("data",))
    step = mpmd.jit(simple_step, mpmd.make_config(topology, {"f": "m1"}),
                    in_shardings=(None, NamedSharding(other, P("data"))))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument x: in_shardings is a NamedSharding on "
                             r"mesh <data=2> on devices \[0, 1\], which is not "
                             r"in the topology"):
        step.lower(jnp.ones((DIM, 4)), jnp.ones((BATCH, DIM)))


def test_axis_the_mesh_does_not_have():
    topology = mixed_meshes()
    config = mpmd.make_config(topology, {"f": "m2"},
                              input_mesh_assignment=("m2", "m2"))
    step = mpmd.jit(simple_step, config, in_shardings=(None, P("data")))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument x is sharded along axis 'data', which "
                             r"mesh 'm2' does not have \(its axes: "
                             r"\{'model': 2\}\)"):
        step.lower(jnp.ones((DIM, 4)), jnp.ones((BATCH, DIM)))


def test_dimension_not_divisible_by_the_axis():
    topology = square_meshes()
    step = mpmd.jit(simple_step, mpmd.make_config(topology, {"f": "m1"}))
    # JAX refuses to lay out such an array; an abstract value can carry it.
    abstract = jax.ShapeDtypeStruct((DIM, 3), jnp.float32,
                                    sharding=NamedSharding(topology["m1"],
                                                           P(None, "model")))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument w: dimension 1 \(size 3\) is not "
                             r"divisible by 2, the number of shards along "
                             r"model on mesh 'm1'"):
        step.lower(abstract, jnp.ones((BATCH, DIM)))


def test_two_conflicting_shardings_of_one_value():
    topology = square_meshes()
    w = jax.device_put(jnp.ones((DIM, 4)),
                       NamedSharding(topology["m1"], P("model")))
    step = mpmd.jit(simple_step, mpmd.make_config(topology, {"f": "m1"}),
                    in_shardings=(NamedSharding(topology["m1"],
                                                P(None, "model")), None))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument w is given two different shardings: "
                             r"the array is laid out as P\('model', None\) on "
                             r"mesh 'm1', in_shardings asks for "
                             r"P\(None, 'model'\)"):
        step.lower(w, jnp.ones((BATCH, DIM)))
    moved = mpmd.jit(simple_step, mpmd.make_config(
        topology, {"f": "m1"}, input_mesh_assignment=("m2", None)))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument w is an array on mesh 'm1', but "
                             r"input_mesh_assignment puts it on 'm2'"):
        moved.lower(w, jnp.ones((BATCH, DIM)))


def test_committed_array_on_a_mesh_that_does_not_use_it():
    """An argument moves to the mesh that uses it (as in Shardy:MPMD); an
    array committed elsewhere is copied at every call, and lowering says
    so at the user's line."""
    topology = square_meshes()
    params, xs, ys = problem()
    ys_on_m1 = jax.device_put(ys, NamedSharding(topology["m1"], P()))
    step = mpmd.jit(models.two_stage_mlp_step, config_for(topology))
    with pytest.warns(UserWarning,
                      match=r"argument ys is committed to mesh 'm1', but only "
                            r"mesh 'm2' uses it: the program moves it there "
                            r"at every call") as record:
        lowered = step.lower(params, xs, ys_on_m1)
    assert record[0].filename == __file__
    assert lowered.function_mesh_assignment.input_meshes[2] == "m1"
    new, loss = lowered.compile()(params, xs, ys_on_m1)
    ref_new, ref_loss = jax.jit(models.two_stage_mlp_step)(params, xs, ys)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)


def test_partition_spec_whose_mesh_is_unknown():
    topology = square_meshes()
    step = mpmd.jit(simple_step, mpmd.make_config(topology, {"f": "m1"}),
                    out_shardings=P("data"))
    with pytest.raises(mpmd.ShardingError,
                       match=r"result: out_shardings gives a PartitionSpec but "
                             r"the value's mesh is unknown"):
        step.lower(jnp.ones((DIM, 4)), jnp.ones((BATCH, DIM)))


def test_concrete_meshes_of_two_meshes_inside_the_function():
    topology = square_meshes()

    def two(x):
        a = mpmd.named_computation(lambda x: jax.lax.with_sharding_constraint(
            x * 2, NamedSharding(topology["m1"], P("data"))), name="a")(x)
        return mpmd.named_computation(lambda x: jax.lax.with_sharding_constraint(
            x + 1, NamedSharding(topology["m2"], P("data"))), name="b")(a)

    step = mpmd.jit(two, mpmd.make_config(topology, {"a": "m1", "b": "m2"}))
    with pytest.raises(mpmd.ShardingError,
                       match=r"give a PartitionSpec \(it resolves on the "
                             r"computation's mesh\)"):
        step.lower(jnp.ones((BATCH, DIM)))


def test_memory_kind_in_shardings_is_not_supported_yet():
    topology = square_meshes()
    host = NamedSharding(topology["m1"], P(), memory_kind="pinned_host")
    step = mpmd.jit(simple_step, mpmd.make_config(topology, {"f": "m1"}),
                    in_shardings=(host, None))
    with pytest.raises(mpmd.ShardingError,
                       match=r"argument w: not supported yet: in_shardings "
                             r"with memory kind 'pinned_host'"):
        step.lower(jnp.ones((DIM, 4)), jnp.ones((BATCH, DIM)))
