"""Compiler diagnostics and front-end warnings, told in the user's terms.

    try:
        step.lower(params, opt_state, batch)
    except mpmd.CompilerError as error:
        print(error)
    # argument opt_state[0].count is used on {"m0", "m1"} but an argument
    # lives on one mesh; set partitioning_options={"infer_transfers": True}
    # to copy it to the others, or ...
    # note: the compiler said:
    #   error: argument 8 of @main is used on {"m0", "m1"} ...

The compiler speaks of flat arguments (`argument 8 of @main`) and pass
options (`infer-transfers=true`); the front end knows the pytree paths and
the Python option names. `retell` rewrites the first error in those terms
and keeps the compiler's text as a note. `warn` points a warning at the
user's line: the first frame outside this package.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import warnings
from typing import Iterable, Sequence

from mpmd.errors import CompilerError, Diagnostic

__all__ = ["closest", "did_you_mean", "retell", "set_text", "user_stacklevel",
           "warn"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# Pass options as Python spells them (partitioning_options keys).
_OPTIONS = {
    "infer-transfers": "infer_transfers",
    "infer-cross-mesh-reductions": "infer_cross_mesh_reductions",
    "merge-last-stage": "merge_last_stage",
    "split-backward": "split_backward",
}
_OPTION_VALUE = re.compile(
    r"\b(" + "|".join(map(re.escape, _OPTIONS)) + r")=(true|false)\b")
# How the compiler names a flat argument of the entry function.
_ARGUMENT = re.compile(r"\bargument (\d+) of @[\w.$-]+")


def user_stacklevel() -> int:
    """The `stacklevel` that makes a `warnings.warn` made by the caller of
    this function name the first frame outside the mpmd package (and
    outside JAX, which calls back into it while tracing)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not (filename.startswith(_PACKAGE_DIR)
                or f"{os.sep}jax{os.sep}" in filename
                or filename.startswith("<frozen")):
            return level
        frame = frame.f_back
        level += 1
    return 1


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn` attributed to the user's line."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `name`, if any is close (a likely typo)."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1,
                                      cutoff=0.6)
    return close[0] if close else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`; did you mean 'layer3'?` when a candidate is close to `name`."""
    match = closest(name, candidates)
    return f"; did you mean {match!r}?" if match else ""


def _python_option(match: re.Match) -> str:
    """`partitioning_options={"infer_transfers": True}` for the pass option
    `infer-transfers=true`."""
    option, value = match.groups()
    return (f'partitioning_options={{"{_OPTIONS[option]}": '
            f'{value.capitalize()}}}')


def _retold(message: str, arguments: Sequence[str],
            results: Sequence[str]) -> str:
    """`message` with flat indices as pytree paths and pass options as
    Python options."""

    def path(paths: Sequence[str], index: str, kind: str) -> str:
        i = int(index)
        return paths[i] if 0 <= i < len(paths) and paths[i] else \
            f"{kind} {i}"

    message = re.sub(r"input-assignment=(\d+)=MESH",
                     lambda m: "input_mesh_assignment (a mesh for "
                     f"{path(arguments, m.group(1), 'argument')})", message)
    message = re.sub(r"output-assignment=(\d+)=MESH",
                     lambda m: "output_mesh_assignment (a mesh for "
                     f"{path(results, m.group(1), 'result')})", message)
    message = _ARGUMENT.sub(
        lambda m: "argument " + path(arguments, m.group(1), "#"), message)
    message = re.sub(r"\bresult (\d+) of @[\w.$-]+",
                     lambda m: "result " + path(results, m.group(1), "#"),
                     message)
    message = message.replace("input-assignment", "input_mesh_assignment")
    message = message.replace("output-assignment", "output_mesh_assignment")
    message = _OPTION_VALUE.sub(_python_option, message)
    # The compiler's own hint for Python users, now said above.
    message = re.sub(r" \(from Python: [^()]*\)", "", message)
    return message


def _argument_indices(diagnostics: Sequence[Diagnostic]) -> list[int]:
    found: list[int] = []
    for diagnostic in diagnostics:
        for text in [diagnostic.message,
                     *(note.message for note in diagnostic.notes)]:
            for match in _ARGUMENT.finditer(text):
                if int(match.group(1)) not in found:
                    found.append(int(match.group(1)))
    return found


def retell(error: CompilerError, *, arguments: Sequence[str],
           results: Sequence[str],
           committed: Sequence[tuple[int, str]] = ()) -> CompilerError:
    """`error` with its first error diagnostic retold in Python terms
    (pytree paths for `argument N of @main` / `result N of @main`,
    `partitioning_options={...}` for pass options) as the headline, and the
    compiler's text kept as a note.

    `committed` lists (flat index, mesh) of arguments whose committed
    shardings fixed their mesh: when the diagnostic names some of them, a
    note names those (at most 3, and how many more). Arguments it does not
    name are left out: they move to the meshes that use them, so where
    they were committed is not what went wrong."""
    first = next(iter(error.errors), None)
    if first is None:
        return error
    headline = _retold(first.message, arguments, results)
    if first.location and not first.location.startswith(("<jax>", "<input>")):
        headline = f"{headline} (at {first.location})"
    notes = []
    concerned = _argument_indices(error.diagnostics)
    named = [(i, mesh) for i, mesh in committed if i in concerned]
    if named:
        shown = named[:3]
        names = ", ".join(f"{arguments[i]} on {mesh!r}" for i, mesh in shown)
        rest = len(named) - len(shown)
        more = f" and {rest} more" if rest > 0 else ""
        notes.append(
            f"note: {len(named)} argument"
            f"{'s are' if len(named) != 1 else ' is'} on the mesh "
            f"{'their' if len(named) != 1 else 'its'} committed sharding"
            f" names ({names}{more}); put each on the mesh that uses it, or "
            "pass host data and let mesh inference place it")
    return CompilerError(headline, error.diagnostics, notes=notes,
                         retold=True)


def set_text(names: Iterable[object]) -> str:
    """`{'a', 'b'}`: names as a Python set prints them (sorted, so that
    messages do not change from run to run)."""
    return "{" + ", ".join(repr(n) for n in sorted(set(names), key=str)) + "}"
