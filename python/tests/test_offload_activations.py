"""The offload_activations option: forward residuals wait in the mesh's
pinned host memory while other microbatches run, and come back one fragment
before their backward. The step equals jax.jit; the plan moves what it
says, where it says; device memory drops by what moved to the host, as
predicted and as measured."""

from __future__ import annotations

import collections

import pytest

import mpmd
from mpmd.config import ConfigError
from mpmd.errors import CompilerError
from mpmd.runtime import executor as executor_module
from mpmd.runtime.executor import UnsupportedMemoryKindError
from mpmd.runtime.plan import CallStep, TransferStep

from meshes import (MESHES, assert_trains_like_jit, four_meshes,
                    lower_transformer as lower)
import models


def host_moves(plan):
    """(to host, back to device) transfer steps per mesh."""
    out = collections.defaultdict(lambda: [[], []])
    for index, step in enumerate(plan.steps):
        if isinstance(step, TransferStep) and step.source == step.target:
            back = step.type.memory_kind in (None, "device")
            out[step.target][back].append(index)
    return out


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_offload_trains_like_jax_jit_and_saves_device_memory(schedule):
    plain, _ = lower(schedule)
    lowered, (params, tokens, targets) = lower(
        schedule, offload_activations=True)
    compiled = lowered.compile()
    assert_trains_like_jit(compiled, models.transformer_microbatched_step,
                           params, tokens, targets)

    moves = host_moves(lowered.plan)
    assert not host_moves(plain.plan)
    # Under 1F1B the last mesh runs each microbatch's forward and backward
    # back to back: nothing waits there. Under GPipe every mesh runs all
    # forwards first.
    offloading = MESHES if schedule == "gpipe" else MESHES[:-1]
    for mesh in MESHES:
        away, back = moves.get(mesh, ([], []))
        assert len(away) == len(back)
        assert bool(away) == (mesh in offloading), mesh

    _, without = plain.compile().run_with_memory(params, tokens, targets)
    _, with_offload = compiled.run_with_memory(params, tokens, targets)
    for row in with_offload:
        # The plan walk and the live arrays agree, in both memories.
        assert row.measured.step_bytes == row.predicted.step_bytes
        assert row.measured.host_bytes == row.predicted.host_bytes
        if row.mesh in offloading:
            assert row.measured.host_bytes > 0
        else:
            assert row.measured.host_bytes == 0
    assert all(row.measured.host_bytes == 0 for row in without)
    # The first mesh holds the most microbatches in flight: its device peak
    # drops (under 1F1B the stage-3 mesh m3 gets its residuals back as
    # soon as they would count, so only the early meshes gain).
    for mesh in ("m1", "m2"):
        assert with_offload[mesh].measured.step_bytes < \
            without[mesh].measured.step_bytes
    text = with_offload.text()
    assert "host p/m" in text


def test_reload_comes_back_one_fragment_before_the_backward():
    lowered, _ = lower("1f1b", offload_activations=True)
    steps = lowered.plan.steps
    moves = host_moves(lowered.plan)
    checked = 0
    for mesh, (_, back) in moves.items():
        for index in back:
            value = steps[index].output
            calls = [s for s in steps[index + 1:]
                     if isinstance(s, CallStep) and s.mesh == mesh]
            # The next program of the mesh runs while the copy comes back;
            # the one after it (the backward) reads it.
            assert value not in calls[0].inputs
            assert value in calls[1].inputs
            assert calls[1].kind == "B"
            checked += 1
        # Away before any other program of the mesh runs.
        for index in moves[mesh][0]:
            source = steps[index].input
            made = next(i for i, s in enumerate(steps)
                        if isinstance(s, CallStep) and source in s.outputs)
            between = [s for s in steps[made + 1:index]
                       if isinstance(s, CallStep) and s.mesh == mesh]
            assert not between
    assert checked > 0


def test_offload_names_limits_it_to_those_computations():
    lowered, (params, tokens, targets) = lower(
        "1f1b", offload_activations=["block1"])
    moves = host_moves(lowered.plan)
    assert set(moves) == {"m2"}  # block1 is m2's stage
    assert_trains_like_jit(lowered.compile(),
                           models.transformer_microbatched_step,
                           params, tokens, targets, steps=1)


def test_unknown_offload_name_is_a_compiler_error():
    with pytest.raises(CompilerError,
                       match=r"offload-activations names 'blok1', which no "
                       r"fragment comes from; named computations here: "
                       r"block0, block1"):
        lower("1f1b", offload_activations=["blok1"])


@pytest.mark.parametrize("value,message", [
    ([], r"offload_activations is an empty list"),
    ("block1", r"offload_activations is 'block1'; give True, False, or a "
               r"list"),
    (["block1", 3], r"offload_activations names 3, which is not a named "
                    r"computation name"),
    ([""], r"offload_activations names '', which is not"),
])
def test_bad_offload_values_are_config_errors(value, message):
    with pytest.raises(ConfigError, match=message):
        mpmd.make_config(four_meshes(), {"embed": "m1"},
                         partitioning_options={"offload_activations": value})


def test_offload_and_remat_together_is_a_config_error():
    with pytest.raises(ConfigError, match=r"offload_activations moves the "
                       r"residuals remat .* choose one"):
        mpmd.make_config(four_meshes(), {"embed": "m1"},
                         partitioning_options={"offload_activations": True,
                                               "mpmd_fragment_remat": True})


def test_names_are_kept_as_a_tuple():
    config = mpmd.make_config(
        four_meshes(), {"embed": "m1"},
        partitioning_options={"offload_activations": ["embed"]})
    assert config.partitioning_options.offload_activations == ("embed",)
    assert config.partitioning_options["offload_activations"] == ("embed",)


def test_backend_without_host_memory_is_refused(monkeypatch):
    # A backend whose devices have only device memory: lowering with
    # offloading says so before partitioning...
    monkeypatch.setattr(executor_module, "device_memory_kinds",
                        lambda device: frozenset({"device"}))
    with pytest.raises(UnsupportedMemoryKindError,
                       match=r"offload_activations needs a 'pinned_host' "
                       r"memory, and device 0 \(cpu\) of mesh 'm1' has "
                       r"\['device'\]: not supported on this backend"):
        lower("1f1b", offload_activations=True)
    monkeypatch.undo()
    # ...and a plan that keeps values in host memory is refused when its
    # programs are compiled for such devices.
    lowered, _ = lower("1f1b", offload_activations=True)
    monkeypatch.setattr(executor_module, "device_memory_kinds",
                        lambda device: frozenset({"device"}))
    with pytest.raises(UnsupportedMemoryKindError,
                       match=r"an offloaded activation needs a 'pinned_host' "
                       r"memory, and device \d+ \(cpu\) of mesh 'm\d' has "
                       r"\['device'\]"):
        lowered.compile()
    assert isinstance(UnsupportedMemoryKindError("x"), mpmd.MpmdError)
    assert mpmd.UnsupportedMemoryKindError is UnsupportedMemoryKindError


def test_moves_within_a_mesh_are_issued_in_batches():
    lowered, (params, tokens, targets) = lower(
        "1f1b", offload_activations=True)
    compiled = lowered.compile()
    compiled(params, tokens, targets)
    steps = lowered.plan.steps

    def intra(step):
        return isinstance(step, TransferStep) and step.source == step.target

    # A run of consecutive moves within one mesh is one step of the C++
    # loop (one batched device_put); everything else is a step of its own.
    expected = []
    made: set[int] = set()
    for i, step in enumerate(steps):
        if intra(step) and i and intra(steps[i - 1]) and \
                step.input not in made:
            made.add(step.output)
            continue
        expected.append(i)
        made = {step.output} if intra(step) else set()
    assert compiled.executor._loop_origin == expected
    assert len(expected) < len(steps) // 2


def _kept_on_host_step(w1, w2, x):
    """A two-stage loss whose stage-1 activation is a named tensor, 'act'."""
    import jax
    import jax.numpy as jnp

    def loss(w1, w2):
        h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                                   name="s1")(w1, x)
        h = mpmd.named_tensor(h, name="act")
        extra = mpmd.named_computation(lambda h: jnp.sin(h), name="s1b")(h)
        return mpmd.named_computation(
            lambda w, h, e: jnp.sum((h @ w) ** 2) + jnp.sum(e),
            name="s2")(w2, h, extra)

    return jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)


def _kept_on_host_config(s1: str = "m1", act: str | None = "m1#pinned_host"):
    """s1, s1b on m1, s2 on m2, and the named tensor act where `act` says.
    act's gradient adds contributions of both meshes: infer_transfers."""
    assignment = {"s1": s1, "s1b": "m1", "s2": "m2"}
    if act is not None:
        assignment["act"] = act
    return mpmd.make_config(dict(list(four_meshes().items())[:2]), assignment,
                            partitioning_options={"infer_transfers": True})


def _kept_on_host_inputs():
    import jax

    w1 = jax.random.normal(jax.random.PRNGKey(0), (8, 8))
    w2 = jax.random.normal(jax.random.PRNGKey(1), (8, 4))
    x = jax.random.normal(jax.random.PRNGKey(2), (4, 8))
    return w1, w2, x


def test_named_tensor_assigned_to_pinned_host_memory():
    # Shardy:MPMD's spelling: a named tensor assigned "m1#pinned_host" is
    # kept in pinned host memory of m1 and brought back for its users.
    import jax
    import numpy as np

    config = _kept_on_host_config()
    assert config.name_to_mesh_assignment["act"] == "m1#pinned_host"
    args = _kept_on_host_inputs()
    lowered = mpmd.jit(_kept_on_host_step, config).lower(*args)
    (loss, grads) = lowered.compile()(*args)
    (want_loss, want_grads) = jax.jit(_kept_on_host_step)(*args)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    away = [s for s in lowered.plan.steps if isinstance(s, TransferStep)
            and s.source == s.target == "m1"
            and s.type.memory_kind == "pinned_host"]
    assert away, "the named tensor never went to host memory"


def test_memory_kind_on_a_named_computation_is_a_config_error():
    config = _kept_on_host_config(s1="m1#pinned_host", act=None)
    with pytest.raises(ConfigError, match=r"assignment\['s1'\] is "
                       r"'m1#pinned_host': a memory kind says where a value "
                       r"lives, so only named tensors take one, and 's1' is "
                       r"a named_computation; assign it to 'm1'"):
        mpmd.jit(_kept_on_host_step, config).lower(*_kept_on_host_inputs())
    with pytest.raises(ConfigError, match=r"assignment\['act'\] is "
                       r"'m1#hbm', whose memory kind 'hbm' is not one of"):
        _kept_on_host_config(act="m1#hbm")


def test_named_tensor_on_host_needs_host_memory(monkeypatch):
    config = _kept_on_host_config()
    monkeypatch.setattr(executor_module, "device_memory_kinds",
                        lambda device: frozenset({"device"}))
    with pytest.raises(UnsupportedMemoryKindError,
                       match=r"named tensor 'act' \(assigned "
                       r"'m1#pinned_host'\) needs a 'pinned_host' memory"):
        mpmd.jit(_kept_on_host_step, config).lower(*_kept_on_host_inputs())
