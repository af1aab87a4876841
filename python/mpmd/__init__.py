"""mpmd: MPMD pipeline partitioning of JAX programs.

    config = mpmd.make_config(topology, assignment)
    compiled = mpmd.jit(train_step, config).lower(params, batch).compile()

The compiler (`parse`, `verify`, `run_pipeline`) needs no JAX; the front
end and the runtime import JAX on first use. Every name loads on first
use, so that the runtime runs an export (`mpmd.export`) where the
compiler's extension is missing.
"""

from typing import Any

from mpmd.errors import CompilerError, CompilerWarning, Diagnostic, MpmdError

__version__ = "0.1.0"

# Names imported on first use (the compiler's extension, or JAX), and where
# they live.
_LAZY = {
    "parse": "mpmd.compiler",
    "run_pipeline": "mpmd.compiler",
    "verify": "mpmd.compiler",
    "FrontendError": "mpmd.frontend",
    "InvalidCallCounterError": "mpmd.frontend",
    "InvalidLoopBoundsError": "mpmd.frontend",
    "InvalidNameError": "mpmd.frontend",
    "UnrolledLoopWarning": "mpmd.frontend",
    "broadcast": "mpmd.frontend",
    "call": "mpmd.frontend",
    "enumerated_for": "mpmd.frontend",
    "reduce": "mpmd.frontend",
    "fori_loop": "mpmd.frontend",
    "loop_schedule": "mpmd.frontend",
    "scan_microbatches": "mpmd.frontend",
    "emit_named_computations": "mpmd.frontend",
    "inline_named_computations": "mpmd.frontend",
    "named_computation": "mpmd.frontend",
    "named_tensor": "mpmd.frontend",
    "label_modules": "mpmd.frontend",
    "AssignmentError": "mpmd.errors",
    "ConfigError": "mpmd.errors",
    "MpmdConfig": "mpmd.config",
    "PartitioningOptions": "mpmd.options",
    "make_config": "mpmd.config",
    "mesh_names": "mpmd.config",
    "FunctionIOMeshAssignment": "mpmd.config",
    "validate_and_merge_partitioning_options": "mpmd.options",
    "ShardingError": "mpmd.shardings",
    "Compiled": "mpmd.stages",
    "InputError": "mpmd.stages",
    "Lowered": "mpmd.stages",
    "MpmdFunction": "mpmd.stages",
    "Traced": "mpmd.stages",
    "jit": "mpmd.stages",
    "UnsupportedMemoryKindError": "mpmd.runtime.executor",
    "ProcessError": "mpmd.runtime.processes",
    "ProcessLostError": "mpmd.runtime.processes",
    "fetch": "mpmd.runtime.fetch",
    "reshard": "mpmd.runtime.reshard",
    "StackSplit": "mpmd.stack_split",
    "stack_sharding": "mpmd.stack_split",
    "StackGatheredWarning": "mpmd.frontend.stack_rewrite",
    "ReshardError": "mpmd.runtime.reshard",
    "BucketError": "mpmd.buckets",
    "LengthBuckets": "mpmd.buckets",
    "length_buckets": "mpmd.buckets",
}

__all__ = [
    "CompilerError",
    "CompilerWarning",
    "Diagnostic",
    "MpmdError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    import importlib  # noqa: PLC0415

    if name in ("frontend", "runtime", "pipeline", "pipeline_registry",
                "schedules", "compiler", "export"):
        value = importlib.import_module(f"mpmd.{name}")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'mpmd' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
