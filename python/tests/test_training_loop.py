"""The training loop as users write it (issue 22): an MLP of 4 named
layers on 4 meshes, an optax optimizer, 8 microbatches with
`mpmd.fori_loop`, called again and again on its own results.

Placement must stay put across calls (no drift of parameters to one mesh,
no compile after the second call), and what goes wrong must be said in the
user's terms: pytree paths, Python option names, the user's own line."""

from __future__ import annotations

import os
import re
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import Mesh

import mpmd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples"))
import models  # noqa: E402

DIM = 16
LAYERS = 4


def meshes() -> dict[str, Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(LAYERS, 2)
    return {f"m{i}": Mesh(devices[i], ("x",)) for i in range(LAYERS)}


def init_params() -> dict:
    keys = jax.random.split(jax.random.PRNGKey(0), LAYERS)
    return {f"layer{i}": {"w": jax.random.normal(keys[i], (DIM, DIM)) * 0.1,
                          "b": jnp.zeros(DIM)} for i in range(LAYERS)}


layer = models.tanh_layer


def loss_fn(params, x, y):
    # Written here (not models.layers_loss): the warnings name this line.
    for i in range(LAYERS):
        x = mpmd.named_computation(layer, name=f"layer{i}")(
            params[f"layer{i}"], x)
    return jnp.mean((x - y) ** 2)


def make_step(optimizer):
    return models.optimizer_over_microbatches(loss_fn, optimizer)


def data(microbatches: int = 8):
    xs = jax.random.normal(jax.random.PRNGKey(1), (microbatches, 4, DIM))
    ys = jax.random.normal(jax.random.PRNGKey(2), (microbatches, 4, DIM))
    return xs, ys


def stage_assignment() -> dict:
    return {f"layer{i}": (f"m{i}", i) for i in range(LAYERS)}


def mesh_of(array: jax.Array, topology: dict[str, Mesh]) -> str:
    devices = set(array.sharding.device_set)
    return next(name for name, mesh in topology.items()
                if set(mesh.devices.flat) == devices)


def layer_of(path: str) -> int | None:
    match = re.search(r"layer(\d)", path)
    return None if match is None else int(match.group(1))


OPTIMIZERS = {
    "adam": lambda: optax.adam(1e-2),
    "adamw": lambda: optax.adamw(1e-2, weight_decay=1e-3),
    "sgd_momentum": lambda: optax.sgd(1e-2, momentum=0.9),
    "clip_adam": lambda: optax.chain(optax.clip_by_global_norm(1.0),
                                     optax.adam(1e-2)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_parameters_and_optimizer_state_stay_on_their_stage(name):
    """Six calls, each on the previous one's results: every per-layer
    array (parameters, moments, momentum) stays on its layer's mesh, calls
    3-6 reuse call 2's executable, and the numbers are jax.jit's."""
    topology = meshes()
    optimizer = OPTIMIZERS[name]()
    step = make_step(optimizer)
    config = mpmd.make_config(
        topology, stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    f = mpmd.jit(step, config)
    reference = jax.jit(step)
    params = init_params()
    p, o = params, optimizer.init(params)
    rp, ro = params, optimizer.init(params)
    xs, ys = data()
    for call in range(6):
        p, o, loss = f(p, o, xs, ys)
        rp, ro, ref_loss = reference(rp, ro, xs, ys)
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
        for path, leaf in jax.tree_util.tree_leaves_with_path((p, o)):
            index = layer_of(jax.tree_util.keystr(path))
            if index is not None:
                assert mesh_of(leaf, topology) == f"m{index}", (
                    f"call {call + 1}: {jax.tree_util.keystr(path)} is on "
                    f"{mesh_of(leaf, topology)}, not m{index}")
        # Host arrays, then the same layouts committed: one program.
        programs = {id(compiled) for compiled in f._cache.values()}
        assert len(programs) == 1, f"call {call + 1} compiled again"
    for actual, expected in zip(jax.tree.leaves((p, o)),
                                jax.tree.leaves((rp, ro))):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected),
                                   rtol=2e-5, atol=1e-6)


def test_global_norm_moves_scalars_not_gradients():
    """clip_by_global_norm needs every mesh's squared norm on every mesh:
    those scalars cross, the gradients stay (no 16x16 gradient is
    transferred between meshes)."""
    optimizer = OPTIMIZERS["clip_adam"]()
    config = mpmd.make_config(
        meshes(), stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    params = init_params()
    text = mpmd.jit(make_step(optimizer), config).lower(
        params, optimizer.init(params), *data()).as_text()
    moved = re.findall(r"mpmd\.transfer %\S+ : \(!mpmd\.mesh_tensor<"
                       r"\"m\d\", tensor<([^>]*)>", text)
    assert "16x16xf32" not in moved and "16xf32" not in moved, moved
    assert "f32" in moved  # the squared norms


def adam_config(**options):
    return mpmd.make_config(
        meshes(), stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b", **options})


def test_adam_without_infer_transfers():
    """Adam's step count is an argument used on every mesh: arguments move
    to the meshes that use them (as in Shardy:MPMD), so the loop needs no
    infer_transfers."""
    optimizer = optax.adam(1e-2)
    params = init_params()
    f = mpmd.jit(make_step(optimizer), adam_config())
    state = optimizer.init(params)
    p, o, loss = f(params, state, *data())
    rp, ro, ref_loss = jax.jit(make_step(optimizer))(params, state, *data())
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    for actual, expected in zip(jax.tree.leaves(p), jax.tree.leaves(rp)):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected),
                                   rtol=2e-5, atol=1e-6)


def between_meshes(params, x):
    """layer0 on m0, a nameless op, layer1 on m1: the op's value must cross
    between the meshes."""
    h = mpmd.named_computation(layer, name="layer0")(params["layer0"], x)
    h = jnp.sqrt(jnp.abs(h))
    return mpmd.named_computation(layer, name="layer1")(params["layer1"], h)


def two_layer_config(**options):
    return mpmd.make_config(
        dict(list(meshes().items())[:2]),
        {"layer0": ("m0", 0), "layer1": ("m1", 1)},
        partitioning_options=options)


def test_missing_transfer_is_told_in_python_terms():
    """The compiler's diagnostic, retold: the Python option that fixes it,
    the user's line, and the compiler's own words kept as a note."""
    params = {k: v for k, v in init_params().items()
              if k in ("layer0", "layer1")}
    x = jnp.ones((4, DIM))
    with pytest.raises(mpmd.CompilerError) as caught:
        mpmd.jit(between_meshes, two_layer_config()).lower(params, x)
    text = str(caught.value)
    headline = text.splitlines()[0]
    # Worded as Shardy:MPMD words it, then ours.
    assert headline.startswith("Mesh assignment is not possible for op as "
                               'it is used in {"m1"} but it can only be '
                               'placed on {"m0"}'), headline
    assert 'partitioning_options={"infer_transfers": True}' in headline
    assert "infer-transfers=true" not in headline
    assert f"(at {__file__}:" in headline  # the user's line
    assert "note: the compiler said:" in text
    assert "Set infer-transfers=true" in text  # the compiler's own words
    # With the option it partitions and trains like jax.jit.
    lowered = mpmd.jit(between_meshes, two_layer_config(
        infer_transfers=True)).lower(params, x)
    np.testing.assert_allclose(lowered.compile()(params, x),
                               jax.jit(between_meshes)(params, x), rtol=1e-5)


def test_flat_indices_become_pytree_paths():
    """A diagnostic about a flat argument or result names its pytree path
    and the Python spelling of the options it mentions."""
    from mpmd import diagnostics
    from mpmd.errors import Diagnostic

    error = mpmd.CompilerError("partitioning failed", [Diagnostic(
        "error", "", "argument 8 of @main is used on {\"m0\", \"m1\"}; set "
        "infer-transfers=true, or assign it with input-assignment=8=MESH; "
        "result 1 of @main is unplaced; see output-assignment")])
    paths = [f"args[{i}]" for i in range(8)] + ["opt_state[0].count"]
    retold = diagnostics.retell(error, arguments=paths,
                                results=["result[0]", "result[1]['w']"],
                                committed=[(8, "m0")])
    headline = str(retold).splitlines()[0]
    assert headline.startswith("argument opt_state[0].count is used on")
    assert 'partitioning_options={"infer_transfers": True}' in headline
    assert "input_mesh_assignment (a mesh for opt_state[0].count)" in headline
    assert "result result[1]['w'] is unplaced" in headline
    assert "output_mesh_assignment" in headline
    lines = str(retold).splitlines()
    assert lines[1] == ("note: 1 argument is on the mesh its committed "
                        "sharding names (opt_state[0].count on 'm0'); put "
                        "each on the mesh that uses it, or pass host data and "
                        "let mesh inference place it")
    assert lines[2] == "note: the compiler said:"
    assert "argument 8 of @main" in lines[3]


def test_committed_arguments_the_error_does_not_name_are_not_noted():
    """Committed arguments move to the meshes that use them: when the
    diagnostic is about something else (a nameless op between meshes), no
    note about where they were committed distracts from it."""
    topology = meshes()
    params = jax.tree_util.tree_map_with_path(
        lambda path, x: jax.device_put(x, jax.sharding.NamedSharding(
            topology[f"m{layer_of(jax.tree_util.keystr(path))}"],
            jax.sharding.PartitionSpec())), init_params())
    params = {k: v for k, v in params.items() if k in ("layer0", "layer1")}
    with pytest.raises(mpmd.CompilerError) as caught:
        mpmd.jit(between_meshes, two_layer_config()).lower(
            params, jnp.ones((4, DIM)))
    text = str(caught.value)
    assert "infer_transfers" in text.splitlines()[0]
    assert "committed sharding" not in text, text


def test_committed_arguments_note_names_few():
    """A diagnostic naming many committed arguments: the note gives 3 of
    them and how many more."""
    from mpmd import diagnostics
    from mpmd.errors import Diagnostic

    message = "; ".join(f"argument {i} of @main is used on {{\"m0\", \"m1\"}}"
                        for i in range(5))
    error = mpmd.CompilerError("partitioning failed",
                               [Diagnostic("error", "", message)])
    retold = diagnostics.retell(
        error, arguments=[f"w[{i}]" for i in range(6)], results=[],
        committed=[(i, "m0") for i in range(6)])
    note = str(retold).splitlines()[1]
    assert note.startswith("note: 5 arguments are on the mesh their "
                           "committed sharding names (w[0] on 'm0', "
                           "w[1] on 'm0', w[2] on 'm0' and 2 more)"), note


def test_assignment_typo_names_the_key_and_the_match():
    assignment = stage_assignment()
    assignment["layr3"] = assignment.pop("layer3")
    config = mpmd.make_config(meshes(), assignment)
    optimizer = optax.sgd(1e-2)
    params = init_params()
    with pytest.raises(mpmd.ConfigError) as caught:
        mpmd.jit(make_step(optimizer), config).lower(
            params, optimizer.init(params), *data())
    text = str(caught.value)
    assert "'layer3' is not assigned" in text
    assert "is 'layr3' a typo for 'layer3'?" in text


def sgd_warnings_about(config, text: str) -> list:
    """The warnings mentioning `text` that lowering the SGD step under
    `config` gives; there must be exactly one."""
    optimizer = optax.sgd(1e-2)
    params = init_params()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mpmd.jit(make_step(optimizer), config).lower(
            params, optimizer.init(params), *data())
    about = [w for w in caught if text in str(w.message)]
    assert len(about) == 1, [str(w.message) for w in caught]
    return about


def test_unmatched_assignment_warns_once_at_the_users_line():
    assignment = dict(stage_assignment(), lyer2=("m2", 2))
    config = mpmd.make_config(
        meshes(), assignment,
        partitioning_options={"infer_transfers": True})
    about = sgd_warnings_about(config, "lyer2")
    assert about[0].filename == __file__
    assert "did you mean 'layer2'?" in str(about[0].message)


def python_loop_step(params, xs, ys):
    """Microbatches as a plain Python loop, without call counters."""
    total = 0.0
    grads = jax.tree.map(jnp.zeros_like, params)
    for i in range(xs.shape[0]):
        loss, g = jax.value_and_grad(loss_fn)(params, xs[i], ys[i])
        total += loss
        grads = jax.tree.map(jnp.add, grads, g)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), total


def test_python_loop_without_call_counters_warns():
    config = mpmd.make_config(
        meshes(), stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mpmd.jit(python_loop_step, config).lower(init_params(), *data(4))
    about = [w for w in caught if "nothing to order" in str(w.message)]
    assert len(about) == 1, [str(w.message) for w in caught]
    assert about[0].filename == __file__
    assert "mpmd.fori_loop" in str(about[0].message)


def test_stages_against_the_data_flow_warn():
    assignment = {f"layer{i}": (f"m{i}", LAYERS - 1 - i)
                  for i in range(LAYERS)}
    config = mpmd.make_config(
        meshes(), assignment,
        partitioning_options={"pipeline_schedule": "gpipe",
                              "infer_transfers": True})
    about = sgd_warnings_about(config, "against the data flow")
    assert about[0].filename == __file__
    # The compiler's location is the user's line too (not mpmd's own).
    assert str(about[0].message).startswith(f"{__file__}:")


@pytest.mark.parametrize("mesh_of_stage,fit", [
    ({0: "m0", 1: "m1", 2: "m0", 3: "m1"}, "use interleaved-1f1b"),
    ({0: "m0", 1: "m1", 2: "m1", 3: "m0"},
     "use a V schedule (zero-bubble-v or dualpipe-v"),
])
def test_single_stage_schedule_on_several_stages_names_the_fit(
        mesh_of_stage, fit):
    """Two meshes holding two stages each under 1f1b: the cycle error says
    which schedule would fit (stages in rounds: interleaved-1f1b; in a V:
    zero-bubble-v or dualpipe-v)."""
    topology = dict(list(meshes().items())[:2])
    assignment = {f"layer{i}": (mesh_of_stage[i], i) for i in range(LAYERS)}
    config = mpmd.make_config(
        topology, assignment,
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})
    optimizer = optax.sgd(1e-2)
    params = init_params()
    with pytest.raises(mpmd.CompilerError) as caught:
        mpmd.jit(make_step(optimizer), config).lower(
            params, optimizer.init(params), *data())
    headline = str(caught.value).splitlines()[0]
    assert "contradicts the data flow" in headline
    assert 'mesh "m0" holds stages 0, ' in headline
    assert fit in headline, headline


def test_cost_analysis_has_no_negative_estimates():
    """XLA's "unknown" (-1) is not multiplied into the step's total."""
    optimizer = optax.adam(1e-2)
    params = init_params()
    lowered = mpmd.jit(make_step(optimizer), adam_config(
        infer_transfers=True)).lower(params, optimizer.init(params), *data())
    cost = lowered.cost_analysis()
    assert cost.get("flops", 0) > 0
    assert all(value >= 0 for value in cost.values()), cost
