"""`mpmd.label_modules` labels the submodules of equinox, flax nnx, flax
linen and penzai models from outside, in one call each; each labelled
model trains with optax over 2 meshes with the numbers of `jax.jit` on the
unlabelled model. The snippets of docs/libraries.md are lines of this
file."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from typing import Any, Callable

import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx
from jax.extend import core as jex_core
from penzai import pz
from penzai.models import simple_mlp
from penzai.models.transformer import model_parts
from penzai.models.transformer.variants import llamalike_common

import mpmd
from mpmd.frontend import named_computation_p

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def two_meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    return {f"m{i}": jax.sharding.Mesh(devices[i], ("x",)) for i in range(2)}


def computations(fn: Callable[..., Any], *args: Any) -> list[Any]:
    """The named computations (jaxpr equations) `fn` runs, in program
    order (nested jaxprs such as nnx.jit's included)."""
    found: list[Any] = []

    def visit(jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            if eqn.primitive is named_computation_p:
                found.append(eqn)
                continue
            for sub in jex_core.jaxprs_in_params(eqn.params):
                visit(sub)

    visit(jax.make_jaxpr(fn)(*args).jaxpr)
    return found


def computation_names(fn: Callable[..., Any], *args: Any) -> list[str]:
    return [eqn.params["name"] for eqn in computations(fn, *args)]


def assert_close(actual: Any, expected: Any, rtol: float = 1e-5,
                 atol: float = 1e-6) -> None:
    actual, expected = jax.tree.leaves(actual), jax.tree.leaves(expected)
    assert len(actual) == len(expected)
    for a, b in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol,
                                   atol=atol)


def batch(features: int = 8, outputs: int = 2) -> tuple[jax.Array, jax.Array]:
    x = jax.random.normal(jax.random.PRNGKey(1), (4, features))
    y = jax.random.normal(jax.random.PRNGKey(2), (4, outputs))
    return x, y


# --- equinox -------------------------------------------------------------------


class EqxBlock(eqx.Module):
    norm: eqx.nn.LayerNorm
    mlp: eqx.nn.MLP

    def __init__(self, dim: int, key: jax.Array):
        self.norm = eqx.nn.LayerNorm(dim)
        self.mlp = eqx.nn.MLP(dim, dim, 2 * dim, depth=1, key=key)

    def __call__(self, x: jax.Array) -> jax.Array:
        return x + self.mlp(self.norm(x))


class EqxNet(eqx.Module):
    blocks: list[EqxBlock]
    head: eqx.nn.Linear

    def __init__(self, key: jax.Array):
        keys = jax.random.split(key, 3)
        self.blocks = [EqxBlock(8, keys[i]) for i in range(2)]
        self.head = eqx.nn.Linear(8, 2, key=keys[2])

    def __call__(self, x: jax.Array) -> jax.Array:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def eqx_train_step(static: Any, optimizer: optax.GradientTransformation):
    def train_step(params, opt_state, x, y):
        def loss_fn(params):
            model = eqx.combine(params, static)
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step


def eqx_reference(model: Any, optimizer: Any, x: Any, y: Any,
                  steps: int = 2) -> tuple[Any, Any]:
    params, static = eqx.partition(model, eqx.is_array)
    step = jax.jit(eqx_train_step(static, optimizer))
    opt_state = optimizer.init(params)
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state, x, y)
    return params, loss


def test_equinox_blocks_by_class_train_like_jax_jit():
    model = EqxNet(jax.random.PRNGKey(0))
    # The blocks and the head; the Linears inside the blocks' MLPs are
    # instances too, but the outermost match wins.
    labelled = mpmd.label_modules(model, (EqxBlock, eqx.nn.Linear))
    params, static = eqx.partition(labelled, eqx.is_array)
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)
    x, y = batch()
    config = mpmd.make_config(
        two_meshes(), {"blocks.0": "m0", "blocks.1": "m1", "head": "m1"})
    step = mpmd.jit(eqx_train_step(static, optimizer), config)
    lowered = step.lower(params, opt_state, x, y)
    assert lowered.mesh_order() == {
        "m0": ["blocks.0", "blocks.0(1)"],
        "m1": ["blocks.1", "head", "head(1)", "blocks.1(1)"]}
    for _ in range(2):
        params, opt_state, loss = step(params, opt_state, x, y)
    ref_params, ref_loss = eqx_reference(model, optimizer, x, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    # The labelled tree holds the same arrays in the same order; each
    # labelled submodule adds one `.module` step to their paths.
    assert_close(params, ref_params)
    paths = [jax.tree_util.keystr(p) for p, _ in
             jax.tree_util.tree_leaves_with_path(params)]
    assert ".blocks[0].module.norm.weight" in paths
    assert ".head.module.weight" in paths


def test_equinox_by_glob_with_auto_assignment():
    model = EqxNet(jax.random.PRNGKey(0))
    labelled = mpmd.label_modules(model, "blocks.*", prefix="net")
    params, static = eqx.partition(labelled, eqx.is_array)
    x, y = batch()
    assert computation_names(
        lambda p: eqx.combine(p, static)(x[0]), params) == [
            "net.blocks.0", "net.blocks.1"]
    optimizer = optax.sgd(0.1)
    opt_state = optimizer.init(params)
    step = mpmd.jit(eqx_train_step(static, optimizer),
                    mpmd.make_config(two_meshes(), "auto"))
    lowered = step.lower(params, opt_state, x, y)
    assert lowered.assignment == {"net.blocks.0": ("m0", 0),
                                  "net.blocks.1": ("m1", 1)}
    compiled = lowered.compile()
    for _ in range(2):
        params, opt_state, loss = compiled(params, opt_state, x, y)
    ref_params, ref_loss = eqx_reference(model, optimizer, x, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    assert_close(params, ref_params)


def test_equinox_labelled_model_keeps_its_tree_operations():
    model = EqxNet(jax.random.PRNGKey(0))
    labelled = mpmd.label_modules(model, EqxBlock)
    x = jnp.ones(8)
    np.testing.assert_allclose(labelled(x), model(x), rtol=1e-6)
    grads = eqx.filter_grad(lambda m: m(x).sum())(labelled)
    ref = eqx.filter_grad(lambda m: m(x).sum())(model)
    assert_close(grads, ref)
    # Attribute reads go through to the labelled module; the model the
    # call was given is unchanged.
    assert labelled.blocks[1].mlp.width_size == 16
    assert labelled.blocks[1].name == "blocks.1"
    assert isinstance(model.blocks[1], EqxBlock)
    # A labelled submodule is not searched again: labelling the labelled
    # model adds the head, the blocks stay labelled once.
    again = mpmd.label_modules(labelled, eqx.nn.Linear)
    assert computation_names(again, x) == ["blocks.0", "blocks.1", "head"]


def test_module_docstring_example_runs():
    import mpmd.frontend.modules as modules  # noqa: PLC0415

    example = re.search(r"\n\n((?:    .*\n|\n)+?)\n\S",
                        modules.__doc__).group(1)
    namespace: dict[str, Any] = {}
    exec(compile(re.sub(r"(?m)^    ", "", example), "modules.py", "exec"),
         namespace)  # noqa: S102
    model = namespace["model"]
    assert computation_names(lambda x: model(x), jnp.ones(4)) == [
        "layers.0", "layers.1", "layers.2"]


# --- flax nnx ------------------------------------------------------------------


class NnxBlock(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        self.norm = nnx.LayerNorm(dim, rngs=rngs)
        self.up = nnx.Linear(dim, 2 * dim, rngs=rngs)
        self.bn = nnx.BatchNorm(2 * dim, rngs=rngs)
        self.down = nnx.Linear(2 * dim, dim, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return x + self.down(self.bn(nnx.relu(self.up(self.norm(x)))))


class NnxNet(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.blocks = nnx.List([NnxBlock(8, rngs) for _ in range(2)])
        self.head = nnx.Sequential(nnx.Linear(8, 2, rngs=rngs))

    def __call__(self, x: jax.Array) -> jax.Array:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def nnx_train_step(graphdef: Any):
    def train_step(state, x, y):
        model, optimizer = nnx.merge(graphdef, state)
        loss, grads = nnx.value_and_grad(
            lambda model: jnp.mean((model(x) - y) ** 2))(model)
        optimizer.update(model, grads)
        return nnx.state((model, optimizer)), loss

    return train_step


def without_module_steps(state: Any) -> dict[tuple, Any]:
    """A state's leaves by path, the `module` steps of labels left out."""
    return {tuple(k for k in path if k != "module"): np.asarray(v.get_value())
            for path, v in nnx.to_flat_state(state)}


def test_nnx_blocks_train_like_jax_jit_and_keep_batch_stats():
    model = NnxNet(nnx.Rngs(0))
    labelled = mpmd.label_modules(model, ["blocks.0", "blocks.1",
                                          "head.layers.0"])
    tx = optax.sgd(0.1, momentum=0.9)
    graphdef, state = nnx.split(
        (labelled, nnx.Optimizer(labelled, tx, wrt=nnx.Param)))
    x, y = batch()
    config = mpmd.make_config(two_meshes(), {
        "blocks.0": "m0", "blocks.1": "m1", "head.layers.0": "m1"})
    step = mpmd.jit(nnx_train_step(graphdef), config)
    assert step.lower(state, x, y).mesh_order() == {
        "m0": ["blocks.0", "blocks.0(1)"],
        "m1": ["blocks.1", "head.layers.0", "head.layers.0(1)",
               "blocks.1(1)"]}
    for _ in range(2):
        state, loss = step(state, x, y)

    ref_graphdef, ref_state = nnx.split(
        (model, nnx.Optimizer(model, tx, wrt=nnx.Param)))
    reference = jax.jit(nnx_train_step(ref_graphdef))
    for _ in range(2):
        ref_state, ref_loss = reference(ref_state, x, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    got, want = without_module_steps(state), without_module_steps(ref_state)
    assert got.keys() == want.keys()
    for path in want:
        np.testing.assert_allclose(got[path], want[path], rtol=1e-5,
                                   atol=1e-6, err_msg=str(path))
    # The batch statistics the labelled blocks wrote came back out.
    mean = (0, "blocks", 0, "bn", "mean")
    assert np.abs(got[mean]).max() > 0


def test_nnx_labels_a_copy_and_keeps_rng_updates():
    class Noisy(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.linear = nnx.Linear(4, 4, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array, *, train: bool) -> jax.Array:
            return self.dropout(self.linear(x), deterministic=not train)

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.layers = nnx.List([Noisy(rngs), Noisy(rngs)])

        def __call__(self, x: jax.Array, *, train: bool) -> jax.Array:
            for layer in self.layers:
                x = layer(x, train=train)
            return x

    model = Model(nnx.Rngs(0))
    labelled = mpmd.label_modules(model, Noisy, prefix="enc")
    assert isinstance(model.layers[0], Noisy)    # the original is as it was
    assert labelled.layers[0].linear.in_features == 4
    reference = nnx.clone(model)
    x = jnp.ones((2, 4))
    # A Python bool argument stays a bool the module can branch on.
    run = nnx.jit(lambda m, x: m(x, train=True))
    for _ in range(2):
        np.testing.assert_allclose(run(labelled, x), run(reference, x),
                                   rtol=1e-6)
    count = labelled.layers[1].module.dropout.rngs.count
    assert int(count.get_value()) == int(
        reference.layers[1].dropout.rngs.count.get_value()) > 0
    graphdef, state = nnx.split(labelled)
    # Without dropout the calls write nothing: each computation returns
    # its output only, not the parameters it read.
    evaluated = computations(
        lambda s: nnx.merge(graphdef, s)(x, train=False), state)
    assert [(e.params["name"], len(e.outvars)) for e in evaluated] == [
        ("enc.layers.0", 1), ("enc.layers.1", 1)]


def test_nnx_rngs_passed_as_argument_are_advanced():
    class Noisy(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.linear = nnx.Linear(4, 4, rngs=rngs)

        def __call__(self, x: jax.Array, rngs: nnx.Rngs) -> jax.Array:
            return nnx.Dropout(0.5)(self.linear(x), rngs=rngs)

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.noisy = Noisy(rngs)

    model = Model(nnx.Rngs(0))
    labelled = mpmd.label_modules(model, "noisy")
    x = jnp.ones((2, 4))
    rngs, ref_rngs = nnx.Rngs(dropout=1), nnx.Rngs(dropout=1)
    for _ in range(2):
        np.testing.assert_allclose(labelled.noisy(x, rngs),
                                   model.noisy(x, ref_rngs), rtol=1e-6)
    assert int(rngs.dropout.count.get_value()) == 2


# --- flax linen ------------------------------------------------------------------


class LinenBlock(nn.Module):
    dim: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.Dense(2 * self.dim)(nn.LayerNorm()(x))
        return x + nn.Dense(self.dim)(nn.gelu(h))


class LinenNet(nn.Module):
    depth: int = 2

    def setup(self):
        self.blocks = [LinenBlock(8) for _ in range(self.depth)]
        self.head = nn.Dense(2)

    def __call__(self, x: jax.Array) -> jax.Array:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def linen_train_step(labelled: Any, optimizer: optax.GradientTransformation):
    """The step of `labelled` (a LinenLabelled, or the plain module)."""
    def train_step(params, opt_state, x, y):
        def loss_fn(params):
            out = labelled.apply({"params": params}, x)
            return jnp.mean((out - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step


def test_linen_blocks_train_like_jax_jit():
    model = LinenNet()
    labelled = mpmd.label_modules(model, (LinenBlock, nn.Dense))
    x, y = batch()
    params = labelled.init(jax.random.PRNGKey(0), x)["params"]
    # The same variables as the module's own init.
    assert_close(params, model.init(jax.random.PRNGKey(0), x)["params"])
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)
    config = mpmd.make_config(two_meshes(), {
        "blocks_0": "m0", "blocks_1": "m1", "head": "m1"})
    step = mpmd.jit(linen_train_step(labelled, optimizer), config)
    assert step.lower(params, opt_state, x, y).mesh_order() == {
        "m0": ["blocks_0", "blocks_0(1)"],
        "m1": ["blocks_1", "head", "head(1)", "blocks_1(1)"]}
    for _ in range(2):
        params, opt_state, loss = step(params, opt_state, x, y)

    ref_params = model.init(jax.random.PRNGKey(0), x)["params"]
    ref_opt_state = optimizer.init(ref_params)
    reference = jax.jit(linen_train_step(model, optimizer))
    for _ in range(2):
        ref_params, ref_opt_state, ref_loss = reference(
            ref_params, ref_opt_state, x, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    assert_close(params, ref_params)


def test_linen_names_by_path_glob():
    model = LinenNet(depth=3)
    labelled = mpmd.label_modules(model, "blocks_[0-1].Dense_*",
                                  prefix="lm")
    x, _ = batch()
    variables = labelled.init(jax.random.PRNGKey(0), x)
    assert computation_names(
        lambda v: labelled.apply(v, x), variables) == [
            "lm.blocks_0.Dense_0", "lm.blocks_0.Dense_1",
            "lm.blocks_1.Dense_0", "lm.blocks_1.Dense_1"]
    np.testing.assert_allclose(labelled.apply(variables, x),
                               model.apply(variables, x), rtol=1e-6)


def test_linen_module_writing_variables_is_refused():
    class Normed(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array, train: bool) -> jax.Array:
            return nn.BatchNorm(use_running_average=not train)(nn.Dense(4)(x))

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array, train: bool) -> jax.Array:
            return Normed()(x, train)

    labelled = mpmd.label_modules(Model(), Normed)
    x = jnp.ones((2, 4))
    variables = labelled.init(jax.random.PRNGKey(0), x, False)
    # Reading the statistics is fine; writing them is not supported yet.
    assert computation_names(lambda v: labelled.apply(v, x, False),
                             variables) == ["Normed_0"]
    with pytest.raises(mpmd.FrontendError,
                       match=r"not supported yet: the labelled linen module "
                             r"'Normed_0' \(Normed\) writes variables \(in "
                             r"\['batch_stats'\]\)"):
        labelled.apply(variables, x, True, mutable=["batch_stats"])


# --- penzai ----------------------------------------------------------------------


def with_numpy_parameters(build: Callable[[Any], Any]) -> Any:
    """`build(init_base_rng)` as penzai builds it, its parameters drawn by
    numpy: penzai's initializers compile one XLA program per parameter
    shape, seconds on this machine's 2 cores."""
    shapes = jax.eval_shape(
        lambda key: pz.unbind_params(build(key), freeze=True)[1],
        jax.random.key(0))
    rng = np.random.default_rng(0)
    values = jax.tree.map(
        lambda s: jnp.asarray(0.3 * rng.standard_normal(s.shape), s.dtype),
        shapes)
    return build(None).bind_variables(
        [value.unfreeze_as_copy() for value in values])


@functools.cache
def tiny_llama(use_layer_stack: bool = False) -> Any:
    """A Llama-like model of 2 blocks (built once; labelling does not
    change it)."""
    config = llamalike_common.LlamalikeTransformerConfig(
        num_kv_heads=1, query_head_multiplier=2, embedding_dim=8,
        projection_dim=4, mlp_hidden_dim=16, num_decoder_blocks=2,
        vocab_size=11, mlp_variant="swiglu", tie_embedder_and_logits=False,
        parameter_dtype=jnp.float32, activation_dtype=jnp.float32,
        use_layer_stack=use_layer_stack)
    return with_numpy_parameters(
        lambda key: llamalike_common.build_llamalike_transformer(
            config, init_base_rng=key))


def penzai_train_step(unbound: Any, optimizer: optax.GradientTransformation):
    def train_step(params, opt_state, x, y):
        def loss_fn(params):
            model = unbound.bind_variables(params)
            out = model(pz.nx.wrap(x).tag("batch", "features"))
            return jnp.mean((out.unwrap("batch", "features") - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step


def test_penzai_mlp_trains_like_jax_jit():
    model = with_numpy_parameters(lambda key: simple_mlp.MLP.from_config(
        init_base_rng=key, feature_sizes=[8, 16, 16, 2]))
    # sublayers: Affine, Elementwise, Affine, Elementwise, Affine.
    labelled = mpmd.label_modules(model, "sublayers.*")
    unbound, params = pz.unbind_params(labelled, freeze=True)
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)
    x, y = batch()
    config = mpmd.make_config(two_meshes(), {
        "sublayers.0": "m0", "sublayers.1": "m0", "sublayers.2": "m0",
        "sublayers.3": "m1", "sublayers.4": "m1"})
    step = mpmd.jit(penzai_train_step(unbound, optimizer), config)
    assert step.lower(params, opt_state, x, y).mesh_order() == {
        "m0": ["sublayers.0", "sublayers.1", "sublayers.2", "sublayers.2(1)",
               "sublayers.1(1)", "sublayers.0(1)"],
        "m1": ["sublayers.3", "sublayers.4", "sublayers.4(1)",
               "sublayers.3(1)"]}
    for _ in range(2):
        params, opt_state, loss = step(params, opt_state, x, y)

    ref_unbound, ref_params = pz.unbind_params(model, freeze=True)
    ref_opt_state = optimizer.init(ref_params)
    reference = jax.jit(penzai_train_step(ref_unbound, optimizer))
    for _ in range(2):
        ref_params, ref_opt_state, ref_loss = reference(
            ref_params, ref_opt_state, x, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    assert_close(params, ref_params)


def test_penzai_by_class_and_layer_stack():
    model = tiny_llama()
    labelled = mpmd.label_modules(model, model_parts.TransformerBlock)
    tokens = pz.nx.wrap(jnp.arange(12).reshape(2, 6) % 11).tag(
        "batch", "seq")
    positions = pz.nx.arange("seq", 6)
    # Called as it is, with its bound (mutable) parameters.
    def logits(model: Any) -> Callable[[Any], jax.Array]:
        return lambda t: model(t, token_positions=positions).unwrap(
            "batch", "seq", "vocabulary")

    assert computation_names(logits(labelled), tokens) == [
        "body.sublayers.1", "body.sublayers.2"]
    np.testing.assert_allclose(jax.jit(logits(labelled))(tokens),
                               jax.jit(logits(model))(tokens), rtol=1e-5,
                               atol=1e-6)

    stacked = tiny_llama(use_layer_stack=True)
    labelled = mpmd.label_modules(stacked, pz.nn.LayerStack)
    assert computation_names(logits(labelled), tokens) == [
        "body.sublayers.1"]
    np.testing.assert_allclose(jax.jit(logits(labelled))(tokens),
                               jax.jit(logits(stacked))(tokens), rtol=1e-5,
                               atol=1e-6)
    # A LayerStack's inside is not searched: its blocks are one layer.
    # The error says so.
    with pytest.raises(mpmd.FrontendError, match=r"'body.sublayers.1' "
                                                 r"\(LayerStack\)"):
        mpmd.label_modules(stacked, model_parts.TransformerBlock)


# --- errors and imports ------------------------------------------------------------


def test_selecting_nothing_names_the_request_and_some_paths():
    with pytest.raises(mpmd.FrontendError, match=(
            r"selected nothing in EqxNet: no submodule is at a path "
            r"matching 'layers\.\*'; its submodules include 'head' "
            r"\(Linear\), 'blocks\.0' \(EqxBlock\), 'blocks\.1' "
            r"\(EqxBlock\), 'blocks\.0\.norm' \(LayerNorm\), .* and 3 "
            r"more")):
        mpmd.label_modules(EqxNet(jax.random.PRNGKey(0)), "layers.*")
    with pytest.raises(mpmd.FrontendError,
                       match=r"no submodule is an instance of NnxBlock; "
                             r"its submodules include 'layers' \(List\)"):
        mpmd.label_modules(nnx.Sequential(nnx.Linear(2, 2,
                                                     rngs=nnx.Rngs(0))),
                           NnxBlock)
    # linen modules exist only while init or apply runs: checked there.
    labelled = mpmd.label_modules(LinenNet(), nn.BatchNorm)
    with pytest.raises(mpmd.FrontendError,
                       match=r"no submodule is an instance of BatchNorm; its "
                             r"submodules include 'blocks_0' \(LinenBlock\)"):
        labelled.init(jax.random.PRNGKey(0), jnp.ones((1, 8)))


def test_exact_paths_must_exist():
    model = EqxNet(jax.random.PRNGKey(0))
    with pytest.raises(mpmd.FrontendError,
                       match=r"no submodule of EqxNet at \['block\.1'\] \(did "
                             r"you mean \['blocks\.0', 'blocks\.1', 'blocks\.1\.mlp'\]\?\)"):
        mpmd.label_modules(model, ["blocks.0", "block.1"])
    labelled = mpmd.label_modules(model, ["head"])
    assert computation_names(labelled, jnp.ones(8)) == ["head"]
    by_predicate = mpmd.label_modules(
        model, lambda path, module: path.endswith(".mlp"))
    assert computation_names(by_predicate, jnp.ones(8)) == [
        "blocks.0.mlp", "blocks.1.mlp"]


def test_unsupported_models_and_selections():
    with pytest.raises(mpmd.FrontendError,
                       match=r"supports models of equinox \(eqx\.Module\), "
                             r"flax nnx \(nnx\.Module\), flax linen "
                             r"\(nn\.Module\) and penzai \(pz\.nn\.Layer\); "
                             r"got a builtins\.dict"):
        mpmd.label_modules({"w": jnp.ones(2)}, "w")
    with pytest.raises(mpmd.FrontendError, match=r"select must be a class"):
        mpmd.label_modules(EqxNet(jax.random.PRNGKey(0)), 3)
    # Names follow named_computation's rules.
    with pytest.raises(mpmd.InvalidNameError, match=r"partir\."):
        mpmd.label_modules(EqxNet(jax.random.PRNGKey(0)), "head",
                           prefix="partir")


def test_mpmd_imports_no_model_library():
    code = ("import sys, jax, equinox as eqx, mpmd\n"
            "m = eqx.nn.MLP(2, 2, 4, depth=1, key=jax.random.PRNGKey(0))\n"
            "mpmd.label_modules(m, 'layers.*')\n"
            "print(sorted(n for n in ('flax', 'penzai') "
            "if n in sys.modules))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"


@pz.pytree_dataclass
class CountingLayer(pz.nn.Layer):
    calls: pz.StateVariable

    def __call__(self, x: jax.Array, /, **side_inputs: Any) -> jax.Array:
        self.calls.value = self.calls.value + 1
        return 2 * x


def test_penzai_state_variables_written_in_a_label_are_kept():
    model = pz.nn.Sequential([
        CountingLayer(pz.StateVariable(jnp.zeros(()), label="calls")),
        pz.nn.Elementwise(jnp.tanh)])
    labelled = mpmd.label_modules(model, CountingLayer)
    np.testing.assert_allclose(labelled(jnp.ones(3)), jnp.tanh(2.0),
                               rtol=1e-6)
    assert float(labelled.sublayers[0].calls.value) == 1.0
    # Under jit, through penzai's own functional call.
    unbound, variables = pz.unbind_variables(labelled, freeze=True)
    _, (calls,) = jax.jit(unbound.stateless_call)(variables, jnp.ones(3))
    assert float(calls.value) == 2.0
    assert computation_names(unbound.stateless_call, variables,
                             jnp.ones(3)) == ["sublayers.0"]


def test_docs_snippets_are_lines_of_these_tests():
    text = open(os.path.join(ROOT, "docs", "libraries.md"),
                encoding="utf-8").read()
    ours = {line.strip() for line in open(__file__, encoding="utf-8")}
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 4
    for block in blocks:
        for line in block.splitlines():
            assert not line.strip() or line.strip() in ours, line
