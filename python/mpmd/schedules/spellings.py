"""How users spell pipeline schedules, resolved in one place.

    schedule_from_spelling("GPipe")          # "gpipe"
    schedule_from_spelling("zero-bubble-v")  # the registry's PipelineSchedule
    check_schedule(value)                    # ConfigError if not a schedule
    loop_schedule_name("1F1B")               # "1f1b", for a loop's own

A schedule is given as one of our built-in names ("gpipe", "1f1b",
"interleaved-1f1b", "zero-bubble-h1"), one of Shardy:MPMD's ("GPipe",
"1F1B", "ZeroBubbleH1", "None", and its registry's "Circular", ...), our
spelling of a registry schedule ("zero-bubble-v", "dualpipe-v"), a table
{mesh: [fragment, ...]}, a comparator before(a, b) -> bool, or a
`PipelineSchedule`. `make_config` (`pipeline_schedule`, Shardy's
`mpmd_pipeline_schedule`) and the loops' own schedules
(`mpmd.fori_loop(..., schedule=)`) resolve them here.
"""

from __future__ import annotations

from typing import Any

from mpmd.errors import ConfigError
from mpmd.schedules import rules
from mpmd.schedules.core import BUILTIN_SCHEDULES

__all__ = ["check_schedule", "is_pipeline_schedule", "loop_schedule_name",
           "schedule_from_spelling", "shardy_schedule"]


# Shardy's pipeline schedule names and ours.
_SHARDY_SCHEDULES = {"None": None, "1F1B": "1f1b", "GPipe": "gpipe",
                     "ZeroBubbleH1": "zero-bubble-h1"}
# Shardy's schedules that are registry schedules here.
_SHARDY_REGISTRY_SCHEDULES = {
    "Circular": "CIRCULAR",
    "CircularWithReversedBackward": "CIRCULAR_WITH_REVERSED_BACKWARD",
    "GPipeBut1F1BForLastMesh": "GPIPE_BUT_1F1B_FOR_LAST_MESH",
    "ZeroBubbleH2ZeroTxLatency": "ZERO_BUBBLE_H2_ZERO_TX_LATENCY",
    "ZeroBubbleH2HalfTxLatency": "ZERO_BUBBLE_H2_HALF_TX_LATENCY",
    "ZeroBubbleH2FullTxLatency": "ZERO_BUBBLE_H2_FULL_TX_LATENCY",
    "ParallelPipelinesWithWrapAround": "PARALLEL_PIPELINES_WITH_WRAP_AROUND",
    # Ours, beyond Shardy (mpmd.schedules.v).
    "ZeroBubbleV": "ZERO_BUBBLE_V",
    "DualPipeV": "DUALPIPE_V",
}
# Our spellings of registry schedules (pipeline_schedule="zero-bubble-v").
_REGISTRY_SPELLINGS = {"zero-bubble-v": "ZERO_BUBBLE_V",
                       "dualpipe-v": "DUALPIPE_V"}


def _registry_schedule(name: str) -> Any:
    from mpmd.schedules import registry  # noqa: PLC0415 - imports rules

    return registry.get_pipeline_schedule(name)


def schedule_from_spelling(value: Any) -> Any:
    """A pipeline schedule as given to `pipeline_schedule=` or
    `mpmd_pipeline_schedule`: Shardy's names ("GPipe", "1F1B",
    "ZeroBubbleH1", "None", and the registry's "Circular", ...) and our
    spellings of registry schedules ("zero-bubble-v") become the schedule
    they name (our built-in name, or the registry's `PipelineSchedule`);
    anything else (our built-in names, tables, comparators, schedules) is
    returned as it is, for `check_schedule` to judge."""
    if not isinstance(value, str):
        return value
    if value in _SHARDY_SCHEDULES:
        return _SHARDY_SCHEDULES[value]
    if value in _SHARDY_REGISTRY_SCHEDULES:
        return _registry_schedule(_SHARDY_REGISTRY_SCHEDULES[value])
    if value in _REGISTRY_SPELLINGS:
        return _registry_schedule(_REGISTRY_SPELLINGS[value])
    return value


def shardy_schedule(value: Any) -> Any:
    """`mpmd_pipeline_schedule`'s value: any spelling `schedule_from_spelling`
    knows; another string is an error naming Shardy's."""
    if isinstance(value, str) and value not in BUILTIN_SCHEDULES and \
            value not in _REGISTRY_SPELLINGS and \
            value not in _SHARDY_SCHEDULES and \
            value not in _SHARDY_REGISTRY_SCHEDULES:
        valid = sorted([*_SHARDY_SCHEDULES, *_SHARDY_REGISTRY_SCHEDULES])
        raise ConfigError(f"Option mpmd_pipeline_schedule has value {value}, "
                          "which is not a valid pipeline schedule; give one "
                          f"of Shardy's names {valid} or a built-in name "
                          f"{list(BUILTIN_SCHEDULES)}")
    return schedule_from_spelling(value)


def is_pipeline_schedule(schedule: Any) -> bool:
    """Whether `schedule` is a Shardy-style `mpmd.rules.PipelineSchedule`
    (rule builders), as opposed to a name, a table or a comparator."""
    return isinstance(schedule, rules.PipelineSchedule)


def check_schedule(schedule: Any) -> None:
    """A function's pipeline schedule, resolved (`schedule_from_spelling`):
    a built-in name, a table, a comparator or a PipelineSchedule, else a
    ConfigError saying what may be given."""
    if isinstance(schedule, str) and schedule not in BUILTIN_SCHEDULES:
        raise ConfigError(f"unknown pipeline_schedule {schedule!r}; built-in "
                          f"schedules: {list(BUILTIN_SCHEDULES)}, V "
                          f"schedules: {list(_REGISTRY_SPELLINGS)}, Shardy's "
                          f"names: {sorted([*_SHARDY_SCHEDULES, *_SHARDY_REGISTRY_SCHEDULES])}"
                          ", or give a table {mesh: [fragment, ...]} or a "
                          "comparator")
    if is_pipeline_schedule(schedule):
        return
    if not (schedule is None or isinstance(schedule, (str, dict))
            or callable(schedule)):
        raise ConfigError("pipeline_schedule must be a built-in name, a "
                          "table {mesh: [fragment, ...]} or a comparator "
                          f"before(a, b) -> bool; got {type(schedule).__name__}")


def loop_schedule_name(schedule: Any) -> Any:
    """A loop's own schedule, resolved: a built-in name, or the table,
    comparator or PipelineSchedule given (which the loop's token stands
    for); an unknown name is a ConfigError."""
    value = schedule_from_spelling(schedule)
    if isinstance(value, str) and value not in BUILTIN_SCHEDULES:
        raise ConfigError(
            f"unknown loop schedule {schedule!r}; give a built-in name "
            f"({', '.join(BUILTIN_SCHEDULES)}), a registry name "
            "(\"zero-bubble-v\", Shardy's \"Circular\", ...), a table "
            "{mesh: [fragment, ...]}, a comparator before(a, b) -> bool or "
            "a PipelineSchedule")
    return value
