#!/usr/bin/env python3
"""Per-call dispatch overhead of running one exported program on one mesh.

Compares, on small inputs (so execution is negligible), after warm-up:
  * jit        plain `jax.jit` of the equivalent JAX function (in/out shardings)
  * program    `mpmd.runtime.MeshProgram` (text embedded in a jit, C++ fast
               path, plus the runtime's Python input check)
  * compiled   the same `jax.stages.Compiled` without the input check
  * exported   a hand-built `jax.export.Exported` of the text, called in a jit
  * pjrt       `LoadedExecutable.execute_sharded` + JAX's result handlers
               (what a runtime bypassing jit would do)
Each route is timed in interleaved rounds: "latency" is the median time of a
single call that starts with idle devices (blocking between calls), "loop" the
mean time per call of --calls back-to-back calls (ends with one block).
Reported: the min over rounds, in microseconds.

Usage:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 PYTHONPATH=build/python_packages \\
    .venv/bin/python bench/runtime_dispatch.py [--calls 1000] [--rounds 5] [--args 2]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

from mpmd.runtime import MeshProgram  # noqa: E402


def _text(n_args: int) -> str:
    args = ", ".join(f"%arg{i}: tensor<4x8xf32>" for i in range(n_args))
    body = []
    acc = "%arg0"
    for i in range(1, n_args):
        body.append(f"    %{i} = stablehlo.add {acc}, %arg{i} : tensor<4x8xf32>")
        acc = f"%{i}"
    if n_args == 1:
        body.append("    %1 = stablehlo.add %arg0, %arg0 : tensor<4x8xf32>")
        acc = "%1"
    lines = "\n".join(body)
    return (
        "module {\n"
        f"  func.func public @main({args}) -> tensor<4x8xf32> {{\n{lines}\n"
        f"    return {acc} : tensor<4x8xf32>\n  }}\n}}\n"
    )


def _exported_route(text: str, n_args: int, rep: NamedSharding) -> Callable[..., Any]:
    from jax._src.export import _export  # noqa: PLC0415
    from jax._src.lib.mlir import ir  # noqa: PLC0415
    from jax.interpreters import mlir  # noqa: PLC0415

    with mlir.make_ir_context():
        serialized = _export._module_to_bytecode(ir.Module.parse(text))
    aval = jax.core.ShapedArray((4, 8), jnp.float32)
    exp = jax.export.Exported(
        fun_name="prog", in_tree=jax.tree_util.tree_structure((tuple(range(n_args)), {})),
        out_tree=jax.tree_util.tree_structure((1,)), in_avals=(aval,) * n_args,
        out_avals=(aval,), _has_named_shardings=False,
        _in_named_shardings=(None,) * n_args, _out_named_shardings=(None,),
        in_shardings_hlo=(None,) * n_args, out_shardings_hlo=(None,), nr_devices=1,
        platforms=("cpu",), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=(), mlir_module_serialized=serialized,
        calling_convention_version=10, module_kept_var_idx=tuple(range(n_args)),
        uses_global_constants=False, _get_vjp=None)
    spec = jax.ShapeDtypeStruct((4, 8), jnp.float32, sharding=rep)
    return jax.jit(exp.call, in_shardings=(rep,) * n_args,
                   out_shardings=(rep,)).lower(*[spec] * n_args).compile()


def _pjrt_route(program: MeshProgram, text: str, rep: NamedSharding) -> Callable[..., Any]:
    from jax._src import compiler  # noqa: PLC0415
    from jax._src.interpreters import pxla  # noqa: PLC0415

    from mpmd.runtime import program as program_mod  # noqa: PLC0415

    # The program's jit lowering (module with the boundary shardings),
    # compiled and executed directly through the PJRT client.
    source = program_mod._Source(text, "bench", "main")  # noqa: SLF001

    def run(*args: Any) -> Any:
        return list(program_mod._program_p.bind(  # noqa: SLF001
            *args, source=source, out_avals=program.out_avals))

    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
             for a, s in zip(program.in_avals, program.in_shardings)]
    module_text = jax.jit(run, in_shardings=program.in_shardings,
                          out_shardings=list(program.out_shardings)).lower(*specs).as_text()
    backend = jax.extend.backend.get_backend("cpu")
    devices = list(rep.mesh.devices.flat)
    options = compiler.get_compile_options(
        num_replicas=1, num_partitions=len(devices),
        device_assignment=np.array(devices).reshape(1, -1), backend=backend)
    exe = backend.compile_and_load(module_text, rep._internal_device_list, options)  # noqa: SLF001
    handlers = [pxla.global_aval_to_result_handler(a, s, True)
                for a, s in zip(program.out_avals, program.out_shardings)]

    def call(*args: Any) -> Any:
        return exe.execute_sharded(list(args)).consume_with_handlers(handlers)

    return call


def _time(fn: Callable[[], Any], calls: int) -> tuple[float, float]:
    single = []
    for _ in range(min(calls, 300)):
        t = time.perf_counter()
        r = fn()
        single.append(time.perf_counter() - t)
        jax.block_until_ready(r)
    t = time.perf_counter()
    for _ in range(calls):
        r = fn()
    jax.block_until_ready(r)
    loop = (time.perf_counter() - t) / calls
    single.sort()
    return single[len(single) // 2] * 1e6, loop * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--args", type=int, nargs="*", default=[2, 32])
    parser.add_argument("--mesh-sizes", type=int, nargs="*", default=[1, 4])
    opts = parser.parse_args()

    print(f"jax {jax.__version__}, {jax.device_count()} {jax.devices()[0].platform} devices, "
          f"{os.cpu_count()} CPUs; us per call, min over {opts.rounds} rounds")
    print(f"{'mesh':>4} {'args':>4}  {'route':10} {'latency':>9} {'loop':>9}")
    for size in opts.mesh_sizes:
        mesh = Mesh(np.array(jax.devices()[:size]), ("x",))
        rep = NamedSharding(mesh, P())
        for n_args in opts.args:
            text = _text(n_args)
            program = MeshProgram.compile(text, mesh, name=f"bench{n_args}")
            xs = [jax.device_put(np.full((4, 8), i, np.float32), rep) for i in range(n_args)]

            def ref(*a: Any) -> Any:
                acc = a[0] + a[0] if len(a) == 1 else a[0]
                for b in a[1:]:
                    acc = acc + b
                return acc

            jitted = jax.jit(ref, in_shardings=(rep,) * n_args, out_shardings=rep)
            routes: dict[str, Callable[[], Any]] = {
                "jit": lambda: jitted(*xs),
                "program": lambda: program(*xs),
                "compiled": lambda: program.compiled(*xs),
            }
            exported = _exported_route(text, n_args, rep)
            routes["exported"] = lambda: exported(*xs)
            pjrt = _pjrt_route(program, text, rep)
            routes["pjrt"] = lambda: pjrt(*xs)
            expected = np.asarray(jitted(*xs))
            for name, fn in routes.items():
                out = fn()
                out = out[0] if isinstance(out, (list, tuple)) else out
                np.testing.assert_allclose(np.asarray(out), expected)
                _time(fn, 50)  # warm-up
            best = {name: [float("inf"), float("inf")] for name in routes}
            for _ in range(opts.rounds):
                for name, fn in routes.items():
                    lat, loop = _time(fn, opts.calls)
                    best[name][0] = min(best[name][0], lat)
                    best[name][1] = min(best[name][1], loop)
            for name, (lat, loop) in best.items():
                print(f"{size:>4} {n_args:>4}  {name:10} {lat:9.1f} {loop:9.1f}")


if __name__ == "__main__":
    main()
