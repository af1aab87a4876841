"""Shardy:MPMD's module name `pipeline` for the schedule rule API; it lives in
`mpmd.schedules.rules`, which this module re-exports (its private helpers
too, through `__getattr__`)."""

from mpmd.schedules.rules import *  # noqa: F401,F403
from mpmd.schedules.rules import __all__  # noqa: F401
from mpmd.schedules import rules as _home


def __getattr__(name: str):
    return getattr(_home, name)
