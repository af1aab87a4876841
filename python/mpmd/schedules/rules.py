"""Shardy:MPMD's pipeline-schedule API, for use with this compiler.

Code written against Shardy's `shardy.integrations.python.jax.mpmd.pipeline`
works here after changing the import: the same public names, signatures and
meaning. A schedule is a `PipelineSchedule`: rule builders that look at the
fragments of one mesh and return schedule rules (fragments in the order they
must run) and merge rules (fragments to fuse into one), plus the
partitioning options the schedule needs.

    schedule = PipelineSchedule(
        schedule_merge_rule_builders=[functools.partial(
            build_schedule_rules_from_predicate,
            before_pred=lambda a, b, ctx: (
                a.call_counter is not None and b.call_counter is not None
                and a.call_counter < b.call_counter))],
        required_mpmd_options={"mpmd_split_bwd_fragments": False})
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": schedule})

How a schedule reaches the compiler (this module's own API):

- `to_mpmd(schedule, fragments, num_meshes, split_backward)` takes the
  fragments the compiler reports (`mpmd.schedules.FragmentInfo`), describes
  them as Shardy `FragmentInfo`s, runs the rule builders, and returns the
  complete order of every mesh (fragment keys: the schedule rules sorted
  topologically together with the data dependencies of a pipelined step
  that the rules leave open, ties kept in program order) and the merge rules
  as pairs of fragment labels.
- `required_options(schedule)` turns `required_mpmd_options` into
  `mpmd.config.PartitioningOptions` fields.

Beyond Shardy: a rule builder with a true `whole_program` attribute is
called once with the fragments of all meshes (`build_rules_from_pipeline`).

Differences from Shardy, each raised as `MpmdError("not supported yet: ...")`
when a schedule needs it: a merge rule here fuses two fragment labels for
every microbatch of every mesh, so merge rules must pair exactly two
fragments of one call counter and cover every call counter where both
labels occur; required options other than `mpmd_split_bwd_fragments` and
`mpmd_merge_inferred_after_scheduling` are not available.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import heapq
from collections.abc import Collection, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, Callable

from mpmd.errors import MpmdError

if TYPE_CHECKING:  # pragma: no cover
    from mpmd.schedules import core as _schedules

__all__ = [
    "FragmentInfo", "FragmentMergeRule", "FragmentMergeRules",
    "FragmentOrigin", "FragmentScheduleRule", "FragmentScheduleRules",
    "PipelineContext", "PipelineSchedule", "RuleGeneratorPredicate",
    "ScheduleMergeRuleBuilder", "SplitFragmentType", "TargetInfoBuilder",
    "build_merge_rules_from_predicate", "build_rules_from_pipeline",
    "build_schedule_rules_from_predicate", "fragment_origins_contain",
    "get_scheduling_unit_info", "get_staged_scheduling_info",
    "maybe_unique_transpose_count", "required_options", "to_mpmd",
    "union_fragment_origins", "validate_fragment_rule_meshes",
    "validate_fragment_rule_origins",
]

# Type aliases, as Shardy names them.
FragmentMergeRules = Sequence["FragmentMergeRule"]
FragmentScheduleRules = Sequence["FragmentScheduleRule"]
# Builds the fragment that results from merging the given ones.
TargetInfoBuilder = Callable[[Sequence["FragmentInfo"]], "FragmentInfo"]
# (fragments of one mesh, context) -> (schedule rules, merge rules).
ScheduleMergeRuleBuilder = Callable[
    [Sequence["FragmentInfo"], "PipelineContext"],
    "tuple[FragmentScheduleRules, FragmentMergeRules]"]
# (a, b, context) -> bool: a runs before b / a and b merge.
RuleGeneratorPredicate = Callable[
    ["FragmentInfo", "FragmentInfo", "PipelineContext"], bool]


@dataclasses.dataclass(frozen=True)
class FragmentOrigin:
    """A named computation a fragment comes from, and how many times it was
    transposed (0: forward, 1: backward)."""

    computation_name: str
    transpose_count: int = 0


@enum.unique
class SplitFragmentType(enum.Enum):
    """Which part of a split backward fragment this is: the part that keeps
    the values transferred to other meshes (the input gradient), or the part
    that drops them (the weight gradient)."""

    KEEP_TRANSFERRED = enum.auto()
    DROP_TRANSFERRED = enum.auto()


@dataclasses.dataclass(frozen=True)
class FragmentInfo:
    """A fragment as schedules see it: origins, pipeline stage, call counter
    (the microbatch), split part, and mesh."""

    origins: tuple[FragmentOrigin, ...]
    stage_id: int | None = None
    call_counter: int | None = None
    split_type: SplitFragmentType | None = None
    mesh_name: str = ""


def validate_fragment_rule_origins(
        fragment_collection: Collection[FragmentInfo]) -> None:
    """Raises ValueError unless every fragment has an origin (rules apply to
    user fragments only)."""
    for fragment in fragment_collection:
        if not fragment.origins:
            raise ValueError(
                f"Each fragment must have at least one origin, but got "
                f"{fragment} in {fragment_collection}.")


def validate_fragment_rule_meshes(
        fragment_collection: Collection[FragmentInfo]) -> None:
    """Raises ValueError unless all fragments are on one mesh."""
    meshes = {fragment.mesh_name for fragment in fragment_collection}
    if len(meshes) > 1:
        raise ValueError(
            f"Fragments being merged/scheduled must be on the same mesh, but "
            f"got {fragment_collection}.")


@dataclasses.dataclass(frozen=True)
class FragmentMergeRule:
    """Fuse `sources` (two or more fragments of one mesh, in any order) into
    one fragment described by `target`."""

    sources: Set[FragmentInfo]
    target: FragmentInfo

    def __post_init__(self) -> None:
        if len(self.sources) < 2:
            raise ValueError(
                f"FragmentMergeRule must contain at least 2 source fragments, "
                f"but got {self}.")
        validate_fragment_rule_origins(self.sources)
        validate_fragment_rule_meshes(self.sources)
        if not self.target.origins:
            raise ValueError(
                f"Target fragment must have at least one origin, but got "
                f"{self}.")


@dataclasses.dataclass(frozen=True)
class FragmentScheduleRule:
    """Run `ordered_fragments` (two or more, one mesh) in this order."""

    ordered_fragments: Sequence[FragmentInfo]

    def __post_init__(self) -> None:
        if len(self.ordered_fragments) < 2:
            raise ValueError(
                f"FragmentScheduleRule must contain at least 2 fragments, but "
                f"got {self}.")
        validate_fragment_rule_origins(self.ordered_fragments)
        validate_fragment_rule_meshes(self.ordered_fragments)


@dataclasses.dataclass(frozen=True)
class PipelineContext:
    """What rule builders and predicates know besides the fragments."""

    num_meshes: int


@dataclasses.dataclass(frozen=True)
class PipelineSchedule:
    """A pipeline schedule: rule builders and the options it needs.

    `schedule_merge_rule_builders`: each is called once per mesh with that
    mesh's fragments and the context, and returns (schedule rules, merge
    rules).
    `required_mpmd_options`: Shardy partitioning flags the schedule needs;
    here `mpmd_split_bwd_fragments` (split backward fragments into input- and
    weight-gradient parts, for zero-bubble schedules) and
    `mpmd_merge_inferred_after_scheduling` (always the case here) are
    understood, see `required_options`.
    """

    schedule_merge_rule_builders: Sequence[ScheduleMergeRuleBuilder] | None \
        = None
    required_mpmd_options: Mapping[str, bool | str] | None = None


def fragment_origins_contain(fragment: FragmentInfo, substring: str) -> bool:
    """Whether the name of one of the fragment's origins contains
    `substring`."""
    return any(substring in origin.computation_name
               for origin in fragment.origins)


def build_schedule_rules_from_predicate(
        fragment_infos: Sequence[FragmentInfo], context: PipelineContext, *,
        before_pred: RuleGeneratorPredicate,
) -> tuple[FragmentScheduleRules, FragmentMergeRules]:
    """One two-fragment schedule rule [a, b] for each ordered pair of
    distinct fragments of one mesh with `before_pred(a, b, context)`."""
    rules = []
    for i, first in enumerate(fragment_infos):
        for j, second in enumerate(fragment_infos):
            if i != j and first.mesh_name == second.mesh_name and \
                    before_pred(first, second, context):
                rules.append(FragmentScheduleRule(
                    ordered_fragments=[first, second]))
    return rules, []


def union_fragment_origins(
        source_fragments: Sequence[FragmentInfo]
) -> tuple[FragmentOrigin, ...]:
    """The origins of all fragments, each (name, transpose count) once, in
    the order first seen."""
    seen: set[tuple[str, int]] = set()
    union: list[FragmentOrigin] = []
    for fragment in source_fragments:
        for origin in fragment.origins:
            identity = (origin.computation_name, origin.transpose_count)
            if identity not in seen:
                seen.add(identity)
                union.append(origin)
    return tuple(union)


def _minimal_create_target_info(
        source_fragments: Sequence[FragmentInfo]) -> FragmentInfo:
    """The merged fragment: the union of the origins on the sources' mesh;
    stage, call counter and split type left unset. ValueError if there are
    no sources or they are on different meshes."""
    if not source_fragments:
        raise ValueError(
            "Cannot create target info from empty source fragments sequence")
    mesh_name = source_fragments[0].mesh_name
    for fragment in source_fragments:
        if fragment.mesh_name != mesh_name:
            raise ValueError(f"Inconsistent mesh_name values: {mesh_name} vs "
                             f"{fragment.mesh_name}")
    return FragmentInfo(origins=union_fragment_origins(source_fragments),
                        mesh_name=mesh_name)


def build_merge_rules_from_predicate(
        fragment_infos: Sequence[FragmentInfo], context: PipelineContext,
        target_info_builder: TargetInfoBuilder = _minimal_create_target_info,
        *, pred: RuleGeneratorPredicate,
) -> tuple[FragmentScheduleRules, FragmentMergeRules]:
    """One merge rule {a, b} for each unordered pair of fragments of one
    mesh with `pred(a, b, context)` (asked with a before b in the given
    order); the target comes from `target_info_builder([a, b])`."""
    rules = []
    for i, first in enumerate(fragment_infos):
        for second in fragment_infos[i + 1:]:
            if first.mesh_name == second.mesh_name and \
                    pred(first, second, context):
                rules.append(FragmentMergeRule(
                    sources={first, second},
                    target=target_info_builder([first, second])))
    return [], rules


def build_rules_from_pipeline(
        fragment_infos: Sequence[FragmentInfo], pipeline: PipelineSchedule,
        context: PipelineContext,
) -> tuple[FragmentScheduleRules, FragmentMergeRules]:
    """Runs every rule builder of `pipeline` on the fragments of each mesh
    (meshes in order of first appearance) and concatenates the rules.
    Ours, beyond Shardy: a builder with a true `whole_program` attribute is
    called once, with the fragments of every mesh (a schedule built from
    costs orders each mesh against the others, `mpmd.schedules.
    list_schedule`)."""
    by_mesh: dict[str, list[FragmentInfo]] = {}
    for fragment in fragment_infos:
        by_mesh.setdefault(fragment.mesh_name, []).append(fragment)
    schedule_rules: list[FragmentScheduleRule] = []
    merge_rules: list[FragmentMergeRule] = []
    for builder in pipeline.schedule_merge_rule_builders or ():
        if getattr(builder, "whole_program", False):
            built_schedule, built_merge = builder(list(fragment_infos),
                                                  context)
            schedule_rules.extend(built_schedule)
            merge_rules.extend(built_merge)
            continue
        for fragments in by_mesh.values():
            built_schedule, built_merge = builder(fragments, context)
            schedule_rules.extend(built_schedule)
            merge_rules.extend(built_merge)
    return schedule_rules, merge_rules


def maybe_unique_transpose_count(fragment: FragmentInfo) -> int | None:
    """The transpose count shared by all origins; None if they differ or
    there are none."""
    counts = {origin.transpose_count for origin in fragment.origins}
    return counts.pop() if len(counts) == 1 else None


def get_scheduling_unit_info(fragment: FragmentInfo) -> tuple[int, int] | None:
    """(call counter, transpose count) for a fragment schedules order: a
    user fragment with a call counter whose origins share transpose count 0
    or 1; None for any other."""
    if not fragment.origins or fragment.call_counter is None:
        return None
    count = maybe_unique_transpose_count(fragment)
    if count not in (0, 1):
        return None
    return fragment.call_counter, count


def get_staged_scheduling_info(
        f1: FragmentInfo, f2: FragmentInfo, error_context: str
) -> tuple[int, int, int, int] | None:
    """(call counter, transpose count) of f1 then of f2 when both are
    scheduling units (see `get_scheduling_unit_info`), else None. Raises
    ValueError if both are units but one has no stage."""
    first = get_scheduling_unit_info(f1)
    second = get_scheduling_unit_info(f2)
    if first is None or second is None:
        return None
    if f1.stage_id is None or f2.stage_id is None:
        raise ValueError(
            f"All fragments must have a stage id for {error_context}.")
    return (*first, *second)


# -- The adapter to this compiler. -----------------------------------------

def _not_supported(what: str) -> MpmdError:
    return MpmdError(f"not supported yet: {what}")


def _describe(fragment: "_schedules.FragmentInfo",
              split_backward: bool) -> FragmentInfo:
    from mpmd.compiler import FragmentKind  # noqa: PLC0415

    split_type = None
    if split_backward:
        if fragment.kind == FragmentKind.WEIGHT_GRADIENT:
            split_type = SplitFragmentType.DROP_TRANSFERRED
        elif fragment.kind == FragmentKind.BACKWARD:
            split_type = SplitFragmentType.KEEP_TRANSFERRED
    return FragmentInfo(
        origins=tuple(FragmentOrigin(origin.name, origin.transpose_count)
                      for origin in fragment.origins),
        stage_id=fragment.stage, call_counter=fragment.call_counter,
        split_type=split_type, mesh_name=fragment.mesh)


class _Index:
    """Finds our fragment for a Shardy FragmentInfo a rule names: the very
    object we built, or one equal to it."""

    def __init__(self, theirs: Sequence[FragmentInfo]):
        self._by_id = {id(info): n for n, info in enumerate(theirs)}
        self._by_value: dict[FragmentInfo, int] = {}
        for n, info in enumerate(theirs):
            self._by_value.setdefault(info, n)
        self._theirs = theirs

    def __call__(self, info: FragmentInfo, what: str) -> int:
        n = self._by_id.get(id(info))
        if n is not None and self._theirs[n] is info:
            return n
        n = self._by_value.get(info)
        if n is None:
            from mpmd.schedules.core import ScheduleError  # noqa: PLC0415

            raise ScheduleError(f"a {what} rule names {info}, which is not a "
                                f"fragment of the program")
        return n


def to_mpmd(schedule: PipelineSchedule,
            fragments: Sequence["_schedules.FragmentInfo"],
            num_meshes: int, split_backward: bool
            ) -> tuple[dict[str, list[str]] | None, list[tuple[str, str]]]:
    """Evaluates a Shardy-style schedule over the compiler's fragments.

    `fragments` are the user fragments as the compiler reports them, in
    program order; `split_backward` says whether backward fragments were
    split (their kind then tells the input-gradient part, BACKWARD, from the
    weight-gradient part, WEIGHT_GRADIENT).

    Returns (order, merge rules):
    - order: {mesh: [fragment key, ...]} listing every fragment of every
      mesh: a topological order of the schedule rules' edges (consecutive
      fragments of each rule) together with the data chains of a pipelined
      step that predicates leave open (see `_data_chains`; dropped if they
      contradict the rules), ties taken in program order; None when the
      schedule makes no schedule rule (the program order is kept). Raises
      mpmd.schedules.ScheduleError naming the fragments of a cycle if the
      rules contradict each other. The compiler checks the order against
      the data flow and names any cycle.
    - merge rules: (label, label) pairs, each fusing on every mesh the two
      labelled fragments of each call counter. Raises MpmdError ("not
      supported yet: ...") for merge rules that cannot be said that way.
    """
    theirs = [_describe(fragment, split_backward) for fragment in fragments]
    schedule_rules, merge_rules = build_rules_from_pipeline(
        theirs, schedule, PipelineContext(num_meshes=num_meshes))
    index = _Index(theirs)
    order = None
    if schedule_rules:
        edges: set[tuple[int, int]] = set()
        for rule in schedule_rules:
            steps = [index(info, "schedule") for info in rule.ordered_fragments]
            edges.update(zip(steps, steps[1:]))
        try:
            order = _order(fragments, edges | _data_chains(fragments))
        except _Cycle:
            # The rules override what the data chains guess; the compiler
            # checks the order against the real data flow.
            order = None
        if order is None:
            try:
                order = _order(fragments, edges)
            except _Cycle as cycle:
                from mpmd.schedules.core import ScheduleError  # noqa: PLC0415

                raise ScheduleError(str(cycle)) from None
    return order, _merge_pairs(fragments, merge_rules, index)


class _Cycle(Exception):
    pass


def _data_chains(fragments: Sequence["_schedules.FragmentInfo"]
                 ) -> set[tuple[int, int]]:
    """Edges for the data dependencies of a pipelined step, which schedule
    predicates leave to the data flow (Shardy sorts the rules together with
    the program's data dependencies; the compiler reports fragments by
    their attributes only, so they are inferred), each in program order:
    - a microbatch's fragments (one call counter) across meshes: its
      forward through the stages, then its backward back (weight-gradient
      parts left out: the previous stage does not wait for them);
    - a weight-gradient part after the fragment before it on its mesh with
      its call counter (its input-gradient part);
    - on a mesh, the fragments of one label that accumulate gradients over
      microbatches: weight-gradient parts, and backward fragments that were
      not split."""
    from mpmd.compiler import FragmentKind  # noqa: PLC0415

    weight = FragmentKind.WEIGHT_GRADIENT
    split = {(f.mesh, f.call_counter, f.origins) for f in fragments
             if f.kind == weight}
    edges: set[tuple[int, int]] = set()
    last: dict[tuple, int] = {}

    def chain(group: tuple, n: int) -> None:
        if group in last:
            edges.add((last[group], n))
        last[group] = n

    for n, fragment in enumerate(fragments):
        if fragment.call_counter is None:
            continue
        if fragment.kind == weight:
            before = last.get(("mesh", fragment.mesh, fragment.call_counter))
            if before is not None:
                edges.add((before, n))
        else:
            chain(("microbatch", fragment.call_counter), n)
        chain(("mesh", fragment.mesh, fragment.call_counter), n)
        accumulates = fragment.kind in (weight, FragmentKind.MIXED) or (
            fragment.kind == FragmentKind.BACKWARD and
            (fragment.mesh, fragment.call_counter, fragment.origins)
            not in split)
        if accumulates:
            chain(("label", fragment.mesh, fragment.label), n)
    return edges


def _order(fragments: Sequence["_schedules.FragmentInfo"],
           edges: set[tuple[int, int]]) -> dict[str, list[str]]:
    """Kahn's algorithm over `edges` (fragment indices; edges may cross
    meshes), always taking the ready fragment that comes first in program
    order; the result split by mesh."""
    successors: dict[int, list[int]] = collections.defaultdict(list)
    indegree = [0] * len(fragments)
    for before, after in sorted(edges):
        successors[before].append(after)
        indegree[after] += 1
    ready = [n for n in range(len(fragments)) if indegree[n] == 0]
    heapq.heapify(ready)
    order: dict[str, list[str]] = {}
    for fragment in fragments:
        order.setdefault(fragment.mesh, [])
    placed = 0
    while ready:
        n = heapq.heappop(ready)
        placed += 1
        order[fragments[n].mesh].append(fragments[n].key)
        for m in successors[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                heapq.heappush(ready, m)
    if placed != len(fragments):
        cycle = _find_cycle({n for n in range(len(fragments))
                             if indegree[n] > 0}, successors)
        raise _Cycle(
            f"the pipeline schedule's rules contradict each other on mesh "
            f"{fragments[cycle[0]].mesh!r}: they order these fragments in a "
            "cycle: " + " -> ".join(repr(fragments[n].key) for n in cycle))
    return order


def _find_cycle(stuck: set[int], successors: Mapping[int, list[int]]
                ) -> list[int]:
    """A cycle among `stuck` (fragments never ready: each has a stuck
    predecessor), starting and ending at its first fragment in program
    order."""
    predecessors: dict[int, int] = {}
    for n in sorted(stuck):
        for m in successors.get(n, ()):
            if m in stuck:
                predecessors.setdefault(m, n)
    # Walking predecessors from any stuck fragment must revisit one.
    walk: list[int] = []
    seen: dict[int, int] = {}
    n = min(stuck)
    while n not in seen:
        seen[n] = len(walk)
        walk.append(n)
        n = predecessors[n]
    cycle = walk[seen[n]:]
    cycle.reverse()
    start = cycle.index(min(cycle))
    cycle = cycle[start:] + cycle[:start]
    return cycle + [cycle[0]]


def _merge_pairs(fragments: Sequence["_schedules.FragmentInfo"],
                 rules: Sequence[FragmentMergeRule], index: _Index
                 ) -> list[tuple[str, str]]:
    """Merge rules as label pairs, checked to mean the same as the rules:
    each rule fuses two fragments of one call counter, and for each pair of
    labels the rules cover every (mesh, call counter) that has both."""
    pairs: dict[tuple[str, str], set[tuple[str, int | None]]] = {}
    for rule in rules:
        members = sorted(index(info, "merge") for info in rule.sources)
        if len(members) != 2:
            raise _not_supported(
                f"a merge rule of {len(members)} fragments "
                f"({', '.join(fragments[n].key for n in members)}); merge "
                "rules here fuse two fragments (give one rule per pair)")
        first, second = (fragments[n] for n in members)
        if first.call_counter != second.call_counter:
            raise _not_supported(
                f"merging fragments of different call counters "
                f"({first.key!r} and {second.key!r} on {first.mesh!r}); merge "
                "rules here fuse fragments of the same call counter")
        if first.label == second.label:
            raise _not_supported(
                f"merging two fragments labelled {first.label!r} "
                f"({first.key!r} and {second.key!r} on {first.mesh!r})")
        pair = (first.label, second.label)
        if (pair[1], pair[0]) in pairs:
            pair = (pair[1], pair[0])
        pairs.setdefault(pair, set()).add((first.mesh, first.call_counter))
    present: dict[str, set[tuple[str, int | None]]] = {}
    for fragment in fragments:
        present.setdefault(fragment.label, set()).add(
            (fragment.mesh, fragment.call_counter))
    for (a, b), covered in pairs.items():
        both = present.get(a, set()) & present.get(b, set())
        missing = sorted(both - covered, key=lambda mc: (mc[0], -1 if mc[1] is None else mc[1]))
        if missing:
            mesh, counter = missing[0]
            raise _not_supported(
                f"merging {a!r} and {b!r} for some call counters only (not "
                f"for call counter {counter} on {mesh!r}, and "
                f"{len(missing) - 1} more); a merge rule here fuses the two "
                "labels for every call counter on every mesh")
    return list(pairs)


# Shardy option -> PartitioningOptions field, for options that map.
OPTION_FIELDS = {"mpmd_split_bwd_fragments": "split_backward",
                 "mpmd_fragment_remat": "remat",
                 "mpmd_merge_remat_fragments": "merge_remat"}
# Shardy options this compiler always honours (nothing to set).
_ALWAYS = {"mpmd_merge_inferred_after_scheduling"}


def required_options(schedule: PipelineSchedule) -> dict[str, Any]:
    """The `mpmd.config.PartitioningOptions` fields (name -> value) that
    `schedule.required_mpmd_options` asks for.

    `mpmd_split_bwd_fragments` sets `split_backward`,
    `mpmd_fragment_remat` / `mpmd_merge_remat_fragments` set `remat` /
    `merge_remat`.
    `mpmd_merge_inferred_after_scheduling` needs nothing: inferred fragments
    are always merged after scheduling here (so that they add no ordering
    constraint). Any other option raises MpmdError ("not supported yet").
    """
    fields: dict[str, Any] = {}
    for key, value in (schedule.required_mpmd_options or {}).items():
        if key in OPTION_FIELDS:
            if not isinstance(value, bool):
                raise MpmdError(f"required option {key!r} must be True or "
                                f"False, got {value!r}")
            fields[OPTION_FIELDS[key]] = value
        elif key in _ALWAYS:
            if not isinstance(value, bool):
                raise MpmdError(f"required option {key!r} must be True or "
                                f"False, got {value!r}")
        else:
            hint = ""
            if key == "mpmd_pipeline_schedule":
                hint = ("; the schedule's rule builders define the order "
                        "here, drop this option")
            raise _not_supported(
                f"required option {key!r} (= {value!r}); understood: "
                f"{sorted([*OPTION_FIELDS, *_ALWAYS])}{hint}")
    return fields
