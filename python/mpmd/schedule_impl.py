"""Shardy:MPMD's `schedule_impl` module name: the schedule predicates live
in `mpmd.pipeline_registry`; this re-exports them for scripts that import
them from here."""

from mpmd.pipeline_registry import *  # noqa: F401,F403
from mpmd.pipeline_registry import __all__  # noqa: F401
