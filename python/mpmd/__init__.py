"""mpmd: MPMD pipeline partitioning of JAX programs."""

from typing import Any

from mpmd.compiler import parse, run_pipeline, verify
from mpmd.errors import CompilerError, CompilerWarning, Diagnostic, MpmdError

__version__ = "0.1.0"

# Front-end names, imported on first use so that `import mpmd` needs no JAX.
_FRONTEND = (
    "FrontendError",
    "InvalidNameError",
    "emit_named_computations",
    "inline_named_computations",
    "named_computation",
    "named_tensor",
)

__all__ = [
    "CompilerError",
    "CompilerWarning",
    "Diagnostic",
    "MpmdError",
    "parse",
    "run_pipeline",
    "verify",
    *_FRONTEND,
]


def __getattr__(name: str) -> Any:
    if name == "frontend" or name in _FRONTEND:
        import importlib  # noqa: PLC0415

        frontend = importlib.import_module("mpmd.frontend")
        value = frontend if name == "frontend" else getattr(frontend, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mpmd' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FRONTEND))
