"""The main demo: a transformer trained as a pipelined MPMD program.

Runs on 8 CPU devices (4 meshes of 2). The model is plain JAX with its
blocks labelled by `mpmd.named_computation`; microbatches come from
`mpmd.fori_loop`; the loss, gradient accumulation and SGD update are
nameless and placed by mesh inference. The 1F1B schedule orders each mesh's
work. The demo prints the per-mesh programs and schedule, the simulated
bubble, trains 3 steps next to plain `jax.jit` on the same inputs, and
writes a trace of the last step (Chrome JSON + SVG).
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402

import mpmd  # noqa: E402

MESHES = ["m1", "m2", "m3", "m4"]
TRACE_DIR = pathlib.Path(os.environ.get("MPMD_TRACE_DIR", "traces"))


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def main() -> None:
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    topology = {name: jax.sharding.Mesh(devices[i], ("x",))
                for i, name in enumerate(MESHES)}
    num_blocks, microbatches = 4, 8
    params = models.init_transformer(jax.random.PRNGKey(0), vocab=64, dim=32,
                                     heads=2, layers=num_blocks, seq=16)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (microbatches, 4, 16),
                                0, 64)
    targets = jnp_roll(tokens)

    config = mpmd.make_config(
        topology, models.transformer_assignment(num_blocks, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b"})
    step = models.transformer_microbatched_step
    lowered = mpmd.jit(step, config).lower(params, tokens, targets)

    banner("per-mesh programs (each compiled once for its mesh)")
    for mesh, programs in lowered.programs_by_mesh().items():
        print(f"{mesh}: {', '.join(programs)}")
    banner("1F1B schedule of one step (F/B = forward/backward, microbatch)")
    print(lowered.schedule_text())
    from mpmd.runtime.simulate import simulate  # noqa: PLC0415
    simulated = simulate(lowered.plan)
    print(f"simulated with F=1, B=2 per fragment: step time "
          f"{simulated.step_time:.0f}, bubble {simulated.bubble_fraction:.3f} "
          "(m1 and m4 run two named computations per stage, so they carry "
          "twice the work of m2 and m3)")
    plan_lines = lowered.plan.format().splitlines()
    print(f"execution plan: {len(lowered.plan.steps)} steps, "
          f"{len(lowered.plan.programs)} distinct programs; first steps:")
    steps = [line for line in plan_lines[1:]
             if "= call" in line or "transfer" in line]
    print("\n".join(step[:110] for step in steps[:6]))

    compiled = lowered.compile()
    reference = jax.jit(step)
    banner("3 training steps: mpmd vs jax.jit")
    mp_params, ref_params = params, params
    print(f"{'step':>4}  {'mpmd loss':>12}  {'jax.jit loss':>12}  {'|diff|':>9}")
    trace = None
    for step in range(3):
        if step == 2 and hasattr(compiled, "run_traced"):
            (mp_params, mp_loss), trace = compiled.run_traced(
                mp_params, tokens, targets)
        else:
            mp_params, mp_loss = compiled(mp_params, tokens, targets)
        ref_params, ref_loss = reference(ref_params, tokens, targets)
        print(f"{step:>4}  {float(mp_loss):>12.6f}  {float(ref_loss):>12.6f}"
              f"  {abs(float(mp_loss) - float(ref_loss)):>9.2e}")
    worst = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                for a, b in zip(jax.tree.leaves(mp_params),
                                jax.tree.leaves(ref_params)))
    print(f"largest parameter difference after 3 steps: {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("demo: mpmd and jax.jit disagree")

    if trace is not None:
        TRACE_DIR.mkdir(parents=True, exist_ok=True)
        json_path = TRACE_DIR / "transformer_step.trace.json"
        svg_path = TRACE_DIR / "transformer_step.svg"
        trace.write_chrome_json(json_path)
        trace.write_svg(svg_path)
        banner("trace of step 3")
        print(trace.mesh_order_text())
        print(f"Chrome trace (open in https://ui.perfetto.dev): {json_path}")
        print(f"timeline picture: {svg_path}")


def jnp_roll(tokens):
    return jax.numpy.roll(tokens, -1, axis=1)


if __name__ == "__main__":
    main()
