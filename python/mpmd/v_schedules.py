"""The V schedules' former module name; they live in `mpmd.schedules.v`,
which this module re-exports (its private helpers too, through
`__getattr__`)."""

from mpmd.schedules.v import *  # noqa: F401,F403
from mpmd.schedules.v import __all__  # noqa: F401
from mpmd.schedules import v as _home


def __getattr__(name: str):
    return getattr(_home, name)
