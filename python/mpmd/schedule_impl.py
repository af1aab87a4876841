"""Shardy:MPMD's module name `schedule_impl` for the schedule predicates; it lives in
`mpmd.schedules.registry`, which this module re-exports (its private helpers
too, through `__getattr__`)."""

from mpmd.schedules.registry import *  # noqa: F401,F403
from mpmd.schedules.registry import __all__  # noqa: F401
from mpmd.schedules import registry as _home


def __getattr__(name: str):
    return getattr(_home, name)
