"""Partition results kept across processes, next to JAX's compiled programs.

Where the user set JAX's persistent compilation cache
(`jax_compilation_cache_dir`), the partitioner's result for a program (the
exported MPMD module and its execution plan) is written under
`<cache dir>/mpmd-partition/`, and a later `lower` of the same program with
the same configuration reads it instead of partitioning again. The
partitioner's warnings are kept with it and given again.

The key covers everything the result depends on: the module handed to the
partitioner (JAX's lowering with the topology, the boundary shardings and
the source locations), the assignment, the input and output placements, the
partitioning options, and the compiler itself (its shared library). Options
the compiler calls back into Python for (a schedule given as a table,
comparator or PipelineSchedule, merge rules given as a predicate) are code
the key cannot see: with them, nothing is cached.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import fields
from typing import Any, Callable

import jax

from mpmd import errors
from mpmd.lowering import module_text
from mpmd.schedules import loops as loop_schedules

__all__ = ["cache_directory", "partition_cached"]

# Bumped when the entry format changes.
_FORMAT = 1


def cache_directory() -> str | None:
    """Where partition results go, or None when the user set no JAX
    persistent cache."""
    root = jax.config.jax_compilation_cache_dir
    if not root:
        return None
    return os.path.join(root, "mpmd-partition")


@functools.lru_cache(maxsize=1)
def _compiler_identity() -> str:
    """The compiler's shared library, hashed: another build is another
    partitioner."""
    from mpmd import _mpmd_compiler  # noqa: PLC0415

    digest = hashlib.sha256()
    with open(_mpmd_compiler.__file__, "rb") as library:
        for block in iter(lambda: library.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _options_key(options: Any) -> list | None:
    """The partitioning options as data, or None when one of them is code
    (a table is data, but it is evaluated in Python like the others)."""
    entries = []
    for option in fields(options):
        value = getattr(options, option.name)
        if option.name == "pipeline_schedule" and not (
                value is None or isinstance(value, str)):
            return None
        if option.name == "fragment_merge_rules" and callable(value):
            return None
        entries.append([option.name, repr(value)])
    return entries


def _key(config: Any, text: str, placements: tuple) -> str | None:
    options = _options_key(config.partitioning_options)
    # A loop whose schedule is Python's: its token means nothing elsewhere.
    if options is None or loop_schedules.uses_tokens(text):
        return None
    material = json.dumps({
        "format": _FORMAT,
        "compiler": _compiler_identity(),
        "assignment": sorted([name, list(target)] for name, target
                             in config.assignment.items()),
        "options": options,
        "placements": [sorted(p.items()) for p in placements],
    }, sort_keys=True, default=repr)
    digest = hashlib.sha256(material.encode())
    digest.update(_without_locations(text).encode())
    return digest.hexdigest()


def _without_locations(text: str) -> str:
    """The module text without what its locations say (MLIR prints their
    aliases, `#loc12 = loc("step.py":9:4)`, after the module): the result
    depends on the program, not on the line that lowered it (the user's
    call of `lower` is in the traceback of the step's top-level ops)."""
    at = text.find("\n#loc")
    return text if at < 0 else text[:at]


def _warning_class(name: str) -> type[Warning]:
    """The warning class of that name (mpmd's or a built-in one)."""
    import builtins  # noqa: PLC0415

    found = getattr(errors, name, None) or getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Warning):
        return found
    return UserWarning


def partition_cached(config: Any, text: str, placements: tuple,
                     partition: Callable[[], tuple[Any, str]]
                     ) -> tuple[Any, str, bool]:
    """`partition()`'s (module, plan), from the cache when an earlier
    process (or call) wrote it for the same `text`, `config` and
    `placements` (input and output meshes and memory kinds). Returns them
    with whether they came from the cache. The module is its text, or a
    function that prints it (`mpmd.lowering.partition`'s), called here
    only to write the cache. Warnings of the partitioner are given (again)
    either way."""
    directory = cache_directory()
    key = _key(config, text, placements) if directory else None
    if key is None:
        return (*partition(), False)
    path = os.path.join(directory, key + ".json")
    try:
        with open(path, encoding="utf-8") as entry:
            stored = json.load(entry)
        module, plan = stored["module"], stored["plan"]
        given = stored["warnings"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not there (or unreadable): partition
    else:
        for category, message in given:
            warnings.warn(message, _warning_class(category), stacklevel=2)
        return module, plan, True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module, plan = partition()
    for record in caught:
        warnings.warn_explicit(record.message, record.category,
                               record.filename, record.lineno)
    _write(directory, path, {
        "module": module_text(module), "plan": str(plan),
        "warnings": [[record.category.__name__, str(record.message)]
                     for record in caught]})
    return module, plan, False


def _write(directory: str, path: str, entry: dict) -> None:
    """Atomically (processes of one job write the same entry); a cache
    that cannot be written is skipped, as JAX's is."""
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(entry, out)
        os.replace(temporary, path)
    except OSError:
        pass
