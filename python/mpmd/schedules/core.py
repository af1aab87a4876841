"""Pipeline schedules and merge rules as users state them.

A schedule is one of:
- a built-in name: "gpipe", "1f1b", "interleaved-1f1b", "zero-bubble-h1"
  (the compiler orders the fragments of each mesh);
- a table: {mesh name: [fragment, ...]} listing, per mesh, every fragment in
  the order it runs; a fragment is a FragmentInfo or its key ("layer1(1)#3");
- a comparator: before(a, b) -> bool over FragmentInfo, true when `a` must
  run before `b` (asked for pairs on the same mesh only).

The compiler calls back into Python while it partitions: tables and
comparators are evaluated here, over the fragments the compiler reports
(after import, and after the split of backward fragments when asked for),
into an explicit per-mesh order that the compiler's schedule pass applies
(adding data dependencies and reporting cycles). Merge predicates likewise
become label pairs.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from mpmd.compiler import FragmentKind, ScheduleKind, schedule_kind_spellings
from mpmd.errors import MpmdError
from mpmd.origins import Origin, origins_from

__all__ = ["BUILTIN_SCHEDULES", "FragmentInfo", "FragmentKind",
           "ScheduleError", "ScheduleKind", "explicit_order", "merge_pairs"]

# The schedules the compiler implements, by the names users give them
# ("none" and "explicit" are not chosen by name).
BUILTIN_SCHEDULES = tuple(
    name for name, kind in schedule_kind_spellings().items()
    if kind not in (ScheduleKind.NONE, ScheduleKind.EXPLICIT))


class ScheduleError(MpmdError, ValueError):
    """A schedule or merge rule does not fit the program's fragments."""


@dataclass(frozen=True)
class FragmentInfo:
    """What identifies a fragment, as the compiler reports it: its origins
    (name and transpose count each), stage, call counter (the microbatch),
    mesh and kind; `label` (origins without the call counter, e.g.
    `layer1(1)`) and `key` (`layer1(1)#3`, unique on a mesh) are how tables
    and merge rules name it. `loop`: the loop with a schedule of its own
    that the fragment belongs to (`for0`, or `call:<schedule>` for a
    Python loop of `mpmd.call`), None when the function's schedule orders
    it."""

    origins: tuple[Origin, ...]
    stage: int | None
    call_counter: int | None
    mesh: str
    kind: FragmentKind
    label: str
    key: str
    loop: str | None = None

    @property
    def transpose_count(self) -> int:
        """The largest transpose count among the origins."""
        return max((o.transpose_count for o in self.origins), default=0)

    @property
    def microbatch(self) -> int:
        return self.call_counter or 0

    @classmethod
    def from_compiler(cls, entry: Mapping[str, Any]) -> "FragmentInfo":
        return cls(origins_from(entry["origins"]), entry["stage"],
                   entry["call_counter"], entry["mesh"], entry["kind"],
                   entry["label"], entry["key"], entry.get("loop"))


def key_of(entry: Any) -> str:
    """A table entry's fragment key: a FragmentInfo's, or the string."""
    return entry.key if isinstance(entry, FragmentInfo) else str(entry)


def explicit_order(schedule: Mapping[str, Sequence[Any]] | Callable[
        [FragmentInfo, FragmentInfo], bool],
        fragments: Sequence[FragmentInfo]) -> dict[str, list[str]]:
    """Per mesh, the fragment keys in the order the schedule gives."""
    by_mesh: dict[str, list[FragmentInfo]] = {}
    for fragment in fragments:
        by_mesh.setdefault(fragment.mesh, []).append(fragment)
    if callable(schedule):
        return {mesh: _sort_by_comparator(mesh, items, schedule)
                for mesh, items in by_mesh.items()}
    order: dict[str, list[str]] = {}
    for mesh, entries in schedule.items():
        if mesh not in by_mesh:
            raise ScheduleError(
                f"the schedule table names mesh {mesh!r}, which runs no "
                f"fragment; meshes with fragments: {sorted(by_mesh)}")
        order[mesh] = [key_of(entry) for entry in entries]
    # The compiler checks each key exists and every fragment is placed, and
    # names the culprit; meshes left out are reported here.
    for mesh in by_mesh:
        if mesh not in order:
            raise ScheduleError(
                f"the schedule table has no order for mesh {mesh!r}, which "
                f"runs {len(by_mesh[mesh])} fragments")
    return order


def _sort_by_comparator(mesh: str, items: list[FragmentInfo],
                        before: Callable[[FragmentInfo, FragmentInfo], bool]
                        ) -> list[str]:
    count = len(items)
    successors: list[list[int]] = [[] for _ in range(count)]
    indegree = [0] * count
    for i in range(count):
        for j in range(count):
            if i != j and before(items[i], items[j]):
                successors[i].append(j)
                indegree[j] += 1
    ready = [i for i in range(count) if indegree[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in successors[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    if len(order) != count:
        stuck = [items[i].key for i in range(count) if indegree[i] > 0]
        raise ScheduleError(
            f"the schedule comparator is contradictory on mesh {mesh!r}: it "
            f"orders these fragments in a cycle: {stuck[:6]}")
    return [items[i].key for i in order]


def merge_pairs(rules: Sequence[tuple[str, str]] | Callable[
        [FragmentInfo, FragmentInfo], bool],
        fragments: Sequence[FragmentInfo]) -> list[tuple[str, str]]:
    """Merge rules as (label, label) pairs for the compiler. A predicate is
    asked for every pair of fragments of one mesh and microbatch."""
    if not callable(rules):
        pairs = []
        for rule in rules:
            if not (isinstance(rule, tuple) and len(rule) == 2
                    and all(isinstance(label, str) for label in rule)):
                raise ScheduleError(f"a merge rule is a pair of fragment "
                                    f"labels, e.g. ('layer3', 'layer3(1)'); "
                                    f"got {rule!r}")
            pairs.append(rule)
        return pairs
    groups: dict[tuple[str, int], list[FragmentInfo]] = {}
    for fragment in fragments:
        groups.setdefault((fragment.mesh, fragment.microbatch), []).append(
            fragment)
    found: list[tuple[str, str]] = []
    for items in groups.values():
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                if rules(a, b):
                    pair = (a.label, b.label)
                    if pair not in found:
                        found.append(pair)
    return found
