"""jax.lax.while_loop whose body spans meshes: a two-stage greedy decoder
(stage 0 on m1, stage 1 on m2) until EOS or the buffer's end, equal to
jax.jit for prompts that stop after different numbers of steps, its
pieces compiled once whatever the count; and the loops that are refused,
each named."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.while_loops import LoopError
from meshes import four_meshes, xla_compiles

V, D, T, PROMPT = 8, 8, 10, 2
EOS, PAD = 1, 0


def stage0(p, tokens):
    return jnp.tanh(p["emb"][tokens] @ p["w"])


def stage1(p, h):
    return h @ p["out"]


def decode(params, prompt):
    """Greedy decoding into the buffer `prompt` [B, T] from position
    PROMPT until every sequence emitted EOS or the buffer is full. Returns
    (tokens, the next position, done)."""
    def cond(carry):
        _, position, done = carry
        return (position < T) & ~jnp.all(done)

    def body(carry):
        tokens, position, done = carry
        h = mpmd.named_computation(stage0, name="stage0")(params[0], tokens)
        logits = mpmd.named_computation(stage1, name="stage1")(params[1], h)
        last = jax.lax.dynamic_index_in_dim(logits, position - 1, axis=1,
                                            keepdims=False)
        chosen = jnp.where(done, PAD,
                           jnp.argmax(last, -1).astype(tokens.dtype))
        tokens = jax.lax.dynamic_update_index_in_dim(tokens, chosen,
                                                     position, axis=1)
        return tokens, position + 1, done | (chosen == EOS)

    done = jnp.zeros(prompt.shape[0], bool)
    return jax.lax.while_loop(cond, body, (prompt, jnp.int32(PROMPT), done))


def params_and_prompts():
    k = jax.random.split(jax.random.PRNGKey(2), 3)
    params = [{"emb": jax.random.normal(k[0], (V, D)),
               "w": jax.random.normal(k[1], (D, D))},
              {"out": jax.random.normal(k[2], (D, V))}]
    prompts = []
    for seed in (0, 2, 5):  # these stop after 8, 2 and 3 steps
        prompt = np.zeros((2, T), np.int32)
        prompt[:, :PROMPT] = np.random.default_rng(seed).integers(
            2, V, (2, PROMPT))
        prompts.append(prompt)
    return params, prompts


def config():
    meshes = four_meshes()
    return mpmd.make_config({"m1": meshes["m1"], "m2": meshes["m2"]},
                            {"stage0": "m1", "stage1": "m2"})


def test_a_decoder_across_two_meshes_equals_jax_jit():
    params, prompts = params_and_prompts()
    step = mpmd.jit(decode, config())
    reference = jax.jit(decode)
    compiles = []
    steps = []
    for n, prompt in enumerate(prompts):
        with xla_compiles() as seen:
            got = step(params, prompt)
        if n:  # after the first call: nothing compiles any more
            compiles += seen
        want = reference(params, prompt)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        steps.append(int(got[1]) - PROMPT)
    assert len(set(steps)) == 3, steps  # different numbers of iterations
    assert compiles == []
    compiled = step.lower(params, prompts[0]).compile()
    compiled(params, prompts[1])
    assert compiled.iterations == [steps[1]]
    # The pieces: what comes before the loop, its condition and its body
    # (the results are the loop's own: no piece after it).
    assert sorted(compiled.lowered.pieces) == ["before_loop",
                                               "loop_body", "loop_condition"]


def test_loops_that_are_refused_are_named():
    params, prompts = params_and_prompts()

    def two_loops(params, prompt):
        first = decode(params, prompt)[0]
        return decode(params, first)

    with pytest.raises(LoopError, match="two jax.lax.while_loops whose "
                       "bodies hold named computations"):
        mpmd.jit(two_loops, config()).lower(params, prompts[0])
    with pytest.raises(LoopError, match="not supported yet: static "
                       "arguments"):
        mpmd.jit(lambda p, x, k: decode(p, x), config(),
                 static_argnums=2).lower(params, prompts[0], 1)
    nested = jax.jit(decode)
    with pytest.raises(LoopError, match="inside 'jit'; call the loop at the "
                       "top level"):
        mpmd.jit(lambda p, x: nested(p, x), config()).lower(params,
                                                            prompts[0])


@pytest.mark.multiprocess
def test_two_processes_decode_with_one_stage_each():
    """Stage 0 on process 0, stage 1 on process 1: both processes run the
    loop, read the same condition each iteration and equal jax.jit."""
    import os  # noqa: PLC0415
    import re  # noqa: PLC0415

    from test_multiprocess import launch  # noqa: PLC0415

    worker = os.path.join(os.path.dirname(__file__), "multiprocess",
                          "decode.py")
    result = launch(2, 2, worker=worker, timeout=200)
    lines = re.findall(r"process (\d): decode steps \[([\d, ]+)\] equal "
                       r"jax\.jit", result.stdout)
    assert result.returncode == 0 and len(lines) == 2, (
        result.stdout[-4000:] + result.stderr[-2000:])
    assert lines[0][1] == lines[1][1] and len(set(lines[0][1].split(", "))) \
        == 3, lines


def test_a_body_that_cannot_be_partitioned_names_the_loop():
    params, prompts = params_and_prompts()
    meshes = four_meshes()
    config = mpmd.make_config({"m1": meshes["m1"], "m2": meshes["m2"]},
                              {"stage0": "m1"})  # stage1 left out
    with pytest.raises(mpmd.MpmdError) as raised:
        mpmd.jit(decode, config)(params, prompts[0])
    notes = " ".join(getattr(raised.value, "__notes__", []))
    assert "in the body of the jax.lax.while_loop at " in notes, notes
    assert "test_while_loops.py:" in notes, notes
