#!/usr/bin/env python3
"""Mutation fuzzing of JAX-emitted modules through the whole partitioner.

    .venv/bin/python tools/fuzz_import.py --count 5000 --keep /tmp/crashes

Seeds are what `mpmd.jit` hands the compiler for real programs (a sharded
two-stage MLP with microbatches, the demo's transformer, the op zoo's CHLO
and StableHLO ops, a jax.checkpoint'ed chain), as JAX printed them in
generic form. Each mutant changes one to three things in a seed's text:
an op renamed to another op of the catalog, an operand swapped for another
value, a line deleted or duplicated, a dimension or element type changed,
a number in an attribute changed, an assignment entry dropped, the text cut
short. Every mutant runs through
`mpmd-opt` with the pipeline `mpmd.jit` would run (import, schedule,
sharding, export) and the execution plan, in its own process. A diagnostic (exit 1) or
success (exit 0) is fine; anything else (a signal, another exit code, a
hang past --timeout seconds) is a crash, counted and kept.

Prints per seed: mutants, accepted, rejected with a diagnostic, crashes,
hangs. Exit code 1 if anything crashed or hung.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

_VALUE = re.compile(r"%[A-Za-z0-9_#]+")
_OP_NAME = re.compile(r'"((?:stablehlo|chlo|mpmd|sdy)\.[a-z_0-9]+)"')
_DIM = re.compile(r"tensor<((?:\d+x)*)(\d+)(x?)([a-z0-9<>]+)>")
_NUMBER = re.compile(r"(?<![%#\w])(\d+)(?=\s*:\s*i(?:32|64)|\]|,)")
_ELEMENT = re.compile(r"\b(f32|f16|bf16|i32|i1|i64|f64)\b")


def seeds() -> dict[str, tuple[str, str]]:
    """Name -> (JAX's generic text with topology, the partition pipeline)."""
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: PLC0415

    import models  # noqa: PLC0415
    import mpmd  # noqa: PLC0415
    from mpmd import lowering, stages  # noqa: PLC0415

    captured: dict[str, tuple[str, str]] = {}
    partition = lowering.partition
    partitioner_class = stages.Partitioner

    def pipeline_of(config, inputs, outputs) -> str:
        """The mpmd-opt pipeline of what mpmd.jit runs with `config`."""
        def entries(mapping):
            return ",".join(f"{index}={mesh}"
                            for index, mesh in sorted(mapping.items()))

        assignment = ",".join(
            f"{name}={mesh}" + ("" if stage is None else f":{stage}")
            for name, (mesh, stage) in config.assignment.items())
        options = config.partitioning_options
        imports = [f"assignment={assignment}"]
        if inputs:
            imports.append(f"input-assignment={entries(inputs)}")
        if outputs:
            imports.append(f"output-assignment={entries(outputs)}")
        if options.infer_transfers:
            imports.append("infer-transfers=true")
        schedule = options.pipeline_schedule
        optimize = (f"{{schedule={schedule}}}"
                    if isinstance(schedule, str) else "")
        return (f"mpmd-import{{{' '.join(imports)}}},mpmd-optimize{optimize},"
                "mpmd-sharding,mpmd-export")

    def lower(name: str, fn, config, *args) -> None:
        texts: list[str] = []

        class Recording(partitioner_class):
            def __init__(self, text, **kwargs):
                texts.append(text)
                super().__init__(text, **kwargs)

        def capture(config, partitioner, inputs, outputs, *kinds):
            captured[name] = (texts[-1], pipeline_of(config, inputs, outputs))
            return partition(config, partitioner, inputs, outputs, *kinds)

        stages.Partitioner, lowering.partition = Recording, capture
        try:
            mpmd.jit(fn, config).lower(*args)
        finally:
            stages.Partitioner, lowering.partition = (partitioner_class,
                                                      partition)

    devices = np.array(jax.devices()[:8])
    square = {"m1": Mesh(devices[:4].reshape(2, 2), ("data", "model")),
              "m2": Mesh(devices[4:].reshape(2, 2), ("data", "model"))}
    params = models.init_two_stage_mlp(jax.random.PRNGKey(0), 16, 32, 8)
    specs = models.two_stage_mlp_specs()
    meshes = {"stage0": square["m1"], "stage1": square["m2"]}
    params = {s: {k: jax.device_put(v, NamedSharding(meshes[s], specs[s][k]))
                  for k, v in params[s].items()} for s in params}
    xs = jax.device_put(jnp.ones((4, 8, 16)),
                        NamedSharding(square["m1"], P(None, "data")))
    ys = jax.device_put(jnp.ones((4, 8, 8)),
                        NamedSharding(square["m2"], P(None, "data")))
    lower("sharded_mlp", models.two_stage_mlp_step, mpmd.make_config(
        square, {"stage0": ("m1", 0), "stage1": ("m2", 1)},
        partitioning_options={"pipeline_schedule": "1f1b"}), params, xs, ys)

    four = {f"m{i + 1}": Mesh(devices[2 * i:2 * i + 2], ("x",))
            for i in range(4)}
    tparams = models.init_transformer(jax.random.PRNGKey(0), vocab=32, dim=16,
                                      heads=2, layers=4, seq=8)
    tokens = jnp.zeros((4, 2, 8), jnp.int32)
    lower("transformer", models.transformer_microbatched_step,
          mpmd.make_config(four, models.transformer_assignment(4, list(four)),
                           partitioning_options={"pipeline_schedule": "1f1b"}),
          tparams, tokens, tokens)

    import op_zoo  # noqa: PLC0415

    cases = op_zoo.select_cases(op_zoo.special_cases())
    chlo = [c for c in op_zoo.select_cases(op_zoo.generated_cases())
            if any(op.startswith("chlo.") for op in c.ops)]

    def zoo(x):
        a = mpmd.named_computation(lambda x: x * 1.0, name="a")(x)
        outs = [c.fn(a) for c in chlo + [c for c in cases
                                         if not c.needs_mesh]]
        return mpmd.named_computation(lambda o: o, name="b")(outs)

    lower("op_zoo", zoo, mpmd.make_config(
        {"m1": four["m1"], "m2": four["m2"]}, {"a": "m1", "b": "m2"},
        partitioning_options={"infer_transfers": True}), op_zoo.base_input())

    def chain(ws, x):
        h = x
        for i, w in enumerate(ws):
            layer = mpmd.named_computation(lambda w, h: jnp.tanh(h @ w),
                                           name=f"l{i}")
            h = jax.checkpoint(layer)(w, h)
        return jnp.mean(h ** 2)

    ws = [jnp.ones((8, 8)) * 0.1 for _ in range(4)]
    lower("remat_chain", jax.grad(chain), mpmd.make_config(
        four, {f"l{i}": (f"m{i + 1}", i) for i in range(4)}),
        ws, jnp.ones((4, 8)))
    return captured


def mutate(text: str, pipeline: str, catalog: list[str],
           rng: random.Random) -> tuple[str, str]:
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines)
            if line.strip() and not line.lstrip().startswith(("#loc", "}"))]
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(9)
        i = rng.choice(body)
        line = lines[i]
        if kind == 0 and _OP_NAME.search(line):  # another op name
            lines[i] = _OP_NAME.sub(f'"{rng.choice(catalog)}"', line, count=1)
        elif kind == 1:  # an operand swapped for another value
            values = _VALUE.findall(text)
            uses = list(_VALUE.finditer(line))
            if values and len(uses) > 1:
                use = rng.choice(uses[1:])
                lines[i] = (line[:use.start()] + rng.choice(values)
                            + line[use.end():])
        elif kind == 2:  # a line deleted
            lines[i] = ""
        elif kind == 3:  # a line duplicated
            lines.insert(i, line)
        elif kind == 4 and _DIM.search(line):  # a dimension changed
            lines[i] = _DIM.sub(
                lambda m: f"tensor<{m.group(1)}{rng.choice([1, 3, 5, 0, 7])}"
                          f"{m.group(3)}{m.group(4)}>", line, count=1)
        elif kind == 5 and _ELEMENT.search(line):  # an element type changed
            lines[i] = _ELEMENT.sub(rng.choice(["f32", "i32", "i1", "bf16"]),
                                    line, count=1)
        elif kind == 6 and _NUMBER.search(line):  # a number changed
            lines[i] = _NUMBER.sub(str(rng.choice([0, 1, 2, 3, 7, 99, 2**31])),
                                   line, count=1)
        elif kind == 7:  # an assignment entry dropped
            match = re.search(r"assignment=([^ }]*)", pipeline)
            if match and "," in match.group(1):
                entries = match.group(1).split(",")
                entries.pop(rng.randrange(len(entries)))
                pipeline = (pipeline[:match.start(1)] + ",".join(entries)
                            + pipeline[match.end(1):])
        elif kind == 8:  # cut short
            joined = "\n".join(lines)
            return joined[:rng.randrange(len(joined))], pipeline
    return "\n".join(lines), pipeline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000,
                        help="mutants in all, spread over the seeds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--keep", type=pathlib.Path,
                        help="directory for the inputs that crashed or hung")
    parser.add_argument("--opt", type=pathlib.Path,
                        default=ROOT / "build" / "bin" / "mpmd-opt")
    args = parser.parse_args()

    from mpmd.compiler import op_catalog  # noqa: PLC0415

    catalog = [entry["name"] for entry in op_catalog()]
    rng = random.Random(args.seed)
    inputs = seeds()
    per_seed = max(1, args.count // len(inputs))
    failures = 0
    start = time.time()
    print(f"{'seed':<14} {'mutants':>8} {'accepted':>9} {'diagnosed':>10} "
          f"{'crashed':>8} {'hung':>5}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, (text, pipeline) in inputs.items():
            counts = {"accepted": 0, "diagnosed": 0, "crashed": 0, "hung": 0}
            for index in range(per_seed):
                mutant, mutant_pipeline = mutate(text, pipeline, catalog, rng)
                path = pathlib.Path(scratch) / "mutant.mlir"
                path.write_text(mutant)
                command = [str(args.opt), str(path),
                           "--pass-pipeline=builtin.module("
                           f"{mutant_pipeline},mpmd-print-execution-plan)",
                           "-o", os.devnull]
                try:
                    done = subprocess.run(command, capture_output=True,
                                          timeout=args.timeout)
                    outcome = {0: "accepted", 1: "diagnosed"}.get(
                        done.returncode, "crashed")
                except subprocess.TimeoutExpired:
                    outcome = "hung"
                counts[outcome] += 1
                if outcome in ("crashed", "hung"):
                    failures += 1
                    if args.keep:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        kept = args.keep / f"{name}-{index}.mlir"
                        kept.write_text(f"// {mutant_pipeline}\n{mutant}")
            print(f"{name:<14} {per_seed:>8} {counts['accepted']:>9} "
                  f"{counts['diagnosed']:>10} {counts['crashed']:>8} "
                  f"{counts['hung']:>5}", flush=True)
    print(f"{per_seed * len(inputs)} mutants in {time.time() - start:.0f} s; "
          f"{failures} crashed or hung")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
