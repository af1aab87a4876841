"""Where a fragment comes from: a named computation and its transpose count.

The compiler reports origins as (name, transpose count) pairs (in the
execution plan and to schedules); this is their one Python home, in the
runtime because the execution plan holds them (`mpmd.origins` re-exports
it for the code above the runtime).
`str(origin)` spells it as labels and keys do: `layer1`, `layer1(1)`.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

__all__ = ["Origin", "origins_from"]


class Origin(NamedTuple):
    name: str
    transpose_count: int = 0

    def __str__(self) -> str:
        if not self.transpose_count:
            return self.name
        return f"{self.name}({self.transpose_count})"

    @property
    def is_backward(self) -> bool:
        return self.transpose_count > 0


def origins_from(pairs: Iterable[Iterable]) -> tuple[Origin, ...]:
    """Origins from [name, count] pairs (JSON arrays or tuples)."""
    return tuple(Origin(str(name), int(count)) for name, count in pairs)
