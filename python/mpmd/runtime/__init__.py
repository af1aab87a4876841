"""The mpmd runtime: run exported programs on meshes of devices.

`PlanExecutable` (`runtime/executable.py`) is the layer every front door
stands on. `compile_module(text, topology)` runs an exported MPMD module,
ours or one Shardy:MPMD partitioned, or IFRT IR (`CompiledModule`);
`compile_shardy(lowered)` runs what Shardy's `mpmd.jit(...).lower(...)`
gives, taking and returning its pytrees. Both read the
module's plan with the compiler, so it lives above the runtime
(`mpmd.module`) and is resolved from there on first use. Lowest layer:
`MeshProgram` (one SPMD program compiled for one mesh, called with
`jax.Array`s) and `transfer` (device-to-device moves between meshes).

The names below load on first use, so that importing one module of the
runtime (the launcher imports `runtime.failures`) does not import JAX.
"""

from typing import Any

# Name -> the module that defines it.
_LAZY = {
    "CompiledModule": "mpmd.runtime.module",
    "ModuleError": "mpmd.runtime.module",
    "ModuleInputError": "mpmd.runtime.module",
    "MeshProgram": "mpmd.runtime.program",
    "ProgramCompileError": "mpmd.runtime.program",
    "ProgramError": "mpmd.runtime.program",
    "ProgramInputError": "mpmd.runtime.program",
    "clear_program_cache": "mpmd.runtime.program",
    "program_cache_size": "mpmd.runtime.program",
    "TransferError": "mpmd.runtime.transfers",
    "transfer": "mpmd.runtime.transfers",
    # compile_module needs the compiler, which the runtime never imports:
    # the door lives above; the name stays here for its callers.
    "compile_module": "mpmd.module",
    "compile_shardy": "mpmd.module",
    "ShardyProgram": "mpmd.module",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    import importlib  # noqa: PLC0415

    if name not in _LAZY:
        raise AttributeError(
            f"module 'mpmd.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
