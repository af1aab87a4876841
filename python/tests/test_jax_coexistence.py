"""jaxlib bundles its own LLVM/MLIR; ours (the system libMLIR) must live
beside it in one process, whichever is imported first."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import mpmd

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _program(x):
    return jnp.sin(x) * 2.0 + jnp.sum(x)


def _generic_text(fn, *args) -> str:
    lowered = jax.jit(fn).lower(*args)
    module = lowered.compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True)


def test_jit_then_compile_then_jit_again():
    x = jnp.arange(8.0, dtype=jnp.float32)
    expected = jnp.sin(x) * 2.0 + 28.0
    assert jnp.allclose(jax.jit(_program)(x), expected)
    text = _generic_text(_program, x)
    assert '"stablehlo.sine"' in text
    mpmd.verify(text)
    after = mpmd.run_pipeline(text, "builtin.module(canonicalize,cse)")
    assert "stablehlo.sine" in after
    assert jnp.allclose(jax.jit(lambda v: _program(v) + 1.0)(x), expected + 1.0)


def test_jax_generic_text_round_trips_byte_for_byte():
    x = jnp.ones((4, 8), jnp.float32)
    w = jnp.ones((8, 2), jnp.float32)

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    text = _generic_text(jax.grad(loss), w, x)
    assert '"stablehlo.dot_general"' in text
    assert mpmd.parse(text, generic=True) == text


def test_jax_pretty_text_parses():
    x = jnp.ones((8,), jnp.float32)
    text = jax.jit(lambda v: v + v).lower(x).as_text()
    assert "stablehlo.add" in text
    printed = mpmd.parse(text)
    assert "stablehlo.add" in printed
    assert "jax.result_info" in printed


_SCRIPT = """
import os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")

def use_jax():
    import jax, jax.numpy as jnp
    x = jnp.arange(4.0)
    assert float(jax.jit(lambda v: (v * v).sum())(x)) == 14.0
    lowered = jax.jit(lambda v: jnp.cos(v) + v).lower(x)
    return lowered.compiler_ir("stablehlo").operation.get_asm(
        print_generic_op_form=True)

def use_mpmd(text):
    import mpmd
    assert "func.func @f" in mpmd.parse("func.func @f() { return }")
    try:
        mpmd.parse("func.func @f() { return %x : i32 }")
    except mpmd.CompilerError as error:
        assert error.diagnostics[0].location.startswith("<input>:1:")
    else:
        raise AssertionError("bad IR accepted")
    if text is not None:
        assert mpmd.parse(text, generic=True) == text
        assert "stablehlo.cosine" in mpmd.run_pipeline(text, "canonicalize")

if sys.argv[1] == "jax-first":
    use_mpmd(use_jax())
else:
    use_mpmd(None)
    text = use_jax()
    use_mpmd(text)
    use_jax()
print("OK")
"""


def _run_script(order: str) -> subprocess.CompletedProcess[str]:
    package_root = str(pathlib.Path(mpmd.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [package_root, env.get("PYTHONPATH", "")] if p)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SCRIPT), order],
        env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("order", ["jax-first", "mpmd-first"])
def test_import_order_in_a_fresh_process(order: str):
    result = _run_script(order)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("OK")
    # Two LLVMs sharing one option registry would complain at load time.
    assert "registered more than once" not in result.stderr
    assert "LLVM ERROR" not in result.stderr
