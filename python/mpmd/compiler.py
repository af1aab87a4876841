"""Parse, verify and transform MLIR text with the mpmd compiler.

The compiler runs in this process: each call uses a fresh MLIR context (with
the mpmd, sdy and stablehlo dialects; ops of other dialects pass through
opaquely) and releases the GIL while it works. It is independent of the MLIR
that jaxlib bundles, so both can be used side by side.
"""

from __future__ import annotations

from typing import NoReturn, Sequence

from mpmd import _mpmd_compiler
from mpmd.errors import CompilerError, Diagnostic

__all__ = ["compile_to_plan", "op_catalog", "parse", "run_and_list_fragments",
           "run_pipeline", "verify"]

DEFAULT_SOURCE_NAME = "<input>"


def parse(text: str, *, generic: bool = False,
          source_name: str = DEFAULT_SOURCE_NAME) -> str:
    """Parses and verifies a module; returns it printed (generic form if asked).

    Raises CompilerError with the parser's or verifier's diagnostics.
    """
    try:
        return _mpmd_compiler.parse_and_verify(text, generic, source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def verify(text: str, *, source_name: str = DEFAULT_SOURCE_NAME) -> None:
    """Raises CompilerError unless `text` is a valid module."""
    parse(text, source_name=source_name)


def run_pipeline(text: str, pipeline: str, *, generic: bool = False,
                 source_name: str = DEFAULT_SOURCE_NAME) -> str:
    """Runs a pass pipeline on a module and returns the result printed.

    `pipeline` is MLIR's textual form, anchored (`builtin.module(cse)`) or
    not (`canonicalize,cse`, a registered pipeline name). The module is
    verified before and after. Raises CompilerError on a bad module, an
    unknown pass or option, or a failing pass.
    """
    try:
        return _mpmd_compiler.run_pass_pipeline(text, pipeline, generic,
                                                source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def compile_to_plan(text: str, pipeline: str, *,
                    source_name: str = DEFAULT_SOURCE_NAME) -> tuple[str, str]:
    """Runs a pipeline that ends in an exported program (e.g.
    `mpmd-import{...},mpmd-export`); returns the printed MPMD module and its
    execution plan as JSON text (see `mpmd.runtime.plan`).

    Raises CompilerError like `run_pipeline`.
    """
    try:
        return _mpmd_compiler.compile_to_plan(text, pipeline, source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def run_and_list_fragments(text: str, pipeline: str, *,
                           source_name: str = DEFAULT_SOURCE_NAME
                           ) -> tuple[str, str]:
    """Runs a pipeline (e.g. `mpmd-import{...}`) and returns the printed
    module and the JSON list of its user fragments (origins, stage,
    call_counter, mesh, kind, label, key) that schedules are written over.
    """
    try:
        return _mpmd_compiler.run_and_list_fragments(text, pipeline,
                                                     source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def op_catalog() -> list[dict[str, object]]:
    """What the compiler knows about each StableHLO and CHLO op name: one
    dict per op (`name`, `pure`, `elementwise`, `constant_like`,
    `cheap_to_clone`, `commutative`, `collective`, `has_regions`), sorted by
    name. Ops it does not list are treated conservatively (impure)."""
    return _mpmd_compiler.op_catalog()


def _to_diagnostic(raw: Sequence) -> Diagnostic:
    severity, location, message, notes = raw
    return Diagnostic(severity, location, message,
                      tuple(_to_diagnostic(note) for note in notes))


def _raise_compiler_error(error: _mpmd_compiler.DiagnosticError) -> NoReturn:
    summary, raw_diagnostics = error.args
    raise CompilerError(
        summary, [_to_diagnostic(raw) for raw in raw_diagnostics]) from None
