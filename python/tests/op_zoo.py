"""The op zoo: JAX functions chosen so that together they lower to every
StableHLO and CHLO op JAX emits, one case per op where possible.

Generated, not hand-listed: the public functions of `jax.numpy`,
`jax.numpy.linalg`, `jax.numpy.fft`, `jax.lax`, `jax.nn` and
`jax.scipy.special` are tried with a few argument recipes (one or two float
arrays, one or two int arrays), each that traces is lowered, and the op
names of the lowered module are recorded. Calling arbitrary library
functions can crash JAX itself (some pass tracers to NumPy's C code), so
discovery runs in a child process that resumes after a crash:

    python python/tests/op_zoo.py      # prints the discovered cases as JSON

`special_cases()` adds the ops only functions with structured arguments
reach (linear algebra, FFT, control flow, random bits, convolutions,
collectives in shard_map, ...). `select_cases` keeps, per op name, the
first case that emits it.

Every case is a function of one float32[4, 8] array with values in
(0.1, 0.9); its results are arrays.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable

NAMESPACES = ("jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax",
              "jax.nn", "jax.scipy.special")

# Helpers about dtypes, printing, I/O and callbacks: they do not compute on
# arrays, and some hand tracers to NumPy's C code.
_NOT_COMPUTATIONS = re.compile(
    r"repr|str|print|save|load|info$|dtype|show|debug|callback|can_cast|"
    r"result_type|promote_types|issub|isdtype|iscomplexobj|isrealobj|"
    r"isscalar|^ndim$|^shape$|^size$|einsum_path|^from|genfromtxt|"
    r"^disable|^enable|^get_|^set_|printoptions")

_OP = re.compile(r'^\s*(?:%\S+ = )?"((?:stablehlo|chlo)\.[a-z_0-9]+)"', re.M)

RECIPES = ("f", "ff", "i", "ii")


def base_input():
    import jax.numpy as jnp  # noqa: PLC0415

    return jnp.linspace(0.1, 0.9, 32, dtype=jnp.float32).reshape(4, 8)


def recipe_args(recipe: str, x: Any) -> tuple[Any, ...]:
    """The arguments of a recipe, computed from the base input `x`."""
    import jax.numpy as jnp  # noqa: PLC0415

    y = jnp.flip(x) * 0.9 + 0.05
    i = (x * 100).astype(jnp.int32)
    j = i % 5 + 1
    return {"f": (x,), "ff": (x, y), "i": (i,), "ii": (i, j)}[recipe]


def emitted_ops(fn: Callable[..., Any], *args: Any) -> frozenset[str]:
    """StableHLO and CHLO op names of `fn`'s lowered module."""
    import jax  # noqa: PLC0415

    module = jax.jit(fn).lower(*args).compiler_ir("stablehlo")
    return frozenset(_OP.findall(
        module.operation.get_asm(print_generic_op_form=True)))


@dataclass(frozen=True)
class Case:
    """One function of the zoo: `fn(x)` with x the base input."""

    name: str
    fn: Callable[[Any], Any]
    ops: frozenset[str]
    # Needs a mesh context (collectives in shard_map): only inside a named
    # computation, whose mesh is the context mesh.
    needs_mesh: bool = False


def _resolve(qualified: str) -> Callable[..., Any]:
    import importlib  # noqa: PLC0415

    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _candidates() -> list[str]:
    import importlib  # noqa: PLC0415

    names = []
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if (name.startswith("_") or _NOT_COMPUTATIONS.search(name)
                    or not callable(fn) or inspect.isclass(fn)
                    or inspect.ismodule(fn)):
                continue
            names.append(f"{namespace}.{name}")
    return names


def _discover(start_after: str | None) -> None:
    """Child process: tries each candidate, printing one JSON line per
    working (name, recipe); the parent restarts it after a crash."""
    import jax  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    x = base_input()
    candidates = _candidates()
    if start_after is not None:
        candidates = candidates[candidates.index(start_after) + 1:]
    for qualified in candidates:
        print(json.dumps({"trying": qualified}), flush=True)
        fn = _resolve(qualified)
        for recipe in RECIPES:
            args = recipe_args(recipe, x)
            try:
                out = jax.eval_shape(fn, *args)
                leaves = jax.tree.leaves(out)
                if not leaves or not all(hasattr(leaf, "shape")
                                         for leaf in leaves):
                    continue
                ops = emitted_ops(fn, *args)
            except Exception:  # noqa: BLE001 - most recipes do not fit
                continue
            print(json.dumps({"name": qualified, "recipe": recipe,
                              "ops": sorted(ops)}), flush=True)
            break


def discover() -> list[dict[str, Any]]:
    """The generated cases, discovered in child processes."""
    found: list[dict[str, Any]] = []
    start_after: str | None = None
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    while True:
        command = [sys.executable, __file__]
        if start_after:
            command.append(start_after)
        child = subprocess.run(command, capture_output=True, text=True,
                               env=env)
        last = None
        for line in child.stdout.splitlines():
            record = json.loads(line)
            if "trying" in record:
                last = record["trying"]
            else:
                found.append(record)
        if child.returncode == 0:
            return found
        if last is None or last == start_after:
            raise RuntimeError(f"op zoo discovery failed:\n{child.stderr}")
        start_after = last  # it crashed on `last`: go on after it


def generated_cases() -> list[Case]:
    cases = []
    for record in discover():
        fn = _resolve(record["name"])
        recipe = record["recipe"]
        cases.append(Case(f"{record['name'].replace('jax.', '')}/{recipe}",
                          lambda x, fn=fn, recipe=recipe: fn(
                              *recipe_args(recipe, x)),
                          frozenset(record["ops"])))
    return cases


def special_cases() -> list[Case]:
    """Ops only structured arguments reach."""
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    from jax.sharding import PartitionSpec as P  # noqa: PLC0415

    def square(x):
        return x[:, :4].T @ x[:, :4] + jnp.eye(4)

    def collectives(x):
        def local(block):
            total = jax.lax.psum(block, "x")
            gathered = jax.lax.all_gather(block, "x", tiled=True)
            scattered = jax.lax.psum_scatter(block, "x", tiled=True)
            swapped = jax.lax.all_to_all(block, "x", 0, 0, tiled=True)
            shifted = jax.lax.ppermute(block, "x", [(0, 1), (1, 0)])
            index = jax.lax.axis_index("x").astype(block.dtype)
            return (total, gathered.sum(0, keepdims=True),
                    jnp.tile(scattered, (2, 1)), swapped, shifted + index)
        return jax.shard_map(local, in_specs=P("x"),
                             out_specs=(P("x"), P("x"), P("x"), P("x"),
                                        P("x")))(x)

    def max_pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2),
                                     (2, 2), "VALID").sum()

    recipes: dict[str, Callable[[Any], Any]] = {
        "linalg.cholesky": lambda x: jnp.linalg.cholesky(square(x)),
        "linalg.eigh": lambda x: jnp.linalg.eigh(square(x))[0],
        "scipy.linalg.solve_triangular": lambda x: (
            jax.scipy.linalg.solve_triangular(jnp.tril(square(x)), x[:, :4],
                                              lower=True)),
        "fft.rfft": lambda x: jnp.abs(jnp.fft.rfft(x)),
        "lax.cond": lambda x: jax.lax.cond(x.sum() > 1, jnp.sin, jnp.cos, x),
        "lax.fori_loop": lambda x: jax.lax.fori_loop(
            0, 3, lambda i, c: c * 1.5 + i, x),
        "lax.top_k": lambda x: jax.lax.top_k(x, 3),
        "random.rbg": lambda x: x + jax.random.uniform(
            jax.random.key(0, impl="rbg"), x.shape),
        "random.threefry": lambda x: x + jax.random.normal(
            jax.random.key(1), x.shape),
        "jnp.pad": lambda x: jnp.pad(x, 1, constant_values=0.5),
        "lax.dynamic_update_slice": lambda x: jax.lax.dynamic_update_slice(
            x, x[:1] * 2, (jnp.argmax(x[0]) % 3, 0)),
        "lax.conv": lambda x: jax.lax.conv(x[None, None], jnp.full(
            (1, 1, 3, 3), 0.25), (1, 1), "SAME"),
        "grad(max_pool)": jax.grad(max_pool),
        "lax.reduce_precision": lambda x: jax.lax.reduce_precision(x, 5, 10),
        "lax.ragged_dot": lambda x: jax.lax.ragged_dot(
            x, jnp.full((2, 8, 3), 0.5), jnp.array([2, 2], jnp.int32)),
        "lax.composite": jax.lax.composite(lambda x: x * 2 + 1,
                                           "mpmd.zoo_double"),
        "jnp.arcsin(complex)": lambda x: jnp.abs(jnp.arcsin(
            x.astype(jnp.complex64) * 2)),
        "lax.bitcast_convert_type": lambda x: jax.lax.bitcast_convert_type(
            x, jnp.int32),
        "lax.sort(2 operands)": lambda x: jax.lax.sort((x, -x), num_keys=1),
        "nn.gelu(exact)": lambda x: jax.nn.gelu(x, approximate=False),
    }
    x = base_input()
    cases = [Case(name, fn, emitted_ops(fn, x))
             for name, fn in recipes.items()]
    import numpy as np  # noqa: PLC0415

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))
    with jax.set_mesh(mesh):
        cases.append(Case("shard_map collectives", collectives,
                          emitted_ops(collectives, x), needs_mesh=True))
    return cases


def select_cases(cases: Iterable[Case]) -> list[Case]:
    """For each op name, in sorted order, the first case that emits it."""
    cases = list(cases)
    chosen: list[Case] = []
    covered: set[str] = set()
    for op in sorted(set().union(*(c.ops for c in cases))):
        if op in covered:
            continue
        case = next(c for c in cases if op in c.ops)
        chosen.append(case)
        covered |= case.ops
    return chosen


if __name__ == "__main__":
    _discover(sys.argv[1] if len(sys.argv) > 1 else None)
