"""GRPO with generation inside the program: one `mpmd.jit` function per
iteration samples the completions with a `jax.lax.while_loop` over the
policy's meshes (until every sequence emitted EOS or the buffer is full),
then scores them and updates the policy, as `examples/rl_grpo.py` does
with generation outside (same task, models, meshes and update).

    python examples/rl_in_program.py [--iterations 6] [--eos-bias 3]
                                     [--check] [--trace DIR]

The loop's body runs the policy pipelined over p0 (embed, block0) and p1
(block1, head) and samples the next token of every sequence; `mpmd.jit`
cuts the function at the loop (`docs/loops.md`): the loop's condition and
body, and the scoring and update after it, are programs compiled once,
and each iteration of the loop reads the condition (one boolean). The
number of decode steps changes from iteration to iteration (with
`--eos-bias`, EOS's logit raised when sampling, completions end early);
nothing compiles after the first iteration. `--check` runs `jax.jit` of
the same function on the same inputs every iteration and compares the
sampled sequences' decode steps, the loss, the mean reward and every
parameter. No weight sync: the sampler is the policy on its own meshes.
`--trace DIR` writes the trace of the last iteration's scoring and update
(the program after the loop) and its replay, and says whether "ref" and
"reward" computed at the same time in each; the loop's programs run
before it, one iteration after another, so generation does not overlap
the scoring.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import mpmd  # noqa: E402
import rl_grpo as rl  # noqa: E402


def make_iteration(eos_bias: float):
    def iteration(policy, opt_state, ref_params, reward_params, prompts,
                  seed):
        """Samples completions of `prompts` ([M, B, T], new positions PAD)
        with the policy, then runs GRPO's update on them. Returns the new
        policy and Adam state, the mean reward, the loss and the number of
        decode steps."""
        m, b, t = prompts.shape

        def cond(carry):
            _, position, done = carry
            return (position < t) & ~jnp.all(done)

        def body(carry):
            tokens, position, done = carry
            logits = rl.policy_logits(policy, tokens)
            last = jax.lax.dynamic_index_in_dim(logits, position - 1, axis=2,
                                                keepdims=False)
            last = last.at[..., rl.EOS].add(eos_bias)
            key = jax.random.fold_in(jax.random.PRNGKey(rl.SEED + 1),
                                     seed * t + position)
            sampled = jax.random.categorical(key, last).astype(tokens.dtype)
            sampled = jnp.where(done, rl.PAD, sampled)
            tokens = jax.lax.dynamic_update_index_in_dim(tokens, sampled,
                                                         position, axis=2)
            return tokens, position + 1, done | (sampled == rl.EOS)

        tokens, end, _ = jax.lax.while_loop(
            cond, body, (prompts, jnp.int32(rl.PROMPT),
                         jnp.zeros((m, b), bool)))
        policy, opt_state, reward, loss = rl.update(
            policy, opt_state, ref_params, reward_params, tokens)
        return policy, opt_state, reward, loss, end - rl.PROMPT

    return iteration


def run(iterations: int = 6, microbatches: int = 2, eos_bias: float = 0.0,
        check_jit: bool = False, log=print, trace_dir: str | None = None
        ) -> dict:
    """The loop. Returns {"rewards", "losses", "steps", "checks",
    "concurrent", "concurrent_simulated"}."""
    topology = rl.make_topology()
    config = mpmd.make_config(topology, rl.ASSIGNMENT,
                              partitioning_options={"infer_transfers": True})
    iteration_fn = make_iteration(eos_bias)
    step = mpmd.jit(iteration_fn, config)
    reference = jax.jit(iteration_fn) if check_jit else None
    policy, opt_state, ref_params, reward_params = rl.initial_state(
        topology)
    result = {"rewards": [], "losses": [], "steps": [], "checks": [],
              "concurrent": None, "concurrent_simulated": None}
    compiled = None
    log(f"{'iter':>4}  {'mean reward':>11}  {'loss':>9}  {'decode steps':>12}")
    for it in range(iterations):
        args = (policy, opt_state, ref_params, reward_params,
                rl.prompt_tokens(microbatches, it), np.int32(it))
        host_args = mpmd.fetch(args) if check_jit else None
        if compiled is None:
            compiled = step.lower(*args).compile()
        if trace_dir is not None and it == iterations - 1:
            outputs, traces = compiled.run_traced(*args)
            trace, plan = traces["after_loop"]
            result["concurrent"], result["concurrent_simulated"] = \
                rl.write_trace(trace, plan, trace_dir, log)
        else:
            outputs = compiled(*args)
        policy, opt_state, reward, loss, steps = outputs
        reward, loss, steps = (v.item() for v in mpmd.fetch(
            (reward, loss, steps)))
        result["rewards"].append(reward)
        result["losses"].append(loss)
        result["steps"].append(steps)
        log(f"{it:>4}  {reward:>11.4f}  {loss:>9.4f}  {steps:>12}")
        if check_jit:
            want = jax.device_get(reference(*host_args))
            assert int(want[4]) == steps, (int(want[4]), steps)
            worst = 0.0
            for got, expected in zip(
                    jax.tree.leaves(mpmd.fetch((policy, opt_state))),
                    jax.tree.leaves(want[:2])):
                np.testing.assert_allclose(got, expected, rtol=1e-5,
                                           atol=3e-6)
                worst = max(worst, float(np.max(np.abs(
                    np.asarray(got, np.float64) - expected), initial=0.0)))
            for got, expected, name in ((reward, want[2], "mean reward"),
                                        (loss, want[3], "loss")):
                np.testing.assert_allclose(got, expected, rtol=1e-5,
                                           atol=1e-6, err_msg=name)
            result["checks"].append(worst)
            log(f"      check: decode steps, loss, mean reward and every "
                f"parameter equal jax.jit (largest difference {worst:.2e})")
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--microbatches", type=int, default=2)
    parser.add_argument("--eos-bias", type=float, default=0.0)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--trace", default=None, metavar="DIR")
    options = parser.parse_args(argv)
    run(options.iterations, options.microbatches, options.eos_bias,
        options.check, lambda line: print(line, flush=True), options.trace)


if __name__ == "__main__":
    main()
