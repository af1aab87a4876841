"""The mpmd runtime: run exported programs on meshes of devices.

Lowest layer: `MeshProgram` (one SPMD program compiled for one mesh, called
with `jax.Array`s) and `transfer` (device-to-device moves between meshes).
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

__all__ = [
    "MeshProgram",
    "ProgramCompileError",
    "ProgramError",
    "ProgramInputError",
    "TransferError",
    "clear_program_cache",
    "program_cache_size",
    "transfer",
]
