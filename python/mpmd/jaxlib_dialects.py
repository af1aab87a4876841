"""jaxlib's own Shardy:MPMD and IFRT IR dialects, for modules of jaxlib's
bindings (`Lowered.compiler_ir("ifrt")`).

The compiler prints IFRT IR without knowing the IFRT dialect; jaxlib has
it, inside its Shardy:MPMD extension (`jaxlib._sdy_mpmd`), which registers
it in a context the first time it lowers a module to IFRT IR. `context()`
gives a JAX MLIR context in which that has happened.

The pip wheel's `_sdy_mpmd` imports its nanobind types from
`jax.jaxlib._jax`, the module path of Google's internal build; that one
submodule is registered under that name before the import (the wheel keeps
it as `jaxlib._jax`).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from mpmd.errors import MpmdError

__all__ = ["context", "sdy_mpmd"]

# The smallest MPMD program: lowering it to IFRT IR loads the IFRT dialect.
_EMPTY_PROGRAM = """
module {
  func.func public @main(%a: !mpmd.mesh_tensor<"m", tensor<f32>>)
      -> !mpmd.mesh_tensor<"m", tensor<f32>>
      attributes {topology = #mpmd.topology<<"m" : <["x"=1]>>>} {
    return %a : !mpmd.mesh_tensor<"m", tensor<f32>>
  }
}
"""


def sdy_mpmd() -> Any:
    """jaxlib's `_sdy_mpmd` extension; MpmdError when this jaxlib has
    none."""
    try:
        import jaxlib  # noqa: PLC0415
        import jaxlib._jax  # noqa: PLC0415

        if "jax.jaxlib._jax" not in sys.modules:
            package = sys.modules.get("jax.jaxlib")
            if package is None:
                package = types.ModuleType("jax.jaxlib")
                package.__path__ = []
                sys.modules["jax.jaxlib"] = package
            package._jax = jaxlib._jax
            sys.modules["jax.jaxlib._jax"] = jaxlib._jax
        from jaxlib import _sdy_mpmd  # noqa: PLC0415
    except ImportError as error:
        raise MpmdError(
            "not supported yet with this jaxlib: its Shardy:MPMD extension "
            f"(jaxlib._sdy_mpmd) does not load ({error}); as_text('ifrt') "
            "gives the IFRT IR program as text without it") from None
    return _sdy_mpmd


def context() -> Any:
    """A JAX MLIR context with jaxlib's `mpmd`, `sdy` and IFRT dialects
    loaded."""
    from jax._src.interpreters import mlir as jax_mlir  # noqa: PLC0415
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    extension = sdy_mpmd()
    ctx = jax_mlir.make_ir_context()
    with ctx:
        extension.lower_to_ifrt(ir.Module.parse(_EMPTY_PROGRAM))
    return ctx
