"""A scanned layer stack split over stages: `{"blocks": [mesh, ...]}`.

Each test trains (or runs) a model whose layers are one `jax.lax.scan`
over stacked weights, assigned to several meshes, and checks the numbers
against plain `jax.jit` of the same step on the same inputs, and where the
stack lives: each mesh holds its rows, no program value is the whole
stack.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import mpmd
from mpmd.runtime.plan import CallStep, TransferStep

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples"))
import llama  # noqa: E402
import models  # noqa: E402

RTOL = ATOL = 2e-5


def topology_of(count: int, width: int = 2,
                axis: str = "x") -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:count * width]).reshape(count, width)
    return {f"m{i}": jax.sharding.Mesh(devices[i], (axis,))
            for i in range(count)}


def assert_trees_close(actual: Any, expected: Any) -> None:
    a, a_tree = jax.tree_util.tree_flatten(actual)
    e, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree
    for x, y in zip(a, e):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=RTOL,
                                   atol=ATOL)


def stack_shapes(plan: Any, length: int, shapes: set[tuple]) -> list[str]:
    """Program values (inputs, results, transfers) of the plan that have the
    shape of a whole stack: [length, ...] with the rest of one of `shapes`."""
    found = []
    for step in plan.steps:
        specs = []
        if isinstance(step, TransferStep):
            specs.append(step.type)
        for spec in specs:
            if spec.shape[:1] == (length,) and spec.shape[1:] in shapes:
                found.append(f"transfer {spec.short()}")
    for program in plan.programs.values():
        del program
    for spec in (*plan.inputs, *plan.outputs):
        if spec.shape[:1] == (length,) and spec.shape[1:] in shapes:
            found.append(spec.short())
    return found


# --- a plain scanned MLP stack ------------------------------------------------

DIM, LAYERS, MICRO = 16, 8, 4


def mlp_params(key: jax.Array, layers: int = LAYERS) -> dict[str, Any]:
    k1, k2, k3 = jax.random.split(key, 3)
    return {"embed": jax.random.normal(k1, (DIM, DIM)) * 0.3,
            "blocks": {"w": jax.random.normal(k2, (layers, DIM, DIM)) * 0.3,
                       "b": jnp.zeros((layers, DIM))},
            "head": jax.random.normal(k3, (DIM, DIM)) * 0.3}


def mlp_loss(params: Any, x: jax.Array, y: jax.Array) -> jax.Array:
    x = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                               name="embed")(params["embed"], x)

    def blocks(stack, x):
        def layer(x, p):
            return jnp.tanh(x @ p["w"] + p["b"]), None
        return jax.lax.scan(layer, x, stack)[0]

    x = mpmd.named_computation(blocks, name="blocks")(params["blocks"], x)
    x = mpmd.named_computation(lambda w, x: x @ w, name="head")(
        params["head"], x)
    return jnp.mean((x - y) ** 2)


adamw_step = models.optimizer_over_microbatches


def mlp_data(micro: int = MICRO) -> tuple[jax.Array, jax.Array]:
    xs = jax.random.normal(jax.random.PRNGKey(7), (micro, 4, DIM))
    return xs, jnp.sin(xs)


def train_both(step: Any, config: Any, params: Any, opt_state: Any,
               data: tuple, calls: int = 3, **jit_kwargs: Any
               ) -> tuple[Any, Any]:
    """`calls` steps with mpmd.jit and with jax.jit from the same start;
    each call's loss and the final parameters and moments compared."""
    function = mpmd.jit(step, config, **jit_kwargs)
    reference = jax.jit(step)
    ours = theirs = (params, opt_state)
    for _ in range(calls):
        *ours, loss = function(*ours, *data)
        *theirs, expected = reference(*theirs, *data)
        np.testing.assert_allclose(float(loss), float(expected), rtol=RTOL)
    assert_trees_close(ours, theirs)
    return function, ours


def test_even_split_is_one_piece_per_mesh_with_jax_jit_numbers():
    topology = topology_of(4)
    optimizer = optax.adamw(1e-2)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(0))
    config = mpmd.make_config(
        topology, {"embed": "m0", "blocks": ["m0", "m1", "m2", "m3"],
                   "head": "m3"},
        partitioning_options={"pipeline_schedule": "1f1b"})
    function, (params, opt_state) = train_both(
        step, config, params, optimizer.init(params), mlp_data())
    # One program, however the arguments came (host data first, then the
    # results of the previous call).
    assert len({id(c) for c in function._cache.values()}) == 1
    lowered = function.lower(params, opt_state, *mlp_data())
    assert lowered.stacks["blocks"].bounds == ((0, 2), (2, 4), (4, 6), (6, 8))
    assert lowered.schedule_text().splitlines()[1] == \
        "m1: F0 F1 F2 B0 F3 B1 B2 B3"
    order = lowered.mesh_order()
    assert {label.split("#")[0].split("(")[0] for label in order["m1"]
            if label.startswith("blocks")} == {"blocks[2:4]"}
    # Each mesh holds its quarter: the parameters, the moments, between
    # calls as in the program.
    union = mpmd.stack_sharding(topology, ["m0", "m1", "m2", "m3"])
    for leaf in (params["blocks"]["w"], opt_state[0].mu["blocks"]["w"],
                 opt_state[0].nu["blocks"]["b"]):
        assert leaf.sharding == union
        for mesh_index, mesh in enumerate(topology.values()):
            ids = {d.id for d in mesh.devices.flat}
            rows = {(s.index[0].start, s.index[0].stop)
                    for s in leaf.addressable_shards if s.device.id in ids}
            assert rows == {(2 * mesh_index, 2 * mesh_index + 2)}
    assert stack_shapes(lowered.plan, LAYERS, {(DIM, DIM), (DIM,)}) == []
    assert lowered.function_named_shardings.inputs[0]["blocks"]["w"] == union
    assert lowered.function_mesh_assignment.input_meshes[0]["blocks"]["w"] \
        == ("m0", "m1", "m2", "m3")
    text = lowered.sharding_text()
    assert "m2  in   params['blocks']['w'][4:6]  float32[2x16x16]" in text


def test_uneven_counts_and_a_layout_of_even_slots():
    topology = topology_of(2)
    optimizer = optax.adam(1e-2)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(1))
    config = mpmd.make_config(topology, {
        "embed": "m0", "head": "m1",
        "blocks": mpmd.StackSplit(["m0", "m1"], layers=[3, 5])},
        partitioning_options={"pipeline_schedule": "gpipe"})
    function, (params, _) = train_both(step, config, params,
                                       optimizer.init(params), mlp_data())
    lowered = function.lower(params, optimizer.init(params), *mlp_data())
    assert lowered.stacks["blocks"].bounds == ((0, 3), (3, 8))
    # The array between calls keeps the even layout (4 rows per mesh); the
    # call moves the row that the first mesh's piece takes from the second.
    assert params["blocks"]["w"].sharding == mpmd.stack_sharding(
        topology, ["m0", "m1"])


def test_auto_counts_balance_the_meshes_other_work():
    topology = topology_of(2)
    optimizer = optax.sgd(0.1)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(2))
    # A head much heavier than a layer: the last mesh gets fewer layers.
    params["head"] = jnp.zeros((DIM, DIM))

    def heavy_loss(params, x, y):
        x = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                                   name="embed")(params["embed"], x)

        def blocks(stack, x):
            return jax.lax.scan(lambda x, p: (jnp.tanh(x @ p["w"] + p["b"]),
                                              None), x, stack)[0]
        x = mpmd.named_computation(blocks, name="blocks")(params["blocks"], x)

        def head(w, x):
            for _ in range(6):  # six layers' worth of work
                x = jnp.tanh(x @ w + x)
            return x
        x = mpmd.named_computation(head, name="head")(params["head"], x)
        return jnp.mean((x - y) ** 2)

    step = adamw_step(heavy_loss, optimizer)
    config = mpmd.make_config(topology, {
        "embed": "m0", "head": "m1",
        "blocks": mpmd.StackSplit(["m0", "m1"], layers="auto")})
    function, _ = train_both(step, config, params, optimizer.init(params),
                             mlp_data(), calls=2)
    lowered = function.lower(params, optimizer.init(params), *mlp_data())
    (lo, hi), (lo2, hi2) = lowered.stacks["blocks"].bounds
    assert hi - lo > hi2 - lo2, lowered.stacks["blocks"].bounds
    assert mpmd.auto_assign.balanced_counts([0.0, 6.0], 1.0, 8) == [7, 1]
    assert mpmd.auto_assign.balanced_counts([1.0, 1.0], 1.0, 8) == [4, 4]


@pytest.mark.parametrize("schedule, meshes", [
    ("interleaved-1f1b", ["m0", "m1", "m0", "m1"]),
    ("zero-bubble-v", ["m0", "m1", "m1", "m0"]),
    ("dualpipe-v", ["m0", "m1", "m1", "m0"]),
])
def test_a_mesh_may_hold_two_ranges_for_schedules_with_several_stages(
        schedule, meshes):
    topology = topology_of(2)
    optimizer = optax.sgd(0.05)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(3))
    assignment = {"embed": ("m0", 0), "head": (meshes[-1], 3),
                  "blocks": [(m, s) for s, m in enumerate(meshes)]}
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={
                                  "pipeline_schedule": schedule})
    function, _ = train_both(step, config, params, optimizer.init(params),
                             mlp_data(), calls=2)
    lowered = function.lower(params, optimizer.init(params), *mlp_data())
    assert lowered.assignment["blocks[2:4]"] == (meshes[1], 1)
    assert lowered.assignment["blocks[4:6]"] == (meshes[2], 2)


def test_zero_bubble_splits_each_pieces_backward():
    topology = topology_of(2)
    optimizer = optax.sgd(0.05)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(8))
    config = mpmd.make_config(
        topology, {"embed": "m0", "blocks": ["m0", "m1"], "head": "m1"},
        partitioning_options={"pipeline_schedule": "zero-bubble-h1"})
    function, _ = train_both(step, config, params, optimizer.init(params),
                             mlp_data(), calls=2)
    lowered = function.lower(params, optimizer.init(params), *mlp_data())
    assert any(label.startswith("blocks[4:8](1)[w]")
               for label in lowered.mesh_order()["m1"])


def test_tensor_parallel_inside_each_mesh_keeps_its_layout():
    topology = topology_of(2, axis="model")
    optimizer = optax.adam(1e-2)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(4))
    config = mpmd.make_config(topology, {"embed": "m0", "head": "m1",
                                         "blocks": ["m0", "m1"]})
    sharding = mpmd.stack_sharding(topology, ["m0", "m1"],
                                   P(None, None, "model"))
    assert sharding.spec == P(("stage",), None, "model")
    params["blocks"]["w"] = jax.device_put(params["blocks"]["w"], sharding)
    function, (params, _) = train_both(step, config, params,
                                       optimizer.init(params), mlp_data())
    assert params["blocks"]["w"].sharding.spec == P(("stage",), None,
                                                    "model")
    lowered = function.lower(params, optimizer.init(params), *mlp_data())
    assert "m1  in   params['blocks']['w'][4:8]  float32[4x16x16] " \
        "{-, -, model}" in lowered.sharding_text()


def test_checkpointed_layers_and_a_checkpointed_call():
    topology = topology_of(2)
    optimizer = optax.sgd(0.05)

    def loss(params, x, y):
        def blocks(stack, x):
            @jax.checkpoint
            def layer(x, p):
                return jnp.tanh(x @ p["w"] + p["b"]), None
            return jax.lax.scan(layer, x, stack)[0]
        run = jax.checkpoint(lambda s, x: mpmd.named_computation(
            blocks, name="blocks")(s, x))
        x = run(params["blocks"], x)
        return jnp.mean((x - y) ** 2)

    step = adamw_step(loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(5))
    params = {"blocks": params["blocks"]}
    config = mpmd.make_config(topology, {"blocks": ["m0", "m1"]},
                              partitioning_options={
                                  "pipeline_schedule": "1f1b"})
    train_both(step, config, params, optimizer.init(params), mlp_data(),
               calls=2)


def test_orbax_saves_and_restores_the_stack_as_one_array(tmp_path):
    ocp = pytest.importorskip("orbax.checkpoint")
    topology = topology_of(2)
    optimizer = optax.sgd(0.05)
    step = adamw_step(mlp_loss, optimizer)
    params = mlp_params(jax.random.PRNGKey(6))
    config = mpmd.make_config(topology, {"embed": "m0", "head": "m1",
                                         "blocks": ["m0", "m1"]})
    function = mpmd.jit(step, config)
    params, opt_state, _ = function(params, optimizer.init(params),
                                    *mlp_data())
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(tmp_path / "step", params)
    checkpointer.wait_until_finished()
    target = jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding),
        params)
    restored = checkpointer.restore(tmp_path / "step", target)
    assert restored["blocks"]["w"].sharding == params["blocks"]["w"].sharding
    assert_trees_close(restored, params)
    # The restored stack runs as it is.
    again = function(restored, opt_state, *mlp_data())
    expected = function(params, opt_state, *mlp_data())
    assert_trees_close(again, expected)


# --- the Llama-style decoder with its blocks scanned --------------------------

def test_scanned_llama_over_four_meshes_with_1f1b_8_microbatches_adamw():
    topology = topology_of(4)
    params = llama.stack_blocks(llama.init_llama(
        jax.random.PRNGKey(0), vocab=64, dim=32, heads=4, kv_heads=2,
        layers=8))
    optimizer = llama.default_optimizer()
    step = llama.make_train_step(optimizer)
    tokens, targets = llama.make_data(jax.random.PRNGKey(1), 8, 2,
                                      vocab=64)
    config = mpmd.make_config(
        topology, {"embed": "m0", "blocks": ["m0", "m1", "m2", "m3"],
                   "head": "m3"},
        partitioning_options={**llama.PARTITIONING_OPTIONS,
                              "pipeline_schedule": "1f1b"})
    function, (params, opt_state) = train_both(
        step, config, params, optimizer.init(params), (tokens, targets))
    assert len({id(c) for c in function._cache.values()}) == 1
    lowered = function.lower(params, opt_state, tokens, targets)
    shapes = {tuple(x.shape[1:]) for x in
              jax.tree.leaves(params["blocks"])}
    assert stack_shapes(lowered.plan, 8, shapes) == []
    for leaf in jax.tree.leaves(params["blocks"]):
        for mesh in topology.values():
            ids = {d.id for d in mesh.devices.flat}
            held = {s.index[0].stop - s.index[0].start
                    for s in leaf.addressable_shards if s.device.id in ids}
            assert held == {2}
    assert lowered.schedule_text().splitlines()[0].startswith(
        "m0: F0 F0 F1 F1")


# --- errors and warnings ---------------------------------------------------------

def _one_stack_config(**stacks: Any) -> Any:
    return mpmd.make_config(topology_of(2), stacks)


def test_a_split_computation_needs_one_scan():
    config = _one_stack_config(blocks=["m0", "m1"])

    def no_scan(w, x):
        return mpmd.named_computation(lambda w, x: x @ w[0] @ w[1],
                                      name="blocks")(w, x)

    with pytest.raises(mpmd.FrontendError, match=r"named computation "
                       r"'blocks' is assigned the meshes \['m0', 'm1'\].*"
                       r"has no jax.lax.scan at its top level"):
        mpmd.jit(no_scan, config).lower(jnp.ones((2, 4, 4)), jnp.ones(4))


def test_a_scan_result_used_inside_after_the_scan_is_not_supported_yet():
    config = _one_stack_config(blocks=["m0", "m1"])

    def uses_ys(w, x):
        def body(w, x):
            x, ys = jax.lax.scan(lambda x, w: (x @ w, jnp.sum(x)), x, w)
            return x + jnp.sum(ys)
        return mpmd.named_computation(body, name="blocks")(w, x)

    with pytest.raises(mpmd.FrontendError, match="not supported yet: named "
                       "computation 'blocks' is split over meshes and uses "
                       "its scan's stacked results after the scan"):
        mpmd.jit(uses_ys, config).lower(jnp.ones((2, 4, 4)), jnp.ones(4))


def test_stacked_results_returned_by_the_scan_are_joined_per_piece():
    config = _one_stack_config(blocks=["m0", "m1"])

    def returns_ys(w, x):
        def body(w, x):
            return jax.lax.scan(lambda x, w: (jnp.tanh(x @ w), x.sum()), x, w)
        x, ys = mpmd.named_computation(body, name="blocks")(w, x)
        return x, ys * 2.0

    w, x = jax.random.normal(jax.random.PRNGKey(0), (4, 4, 4)), jnp.ones(4)
    assert_trees_close(mpmd.jit(returns_ys, config)(w, x),
                       jax.jit(returns_ys)(w, x))


@pytest.mark.parametrize("assignment, message", [
    ({"blocks": ["m0", "m9"]}, r"assignment\['blocks'\] splits a stack over "
     r"\['m9'\], not in the topology's meshes"),
    ({"blocks": ["m0"]}, r"a stack split needs at least two meshes"),
    ({"blocks": [("m0", 0), "m1"]}, "gives stages for some meshes and not "
     "others"),
    ({"blocks": ("m0", "m1", "m2")}, r"assignment\['blocks'\] must be a "
     r"mesh name or \(mesh name, stage\)"),
    ({"blocks": ["m0", "m1"], "x": "auto"}, "not supported yet: "
     r"assignment\['blocks'\] splits a stack over meshes while other names "
     "are assigned \"auto\""),
])
def test_bad_splits_are_config_errors(assignment, message):
    with pytest.raises(mpmd.ConfigError, match=message):
        mpmd.make_config(topology_of(2), assignment)


def test_a_split_is_checked_when_made():
    with pytest.raises(mpmd.ConfigError, match="one count >= 1 per mesh"):
        mpmd.StackSplit(["m0", "m1"], layers=[1])
    with pytest.raises(mpmd.ConfigError, match="layers must be None"):
        mpmd.StackSplit(["m0", "m1"], layers="even")
    with pytest.raises(mpmd.ConfigError, match="a list of mesh names"):
        mpmd.StackSplit("m0")


def test_a_stage_for_a_split_name_goes_in_its_list():
    with pytest.raises(mpmd.ConfigError, match="give each piece's stage in "
                       "its list"):
        mpmd.make_config(topology_of(2), {"blocks": ["m0", "m1"]},
                         name_to_stage_assignment={"blocks": 0})


def test_layer_counts_must_add_up_and_cover_the_meshes():
    def run(w, x):
        return mpmd.named_computation(
            lambda w, x: jax.lax.scan(lambda x, w: (x @ w, None), x, w)[0],
            name="blocks")(w, x)

    config = _one_stack_config(
        blocks=mpmd.StackSplit(["m0", "m1"], layers=[1, 2]))
    with pytest.raises(mpmd.ConfigError, match=r"the stack of 'blocks' has 4"
                       r" layers, but its split gives \[1, 2\]"):
        mpmd.jit(run, config).lower(jnp.ones((4, 2, 2)), jnp.ones(2))
    topology = topology_of(4)
    config = mpmd.make_config(topology, {"blocks": list(topology)})
    with pytest.raises(mpmd.ConfigError, match="has 2 layers, fewer than the "
                       "4 meshes"):
        mpmd.jit(run, config).lower(jnp.ones((2, 2, 2)), jnp.ones(2))


def test_a_function_traced_before_by_jax_jit_is_reported_not_split():
    config = _one_stack_config(blocks=["m0", "m1"])

    @jax.jit
    def inner(w, x):
        return mpmd.named_computation(
            lambda w, x: jax.lax.scan(lambda x, w: (x @ w, None), x, w)[0],
            name="blocks")(w, x)

    w, x = jnp.ones((2, 3, 3)), jnp.ones(3)
    inner(w, x)  # traced (and cached by JAX) without the split
    with pytest.raises(mpmd.AssignmentError, match="'blocks' is assigned the"
                       " meshes .* but was not split: JAX reused a trace"):
        mpmd.jit(lambda w, x: inner(w, x), config).lower(w, x)


def test_a_value_of_the_stack_no_rule_cuts_is_joined_with_a_warning():
    config = _one_stack_config(blocks=["m0", "m1"])

    def step(w, x):
        y = mpmd.named_computation(
            lambda w, x: jax.lax.scan(lambda x, w: (x @ w, None), x, w)[0],
            name="blocks")(w, x)
        # A cumulative sum over the layers mixes the pieces' rows.
        return y, jnp.cumsum(w, axis=0)

    w = jax.random.normal(jax.random.PRNGKey(1), (4, 3, 3))
    x = jnp.ones(3)
    with pytest.warns(mpmd.StackGatheredWarning, match="cumsum"):
        result = mpmd.jit(step, config)(w, x)
    assert_trees_close(result, jax.jit(step)(w, x))


def test_every_program_on_one_mesh_of_several_warns():
    config = mpmd.make_config(topology_of(2), {"blocks": "m0"})

    def run(w, x):
        return mpmd.named_computation(
            lambda w, x: jax.lax.scan(lambda x, w: (x @ w, None), x, w)[0],
            name="blocks")(w, x)

    with pytest.warns(UserWarning, match="mesh 'm1' of the topology runs no "
                      "program: every program runs on 'm0'"):
        mpmd.jit(run, config).lower(jnp.ones((2, 3, 3)), jnp.ones(3))
    split = _one_stack_config(blocks=["m0", "m1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mpmd.jit(run, split).lower(jnp.ones((2, 3, 3)), jnp.ones(3))


# --- models of libraries, written as their users write them --------------------

@pytest.mark.parametrize("meshes", [2, 4])
def test_penzai_llama_with_its_layer_stack_unchanged(meshes):
    pytest.importorskip("penzai")
    import penzai_llama  # examples/penzai_llama.py

    ours, theirs, params, expected = penzai_llama.train(
        meshes=meshes, steps=2, layers=4)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)
    assert_trees_close(params, expected)


def test_flax_nnx_scan_model():
    nnx = pytest.importorskip("flax.nnx")

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(DIM, DIM, rngs=rngs)

        def __call__(self, x):
            return jnp.tanh(self.linear(x))

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Linear(DIM, DIM, rngs=rngs)

            @nnx.split_rngs(splits=LAYERS)
            @nnx.vmap(in_axes=(0,), out_axes=0)
            def create(rngs):
                return Block(rngs)
            self.blocks = create(rngs)
            self.head = nnx.Linear(DIM, DIM, rngs=rngs)

        def __call__(self, x):
            x = mpmd.named_computation(lambda m, x: m(x),
                                       name="embed")(self.embed, x)

            @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
            def forward(block, x):
                return block(x)
            x = mpmd.named_computation(forward, name="blocks")(self.blocks, x)
            return mpmd.named_computation(lambda m, x: m(x),
                                          name="head")(self.head, x)

    graphdef, state = nnx.split(Model(nnx.Rngs(0)))

    def loss(state, x, y):
        return jnp.mean((nnx.merge(graphdef, state)(x) - y) ** 2)

    optimizer = optax.adamw(1e-2)
    config = mpmd.make_config(topology_of(4), {
        "embed": "m0", "blocks": ["m0", "m1", "m2", "m3"], "head": "m3"},
        partitioning_options={"pipeline_schedule": "1f1b"})
    train_both(adamw_step(loss, optimizer), config, state,
               optimizer.init(state), mlp_data())


def test_the_stack_primitives_batch_transpose_and_lower():
    from mpmd.frontend.stacks import (stack_concat_p, stack_pad_p,
                                      stack_slice_p)

    bounds = ((0, 1), (1, 3))
    params = {"stack": "s", "bounds": bounds}
    x = jnp.arange(12.0).reshape(3, 4)
    xs = jnp.stack([x, x + 1.0])  # batched on axis 0: the layers are axis 1

    def piece(x):
        return stack_slice_p.bind(x, index=1, **params)

    def pad(p):
        return stack_pad_p.bind(p, index=1, **params)

    def concat(a, b):
        return stack_concat_p.bind(a, b, **params)

    np.testing.assert_array_equal(jax.vmap(piece)(xs), xs[:, 1:3])
    np.testing.assert_array_equal(jax.jit(jax.vmap(pad))(xs[:, 1:3]),
                                  jnp.pad(xs[:, 1:3], ((0, 0), (1, 0), (0, 0))))
    np.testing.assert_array_equal(
        jax.vmap(concat, in_axes=(0, None))(xs[:, :1], x[1:]),
        jnp.concatenate([xs[:, :1], jnp.broadcast_to(x[1:], (2, 2, 4))], 1))
    # Linear: the transpose of taking a piece puts it back among zeros.
    (back,) = jax.linear_transpose(piece, x)(jnp.ones((2, 4)))
    np.testing.assert_array_equal(back, jnp.pad(jnp.ones((2, 4)),
                                                ((1, 0), (0, 0))))
    grads = jax.grad(lambda a, b: jnp.sum(concat(a, b) ** 2),
                     argnums=(0, 1))(x[:1], x[1:])
    np.testing.assert_array_equal(grads[1], 2 * x[1:])
