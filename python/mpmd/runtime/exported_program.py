"""A program as `jax.export` serializes it: what an export (`mpmd.export`)
holds per program instead of StableHLO text.

    data = export_program(text, mesh, name="p", platforms=("cpu",), ...)
    program = ExportedProgram.from_bytes(data)   # a ProgramSpec.module
    MeshProgram.compile(program, mesh, ...)      # as from text

`jax.export` is JAX's own versioned format (StableHLO's portable artifact
with the shardings): later JAX versions read it, and calling it
(`Exported.call` under `jax.jit`) is public API.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import jax
from jax.sharding import Mesh, NamedSharding

__all__ = ["ExportedProgram", "export_program"]


@dataclass(frozen=True, eq=False)
class ExportedProgram:
    """A program as `jax.export` serialized it (`mpmd.export`): what a
    `ProgramSpec.module` holds in a plan read from an export, instead of
    StableHLO text. Equal when their serialized bytes are (`digest`)."""

    exported: Any = field(repr=False)  # a jax.export.Exported
    digest: str

    @classmethod
    def from_bytes(cls, data: bytes) -> "ExportedProgram":
        return cls(jax.export.deserialize(bytearray(data)),
                   hashlib.sha256(data).hexdigest())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExportedProgram) and \
            other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)


def export_program(
    stablehlo_text: str,
    mesh: Mesh,
    *,
    name: str,
    platforms: Sequence[str],
    in_shardings: Sequence[NamedSharding] | None = None,
    out_shardings: Sequence[NamedSharding] | None = None,
    donate_argnums: Sequence[int] = (),
) -> bytes:
    """`stablehlo_text` as `jax.export` serializes a function for
    `platforms` ("cpu", "cuda", ...): JAX's versioned form of one program,
    which `ExportedProgram.from_bytes` reads back (in a later JAX too).
    The shardings and donation are those `MeshProgram.compile` takes.
    Raises `ProgramCompileError`."""
    from mpmd.runtime.program import _checked, _lower  # noqa: PLC0415

    source, in_avals, out_avals, ins, outs, donated = _checked(
        stablehlo_text, mesh, name, in_shardings, out_shardings,
        donate_argnums)
    exported = _lower(name, mesh, source, in_avals, out_avals, ins, outs,
                      donated, platforms=tuple(platforms))
    return bytes(exported.serialize())
