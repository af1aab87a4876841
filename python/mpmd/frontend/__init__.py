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
    loop_schedule,
    scan_microbatches,
)
from mpmd.frontend.modules import label_modules
from mpmd.frontend.context import (
    CALL_COUNTER_ATTR,
    current_call_counter,
    emit_named_computations,
    inline_named_computations,
    named_computation_meshes,
)
from mpmd.frontend.errors import (
    FrontendError,
    InvalidCallCounterError,
    InvalidNameError,
)
from mpmd.frontend.named_tensor import named_tensor, named_tensor_p
from mpmd.frontend.primitives import named_computation, named_computation_p

def _exclude_from_jax_locations() -> None:
    """JAX names an op by the innermost frame outside its own code; the
    frames of this package (named_computation's wrapper, the loops) are
    library frames too, so that locations, and the compiler diagnostics
    that quote them, point at the user's line."""
    import os  # noqa: PLC0415

    from jax._src import source_info_util  # noqa: PLC0415

    source_info_util.register_exclusion(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_exclude_from_jax_locations()

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
    "label_modules",
    "loop_schedule",
    "named_computation",
    "named_computation_meshes",
    "named_computation_p",
    "named_tensor",
    "named_tensor_p",
    "reduce",
    "scan_microbatches",
    "traced_bodies",
]
