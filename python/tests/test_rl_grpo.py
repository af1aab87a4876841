"""examples/rl_grpo.py, a toy GRPO loop as one MPMD program per iteration
(policy pipelined with 1F1B over p0, p1; forward-only GPipe loops of a
reference model on "ref" and a reward model on "reward"; a weight sync
with mpmd.reshard to the generation mesh "gen"): every iteration's update
equals jax.jit's, the mean reward rises, and the example runs unchanged
in two processes under mpmd.launch."""

from __future__ import annotations

import os
import re

import pytest

import meshes  # noqa: F401  (puts examples/ on sys.path)
import rl_grpo
from test_multiprocess import launch

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "rl_grpo.py")


def quiet(line: str) -> None:
    print(line)


def test_every_update_equals_jax_jit():
    # run() raises on the first difference beyond rtol 1e-5 / atol 1e-6
    # (3e-6 for parameters after Adam).
    result = rl_grpo.run(iterations=3, microbatches=4, check_jit=True,
                         log=quiet)
    assert len(result["checks"]) == 3
    for shards, worst in result["checks"]:
        # policy (7 leaves) + Adam (count, mu, nu) + gen's copy (7 leaves)
        assert shards > 0 and worst < 1e-5, result["checks"]
    assert all(1 <= s <= rl_grpo.MAX_NEW for s in result["steps"])


def test_early_stops_vary_the_steps_and_the_buckets():
    """With EOS made likely, completions end early: the decode steps vary
    from iteration to iteration, the update runs on both buckets (one
    program each, compiled at the first iteration), and every update
    still equals jax.jit's (run checks each)."""
    result = rl_grpo.run(iterations=6, microbatches=2, check_jit=True,
                         log=quiet, eos_bias=3.0)
    steps = result["steps"]
    assert len(set(steps)) > 1 and min(steps) < rl_grpo.MAX_NEW, steps
    assert set(result["buckets"]) == set(rl_grpo.BUCKETS), result
    for taken, bucket in zip(steps, result["buckets"]):
        assert rl_grpo.PROMPT + taken <= bucket
    assert result["programs"] == len(rl_grpo.BUCKETS)
    assert len(result["checks"]) == 6


def test_mean_reward_rises():
    result = rl_grpo.run(iterations=5, microbatches=4, log=quiet)
    rewards = result["rewards"]
    assert all(0.0 <= r <= 1.0 for r in rewards), rewards
    last = sum(rewards[-2:]) / 2
    assert last > rewards[0] + 0.2, rewards


def test_trace_of_the_update(tmp_path):
    result = rl_grpo.run(iterations=1, microbatches=2,
                         trace_dir=str(tmp_path), log=quiet)
    for name in ("rl_grpo_update", "rl_grpo_update.replay"):
        assert (tmp_path / f"{name}.trace.json").stat().st_size > 0
        assert (tmp_path / f"{name}.svg").stat().st_size > 0
    # The program lets the reference and reward models compute at the same
    # time: with the measured durations on meshes that run in parallel,
    # they overlap. (Whether XLA's CPU client overlapped them in the
    # measured run varies from run to run; the example reports it.)
    assert result["concurrent_simulated"] is True
    assert isinstance(result["concurrent"], bool)


@pytest.mark.multiprocess
def test_two_processes_with_check():
    result = launch(2, 4, "--iterations", "2", "--check", worker=EXAMPLE,
                    timeout=300)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-4000:]
    checks = re.findall(r"^\[(\d)\]\s+check: (\d+) shards, loss and mean "
                        r"reward equal jax\.jit", result.stdout, re.M)
    assert sorted(p for p, _ in checks) == ["0", "0", "1", "1"], text[-4000:]
    # Process 0 holds the policy and its Adam state (p0, p1), process 1
    # the weights synced to "gen".
    assert all(int(n) > 0 for _, n in checks), checks
    curves = {p: re.findall(rf"^\[{p}\]\s+\d+\s+(\S+)\s+(\S+)\s+\d+\s+\d+$",
                            result.stdout, re.M) for p in "01"}
    assert len(curves["0"]) == 2 and curves["0"] == curves["1"], curves
