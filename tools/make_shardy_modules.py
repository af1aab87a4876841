"""Makes the test data of python/tests/test_compile_module.py: MPMD modules
partitioned by the real Shardy:MPMD, with their inputs and jax.jit's
results.

It runs in a virtual environment holding Shardy's Python package and the
jaxlib it matches (/tmp/peer, made by
/work/shared/tools/shardy/setup_peer.sh), not in the project's:

    cd /tmp/peer && /tmp/peer/venv/bin/python \\
        /work/main/tools/make_shardy_modules.py python/tests/data/shardy

(the output directory is relative to the project root unless absolute;
`--peer DIR` names another environment holding `peer_shim.py`).

Each case is a small MLP trained for one step on gradients accumulated over
microbatches, labelled with Shardy's ops and partitioned by Shardy's
`mpmd.jit` with one of its pipeline schedules. For each case NAME it writes

- NAME.mlir: `lowered.as_text("mpmd")`, the exported MPMD module;
- NAME.npz: `arg<i>`, the flat arguments of the module's `main` in order,
  and `out<i>`, what `jax.jit` of the same function returns for them
  (flattened), computed in the same environment;

and manifest.json lists the cases with the topology each was partitioned
for (per mesh: axis names, shape, and the indices in `jax.devices()` of its
devices, in mesh order), the schedule and how the microbatches were
written. Nothing here needs the project: the test reads only these files.
Shardy's partitioner logs what it does (one line per program and call) on
standard output among this script's own lines (`NAME: N fragment calls, M
transfers`). Running it again writes the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

MICROBATCHES = 4
BATCH = 4
WIDTH = 8


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="directory to write the data to")
    parser.add_argument("--peer", default="/tmp/peer",
                        help="the environment with Shardy (peer_shim.py)")
    return parser.parse_args()


def main() -> None:
    options = parse_args()
    sys.path.insert(0, options.peer)
    import peer_shim  # noqa: F401,PLC0415  (makes Shardy importable)

    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding  # noqa: PLC0415
    from jax.sharding import PartitionSpec as P  # noqa: PLC0415
    from shardy.integrations.python.jax import mpmd  # noqa: PLC0415

    def layer(p, x):
        return jnp.tanh(x @ p["w"] + p["b"])

    def make_step(stages: int, loop: str):
        """One training step of a `stages`-layer MLP, layer i the named
        computation `stage<i>`, over MICROBATCHES microbatches written with
        Shardy's `fori_loop` or as a Python loop of `call`s."""

        def loss(params, x, y):
            for i, p in enumerate(params):
                x = mpmd.named_computation(layer, name=f"stage{i}")(p, x)
            return jnp.mean((x - y) ** 2)

        def step(params, xs, ys):
            zeros = (jax.tree.map(jnp.zeros_like, params), jnp.zeros(()))

            def body(i, carry):
                grads, total = carry
                value, g = jax.value_and_grad(loss)(params, xs[i], ys[i])
                return jax.tree.map(jnp.add, grads, g), total + value

            if loop == "fori_loop":
                grads, total = mpmd.fori_loop(MICROBATCHES, body, zeros)
            else:  # one mpmd.call per microbatch, its counter the index
                carry = zeros
                for i in range(MICROBATCHES):
                    carry = mpmd.call(
                        lambda carry, i=i: body(i, carry), call_counter=i)(
                            carry)
                grads, total = carry
            new = jax.tree.map(lambda p, g: p - 0.1 * g / MICROBATCHES,
                               params, grads)
            return new, total / MICROBATCHES

        return step

    devices = jax.devices()

    def topology_of(count: int, axes: tuple[str, ...],
                    shape: tuple[int, ...]):
        size = int(np.prod(shape))
        meshes, described = {}, {}
        for i in range(count):
            index = list(range(i * size, (i + 1) * size))
            name = f"mesh{i}"
            meshes[name] = Mesh(np.array([devices[k] for k in index])
                                .reshape(shape), axes)
            described[name] = {"axes": list(axes), "shape": list(shape),
                               "devices": index}
        return meshes, described

    cases = [
        # name, meshes, axes, mesh shape, schedule, split backward, loop,
        # shard the weights over "model" (tensor parallelism in the meshes)
        ("gpipe_call_2meshes_tp", 2, ("data", "model"), (2, 2), "GPipe",
         False, "call", True),
        ("1f1b_fori_4meshes", 4, ("data",), (2,), "1F1B", False,
         "fori_loop", False),
        ("zero_bubble_h1_split_3meshes", 3, ("data",), (2,), "ZeroBubbleH1",
         True, "fori_loop", False),
    ]
    output = options.output
    if not os.path.isabs(output):  # relative to the project's root
        output = os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), output)
    os.makedirs(output, exist_ok=True)
    manifest = {"shardy_commit": _shardy_commit(options.peer),
                "jax": jax.__version__, "cases": []}
    for name, count, axes, shape, schedule, split, loop, tp in cases:
        meshes, described = topology_of(count, axes, shape)
        keys = jax.random.split(jax.random.PRNGKey(len(name)), count)
        params = [{"w": jax.random.normal(k, (WIDTH, WIDTH)) / 3,
                   "b": jax.random.normal(k, (WIDTH,)) / 10} for k in keys]
        if tp:  # column-sharded weights, each on its stage's mesh
            params = [{"w": jax.device_put(p["w"], NamedSharding(
                meshes[f"mesh{i}"], P(None, "model"))), "b": p["b"]}
                      for i, p in enumerate(params)]
        xs = jax.random.normal(jax.random.PRNGKey(1),
                               (MICROBATCHES, BATCH, WIDTH))
        ys = jnp.sin(xs)
        step = make_step(count, loop)
        options_ = {"mpmd_pipeline_schedule": schedule}
        if split:
            options_["mpmd_split_bwd_fragments"] = True
        config = mpmd.make_config(
            meshes, {f"stage{i}": f"mesh{i}" for i in range(count)},
            name_to_stage_assignment={f"stage{i}": i for i in range(count)},
            partitioning_options=options_)
        lowered = mpmd.jit(step, config, keep_unused=True).lower(
            params, xs, ys)
        text = lowered.as_text("mpmd")
        arguments = jax.tree.leaves((params, xs, ys))
        _check_main(text, arguments, name)
        # The reference on one device, from host copies of the arguments.
        results = jax.tree.leaves(jax.jit(step)(
            *jax.tree.map(np.asarray, (params, xs, ys))))
        with open(os.path.join(output, f"{name}.mlir"), "w",
                  encoding="utf-8") as file:
            file.write(text)
        np.savez_compressed(
            os.path.join(output, f"{name}.npz"),
            **{f"arg{i}": np.asarray(a) for i, a in enumerate(arguments)},
            **{f"out{i}": np.asarray(r) for i, r in enumerate(results)})
        manifest["cases"].append({
            "name": name, "schedule": schedule,
            "mpmd_split_bwd_fragments": split, "microbatches": MICROBATCHES,
            "loop": loop, "tensor_parallel": tp, "topology": described,
            "num_args": len(arguments), "num_results": len(results)})
        print(f"{name}: {text.count('mpmd.fragment_call')} fragment calls, "
              f"{text.count('mpmd.transfer')} transfers")
    with open(os.path.join(output, "manifest.json"), "w",
              encoding="utf-8") as file:
        json.dump(manifest, file, indent=1)
        file.write("\n")


def _check_main(text: str, arguments: list, name: str) -> None:
    """`main` takes the function's flat arguments in order (no argument
    dropped, no constant hoisted into an argument), of the same types."""
    header = re.search(r"func\.func public @main\((.*?)\) ->", text)
    if header is None:
        raise SystemExit(f"{name}: no public @main in the module")
    types = re.findall(r"tensor<([0-9x]*)x?(f32|i32|ui32)>", header.group(1))
    if len(types) != len(arguments):
        raise SystemExit(f"{name}: main takes {len(types)} arguments, the "
                         f"function {len(arguments)}")
    for index, ((dims, _), argument) in enumerate(zip(types, arguments)):
        shape = tuple(int(d) for d in dims.split("x") if d)
        if shape != tuple(argument.shape):
            raise SystemExit(f"{name}: argument {index} of main has shape "
                             f"{shape}, the function's {argument.shape}")


def _shardy_commit(peer: str) -> str:
    try:
        with open(os.path.join(peer, "src", "SHARDY_COMMIT"),
                  encoding="utf-8") as file:
            return file.read().strip()
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
