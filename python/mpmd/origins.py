"""Re-exports `mpmd.runtime.origins` (its home) for existing importers."""

from mpmd.runtime.origins import Origin, origins_from  # noqa: F401
