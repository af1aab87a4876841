"""The JAX front end of mpmd: labels for the parts of a program.

Importing this subpackage imports JAX.
"""

from mpmd.frontend.primitives import (
    FrontendError,
    InvalidNameError,
    emit_named_computations,
    inline_named_computations,
    named_computation,
    named_computation_p,
    named_tensor,
    named_tensor_p,
)

__all__ = [
    "FrontendError",
    "InvalidNameError",
    "emit_named_computations",
    "inline_named_computations",
    "named_computation",
    "named_computation_p",
    "named_tensor",
    "named_tensor_p",
]
