"""A toy GRPO (group relative policy optimization) loop: one MPMD program
per iteration, with four models on their own meshes of 8 CPU devices.

    python examples/rl_grpo.py [--iterations 10] [--microbatches 4]
                               [--trace DIR] [--check] [--eos-bias 3]
    python -m mpmd.launch -n 2 --devices-per-process 4 examples/rl_grpo.py

Meshes (with two processes, devices 0-3 are process 0's, 4-7 process 1's):

  p0      devices 0,1  policy stage 0: "policy_embed", "policy_block0"
  p1      devices 2,3  policy stage 1: "policy_block1", "policy_head"
  ref     device 4     the frozen reference policy: "ref_model"
  reward  device 5     the frozen reward model: "reward_model"
  gen     devices 6,7  generation, with its own layout of the policy's
                       weights (the embedding split over the 2 devices)

The task: prompts of random tokens; the reward of a completion is the
share of its (at most MAX_NEW) new tokens that are the target token 3, a
fixed linear scorer over one-hot tokens. Each iteration

  1. syncs the weights: `mpmd.reshard(policy, gen_shardings)` (device to
     device, across processes when the meshes are on different ones);
  2. samples G completions per prompt on "gen" with a Python loop of a
     `jax.jit`-ted decode step, until every sequence has emitted EOS or
     reached MAX_NEW tokens (a dynamic number of steps);
  3. runs one `mpmd.jit` program, `update`, on the sequences cut to the
     longest completion and padded to the smallest of BUCKETS that holds
     it (`mpmd.length_buckets`: one program per bucket, compiled at the
     first iteration, so new lengths never compile): the reference log-probs (a
     forward-only GPipe loop over the microbatches on "ref"), the rewards
     (a forward-only loop on "reward"), group-relative advantages (nameless
     code), the GRPO loss's gradient accumulated over the microbatches with
     1F1B over p0, p1 (policy gradient with the advantages plus a KL
     penalty to the reference), and an Adam update.

`--eos-bias B` adds B to EOS's logit when sampling (a length penalty):
completions end early and the decode steps vary from iteration to
iteration (with 0, the default, every iteration decodes MAX_NEW steps).
`--check` runs `jax.jit(update)` on the same inputs every iteration and
compares the loss, the mean reward, every parameter and Adam moment, and
the weights synced to "gen" (with several processes: the shards this
process holds; process 0 holds the policy's, process 1 gen's). `--trace DIR`
writes the trace of the last iteration's update (Chrome JSON + SVG) and its
replay (the measured durations with every mesh computing in parallel, which
XLA's CPU client does not do), and says whether "ref" and "reward" computed
at the same time in each.
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import pathlib  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402
import mpmd.distributed  # noqa: E402
from mpmd.launch import NUM_PROCESSES  # noqa: E402
from mpmd.runtime.simulate import replay  # noqa: E402

# ------------------------------------------------------------------ the task

VOCAB = 8
PAD, EOS, TARGET = 0, 1, 3
PROMPT = 2              # prompt tokens
MAX_NEW = 6             # at most this many new tokens per sequence
SEQ = PROMPT + MAX_NEW
BUCKETS = (PROMPT + MAX_NEW // 2, SEQ)   # the update's sequence lengths
DIM = 16
GROUP = 4               # samples per prompt (a GRPO group)
PROMPTS_PER_MICROBATCH = 2
KL_BETA = 0.04
LEARNING_RATE = 3e-2
SEED = 0

ASSIGNMENT = {"policy_embed": ("p0", 0), "policy_block0": ("p0", 0),
              "policy_block1": ("p1", 1), "policy_head": ("p1", 1),
              "ref_model": "ref", "reward_model": "reward",
              "ref_batch": "ref", "reward_batch": "reward"}

optimizer = optax.adam(LEARNING_RATE)


def make_topology() -> dict[str, Mesh]:
    d = jax.devices()
    if len(d) < 8:
        raise SystemExit(f"rl_grpo: needs 8 devices, found {len(d)}")
    mesh = lambda *ids: Mesh(np.array([d[i] for i in ids]), ("x",))  # noqa: E731
    return {"p0": mesh(0, 1), "p1": mesh(2, 3), "ref": mesh(4),
            "reward": mesh(5), "gen": mesh(6, 7)}


# ------------------------------------------------------------------ models

def init_policy(key: jax.Array) -> dict:
    k = jax.random.split(key, 8)
    dense = lambda key, i, o: jax.random.normal(key, (i, o)) / np.sqrt(i)  # noqa: E731

    def block(k1, k2, k3):
        return {"w1": dense(k1, DIM, 2 * DIM), "wm": dense(k2, DIM, 2 * DIM),
                "w2": dense(k3, 2 * DIM, DIM) * 0.5}

    return {"embed": jax.random.normal(k[0], (VOCAB, DIM)) * 0.5,
            "pos": jax.random.normal(k[1], (SEQ, DIM)) * 0.1,
            "block0": block(k[2], k[3], k[4]),
            "block1": block(k[5], k[6], k[7]),
            "head": {"out": jnp.zeros((DIM, VOCAB))}}


def embed(p, tokens):                       # tokens [..., T] -> [..., T, D]
    return p["embed"][tokens] + p["pos"][:tokens.shape[-1]]


def block(p, x):
    """A causal mixing block: each position sees the mean of its prefix."""
    t = x.shape[-2]
    causal = jnp.tril(jnp.ones((t, t))) / jnp.arange(1, t + 1)[:, None]
    prefix = jnp.einsum("st,...td->...sd", causal, x)
    return x + jnp.tanh(x @ p["w1"] + prefix @ p["wm"]) @ p["w2"]


def head(p, x):
    return x @ p["out"]


def logits_of(params, tokens):
    """The policy's logits, unlabelled (the reference and the sampler)."""
    x = embed({"embed": params["embed"], "pos": params["pos"]}, tokens)
    x = block(params["block1"], block(params["block0"], x))
    return head(params["head"], x)


def token_logprobs(logits, tokens):
    """log p(tokens[t + 1] | tokens[:t + 1]): [..., T - 1]."""
    logp = jax.nn.log_softmax(logits[..., :-1, :], axis=-1)
    return jnp.take_along_axis(logp, tokens[..., 1:, None], axis=-1)[..., 0]


def policy_logits(params, tokens):
    """The policy pipelined: embed + block0 on p0, block1 + head on p1."""
    x = mpmd.named_computation(embed, name="policy_embed")(
        {"embed": params["embed"], "pos": params["pos"]}, tokens)
    x = mpmd.named_computation(block, name="policy_block0")(
        params["block0"], x)
    x = mpmd.named_computation(block, name="policy_block1")(
        params["block1"], x)
    return mpmd.named_computation(head, name="policy_head")(
        params["head"], x)


def policy_logprobs(params, tokens):
    return token_logprobs(policy_logits(params, tokens), tokens)


def completion_mask(tokens):
    """1 for the new tokens up to and including the first EOS: [..., T-1],
    aligned with `token_logprobs`."""
    new = jnp.arange(tokens.shape[-1])[1:] >= PROMPT
    return (new & (tokens[..., 1:] != PAD)).astype(jnp.float32)


def reference_logprobs(ref_params, tokens):
    return token_logprobs(logits_of(ref_params, tokens), tokens)


def reward_of(reward_params, tokens):
    """A frozen two-layer scorer over one-hot tokens, summed over the new
    tokens: its weights make it score the share of TARGET (PAD and EOS
    score nothing), and its width makes it cost what a small model costs,
    so that its loop has work to overlap with the reference model's."""
    h = jax.nn.relu(jax.nn.one_hot(tokens[..., PROMPT:], VOCAB)
                    @ reward_params["w1"])
    h = jax.nn.relu(h @ reward_params["w2"])
    return jnp.sum(h @ reward_params["w3"], axis=-1)


REWARD_WIDTH = 512


def init_reward() -> dict:
    """Layer 1 puts token t on unit t, layer 2 passes the first VOCAB
    units on (the others stay 0), layer 3 reads unit TARGET."""
    w1 = np.zeros((VOCAB, REWARD_WIDTH), np.float32)
    w1[:, :VOCAB] = np.eye(VOCAB)
    w2 = np.zeros((REWARD_WIDTH, REWARD_WIDTH), np.float32)
    w2[:VOCAB, :VOCAB] = np.eye(VOCAB)
    w3 = np.zeros(REWARD_WIDTH, np.float32)
    w3[TARGET] = 1.0 / MAX_NEW
    return {"w1": w1, "w2": w2, "w3": w3}


# ------------------------------------------------------------------ update

def grpo_loss(params, tokens, ref_logp, advantages):
    logp = policy_logprobs(params, tokens)
    mask = completion_mask(tokens)
    # On-policy: the ratio is 1, its gradient that of log p.
    ratio = jnp.exp(logp - jax.lax.stop_gradient(logp))
    policy_term = -ratio * advantages[:, None]
    delta = ref_logp - logp                # KL(pi || ref), the k3 estimator
    kl = jnp.exp(delta) - delta - 1.0
    per_token = (policy_term + KL_BETA * kl) * mask
    return jnp.mean(jnp.sum(per_token, -1) / jnp.maximum(jnp.sum(mask, -1),
                                                         1.0))


def update(policy, opt_state, ref_params, reward_params, sequences):
    """sequences: [M, B, T], B = prompts per microbatch x GROUP."""
    m, b, t = sequences.shape
    # One copy of the batch for each scorer, sent whole from "gen": each
    # slices its microbatches on its own mesh, so neither waits for "gen"
    # to slice the other's first.
    ref_batch = mpmd.named_tensor(sequences, name="ref_batch")
    reward_batch = mpmd.named_tensor(sequences, name="reward_batch")

    def ref_body(i, acc):
        logp = mpmd.named_computation(reference_logprobs, name="ref_model")(
            ref_params, ref_batch[i])
        return acc.at[i].set(logp)

    ref_logp = mpmd.fori_loop(0, m, ref_body, jnp.zeros((m, b, t - 1)),
                              schedule="gpipe")

    def reward_body(i, acc):
        r = mpmd.named_computation(reward_of, name="reward_model")(
            reward_params, reward_batch[i])
        return acc.at[i].set(r)

    rewards = mpmd.fori_loop(0, m, reward_body, jnp.zeros((m, b)),
                             schedule="gpipe")

    # Group-relative advantages (nameless: placed by mesh inference).
    groups = rewards.reshape(m, b // GROUP, GROUP)
    advantages = ((groups - groups.mean(-1, keepdims=True))
                  / (groups.std(-1, keepdims=True) + 1e-4)).reshape(m, b)

    def body(i, acc):
        loss, grads = jax.value_and_grad(grpo_loss)(
            policy, sequences[i], ref_logp[i], advantages[i])
        return jax.tree.map(jnp.add, acc, (loss, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, policy))
    loss, grads = mpmd.fori_loop(0, m, body, zeros, schedule="1f1b")
    grads = jax.tree.map(lambda g: g / m, grads)
    updates, opt_state = optimizer.update(grads, opt_state, policy)
    return (optax.apply_updates(policy, updates), opt_state,
            jnp.mean(rewards), loss / m)


# ------------------------------------------------------------------ sampling

def gen_shardings(topology, params):
    """The policy's layout on "gen": the embedding split over its 2
    devices (by feature), the rest replicated."""
    gen = topology["gen"]
    shardings = jax.tree.map(lambda _: NamedSharding(gen, P()), params)
    shardings["embed"] = NamedSharding(gen, P(None, "x"))
    return shardings


def policy_shardings(topology, params):
    """Where the policy lives: each parameter on the mesh of its stage."""
    on = lambda mesh, tree: jax.tree.map(  # noqa: E731
        lambda _: NamedSharding(topology[mesh], P()), tree)
    return {"embed": on("p0", params["embed"]), "pos": on("p0", params["pos"]),
            "block0": on("p0", params["block0"]),
            "block1": on("p1", params["block1"]),
            "head": on("p1", params["head"])}


@jax.jit
def decode_step(params, tokens, done, position, counter, eos_bias):
    """Samples the token at `position` of every unfinished sequence (EOS's
    logit raised by `eos_bias`). tokens [M, B, T] (int32), done [M, B];
    returns (tokens, done, all done)."""
    logits = logits_of(params, tokens)                  # [M, B, T, V]
    last = jax.lax.dynamic_index_in_dim(logits, position - 1, axis=2,
                                        keepdims=False)
    last = last.at[..., EOS].add(eos_bias)
    key = jax.random.fold_in(jax.random.PRNGKey(SEED + 1), counter)
    sampled = jax.random.categorical(key, last).astype(tokens.dtype)
    sampled = jnp.where(done, PAD, sampled)
    tokens = jax.lax.dynamic_update_index_in_dim(tokens, sampled, position,
                                                 axis=2)
    done = done | (sampled == EOS)
    return tokens, done, jnp.all(done)


def sample(gen_params, prompts, iteration, eos_bias=0.0):
    """Completes `prompts` ([M, B, T] on "gen", new positions PAD) until
    every sequence emitted EOS or MAX_NEW tokens. Returns the sequences and
    the number of decode steps."""
    tokens = prompts
    done = jax.device_put(np.zeros(prompts.shape[:2], bool),
                          NamedSharding(prompts.sharding.mesh, P(None, "x")))
    steps = 0
    for position in range(PROMPT, SEQ):
        tokens, done, finished = decode_step(
            gen_params, tokens, done, np.int32(position),
            np.int32(iteration * SEQ + position), np.float32(eos_bias))
        steps += 1
        if mpmd.fetch(finished):
            break
    return tokens, steps


def prompt_tokens(microbatches, iteration) -> np.ndarray:
    """[M, B, T] int32 prompts on the host: each repeated GROUP times,
    new positions PAD."""
    rng = np.random.default_rng(1000 + iteration)
    count = microbatches * PROMPTS_PER_MICROBATCH
    prompts = rng.integers(2, VOCAB, size=(count, PROMPT))
    tokens = np.zeros((count, GROUP, SEQ), np.int32)
    tokens[:, :, :PROMPT] = prompts[:, None, :]
    return tokens.reshape(microbatches, PROMPTS_PER_MICROBATCH * GROUP, SEQ)


def make_prompts(topology, microbatches, iteration):
    """`prompt_tokens` on "gen"."""
    return global_array(prompt_tokens(microbatches, iteration),
                        NamedSharding(topology["gen"], P(None, "x")))


def global_array(value, sharding):
    """A jax.Array of `value` laid out as `sharding`, in one process or
    many (each process places the shards its devices hold)."""
    value = np.asarray(value)
    return jax.make_array_from_callback(value.shape, sharding,
                                        lambda index: value[index],
                                        dtype=value.dtype)


# ------------------------------------------------------------------ check

def check(got, want, what: str) -> tuple[int, float]:
    """Compares the shards of `got` this process holds with `want`
    (NumPy); returns how many and the largest difference."""
    count, worst = 0, 0.0
    for leaf, expected in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        expected = np.asarray(expected)
        for shard in leaf.addressable_shards:
            data = np.asarray(shard.data)
            # Adam divides by sqrt(nu): tiny gradients that differ in the
            # last bits move a parameter by up to ~lr; atol scales with lr.
            np.testing.assert_allclose(
                data, expected[shard.index], rtol=1e-5,
                atol=max(1e-6, LEARNING_RATE * 1e-4),
                err_msg=f"{what} on device {shard.device}")
            if data.size:
                worst = max(worst, float(np.max(np.abs(
                    data.astype(np.float64) - expected[shard.index]))))
            count += 1
    return count, worst


# ------------------------------------------------------------------ main

def rise(curve: list[float]) -> float:
    """Mean reward of the last third of the run minus the first's."""
    tail = curve[-max(1, len(curve) // 3):]
    return float(np.mean(tail) - curve[0])


def initial_state(topology):
    """The policy and its Adam state on p0/p1, a frozen copy of the policy
    on "ref" and the reward model on "reward", as global arrays."""
    host_policy = jax.tree.map(np.asarray,
                               init_policy(jax.random.PRNGKey(SEED)))
    policy = jax.tree.map(global_array, host_policy,
                          policy_shardings(topology, host_policy))
    opt_state = jax.tree.map(global_array, optimizer.init(host_policy),
                             optimizer_shardings(topology, host_policy))
    ref_params = jax.tree.map(
        lambda x: global_array(x, NamedSharding(topology["ref"], P())),
        host_policy)
    reward_params = jax.tree.map(
        lambda x: global_array(x, NamedSharding(topology["reward"], P())),
        init_reward())
    return policy, opt_state, ref_params, reward_params


def run(iterations: int = 10, microbatches: int = 4,
        trace_dir: str | None = None, check_jit: bool = False,
        log=print, eos_bias: float = 0.0) -> dict:
    """The RL loop. Returns {"rewards", "losses", "steps", "buckets",
    "checks", "concurrent"} (lists per iteration; "checks" holds, per
    checked iteration, (shards compared, largest difference))."""
    topology = make_topology()
    config = mpmd.make_config(
        topology, ASSIGNMENT,
        partitioning_options={"infer_transfers": True})
    policy, opt_state, ref_params, reward_params = initial_state(topology)
    to_gen = gen_shardings(topology, policy)

    # One update program per sequence length of BUCKETS (the sequences'
    # axis 2, padded with PAD, which the loss, the reference and the
    # reward all ignore).
    step = mpmd.length_buckets(mpmd.jit(update, config), BUCKETS,
                               pad={"sequences": (2, PAD)})
    reference = jax.jit(update) if check_jit else None
    result = {"rewards": [], "losses": [], "steps": [], "buckets": [],
              "checks": [], "concurrent": None}
    log(f"{'iter':>4}  {'mean reward':>11}  {'loss':>9}  {'decode steps':>12}"
        f"  {'length':>6}")
    for iteration in range(iterations):
        gen_params = mpmd.reshard(policy, to_gen)           # 1. weight sync
        sequences, steps = sample(gen_params,               # 2. sampling
                                  make_prompts(topology, microbatches,
                                               iteration), iteration,
                                  eos_bias)
        args = (policy, opt_state, ref_params, reward_params, sequences)
        if not step.compiled:
            step.compile(*args)         # every bucket, at the first iteration
        # The sequences cut to the longest completion, padded to a bucket.
        length = PROMPT + steps
        bucket = step.bucket_for(length)
        args = step.padded(args, bucket, length)
        compiled = step.program(bucket)
        host_args = mpmd.fetch(args) if check_jit else None
        trace = None
        if trace_dir is not None and iteration == iterations - 1:
            outputs, trace = compiled.run_traced(*args)     # 3. update
        else:
            outputs = compiled(*args)
        policy, opt_state, mean_reward, loss = outputs
        mean_reward, loss = (float(v) for v in mpmd.fetch((mean_reward,
                                                           loss)))
        result["rewards"].append(mean_reward)
        result["losses"].append(loss)
        result["steps"].append(steps)
        result["buckets"].append(bucket)
        log(f"{iteration:>4}  {mean_reward:>11.4f}  {loss:>9.4f}  {steps:>12}"
            f"  {bucket:>6}")
        if check_jit:
            want = jax.device_get(reference(*host_args))
            shards, worst = check((policy, opt_state), want[:2],
                                  f"params and Adam state of iteration "
                                  f"{iteration}")
            # And the weight sync: "gen"'s copy equals the policy it read.
            synced, synced_worst = check(gen_params, host_args[0],
                                         f"weights synced to gen, "
                                         f"iteration {iteration}")
            shards, worst = shards + synced, max(worst, synced_worst)
            for got, expected, name in ((mean_reward, want[2], "mean reward"),
                                        (loss, want[3], "loss")):
                np.testing.assert_allclose(got, expected, rtol=1e-5,
                                           atol=1e-6, err_msg=name)
                worst = max(worst, abs(got - float(expected)))
            result["checks"].append((shards, worst))
            log(f"      check: {shards} shards, loss and mean reward equal "
                f"jax.jit (largest difference {worst:.2e})")
        if trace is not None:
            result["concurrent"], result["concurrent_simulated"] = \
                write_trace(trace, compiled.plan, trace_dir, log)
    result["programs"] = len(step.compiled)
    log(f"mean reward: first iteration {result['rewards'][0]:.4f}, last "
        f"{result['rewards'][-1]:.4f} (rise of the last third over the "
        f"first: {rise(result['rewards']):+.4f})")
    return result


def optimizer_shardings(topology, params):
    """Adam's moments on their parameters' meshes, its step count on p1."""
    placed = policy_shardings(topology, params)
    adam, *rest = optimizer.init(params)
    return (type(adam)(count=NamedSharding(topology["p1"], P()), mu=placed,
                       nu=placed), *rest)


def write_trace(trace, plan, trace_dir, log) -> tuple[bool, bool]:
    """Writes the trace (JSON + SVG) and its replay (the measured durations
    on meshes that compute in parallel: `mpmd.runtime.simulate.replay`);
    says whether "ref" and "reward" ran at the same time in each."""
    directory = pathlib.Path(trace_dir)
    directory.mkdir(parents=True, exist_ok=True)
    replayed = replay(trace, plan)
    paths = []
    for timeline, name in ((trace, "rl_grpo_update"),
                           (replayed, "rl_grpo_update.replay")):
        paths += [directory / f"{name}.trace.json", directory / f"{name}.svg"]
        if jax.process_index() == 0:
            timeline.write_chrome_json(paths[-2])
            timeline.write_svg(paths[-1])
    log(f"trace of the last update ({trace.source_label}): "
        + ", ".join(map(str, paths)))
    log(trace.mesh_order_text())
    verdicts = []
    for timeline, what in ((trace, "measured"), (replayed, "replayed")):
        ref, reward = (sum(end - start
                           for start, end in timeline.busy_intervals(mesh))
                       for mesh in ("ref", "reward"))
        together = timeline.overlap_us(("ref", "reward"))
        # A sliver of overlap is clock noise, not concurrent work.
        verdicts.append(min(ref, reward) > 0 and
                        together >= 0.1 * min(ref, reward))
        log(f"{what}: ref busy {ref / 1000:.2f} ms, "
            f"reward busy {reward / 1000:.2f} ms, "
            f"both at the same time {together / 1000:.2f} ms of "
            f"{timeline.end_us() / 1000:.2f} ms: "
            + ("concurrent" if verdicts[-1] else "not concurrent"))
    if trace.source != "profiler":
        log("(host timestamps wait for every step: a serialized run, so no "
            "two meshes compute at the same time by construction)")
    elif not verdicts[0]:
        log("(XLA's CPU client overlapped them little; the replay "
            "shows the same durations where every mesh computes in "
            "parallel)")
    return verdicts[0], verdicts[1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--trace", default=None, metavar="DIR")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--eos-bias", type=float, default=0.0,
                        help="added to EOS's logit when sampling")
    options = parser.parse_args(argv)
    if os.environ.get(NUM_PROCESSES):
        mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    # With several processes, mpmd.launch prefixes every line with "[i] ".
    run(options.iterations, options.microbatches, options.trace,
        options.check, lambda line: print(line, flush=True),
        options.eos_bias)


if __name__ == "__main__":
    main()
