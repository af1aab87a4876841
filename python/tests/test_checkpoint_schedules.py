"""jax.checkpoint around labelled computations under a pipeline schedule:
autodiff runs each checkpointed computation again for its backward, and
that recompute runs right before the backward (not among the forwards,
where it would keep alive the residuals the user chose to drop). Built-in
schedules, tables and comparators order such programs, which equal
jax.jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import mpmd
from meshes import (MESHES, assert_trains_like_jit, four_meshes,
                    transformer_data)
import models


def checkpointed_logits(params, tokens, heads=2):
    """models.transformer_logits with jax.checkpoint around every label."""
    def labelled(fn, name, *args):
        return jax.checkpoint(mpmd.named_computation(fn, name=name))(*args)

    x = labelled(lambda table, pos, t: table[t] + pos, "embed",
                 params["embed"], params["pos"], tokens)
    for index, p in enumerate(params["blocks"]):
        x = labelled(lambda p, x: models.block(p, x, heads),
                     f"block{index}", p, x)
    return labelled(lambda ln, table, x: models.layer_norm(ln, x) @ table,
                    "head", params["ln_f"], params["unembed"], x)


def checkpointed_loss(params, tokens, targets):
    logp = jax.nn.log_softmax(checkpointed_logits(params, tokens), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


def checkpointed_step(params, tokens, targets):
    return models.sgd_over_microbatches(checkpointed_loss, params, tokens,
                                        targets, 0.05)


def lower(step, schedule):
    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        pipeline_schedule=schedule)
    args = transformer_data(4, 4)
    return mpmd.jit(step, config).lower(*args), args


def orders(lowered) -> dict[str, list[str]]:
    return {mesh: line.split() for mesh, line in
            (line.split(": ", 1) for line in
             lowered.schedule_text().splitlines() if ": " in line)}


def assert_recomputes_right_before_their_backward(order):
    """Each mesh runs every microbatch's recompute (R) right before that
    microbatch's first backward (B), and only there."""
    for mesh, items in order.items():
        recomputes = [i for i, item in enumerate(items) if item[0] == "R"]
        assert recomputes, (mesh, items)
        for i in recomputes:
            assert items[i + 1] == "B" + items[i][1:], (mesh, items)


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_a_recompute_runs_right_before_its_backward(schedule):
    plain, _ = lower(models.transformer_microbatched_step, schedule)
    lowered, args = lower(checkpointed_step, schedule)
    order = orders(lowered)
    assert_recomputes_right_before_their_backward(order)
    # Without the recomputes, the order is the schedule's for the same
    # program without jax.checkpoint: 1F1B stays 1F1B.
    assert {mesh: [i for i in items if i[0] != "R"]
            for mesh, items in order.items()} == orders(plain)
    assert_trains_like_jit(lowered.compile(), checkpointed_step, *args)


def test_merge_remat_fuses_each_recompute_into_its_backward():
    apart, _ = lower(checkpointed_step, "1f1b")
    config = mpmd.make_config(
        four_meshes(), models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b", "remat": True,
                              "merge_remat": True})
    args = transformer_data(4, 4)
    lowered = mpmd.jit(checkpointed_step, config).lower(*args)
    # Where R B ran, one FB program runs: the same order otherwise.
    for mesh, items in orders(apart).items():
        expected = []
        for index, item in enumerate(items):
            if item[0] == "R":
                continue
            if index and items[index - 1][0] == "R":
                item = "F" + item
            expected.append(item)
        assert orders(lowered)[mesh] == expected, mesh
    assert_trains_like_jit(lowered.compile(), checkpointed_step, *args)


def test_checkpoint_saves_memory_under_1f1b():
    # m1 runs four microbatches' forwards before their backwards: without
    # jax.checkpoint their residuals are alive together; with it, only the
    # blocks' inputs are, and each recompute's residuals live until its
    # backward right after.
    plain, args = lower(models.transformer_microbatched_step, "1f1b")
    lowered, _ = lower(checkpointed_step, "1f1b")
    _, without = plain.compile().run_with_memory(*args)
    _, with_checkpoint = lowered.compile().run_with_memory(*args)
    assert with_checkpoint["m1"].measured.step_bytes < \
        without["m1"].measured.step_bytes


def forwards_first(a, b):
    """All forwards (by microbatch), then the backwards."""
    return (a.transpose_count, a.microbatch) < (b.transpose_count,
                                                  b.microbatch)


def test_a_comparator_orders_a_checkpointed_program():
    seen = []

    def before(a, b):
        seen.extend((a.key, b.key))
        return forwards_first(a, b)

    lowered, args = lower(checkpointed_step, before)
    # The comparator sees forwards and backwards, never a recompute.
    assert not [key for key in seen if "[r]" in key]
    order = orders(lowered)
    assert_recomputes_right_before_their_backward(order)
    first_backward = order["m1"].index("B0")
    assert all(item[0] == "F" for item in order["m1"][:first_backward - 1])
    assert_trains_like_jit(lowered.compile(), checkpointed_step, *args)


def test_a_table_lists_forwards_and_backwards_only():
    gpipe, _ = lower(checkpointed_step, "gpipe")
    table = {mesh: [] for mesh in MESHES}
    for step in gpipe.plan.calls():
        if step.call_counter is not None and step.kind in ("F", "B"):
            table[step.mesh].append(step.label())
    lowered, args = lower(checkpointed_step, table)
    assert orders(lowered) == orders(gpipe)
    assert_trains_like_jit(lowered.compile(), checkpointed_step, *args)

    table["m2"].insert(0, "block1[r]#0")
    with pytest.raises(mpmd.CompilerError,
                       match=r"names 'block1\[r\]#0', a forward recomputed "
                             r"for its backward \(jax.checkpoint\): it runs "
                             r"right before that backward"):
        lower(checkpointed_step, table)


def test_jaxlibs_shardy_accepts_the_exported_program():
    from test_shardy_export import check_with_shardy

    lowered, _ = lower(checkpointed_step, "1f1b")
    text = lowered.as_text("mpmd")
    assert "mpmd.remat" in text  # the recomputes, on their calls
    check_with_shardy(text)
