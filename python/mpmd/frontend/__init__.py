"""The JAX front end of mpmd: labels for the parts of a program, and
microbatches (call counters).

Importing this subpackage imports JAX.
"""

from mpmd.frontend.annotations import broadcast, reduce
from mpmd.frontend.loops import traced_bodies
from mpmd.frontend.microbatch import (
    InvalidLoopBoundsError,
    UnrolledLoopWarning,
    call,
    enumerated_for,
    fori_loop,
    scan_microbatches,
)
from mpmd.frontend.primitives import (
    CALL_COUNTER_ATTR,
    FrontendError,
    InvalidCallCounterError,
    InvalidNameError,
    current_call_counter,
    emit_named_computations,
    inline_named_computations,
    named_computation,
    named_computation_meshes,
    named_computation_p,
    named_tensor,
    named_tensor_p,
)

__all__ = [
    "CALL_COUNTER_ATTR",
    "FrontendError",
    "InvalidCallCounterError",
    "InvalidLoopBoundsError",
    "InvalidNameError",
    "UnrolledLoopWarning",
    "broadcast",
    "call",
    "current_call_counter",
    "emit_named_computations",
    "enumerated_for",
    "fori_loop",
    "inline_named_computations",
    "named_computation",
    "named_computation_meshes",
    "named_computation_p",
    "named_tensor",
    "named_tensor_p",
    "reduce",
    "scan_microbatches",
    "traced_bodies",
]
