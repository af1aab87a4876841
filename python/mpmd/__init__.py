"""mpmd: MPMD pipeline partitioning of JAX programs."""

from mpmd.compiler import parse, run_pipeline, verify
from mpmd.errors import CompilerError, CompilerWarning, Diagnostic, MpmdError

__version__ = "0.1.0"

__all__ = [
    "CompilerError",
    "CompilerWarning",
    "Diagnostic",
    "MpmdError",
    "parse",
    "run_pipeline",
    "verify",
]
