"""How to partition: `PartitioningOptions`, from our names or Shardy:MPMD's.

    options = PartitioningOptions(infer_transfers=True,
                                  pipeline_schedule="1f1b")
    options = PartitioningOptions(mpmd_infer_transfers=True,
                                  mpmd_pipeline_schedule="1F1B")
    options["mpmd_split_bwd_fragments"]       # Shardy's view, read-only

Each option is a field of `PartitioningOptions`, with its default and its
meaning beside it; `SHARDY_OPTIONS` maps Shardy's keys to the fields they
set. `checked_options` builds the options `make_config` keeps from what
the user gave, and checks them together.
"""

from __future__ import annotations

import collections.abc
import logging
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from mpmd.diagnostics import set_text as _set_text
from mpmd.errors import ConfigError
from mpmd.schedules import rules
from mpmd.schedules.spellings import (check_schedule, is_pipeline_schedule,
                                      schedule_from_spelling, shardy_schedule)

__all__ = ["COMPILER", "PartitioningOptions", "SHARDY_OPTIONS",
           "checked_options", "compiler_options",
           "validate_and_merge_partitioning_options"]

_LOG = logging.getLogger("mpmd")

# The key of a field's metadata naming its option in the compiler's
# mpmd-partition pipeline (see PartitioningOptions).
COMPILER = "compiler"


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

    # Each field is an option. A simple one (a bool or a string the
    # compiler takes as it is) is declared once, here, with the name of its
    # textual option in the compiler's mpmd-partition pipeline (the name
    # mpmd-import or mpmd-optimize gives it):
    # `field(default=False, metadata={COMPILER: "infer-transfers"})`.
    # `compiler_options` turns those fields into "NAME=VALUE" text, which
    # lowering.partition and compiler.Partitioner hand on as they are and
    # the binding parses with mpmd-partition's options, so none of them
    # names the option. A new boolean option touches 5 files (it touched 8,
    # with lowering.py, compiler.py and python/src/MpmdCompilerModule.cpp):
    #   1. this file: the field, its metadata and its comment (and
    #      SHARDY_OPTIONS if Shardy:MPMD has a key for it: a table, as most
    #      of Shardy's keys name no field here);
    #   2. include/mpmd/Transforms/Optimize/Options.h: its member of the
    #      typed OptimizeOptions;
    #   3. include/mpmd/Transforms/Optimize/Passes.h: its textual option in
    #      OptimizePipelineOptions, under the name in the metadata
    #      (mpmd-partition's options derive from it);
    #   4. lib/Transforms/Optimize/OptimizePipeline.cpp: typed() copies it,
    #      addOptimizePipeline hands it to its pass;
    #   5. include/mpmd/Transforms/Optimize/Passes.td: the pass's option.
    # An import option touches 4: ImportOptions and ImportPipelineOptions
    # are both in Import/Passes.h (2 and 3 in one file). Options without
    # metadata are handed over explicitly: typed values and what the
    # compiler calls back for (pipeline_schedule, fragment_merge_rules,
    # offload_activations' names), or Python's own
    # (auto_memory_limit_bytes).

    # Let mesh inference add transfers where a nameless op needs values from
    # several meshes (otherwise that is an error naming the op).
    infer_transfers: bool = field(
        default=False, metadata={COMPILER: "infer-transfers"})
    # Turn a sum (max, ...) of values from several meshes into a cross-mesh
    # reduction.
    infer_cross_mesh_reductions: bool = field(
        default=False, metadata={COMPILER: "infer-cross-mesh-reductions"})
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
    merge_last_stage: bool = field(
        default=False, metadata={COMPILER: "merge-last-stage"})
    # Split backward fragments into input- and weight-gradient parts (needed
    # by zero-bubble schedules; implied by "zero-bubble-h1").
    split_backward: bool = field(
        default=False, metadata={COMPILER: "split-backward"})
    # Rematerialize activations: each forward fragment is recomputed right
    # before its backward, so its residuals do not stay alive while other
    # microbatches run (Shardy's mpmd_fragment_remat); `merge_remat` fuses
    # the recomputation into the backward program.
    remat: bool = field(default=False, metadata={COMPILER: "remat"})
    merge_remat: bool = field(default=False,
                              metadata={COMPILER: "merge-remat"})
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


_FIELD_NAMES = frozenset(f.name for f in fields(PartitioningOptions))


def compiler_options(options: Any) -> list[str]:
    """The fields of `options` (a PartitioningOptions, or any dataclass
    whose fields carry COMPILER metadata) that are options of the
    compiler's mpmd-partition pipeline, as its textual "NAME=VALUE"
    entries, one per such field, defaults included (the compiler's
    defaults need not be Python's): what `mpmd.compiler.Partitioner.
    partition` takes as `options`."""
    return [f"{option.metadata[COMPILER]}="
            f"{_option_text(option.name, getattr(options, option.name))}"
            for option in fields(options) if COMPILER in option.metadata]


def _option_text(name: str, value: Any) -> str:
    """`value` as MLIR's pass option parser reads it: booleans as true and
    false, strings as they are, in braces (which it strips) when they hold
    a space (which would end the value)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if any(c in "{}\"'" for c in value):
            # The parser reads braces and quotes as delimiters (of values,
            # of nested pipelines), and keeps or strips them by context.
            raise ConfigError(f"{name} is {value!r}: the compiler's option "
                              "text cannot hold braces or quotes")
        if any(c.isspace() for c in value):
            return "{" + value + "}"
        return value
    raise TypeError(f"partitioning option {name} is {value!r}; an option "
                    "with compiler metadata is a bool, int or str")


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


def _options_from_mapping(options: Mapping[str, Any],
                          given_as: str = "partitioning_options"
                          ) -> dict[str, Any]:
    """Our PartitioningOptions fields from a dict of ours, Shardy's keys, or
    both. Unknown keys are an error naming `given_as` (what the user wrote:
    `partitioning_options` or `PartitioningOptions(...)`), the closest
    valid key and the valid ones."""
    from mpmd.diagnostics import closest  # noqa: PLC0415

    if not isinstance(options, Mapping):
        raise ConfigError(
            f"`{given_as}` is {options!r} of type {type(options).__name__}; "
            "give a mapping of option names to values (ours or Shardy's "
            "mpmd_* keys), e.g. {\"pipeline_schedule\": \"1f1b\"}, or a "
            "PartitioningOptions")
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
                value = shardy_schedule(value)
        if key == "pipeline_schedule":
            value = schedule_from_spelling(value)
        elif key in ours:
            value = _typed(key, value, given_as)
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
    for what, given in (("pipeline_required_options",
                         pipeline_required_options),
                        ("user_provided_options", user_provided_options)):
        if given is not None and not isinstance(given, Mapping):
            raise ConfigError(
                f"validate_and_merge_partitioning_options: `{what}` is "
                f"{given!r} of type {type(given).__name__}; give a mapping "
                f"of option names to values or None")
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


# The options that are switches: True or False (NumPy's bools too).
_SWITCHES = frozenset(["infer_transfers", "infer_cross_mesh_reductions",
                       "merge_last_stage", "split_backward", "remat",
                       "merge_remat"])


def _typed(name: str, value: Any, given_as: str) -> Any:
    """`value` of option `name` as PartitioningOptions keeps it, or a
    ConfigError naming the option, the value and the type it takes: a
    string "no" for a switch would otherwise turn it on."""
    import numpy as np  # noqa: PLC0415 - the config needs no JAX

    def refuse(takes: str) -> ConfigError:
        return ConfigError(
            f"{given_as}[{name!r}] is {value!r} of type "
            f"{type(value).__name__}; give {takes}")

    if name in _SWITCHES:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise refuse("True or False")
    if name == "fragment_merge_rules":
        return _merge_rules(value, refuse)
    if name == "auto_memory_limit_bytes":
        if value is None:
            return None
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, np.integer)):
            raise refuse("a number of bytes per mesh (an int), or None")
        return int(value)
    if name == "offload_activations" and isinstance(value, np.bool_):
        return bool(value)
    return value


def _merge_rules(value: Any, refuse: Any) -> Any:
    """fragment_merge_rules as kept: a predicate `merge(a, b) -> bool`
    over two FragmentInfo, or a tuple of (label, label) pairs."""
    if callable(value):
        return value
    takes = ("a list of (label, label) pairs, e.g. [('layer3', "
             "'layer3(1)')], or a predicate merge(a, b) -> bool")
    if isinstance(value, (str, bytes, collections.abc.Mapping)) or \
            not isinstance(value, collections.abc.Iterable):
        raise refuse(takes)
    pairs = []
    for rule in value:
        if not (isinstance(rule, (tuple, list)) and len(rule) == 2
                and all(isinstance(label, str) and label for label in rule)):
            raise refuse(takes + f" ({rule!r} is not such a pair)")
        pairs.append(tuple(rule))
    return tuple(pairs)


def _offload_names(value: Any) -> bool | tuple[str, ...]:
    """offload_activations as PartitioningOptions keeps it: a bool, or a
    non-empty tuple of named computation names."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, collections.abc.Mapping)) or not isinstance(
            value, collections.abc.Iterable):
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


def _with_required_options(values: dict[str, Any]) -> dict[str, Any]:
    """A PipelineSchedule's required options merged into ours (a conflict
    with an option set otherwise is an error)."""
    schedule = values.get("pipeline_schedule")
    if not is_pipeline_schedule(schedule):
        return values
    # `values` holds only what the user set: the required options fill in
    # the rest, and contradict none of it.
    return validate_and_merge_partitioning_options(
        rules.required_options(schedule), values) or {}


def checked_options(given: Any, pipeline_schedule: Any,
                    auto: bool) -> PartitioningOptions:
    """The options `make_config` keeps: `given` (a PartitioningOptions, a
    mapping of our and Shardy's keys, or None) with `pipeline_schedule`
    (make_config's own argument) and a PipelineSchedule's required options
    merged in, each option checked and the options checked together
    (`auto`: the assignment is automatic)."""
    if isinstance(given, PartitioningOptions):
        defaults = PartitioningOptions()
        values = {f.name: getattr(given, f.name)
                  for f in fields(PartitioningOptions)
                  if getattr(given, f.name) != getattr(defaults, f.name)}
    else:
        values = _options_from_mapping(given or {})
    if "pipeline_schedule" in values:  # PartitioningOptions(...) given
        values["pipeline_schedule"] = schedule_from_spelling(
            values["pipeline_schedule"])
    if pipeline_schedule is not None:
        pipeline_schedule = schedule_from_spelling(pipeline_schedule)
        previous = values.get("pipeline_schedule")
        if previous is not None and previous != pipeline_schedule:
            raise ConfigError("the pipeline schedule is given twice (as "
                              "pipeline_schedule= and in the partitioning "
                              "options); give it once")
        values["pipeline_schedule"] = pipeline_schedule
    values = _with_required_options(values)
    options = PartitioningOptions(**values)

    options = replace(options, offload_activations=_offload_names(
        options.offload_activations))
    check_schedule(options.pipeline_schedule)
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
    return options
