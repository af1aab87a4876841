"""A loop's own schedule when Python evaluates it: a table, a comparator or
a registry schedule (`PipelineSchedule`, e.g. "zero-bubble-v").

The front end cannot put a Python object on `mpmd.for`: it registers the
schedule here and puts its token, `explicit:<id>`, on the loop as
`mpmd.loop_schedule`. The compiler treats such a loop as explicitly
scheduled and, while it partitions, reports every user fragment with its
loop and token; `loop_orders` evaluates each loop's schedule over that
loop's fragments into the per-mesh order the schedule pass applies, keyed
(mesh, loop). Registry schedules also make merges (`loop_merges`).

Tokens live as long as the process: a table's token is its content (equal
tables share one), a comparator's or registry schedule's is the object's
(the registry keeps it alive, so ids are never reused). A partition whose
loops carry tokens is not written to the persistent partition cache
(another process would give the token another meaning).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from mpmd.schedules.core import (FragmentInfo, ScheduleError,
                                 explicit_order, key_of)

__all__ = ["function_fragments", "has_registry_schedules", "is_token",
           "loop_merges", "loop_orders", "register", "uses_tokens"]

_PREFIX = "explicit:"
_BY_TOKEN: dict[str, Any] = {}
_TOKEN_BY_ID: dict[int, str] = {}
_NAMES: dict[str, str] = {}  # token -> the user's spelling (registry names)


def is_token(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_PREFIX)


def uses_tokens(module_text: str) -> bool:
    """Whether a lowered module has a loop whose schedule is a token."""
    return f'loop_schedule = "{_PREFIX}' in module_text


def register(schedule: Any, name: str | None = None) -> str:
    """The token of a table ({mesh: [fragment key or FragmentInfo, ...]}),
    a comparator before(a, b) -> bool, or a `PipelineSchedule` (`name`: how
    the user spelled it, for errors); anything else is a ConfigError."""
    from mpmd.config import ConfigError, is_pipeline_schedule  # noqa: PLC0415

    if isinstance(schedule, Mapping):
        table: dict[str, list[str]] = {}
        for mesh, entries in schedule.items():
            if not isinstance(mesh, str) or isinstance(entries, str) or \
                    not isinstance(entries, Sequence):
                raise ConfigError(
                    "a loop's schedule table maps a mesh name to the list "
                    f"of its fragment keys in order; got {mesh!r}: "
                    f"{entries!r}")
            table[mesh] = [key_of(entry) for entry in entries]
        text = json.dumps(table, sort_keys=True)
        token = _PREFIX + "t" + hashlib.sha256(text.encode()).hexdigest()[:16]
        _BY_TOKEN.setdefault(token, table)
        return token
    if not (is_pipeline_schedule(schedule) or callable(schedule)):
        raise ConfigError(
            "a loop's schedule is a built-in name, a table {mesh: "
            "[fragment, ...]}, a comparator before(a, b) -> bool or a "
            f"registry schedule; got {type(schedule).__name__}")
    token = _TOKEN_BY_ID.get(id(schedule))
    if token is None:
        kind = "r" if is_pipeline_schedule(schedule) else "c"
        token = f"{_PREFIX}{kind}{len(_TOKEN_BY_ID)}"
        _TOKEN_BY_ID[id(schedule)] = token
        _BY_TOKEN[token] = schedule
    if name is not None:
        _NAMES.setdefault(token, name)
    return token


def _lookup(token: str, loop: str) -> Any:
    if token not in _BY_TOKEN:
        raise ScheduleError(
            f"loop {loop!r} has schedule {token!r}, which this process did "
            "not register (a module traced elsewhere?); give the loop its "
            "schedule again where it is traced")
    return _BY_TOKEN[token]


def _loops(fragments: Sequence[Mapping[str, Any]]
           ) -> dict[tuple[str, str], list[FragmentInfo]]:
    """The fragments of each loop with a token, by (loop, token)."""
    loops: dict[tuple[str, str], list[FragmentInfo]] = {}
    for entry in fragments:
        token = entry.get("loop_schedule")
        if is_token(token):
            loops.setdefault((entry["loop"], token), []).append(
                FragmentInfo.from_compiler(entry))
    return loops


def _evaluate(token: str, loop: str, infos: list[FragmentInfo],
              options: Any) -> tuple[dict[str, list[str]],
                                     list[tuple[str, str]]]:
    """The per-mesh order and the merges of loop `loop`'s schedule over its
    fragments `infos`."""
    from mpmd.config import ConfigError, is_pipeline_schedule  # noqa: PLC0415
    from mpmd.schedules import rules  # noqa: PLC0415

    schedule = _lookup(token, loop)
    names = sorted({origin.name for info in infos for origin in info.origins})
    where = f"loop {loop!r} (over {', '.join(names)})"
    if not is_pipeline_schedule(schedule):
        try:
            return explicit_order(schedule, infos), []
        except ScheduleError as error:
            raise ScheduleError(f"the schedule of {where}: {error}") from None
    for field, value in rules.required_options(schedule).items():
        if getattr(options, field) != value:
            spelled = _NAMES.get(token, type(schedule).__name__)
            shardy = {ours: theirs for theirs, ours
                      in rules.OPTION_FIELDS.items()}
            raise ConfigError(
                f"the schedule {spelled!r} of {where} needs the partitioning"
                f" option {field}={value!r} (Shardy: "
                f"{shardy.get(field, field)}), which applies to the whole "
                "program; set it in partitioning_options")
    meshes = {info.mesh for info in infos}
    order, merges = rules.to_mpmd(schedule, infos, len(meshes),
                                  options.split_backward)
    if order is None:
        order = {}
        for info in infos:
            order.setdefault(info.mesh, []).append(info.key)
    return order, merges


def loop_orders(fragments: Sequence[Mapping[str, Any]], options: Any
                ) -> dict[tuple[str, str], list[str]]:
    """Per (mesh, loop), the keys in the order each loop's own schedule
    gives; `fragments` as the compiler reports them, `options` the
    program's PartitioningOptions."""
    orders: dict[tuple[str, str], list[str]] = {}
    for (loop, token), infos in _loops(fragments).items():
        order, _ = _evaluate(token, loop, infos, options)
        for mesh, keys in order.items():
            orders[(mesh, loop)] = keys
    return orders


def loop_merges(fragments: Sequence[Mapping[str, Any]], options: Any
                ) -> list[tuple[str, str]]:
    """The label pairs the loops' registry schedules merge."""
    found: list[tuple[str, str]] = []
    for (loop, token), infos in _loops(fragments).items():
        if not _is_registry(token):
            continue  # tables and comparators make no merges
        _, merges = _evaluate(token, loop, infos, options)
        found.extend(pair for pair in merges if pair not in found)
    return found


def _is_registry(token: str) -> bool:
    return token[len(_PREFIX):].startswith("r")


def has_registry_schedules() -> bool:
    """Whether a registry schedule was ever registered (only then can a
    loop ask for merges)."""
    return any(_is_registry(token) for token in _BY_TOKEN)


def function_fragments(fragments: Sequence[Mapping[str, Any]]
                       ) -> list[Mapping[str, Any]]:
    """The fragments the function's own schedule orders: those outside
    every loop with a schedule of its own."""
    return [entry for entry in fragments if entry.get("loop") is None]
