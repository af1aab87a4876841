"""The GPU check: MPMD programs exported here, run on one lent GPU.

    gpu_check.py bundle DIR      # on the build machine (CPU): export
    gpu_check.py run DIR [--cpu] # on the GPU machine: load, run, compare

`bundle` exports three mpmd programs with `mpmd.export` into DIR (the
machine that runs them needs neither the compiler nor a build: the
`python/` and `examples/` source trees and JAX):

  step.mpmd     a training step (2 layers, Adam, 4 microbatches, 1F1B) on
                two meshes: "gpu" (layer0, exported for cuda and cpu) and
                "cpu" (layer1, cpu): transfers go GPU -> CPU (forward) and
                CPU -> GPU (backward) every microbatch
  offload.mpmd  the same step keeping layer0's forward residuals in the GPU
                mesh's host memory (pinned_host) until their backward
  stage.mpmd    layer0's forward and backward alone on the "gpu" mesh, to
                time the mesh's programs against jax.jit of the same stage

`run` builds the topology from one GPU and one CPU device (`--cpu`: two
CPU devices, a dry run where there is no GPU), checks each program's
results against `jax.jit` of the same function on this machine, times
them, and prints one table, ending with what it could not check. Exit
status 0 when every check that ran passed.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback

import numpy as np

WIDTH = 512
BATCH = 64
MICROBATCHES = 4
REPEATS = 20


def model():
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    import optax  # noqa: PLC0415

    import mpmd  # noqa: PLC0415

    # The step of the tests (examples/models.py, which travels with the
    # source tree), on two layers.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "examples"))
    import models  # noqa: PLC0415

    optimizer = optax.adam(1e-3)
    step = models.optimizer_over_microbatches(models.layers_loss, optimizer)
    layer = models.tanh_layer

    def stage(p, xs):
        def one(p, x):
            return jnp.sum(mpmd.named_computation(layer, name="layer0")(p, x))
        return jax.vmap(jax.grad(one), in_axes=(None, 0))(p, xs)

    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {f"layer{i}": {
        "w": jax.random.normal(keys[i], (WIDTH, WIDTH)) / np.sqrt(WIDTH),
        "b": jnp.zeros(WIDTH)} for i in range(2)}
    xs = jax.random.normal(keys[2], (MICROBATCHES, BATCH, WIDTH))
    ys = jax.random.normal(keys[3], (MICROBATCHES, BATCH, WIDTH))
    return step, stage, optimizer, params, xs, ys


def bundle(directory: str) -> None:
    os.environ.setdefault("XLA_FLAGS",
                          "--xla_force_host_platform_device_count=2")
    import jax  # noqa: PLC0415
    from jax.sharding import Mesh  # noqa: PLC0415

    import mpmd  # noqa: PLC0415
    import mpmd.export  # noqa: PLC0415

    step, stage, optimizer, params, xs, ys = model()
    devices = jax.devices()
    topology = {"gpu": Mesh(np.array(devices[:1]), ("x",)),
                "cpu": Mesh(np.array(devices[1:2]), ("x",))}
    platforms = {"gpu": ("cuda", "cpu"), "cpu": ("cpu",)}
    assignment = {"layer0": ("gpu", 0), "layer1": ("cpu", 1)}
    os.makedirs(directory, exist_ok=True)
    sizes = {}

    def write(name: str, exported) -> None:
        data = exported.serialize()
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)
        sizes[name] = len(data)

    state = optimizer.init(params)
    options = {"pipeline_schedule": "1f1b", "infer_transfers": True}
    config = mpmd.make_config(topology, assignment,
                              partitioning_options=options)
    write("step.mpmd", mpmd.export.export(
        mpmd.jit(step, config), platforms=platforms)(params, state, xs, ys))
    offload = mpmd.make_config(topology, assignment, partitioning_options=dict(
        options, offload_activations=("layer0",)))
    write("offload.mpmd", mpmd.export.export(
        mpmd.jit(step, offload), platforms=platforms)(params, state, xs, ys))
    alone = mpmd.make_config({"gpu": topology["gpu"]}, {"layer0": "gpu"})
    write("stage.mpmd", mpmd.export.export(
        mpmd.jit(stage, alone), platforms={"gpu": platforms["gpu"]})(
        params["layer0"], xs))
    import jaxlib  # noqa: PLC0415

    manifest = {"made_by": {"jax": jax.__version__,
                            "jaxlib": jaxlib.__version__,
                            "python": platform.python_version()},
                "files": sizes}
    with open(os.path.join(directory, "manifest.json"), "w") as file:
        json.dump(manifest, file, indent=1)
    total = sum(sizes.values())
    print(f"gpu_check: bundle in {directory}: "
          + ", ".join(f"{name} {size / 1024:.0f} KiB"
                      for name, size in sizes.items())
          + f"; {total / 1024:.0f} KiB in all (made with jax "
          f"{jax.__version__}, Python {platform.python_version()})")


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []
        self.failed = False

    def add(self, check: str, result: str, detail: str = "") -> None:
        self.rows.append((check, result, detail))
        if result == "FAIL":
            self.failed = True
        print(f"gpu_check: {check}: {result} {detail}", flush=True)

    def failed_with(self, check: str, error: Exception) -> None:
        """A check that raised: its traceback above the table, a FAIL row
        with the error's first line."""
        traceback.print_exc()
        first = (str(error).splitlines() or [""])[0][:160]
        self.add(check, "FAIL", f"{type(error).__name__}: {first}")

    def print(self) -> None:
        widths = [max(len(row[i]) for row in self.rows + [("check", "result",
                                                           "detail")])
                  for i in range(3)]
        line = "| " + " | ".join("{:<%d}" % w for w in widths) + " |"
        print()
        print(line.format("check", "result", "detail"))
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for row in self.rows:
            print(line.format(*row))


def median_ms(function, *args) -> float:
    import jax  # noqa: PLC0415

    jax.block_until_ready(function(*args))
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def max_difference(actual, expected) -> float:
    import jax  # noqa: PLC0415

    return max(float(np.max(np.abs(np.asarray(a, np.float64)
                                   - np.asarray(e, np.float64))))
               for a, e in zip(jax.tree.leaves(actual),
                               jax.tree.leaves(expected)))


def run(directory: str, cpu: bool) -> int:
    if cpu:
        os.environ["JAX_PLATFORMS"] = "cpu"
        os.environ.setdefault("XLA_FLAGS",
                              "--xla_force_host_platform_device_count=2")
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cuda,cpu")
    import jax  # noqa: PLC0415
    import jaxlib  # noqa: PLC0415
    from jax.sharding import Mesh  # noqa: PLC0415

    import mpmd.export  # noqa: PLC0415
    from mpmd.runtime.executor import native_step_loop  # noqa: PLC0415

    table = Table()
    with open(os.path.join(directory, "manifest.json")) as file:
        manifest = json.load(file)
    made = manifest["made_by"]
    if cpu:
        first, second = jax.devices("cpu")[:2]
    else:
        first, second = jax.devices("cuda")[0], jax.devices("cpu")[0]
    table.add("machine", "info",
              f"{first.device_kind} + {second.device_kind}; Python "
              f"{platform.python_version()}, jax {jax.__version__}, jaxlib "
              f"{jaxlib.__version__}; bundle made with jax {made['jax']}, "
              f"Python {made['python']}; C++ step loop: "
              f"{'yes' if native_step_loop() else 'no (the Python step loop)'}")
    topology = {"gpu": Mesh(np.array([first]), ("x",)),
                "cpu": Mesh(np.array([second]), ("x",))}
    step, stage, optimizer, params, xs, ys = model()
    gpu_sharding = jax.sharding.SingleDeviceSharding(first)
    state = optimizer.init(params)
    reference_step = jax.jit(step)
    with jax.default_device(first):
        expected = reference_step(jax.device_put(params, gpu_sharding),
                                  jax.device_put(state, gpu_sharding),
                                  jax.device_put(xs, gpu_sharding),
                                  jax.device_put(ys, gpu_sharding))

    def load(name: str):
        with open(os.path.join(directory, name), "rb") as file:
            return mpmd.export.deserialize(file.read())

    for name, what in (("step.mpmd", "2-mesh step (gpu + cpu meshes)"),
                       ("offload.mpmd", "step, layer0 residuals in "
                        "pinned_host")):
        try:
            exported = load(name)
            compiled = exported.compile(topology)
            transfers = sum(1 for s in exported.plan.steps
                            if type(s).__name__ == "TransferStep")
            offloaded = sum(1 for s in exported.plan.steps
                            if type(s).__name__ == "TransferStep"
                            and s.type.memory_kind == "pinned_host")
            result = compiled(params, state, xs, ys)
            # A second step on its own results, as a training loop calls it.
            again = compiled(*result[:2], xs, ys)
            with jax.default_device(first):
                expected_again = reference_step(*expected[:2], xs, ys)
            difference = max(max_difference(result, expected),
                             max_difference(again, expected_again))
            tolerance = 1e-3
            table.add(f"{what}: numbers vs jax.jit",
                      "PASS" if difference <= tolerance else "FAIL",
                      f"max |diff| {difference:.2e} over 2 steps "
                      f"(tolerance {tolerance}); {transfers} transfers"
                      + (f", {offloaded} to pinned_host" if offloaded
                         else ""))
            if name == "step.mpmd":
                reserved = {n: p.reserved_bytes for n, p in
                            exported.plan.programs.items()
                            if p.mesh == "gpu" and p.reserved_bytes}
                options = {n: compiled.executable.executor.programs[n].options
                           for n in reserved}
                given = sorted({str(o) for o in options.values()})
                table.add(
                    "reserved memory on the gpu mesh",
                    "info" if cpu or not reserved else
                    "PASS" if all(options.values()) else "FAIL",
                    f"{len(reserved)} programs reserve up to "
                    f"{max(reserved.values(), default=0) / 2**20:.1f} MiB; "
                    f"XLA options given: {', '.join(given) or 'none'}"
                    + (" (CPU has none)" if cpu else ""))
                mpmd_ms = median_ms(lambda: compiled(params, state, xs, ys))
                with jax.default_device(first):
                    args = [jax.device_put(v, gpu_sharding)
                            for v in (params, state, xs, ys)]
                    jit_ms = median_ms(reference_step, *args)
                table.add("step time", "info",
                          f"mpmd {mpmd_ms:.2f} ms (gpu + cpu meshes) vs "
                          f"jax.jit on the GPU alone {jit_ms:.2f} ms "
                          f"(median of {REPEATS})")
        except Exception as error:  # noqa: BLE001 - reported in the table
            table.failed_with(what, error)
    try:
        exported = load("stage.mpmd")
        compiled = exported.compile({"gpu": topology["gpu"]})
        p0 = jax.device_put(params["layer0"], gpu_sharding)
        x0 = jax.device_put(xs, gpu_sharding)
        result = compiled(p0, x0)
        reference_stage = jax.jit(stage)
        expected_stage = reference_stage(p0, x0)
        difference = max_difference(result, expected_stage)
        table.add("gpu stage alone: numbers vs jax.jit",
                  "PASS" if difference <= 1e-4 else "FAIL",
                  f"max |diff| {difference:.2e}")
        mpmd_ms = median_ms(compiled, p0, x0)
        jit_ms = median_ms(reference_stage, p0, x0)
        table.add("gpu stage alone: time", "info",
                  f"mpmd {mpmd_ms:.3f} ms vs jax.jit {jit_ms:.3f} ms "
                  f"({mpmd_ms / jit_ms:.2f}x, median of {REPEATS}; "
                  f"{len(exported.plan.programs)} program(s))")
    except Exception as error:  # noqa: BLE001 - reported in the table
        table.failed_with("gpu stage alone", error)
    table.add("not checked", "-",
              "SPMD over several GPUs in a mesh, GPU-to-GPU transfers "
              "(one GPU); several processes; building mpmd there"
              + ("; the GPU itself (dry run on CPU)" if cpu else ""))
    table.print()
    return 1 if table.failed else 0


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in ("bundle", "run"):
        print(__doc__)
        return 2
    if sys.argv[1] == "bundle":
        bundle(sys.argv[2])
        return 0
    return run(sys.argv[2], "--cpu" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
