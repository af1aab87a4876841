"""The mpmd runtime: run exported programs on meshes of devices.

`compile_module(text, topology)` runs an exported MPMD module, ours or one
Shardy:MPMD partitioned (`CompiledModule`). Lowest layer: `MeshProgram`
(one SPMD program compiled for one mesh, called with `jax.Array`s) and
`transfer` (device-to-device moves between meshes).
"""

from mpmd.runtime.program import (
    MeshProgram,
    ProgramCompileError,
    ProgramError,
    ProgramInputError,
    clear_program_cache,
    program_cache_size,
)
from mpmd.runtime.transfer import TransferError, transfer
from mpmd.runtime.module import (CompiledModule, ModuleError,
                                 ModuleInputError, compile_module)

__all__ = [
    "CompiledModule",
    "MeshProgram",
    "ModuleError",
    "ModuleInputError",
    "ProgramCompileError",
    "ProgramError",
    "ProgramInputError",
    "TransferError",
    "clear_program_cache",
    "compile_module",
    "program_cache_size",
    "transfer",
]
