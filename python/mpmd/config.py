"""What the user tells mpmd: meshes, where names go, and how to partition."""

from __future__ import annotations

import collections.abc
import logging
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from mpmd.schedules import rules as pipeline
from mpmd.errors import MpmdError
from mpmd.stack_split import StackSplit, as_stack_split

__all__ = ["ConfigError", "FunctionIOMeshAssignment", "MpmdConfig",
           "PartitioningOptions", "SHARDY_OPTIONS", "AssignmentError",
           "is_abstract", "make_config", "mesh_names",
           "validate_and_merge_partitioning_options"]

# Mesh names are spelled inside the topology attribute and the programs'
# shardings; keep them simple. Assigned names (of named computations and
# tensors) may be any non-empty string: they reach the compiler typed.
_MESH_NAME = re.compile(r"^[A-Za-z0-9_.\-/()\[\]]+$")

_LOG = logging.getLogger("mpmd")


def _set_text(names: Any) -> str:
    """`{'a', 'b'}`: names as a Python set prints them (sorted, so that
    messages do not change from run to run)."""
    return "{" + ", ".join(repr(n) for n in sorted(set(names), key=str)) + "}"


class ConfigError(MpmdError, ValueError):
    """The configuration is inconsistent; the message says what to change.
    A ValueError too, as Shardy:MPMD raises for its configurations."""


class AssignmentError(ConfigError, RuntimeError):
    """The assignment does not fit the program's named computations: one is
    not assigned to a mesh, or a nested one is assigned elsewhere than the
    computation around it. Also a RuntimeError: Shardy:MPMD's compiler finds
    these, and raises them as compile errors."""


@dataclass(frozen=True, init=False)
class PartitioningOptions(collections.abc.Mapping):
    """How freely the partitioner may place what the user did not name.

    Built from keyword arguments: our field names below, or Shardy:MPMD's
    `mpmd_*` keys, whose `PartitioningOptions` is a dict built the same way
    (`PartitioningOptions(mpmd_infer_transfers=True,
    mpmd_pipeline_schedule="1F1B")`); each Shardy key becomes the field it
    names (see SHARDY_OPTIONS). An unknown key, a non-boolean value of a
    boolean Shardy option or a key given twice (as ours and Shardy's, with
    different values) is a ConfigError.

    Also a read-only mapping with Shardy:MPMD's keys, as its
    `MpmdConfig.partitioning_options` dict is read:
    `options["mpmd_split_bwd_fragments"]`, `options.get(...)`, `dict(options)`
    (whose result `make_config` takes back). The keys are those of Shardy's
    options that are fields here, and the ones only False can be given for;
    `options["split_backward"]` (our field names) works too."""

    # Let mesh inference add transfers where a nameless op needs values from
    # several meshes (otherwise that is an error naming the op).
    infer_transfers: bool = False
    # Turn a sum (max, ...) of values from several meshes into a cross-mesh
    # reduction.
    infer_cross_mesh_reductions: bool = False
    # A built-in name ("gpipe", "1f1b", "interleaved-1f1b",
    # "zero-bubble-h1"; make_config also takes Shardy's names, "GPipe",
    # and registry schedules by name, and stores what they name), a table
    # {mesh: [fragment, ...]}, a comparator before(a, b) -> bool over
    # mpmd.schedules.FragmentInfo, or a PipelineSchedule. None keeps the
    # program order.
    pipeline_schedule: Any = None
    # Pairs of fragment labels to fuse per microbatch, e.g.
    # [("layer3", "layer3(1)")], or a predicate over two FragmentInfo.
    fragment_merge_rules: Any = ()
    # Fuse each microbatch's forward and backward on the last stage.
    merge_last_stage: bool = False
    # Split backward fragments into input- and weight-gradient parts (needed
    # by zero-bubble schedules; implied by "zero-bubble-h1").
    split_backward: bool = False
    # Rematerialize activations: each forward fragment is recomputed right
    # before its backward, so its residuals do not stay alive while other
    # microbatches run (Shardy's mpmd_fragment_remat); `merge_remat` fuses
    # the recomputation into the backward program.
    remat: bool = False
    merge_remat: bool = False
    # Offload activations: the residuals a forward fragment leaves for its
    # backward wait in the mesh's pinned host memory while other
    # microbatches run, and come back one fragment before the backward.
    # True for every named computation, or the names of those whose
    # forwards are offloaded (given as a list, kept as a tuple). Needs a
    # backend with a "pinned_host" memory; not with `remat` (which leaves
    # no residuals).
    offload_activations: bool | tuple[str, ...] = False
    # With make_config(topology, "auto") (or names assigned "auto"): the
    # bytes per device each mesh may hold (parameters and the activations
    # of the microbatches the schedule keeps in flight); None: no limit.
    auto_memory_limit_bytes: int | None = None

    def __init__(self, **options: Any):
        values = _options_from_mapping(options, "PartitioningOptions(...)")
        for option in fields(self):
            object.__setattr__(self, option.name,
                               values.get(option.name, option.default))

    def _shardy_view(self) -> dict[str, Any]:
        view: dict[str, Any] = {}
        for key, target in SHARDY_OPTIONS.items():
            if target == "unsupported":
                view[key] = False
            elif target is not None:
                view[key] = getattr(self, target)
        return view

    def __getitem__(self, key: str) -> Any:
        if key in _FIELD_NAMES:
            return getattr(self, key)
        view = self._shardy_view()
        if key not in view:
            raise KeyError(key)
        return view[key]

    def __iter__(self):
        return iter(self._shardy_view())

    def __len__(self) -> int:
        return len(self._shardy_view())


@dataclass(frozen=True)
class MpmdConfig:
    topology: Mapping[str, Any]  # mesh name -> jax.sharding.Mesh
    assignment: Mapping[str, tuple[str, int | None]]
    input_mesh_assignment: Any = None
    output_mesh_assignment: Any = None
    partitioning_options: PartitioningOptions = field(
        default_factory=PartitioningOptions)
    # Meshes of the function's inputs and outputs come from in_shardings /
    # out_shardings (and committed arguments) only.
    read_input_output_mesh_from_shardings: bool = False
    # The compiler assigns the named computations `assignment` leaves out
    # to stages, one per mesh in topology order (make_config(topology,
    # "auto"), or names assigned "auto").
    auto: bool = False
    # Named computations whose scanned layer stack is split over several
    # meshes (assigned a list of meshes, or a StackSplit): mpmd.stack_split.
    stacks: Mapping[str, StackSplit] = field(default_factory=dict)

    @property
    def mesh_names(self) -> list[str]:
        return list(self.topology)

    # Shardy:MPMD's views of the same configuration.

    @property
    def name_to_mesh_assignment(self) -> dict[str, str]:
        return {name: mesh for name, (mesh, _) in self.assignment.items()}

    @property
    def name_to_stage_assignment(self) -> dict[str, int]:
        return {name: stage for name, (_, stage) in self.assignment.items()
                if stage is not None}

    @property
    def mesh_and_stage_assignment(self) -> dict[str, str | tuple[str, int]]:
        return {name: mesh if stage is None else (mesh, stage)
                for name, (mesh, stage) in self.assignment.items()}

    @property
    def pipeline_schedule(self) -> Any:
        return self.partitioning_options.pipeline_schedule

    @property
    def sharding_mesh(self) -> Any:
        """An abstract mesh for sharding annotations inside named
        computations (that of the first mesh)."""
        return next(iter(self.topology.values())).abstract_mesh

    def topology_attr(self) -> str:
        """The topology as the compiler reads it (#mpmd.topology<...>)."""
        meshes = []
        for name, mesh in self.topology.items():
            axes = ", ".join(f'"{axis}"={size}'
                             for axis, size in mesh.shape.items())
            meshes.append(f'<"{name}" : <[{axes}]>>')
        return f"#mpmd.topology<{', '.join(meshes)}>"


def _check_mesh_name(name: Any) -> str:
    rule = "use a non-empty string of letters, digits and _ . - / ( ) [ ]"
    if isinstance(name, str) and "@" in name:
        raise ConfigError(f"{name} uses one of the reserved substrings "
                          f"({{'@'}}). Please rename it: {rule}")
    if isinstance(name, str) and "#" in name and \
            split_memory_kind(name)[1] in MEMORY_KINDS:
        raise ConfigError(
            f"Mesh name {name} (or any name suffixed with #pinned_host or "
            "#device) is reserved for memory_kinds: \"mesh#kind\" names a "
            f"memory of a mesh in assignments. Please rename it: {rule}")
    if not isinstance(name, str) or not _MESH_NAME.match(name):
        raise ConfigError(f"mesh name {name!r} is not a valid name: {rule}")
    return name


def _check_assigned_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigError(f"assigned name {name!r} is not a valid name: "
                          "names are non-empty strings")
    return name


def _check_mesh(name: str, mesh: Any) -> None:
    import jax  # noqa: PLC0415

    if not isinstance(mesh, (jax.sharding.Mesh, jax.sharding.AbstractMesh)):
        raise ConfigError(f"topology[{name!r}] must be a jax.sharding.Mesh "
                          "(or a jax.sharding.AbstractMesh, to lower without "
                          f"devices), got {type(mesh).__name__}")


def is_abstract(mesh: Any) -> bool:
    """Whether a topology mesh is a `jax.sharding.AbstractMesh`: a shape
    without devices, enough to lower but not to compile."""
    import jax  # noqa: PLC0415

    return isinstance(mesh, jax.sharding.AbstractMesh)


_FIELD_NAMES = frozenset(f.name for f in fields(PartitioningOptions))

# Shardy:MPMD's partitioning option keys, and what each becomes here: a
# field of PartitioningOptions, or None when the option changes nothing
# here (what it asks for is what this compiler always does, or it is a hint
# to an optimization we do not make), or "unsupported" when only its
# default (False) can be honoured.
SHARDY_OPTIONS: dict[str, str | None] = {
    "mpmd_infer_transfers": "infer_transfers",
    "mpmd_infer_cross_mesh_reductions": "infer_cross_mesh_reductions",
    "mpmd_split_bwd_fragments": "split_backward",
    "mpmd_pipeline_schedule": "pipeline_schedule",
    # Export merges inferred fragments after scheduling; import merges
    # them where that adds no dependency.
    "mpmd_merge_inferred_after_scheduling": None,
    "mpmd_absorb_inferred_fragments_on_entry_point_function": None,
    # Constants are always copied into the fragments that read them.
    "mpmd_copy_constant_creation_from_producer_to_consumer": None,
    # Every mesh compiles its own programs; nothing assumes equal devices.
    "mpmd_assume_homogeneous_devices": None,
    "mpmd_fragment_remat": "remat",
    "mpmd_merge_remat_fragments": "merge_remat",
    "mpmd_apply_merge_transfers_pass": "unsupported",
}

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
    from mpmd.schedules import registry as pipeline_registry  # noqa: PLC0415

    return pipeline_registry.get_pipeline_schedule(name)


def schedule_from_spelling(value: Any) -> Any:
    """A pipeline schedule as given to `pipeline_schedule=` or
    `mpmd_pipeline_schedule`: Shardy's names ("GPipe", "1F1B",
    "ZeroBubbleH1", "None", and the registry's "Circular", ...) and our
    spellings of registry schedules ("zero-bubble-v") become the schedule
    they name (our built-in name, or the registry's `PipelineSchedule`);
    anything else (our built-in names, tables, comparators, schedules) is
    returned as it is, for `_check_schedule` to judge."""
    if not isinstance(value, str):
        return value
    if value in _SHARDY_SCHEDULES:
        return _SHARDY_SCHEDULES[value]
    if value in _SHARDY_REGISTRY_SCHEDULES:
        return _registry_schedule(_SHARDY_REGISTRY_SCHEDULES[value])
    if value in _REGISTRY_SPELLINGS:
        return _registry_schedule(_REGISTRY_SPELLINGS[value])
    return value


def _shardy_schedule(value: Any) -> Any:
    """`mpmd_pipeline_schedule`'s value: any spelling `schedule_from_spelling`
    knows; another string is an error naming Shardy's."""
    from mpmd.schedules import BUILTIN_SCHEDULES  # noqa: PLC0415

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


def _options_from_mapping(options: Mapping[str, Any],
                          given_as: str = "partitioning_options"
                          ) -> dict[str, Any]:
    """Our PartitioningOptions fields from a dict of ours, Shardy's keys, or
    both. Unknown keys are an error naming `given_as` (what the user wrote:
    `partitioning_options` or `PartitioningOptions(...)`), the closest
    valid key and the valid ones."""
    from mpmd.diagnostics import closest  # noqa: PLC0415

    ours = {f.name for f in fields(PartitioningOptions)}
    unknown = [key for key in options
               if key not in ours and key not in SHARDY_OPTIONS]
    if unknown:
        # Shardy's words first ("contains unsupported options"), then what
        # each key may have meant, then where the valid keys are.
        hints = [f"{key!r}: did you mean {match!r}?" for key in unknown
                 if (match := closest(str(key), [*ours, *SHARDY_OPTIONS]))]
        raise ConfigError(
            f"`{given_as}` contains unsupported options {_set_text(unknown)}"
            ": unknown partitioning option"
            + (f" ({'; '.join(hints)})" if hints else "")
            + f"; valid: {sorted(ours)} or Shardy's {sorted(SHARDY_OPTIONS)}")
    result: dict[str, Any] = {}
    for key, value in options.items():
        if key in ours:
            target = key
        elif key in SHARDY_OPTIONS:
            target = SHARDY_OPTIONS[key]
            if key != "mpmd_pipeline_schedule" and not isinstance(value, bool):
                raise ConfigError(f"Option {key} has value {value!r}, which "
                                  "is not a boolean. Give True or False")
            if target == "unsupported":
                if value:
                    raise ConfigError(f"not supported yet: partitioning "
                                      f"option {key!r} = True")
                continue
            if target is None:
                continue
            if key == "mpmd_pipeline_schedule":
                value = _shardy_schedule(value)
        if key == "pipeline_schedule":
            value = schedule_from_spelling(value)
        if target in result and result[target] != value:
            raise ConfigError(f"partitioning options set {target!r} twice, "
                              f"to {result[target]!r} and {value!r}")
        result[target] = value
    return result


def validate_and_merge_partitioning_options(
        pipeline_required_options: Mapping[str, Any] | None,
        user_provided_options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Shardy:MPMD's merge of a schedule's required options into the
    user's: a conflict (the user set a required option to another value)
    is a ConfigError listing each; options the user left out are added,
    each with a warning logged (logger "mpmd"), as Shardy logs them."""
    if pipeline_required_options is None:
        return None if user_provided_options is None else dict(
            user_provided_options)
    user = dict(user_provided_options or {})
    conflicts = [f"  - {key!r}: pipeline schedule requires {value}, but user "
                 f"specified {user[key]}"
                 for key, value in pipeline_required_options.items()
                 if key in user and user[key] != value]
    if conflicts:
        raise ConfigError(
            "Conflicting partitioning options detected:\n"
            + "\n".join(conflicts)
            + "\nRemove these options from the partitioning options, or give"
            " them the values the pipeline schedule requires")
    for key, value in pipeline_required_options.items():
        if key not in user:
            _LOG.warning("Setting partitioning option %r to %s (required by "
                         "pipeline schedule)", key, value)
    return {**user, **pipeline_required_options}


def make_config(topology: Mapping[str, Any],
                name_to_mesh_assignment: Mapping[str, str | tuple[str, int]]
                | None = None,
                *,
                name_to_stage_assignment: Mapping[str, int] | None = None,
                input_mesh_assignment: Any = None,
                output_mesh_assignment: Any = None,
                partitioning_options: PartitioningOptions | Mapping[str, Any]
                | None = None,
                read_input_output_mesh_from_shardings: bool = False,
                pipeline_schedule: Any = None,
                assignment: Mapping[str, str | tuple[str, int]] | None = None
                ) -> MpmdConfig:
    """Checks and bundles a partitioning configuration (Shardy:MPMD's
    signature; `assignment=` is accepted for the second argument too).

    - `topology`: mesh name -> `jax.sharding.Mesh`; meshes must not share
      devices.
    - `name_to_mesh_assignment`: name of a `named_computation` /
      `named_tensor` -> mesh name, or (mesh name, pipeline stage); or
      "auto": the compiler assigns every named computation to a stage, one
      stage per mesh in topology order, balancing their estimated cost
      (`partitioning_options={"auto_memory_limit_bytes": N}` bounds each
      mesh's memory). Names mapped to "auto", or left out while others
      are, are placed the same way around the hand-placed ones.
    - `name_to_stage_assignment`: name -> stage, as Shardy:MPMD takes
      stages.
    - `input_mesh_assignment` / `output_mesh_assignment`: where the function's
      arguments / results go: a pytree prefix of the arguments (results)
      with a mesh name or None per leaf (a leaf covers its whole subtree),
      or a dict {flat index: mesh name}; `()` or None assigns nothing.
      Leaves left out are placed by mesh inference.
    - `partitioning_options`: a PartitioningOptions, or a dict of its fields
      and/or Shardy:MPMD's `mpmd_*` keys (see SHARDY_OPTIONS).
    - `read_input_output_mesh_from_shardings`: the inputs' and outputs'
      meshes come from `in_shardings` / `out_shardings` (then the io
      assignments must be empty).
    - `pipeline_schedule`: a built-in name (ours, "gpipe", or Shardy's,
      "GPipe"; registry schedules by Shardy's name, "Circular", or ours,
      "zero-bubble-v"), a table, a comparator, or a
      `mpmd.pipeline.PipelineSchedule` (its required options are merged
      into the partitioning options).
    """
    if assignment is not None:
        if name_to_mesh_assignment is not None:
            raise ConfigError("give the assignment once: as the second "
                              "argument or as assignment=, not both")
        name_to_mesh_assignment = assignment
    if name_to_mesh_assignment is None:
        raise ConfigError("make_config needs the assignment of names to "
                          "meshes (the second argument), or \"auto\"")
    _check_assignment_values(name_to_mesh_assignment, "assignment" if
                             assignment is not None else
                             "name_to_mesh_assignment")
    auto = False
    if isinstance(name_to_mesh_assignment, str):
        if name_to_mesh_assignment != "auto":
            raise ConfigError(
                f"the assignment is {name_to_mesh_assignment!r}: give a "
                "mapping of names to meshes, or \"auto\"")
        name_to_mesh_assignment, auto = {}, True
    elif any(target == "auto" for target in name_to_mesh_assignment.values()):
        name_to_mesh_assignment = {
            name: target for name, target in name_to_mesh_assignment.items()
            if target != "auto"}
        auto = True
    name_to_mesh_assignment, stacks = _stack_splits(name_to_mesh_assignment,
                                                    topology, auto)
    if input_mesh_assignment == ():
        input_mesh_assignment = None
    if output_mesh_assignment == ():
        output_mesh_assignment = None
    if read_input_output_mesh_from_shardings and (
            input_mesh_assignment is not None
            or output_mesh_assignment is not None):
        raise ConfigError("input_mesh_assignment and output_mesh_assignment "
                          "must be empty when "
                          "read_input_output_mesh_from_shardings is True")
    if not topology:
        raise ConfigError("`topology` must have at least one mesh. Give one "
                          "or more, e.g. {'m1': jax.sharding.Mesh(devices, "
                          "('x',))}")
    owner: dict[int, str] = {}
    for name, mesh in topology.items():
        _check_mesh_name(name)
        _check_mesh(name, mesh)
        if is_abstract(mesh):
            continue
        for device in mesh.devices.flat:
            if device.id in owner:
                raise ConfigError(
                    f"meshes {owner[device.id]!r} and {name!r} share device "
                    f"{device.id}; each device belongs to one mesh")
            owner[device.id] = name

    _check_assigned_meshes(name_to_mesh_assignment, topology)
    stages = dict(name_to_stage_assignment or {})
    negative = [stage for stage in stages.values()
                if isinstance(stage, int) and stage < 0]
    if negative:
        raise ConfigError(
            "Stage ids must be positive integers, but got: "
            f"{','.join(map(str, negative))}. Stages are integers >= 0 "
            "(name_to_stage_assignment: "
            + ", ".join(f"{name!r}: {stage}" for name, stage in stages.items()
                        if isinstance(stage, int) and stage < 0) + ")")
    for name in stages:
        if name in stacks:
            raise ConfigError(
                f"name_to_stage_assignment gives {name!r} a stage, but it is "
                "split over several meshes; give each piece's stage in its "
                "list: [(\"m0\", 0), (\"m1\", 1), ...]")
        if name not in name_to_mesh_assignment:
            raise ConfigError(f"name_to_stage_assignment names {name!r}, "
                              "which name_to_mesh_assignment does not assign "
                              "to a mesh")
    normalized: dict[str, tuple[str, int | None]] = {}
    for name, target in name_to_mesh_assignment.items():
        _check_assigned_name(name)
        stage: int | None = None
        if isinstance(target, tuple):
            if len(target) != 2:
                raise ConfigError(f"assignment[{name!r}] must be a mesh name "
                                  f"or (mesh name, stage), got {target!r}")
            target, stage = target
            if not isinstance(stage, int) or stage < 0:
                raise ConfigError(f"assignment[{name!r}] has stage {stage!r}; "
                                  "stages are integers >= 0")
        if name in stages:
            if stage is not None and stage != stages[name]:
                raise ConfigError(f"{name!r} has stage {stage} in the "
                                  f"assignment and {stages[name]} in "
                                  "name_to_stage_assignment")
            stage = stages[name]
            if not isinstance(stage, int) or stage < 0:
                raise ConfigError(f"name_to_stage_assignment[{name!r}] is "
                                  f"{stage!r}; stages are integers >= 0")
        if target not in topology:
            # "m1#pinned_host" (_check_assigned_meshes saw that "m1" is a
            # mesh): a named tensor kept in that memory of the mesh (a named
            # computation with one is refused once the program says which
            # names are computations).
            kind = split_memory_kind(target)[1]
            if kind not in MEMORY_KINDS:
                raise ConfigError(
                    f"assignment[{name!r}] is {target!r}, whose memory "
                    f"kind {kind!r} is not one of {list(MEMORY_KINDS)}")
        normalized[name] = (target, stage)

    if isinstance(partitioning_options, PartitioningOptions):
        defaults = PartitioningOptions()
        values = {f.name: getattr(partitioning_options, f.name)
                  for f in fields(PartitioningOptions)
                  if getattr(partitioning_options, f.name)
                  != getattr(defaults, f.name)}
    else:
        values = _options_from_mapping(partitioning_options or {})
    if "pipeline_schedule" in values:  # PartitioningOptions(...) given
        values["pipeline_schedule"] = schedule_from_spelling(
            values["pipeline_schedule"])
    if pipeline_schedule is not None:
        pipeline_schedule = schedule_from_spelling(pipeline_schedule)
        given = values.get("pipeline_schedule")
        if given is not None and given != pipeline_schedule:
            raise ConfigError("the pipeline schedule is given twice (as "
                              "pipeline_schedule= and in the partitioning "
                              "options); give it once")
        values["pipeline_schedule"] = pipeline_schedule
    values = _with_required_options(values)
    options = PartitioningOptions(**values)

    options = replace(options, offload_activations=_offload_names(
        options.offload_activations))
    _check_schedule(options)
    if options.offload_activations and options.remat:
        raise ConfigError("offload_activations moves the residuals remat "
                          "(mpmd_fragment_remat) recomputes instead: with "
                          "both, nothing is left to offload; choose one")
    if options.merge_remat and not options.remat:
        raise ConfigError("merge_remat (mpmd_merge_remat_fragments) fuses "
                          "recomputed forwards into their backward; it needs "
                          "remat (mpmd_fragment_remat) = True")
    limit = options.auto_memory_limit_bytes
    if limit is not None and (not isinstance(limit, int) or limit <= 0):
        raise ConfigError(f"auto_memory_limit_bytes is {limit!r}; give a "
                          "positive number of bytes per mesh, or None")
    if limit is not None and not auto:
        raise ConfigError("auto_memory_limit_bytes bounds the automatic "
                          "stage assignment: use it with make_config("
                          "topology, \"auto\") or names assigned \"auto\"")
    config = MpmdConfig(dict(topology), normalized, input_mesh_assignment,
                        output_mesh_assignment, options,
                        read_input_output_mesh_from_shardings, auto, stacks)
    for which in ("input_mesh_assignment", "output_mesh_assignment"):
        _check_io_meshes(which, getattr(config, which), topology)
    return config


def _stack_splits(assignment: Mapping[str, Any], topology: Mapping[str, Any],
                  auto: bool) -> tuple[dict[str, Any], dict[str, StackSplit]]:
    """The assignment without its stack splits (values that are lists of
    meshes or StackSplits), and those splits, checked against the
    topology."""
    if not isinstance(assignment, collections.abc.Mapping):
        return assignment, {}
    stacks: dict[str, StackSplit] = {}
    for name, target in assignment.items():
        split = as_stack_split(name, target)
        if split is None:
            continue
        _check_assigned_name(name)
        missing = sorted(set(split.meshes) - set(topology))
        if missing:
            raise ConfigError(
                f"assignment[{name!r}] splits a stack over {missing}, not in "
                f"the topology's meshes {sorted(topology)}; list meshes of "
                "the topology")
        if auto:
            raise ConfigError(
                f"not supported yet: assignment[{name!r}] splits a stack "
                "over meshes while other names are assigned \"auto\"; "
                "assign every name by hand (a split's layer counts may be "
                "\"auto\": mpmd.StackSplit(meshes, layers=\"auto\"))")
        stacks[name] = split
    if not stacks:
        return dict(assignment), {}
    return ({name: target for name, target in assignment.items()
             if name not in stacks}, stacks)


def _check_assignment_values(assignment: Any, given_as: str) -> None:
    """The assignment is "auto" or a mapping, and no value is a dict or a
    set (which name no mesh, and would fail unhashable further on); a
    ConfigError names the argument and the key."""
    if isinstance(assignment, str):
        return  # "auto", or an error naming it
    if not isinstance(assignment, collections.abc.Mapping):
        raise ConfigError(
            f"{given_as} is a {type(assignment).__name__} "
            f"({assignment!r}); give a mapping of named computation (and "
            "named tensor) names to mesh names, {name: \"m0\"} or {name: "
            "(\"m0\", stage)}, or \"auto\"")
    for name, target in assignment.items():
        mesh = target[0] if isinstance(target, tuple) and target else target
        if isinstance(mesh, (collections.abc.Mapping, collections.abc.Set)):
            raise ConfigError(
                f"{given_as}[{name!r}] is {target!r}, which holds a "
                f"{type(mesh).__name__}; give a mesh name of the topology, "
                "or (mesh name, stage)")


def _assigned_mesh(target: Any) -> Any:
    """The mesh an assignment value names: "m1" for "m1", "m1#pinned_host"
    and ("m1", stage)."""
    if isinstance(target, tuple) and target:
        target = target[0]
    return split_memory_kind(target)[0] if isinstance(target, str) else target


def _check_assigned_meshes(assignment: Mapping[str, Any],
                           topology: Mapping[str, Any]) -> None:
    """Every mesh the assignment names is in the topology; otherwise one
    error naming all those that are not (Shardy's words first)."""
    missing = {}
    for name, target in assignment.items():
        mesh = _assigned_mesh(target)
        if mesh not in topology:
            missing.setdefault(mesh, name)
    if missing:
        examples = ", ".join(f"assignment[{name!r}] names {mesh!r}"
                             for mesh, name in missing.items())
        raise ConfigError(
            f"Invalid mesh name(s): {_set_text(missing)} not in the "
            f"topology's meshes {sorted(topology)} ({examples}); assign each "
            "name to a mesh of the topology")


def _offload_names(value: Any) -> bool | tuple[str, ...]:
    """offload_activations as PartitioningOptions keeps it: a bool, or a
    non-empty tuple of named computation names."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) or not isinstance(value,
                                                collections.abc.Iterable):
        raise ConfigError(f"offload_activations is {value!r}; give True, "
                          "False, or a list of named computation names")
    names = tuple(value)
    if not names:
        raise ConfigError("offload_activations is an empty list; give True "
                          "to offload every named computation's "
                          "activations, or the names of some")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"offload_activations names {name!r}, which "
                              "is not a named computation name (a "
                              "non-empty string)")
    return names


def is_pipeline_schedule(schedule: Any) -> bool:
    """Whether `schedule` is a Shardy-style `mpmd.pipeline.PipelineSchedule`
    (rule builders), as opposed to a name, a table or a comparator."""
    return isinstance(schedule, pipeline.PipelineSchedule)


def _with_required_options(values: dict[str, Any]) -> dict[str, Any]:
    """A PipelineSchedule's required options merged into ours (a conflict
    with an option set otherwise is an error)."""
    schedule = values.get("pipeline_schedule")
    if not is_pipeline_schedule(schedule):
        return values
    # `values` holds only what the user set: the required options fill in
    # the rest, and contradict none of it.
    return validate_and_merge_partitioning_options(
        pipeline.required_options(schedule), values) or {}


def _check_schedule(options: PartitioningOptions) -> None:
    from mpmd.schedules import BUILTIN_SCHEDULES  # noqa: PLC0415

    schedule = options.pipeline_schedule
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


# Memory kinds a mesh name may carry in the input and output mesh
# assignments ("m1#pinned_host"), as Shardy:MPMD spells them.
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


def split_memory_kind(name: str) -> tuple[str, str | None]:
    """("m1", "pinned_host") for "m1#pinned_host"; ("m1", None) for "m1"."""
    mesh, sep, kind = name.rpartition("#")
    return (mesh, kind) if sep else (name, None)


def _check_io_meshes(which: str, spec: Any, topology: Mapping[str, Any]) -> None:
    import jax  # noqa: PLC0415

    if spec is None:
        return
    leaves = (list(spec.values()) if isinstance(spec, dict)
              and all(isinstance(k, int) for k in spec)
              else jax.tree_util.tree_leaves(spec))
    missing = {_assigned_mesh(target) for target in leaves
               if target is not None} - set(topology)
    if missing:
        raise ConfigError(
            f"Invalid mesh name(s) in {which}: {_set_text(missing)} not in "
            f"the topology's meshes {sorted(topology)}; give a mesh of the "
            "topology (or None) for each value")
    for target in leaves:
        if target is None:
            continue
        mesh, kind = (split_memory_kind(target) if isinstance(target, str)
                      else (target, None))
        if kind is not None and kind not in MEMORY_KINDS:
            raise ConfigError(f"{which} names {target!r}: {kind!r} is not a "
                              f"memory kind; use one of {list(MEMORY_KINDS)}"
                              f" (e.g. {mesh + '#pinned_host'!r})")


def mesh_names(pytree: Any, topology: Mapping[str, Any]) -> Any:
    """The name of the topology mesh of each leaf of `pytree` (arrays,
    ShapeDtypeStructs or NamedShardings with a sharding, or meshes), as
    Shardy:MPMD's `mesh_names`; None for an abstract mesh (unless it is
    one mesh of a topology of abstract meshes, and no other: JAX may hand
    out one object for equal abstract meshes). A mesh outside the topology
    is a ConfigError naming it."""
    import jax  # noqa: PLC0415

    def name_of(mesh: Any) -> str | None:
        if isinstance(mesh, jax.sharding.AbstractMesh):
            names = [name for name, candidate in topology.items()
                     if mesh is candidate]
            return names[0] if len(names) == 1 else None
        for name, candidate in topology.items():
            if mesh == candidate:
                return name
        raise ConfigError(f"Mesh {mesh} with devices "
                          f"{[d.id for d in mesh.devices.flat]} is not in the "
                          f"topology; its meshes: {sorted(topology)}")

    def leaf(x: Any) -> str | None:
        if x is None:
            return None
        if isinstance(x, (jax.Array, jax.ShapeDtypeStruct)):
            return leaf(x.sharding)
        if isinstance(x, jax.sharding.NamedSharding):
            return name_of(x.mesh)
        if isinstance(x, (jax.sharding.Mesh, jax.sharding.AbstractMesh)):
            return name_of(x)
        raise ConfigError(f"Unexpected type: {type(x)}: mesh_names takes "
                          "arrays, ShapeDtypeStructs, NamedShardings or "
                          "meshes (or None)")

    return jax.tree_util.tree_map(leaf, pytree, is_leaf=lambda x: x is None)


@dataclass(frozen=True)
class FunctionIOMeshAssignment:
    """The meshes of a lowered function's inputs and outputs, as pytrees of
    mesh names shaped like the arguments and the results."""

    input_meshes: Any
    output_meshes: Any
