"""Errors raised by the mpmd package."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["AssignmentError", "CompilerError", "CompilerWarning",
           "ConfigError", "Diagnostic", "MpmdError"]


@dataclass(frozen=True)
class Diagnostic:
    """One compiler diagnostic.

    `location` is `file:line:col` when the compiler knows the position (the
    file of parsed text is `<input>` unless a source name was given), `""`
    when the location is unknown.
    """

    severity: str  # "error", "warning", "remark" or "note"
    location: str
    message: str
    notes: tuple[Diagnostic, ...] = ()

    def __str__(self) -> str:
        head = f"{self.location}: " if self.location else ""
        lines = [f"{head}{self.severity}: {self.message}"]
        lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)


class MpmdError(Exception):
    """Base class of every error the mpmd package raises."""


class CompilerError(MpmdError, RuntimeError):
    """The compiler rejected its input or failed to transform it (a
    RuntimeError too, as Shardy:MPMD raises for compile errors).

    `summary` heads the message; `diagnostics` are the compiler's own. A
    front end that retold the first diagnostic in the user's terms
    (`retold=True`, `mpmd.diagnostics.retell`) puts it in the summary and
    keeps the compiler's text below as a note; `notes` are more lines
    after the summary."""

    def __init__(self, summary: str, diagnostics: Iterable[Diagnostic] = (),
                 *, notes: Sequence[str] = (), retold: bool = False):
        self.summary = summary
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.notes = tuple(notes)
        self.retold = retold
        super().__init__(_format(summary, self.diagnostics, self.notes,
                                 retold))

    @property
    def errors(self) -> list[Diagnostic]:
        """The diagnostics of severity `error`."""
        return [d for d in self.diagnostics if d.severity == "error"]


class CompilerWarning(UserWarning):
    """A warning the compiler reported while succeeding."""


def _format(summary: str, diagnostics: Sequence[Diagnostic],
            notes: Sequence[str] = (), retold: bool = False) -> str:
    lines = [summary, *notes]
    if diagnostics and retold:
        lines.append("note: the compiler said:")
        lines.extend("  " + line for d in diagnostics
                     for line in str(d).splitlines())
    elif diagnostics:
        lines[0] += ":"
        lines.extend(str(d) for d in diagnostics)
    return "\n".join(lines)


class ConfigError(MpmdError, ValueError):
    """The configuration is inconsistent; the message says what to change.
    A ValueError too, as Shardy:MPMD raises for its configurations."""


class AssignmentError(ConfigError, RuntimeError):
    """The assignment does not fit the program's named computations: one is
    not assigned to a mesh, or a nested one is assigned elsewhere than the
    computation around it. Also a RuntimeError: Shardy:MPMD's compiler finds
    these, and raises them as compile errors."""
