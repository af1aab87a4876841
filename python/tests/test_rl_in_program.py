"""examples/rl_in_program.py: GRPO with generation inside the program (a
jax.lax.while_loop over the policy's meshes, then scoring and the update
in the same mpmd.jit function): the decode steps vary from iteration to
iteration and every iteration equals jax.jit (run checks each)."""

from __future__ import annotations

import warnings

import meshes  # noqa: F401  (puts examples/ on sys.path)
import rl_in_program


def test_generation_in_the_program_equals_jax_jit(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the pieces warn not
        result = rl_in_program.run(iterations=4, microbatches=2,
                                   eos_bias=3.0, check_jit=True,
                                   log=lambda line: None,
                                   trace_dir=str(tmp_path))
    assert len(result["checks"]) == 4
    assert all(worst < 1e-5 for worst in result["checks"]), result
    steps = result["steps"]
    assert len(set(steps)) > 1 and min(steps) < rl_in_program.rl.MAX_NEW, \
        steps
    # The last iteration's scoring and update, traced: the reference and
    # reward models compute at the same time in the replay.
    for name in ("rl_grpo_update", "rl_grpo_update.replay"):
        assert (tmp_path / f"{name}.trace.json").stat().st_size > 0
    assert result["concurrent_simulated"] is True
