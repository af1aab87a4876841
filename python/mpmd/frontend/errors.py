"""The front end's errors: what a labelled program does that mpmd cannot
trace or lower, named in the user's terms."""

from __future__ import annotations

from mpmd.errors import MpmdError

__all__ = ["FrontendError", "InvalidCallCounterError", "InvalidNameError"]


class FrontendError(MpmdError, ValueError):
    """A labelled JAX program cannot be traced or lowered for mpmd. A
    ValueError too, as Shardy:MPMD's ops raise for what they refuse."""


class InvalidNameError(FrontendError, ValueError):
    """The name given to a named computation or named tensor is not valid."""


class InvalidCallCounterError(FrontendError, ValueError):
    """A call counter is not an int in [0, 2**32 - 1]."""
