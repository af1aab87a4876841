"""Parse, verify and transform MLIR text with the mpmd compiler.

The compiler runs in this process: each call uses a fresh MLIR context (with
the mpmd, sdy and stablehlo dialects; ops of other dialects pass through
opaquely) and releases the GIL while it works. It is independent of the MLIR
that jaxlib bundles, so both can be used side by side.

Two roads in: textual pass pipelines (`run_pipeline`, `compile_to_plan`; for
people and tests, as with mpmd-opt), and `Partitioner`, which `mpmd.jit`
uses: the program is parsed once and partitioned with typed options
(`ImportOptions`, `OptimizeOptions`) and the simple options as the
compiler's own option text (`mpmd.options.compiler_options`); no pipeline
text is built.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Callable, Mapping, NoReturn, Sequence

from mpmd import _mpmd_compiler
from mpmd.errors import CompilerError, Diagnostic

__all__ = ["FragmentKind", "ImportOptions", "OptimizeOptions", "Partitioner",
           "ScheduleKind", "compile_to_plan", "fragment_kind_spellings",
           "lower_to_ifrt", "op_catalog", "parse", "run_pipeline",
           "schedule_kind_spellings", "verify"]

# The compiler's enums (TableGen, MpmdAttrs.td), bound by the extension.
ScheduleKind = _mpmd_compiler.ScheduleKind
FragmentKind = _mpmd_compiler.FragmentKind


def schedule_kind_spellings() -> dict[str, ScheduleKind]:
    """How pass options and messages spell each schedule kind."""
    return dict(_mpmd_compiler.schedule_kinds())


def fragment_kind_spellings() -> dict[str, FragmentKind]:
    """How the compiler spells each fragment kind."""
    return dict(_mpmd_compiler.fragment_kinds())

DEFAULT_SOURCE_NAME = "<input>"


def parse(text: str, *, generic: bool = False,
          source_name: str = DEFAULT_SOURCE_NAME) -> str:
    """Parses and verifies a module; returns it printed (generic form if asked).

    Raises CompilerError with the parser's or verifier's diagnostics.
    """
    try:
        return _mpmd_compiler.parse_and_verify(text, generic, source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def verify(text: str, *, source_name: str = DEFAULT_SOURCE_NAME) -> None:
    """Raises CompilerError unless `text` is a valid module."""
    parse(text, source_name=source_name)


def run_pipeline(text: str, pipeline: str, *, generic: bool = False,
                 source_name: str = DEFAULT_SOURCE_NAME) -> str:
    """Runs a pass pipeline on a module and returns the result printed.

    `pipeline` is MLIR's textual form, anchored (`builtin.module(cse)`) or
    not (`canonicalize,cse`, a registered pipeline name). The module is
    verified before and after. Raises CompilerError on a bad module, an
    unknown pass or option, or a failing pass.
    """
    try:
        return _mpmd_compiler.run_pass_pipeline(text, pipeline, generic,
                                                source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def compile_to_plan(text: str, pipeline: str, *,
                    source_name: str = DEFAULT_SOURCE_NAME) -> tuple[str, str]:
    """Runs a pipeline that ends in an exported program (e.g.
    `mpmd-import{...},mpmd-export`); returns the printed MPMD module and its
    execution plan as JSON text (see `mpmd.runtime.plan`).

    Raises CompilerError like `run_pipeline`.
    """
    try:
        return _mpmd_compiler.compile_to_plan(text, pipeline, source_name)
    except _mpmd_compiler.DiagnosticError as error:
        _raise_compiler_error(error)


def lower_to_ifrt(text: str, *,
                  source_name: str = DEFAULT_SOURCE_NAME) -> str:
    """An exported MPMD program (what `Lowered.as_text("mpmd")` and the
    `mpmd-export` pipeline print) as IFRT IR, the form Pathways and XLA's
    IFRT IR runtime run (pass `mpmd-lower-to-ifrt`). The IFRT ops print in
    generic form, which jaxlib's IFRT dialect parses.

    Raises CompilerError when `text` is not an exported program (a
    fragment left in the main function, say).
    """
    return run_pipeline(text, "builtin.module(mpmd-lower-to-ifrt)",
                        source_name=source_name)


# ImportOptions and OptimizeOptions hold what the compiler takes as typed
# values or calls back for. The switches (infer-transfers, remat, ...) are
# not fields here: they travel as the partition pipeline's option text
# (`Partitioner.partition`'s `options`), so that a new one is declared once,
# in mpmd/options.py, and needs no code on this road.


@dataclass(frozen=True)
class ImportOptions:
    """Where names, arguments and results go."""

    # name -> (mesh, stage or None); any string is a name.
    assignment: Mapping[str, tuple[str, int | None]] = field(
        default_factory=dict)
    # flat argument / result index -> mesh.
    input_assignment: Mapping[int, str] = field(default_factory=dict)
    output_assignment: Mapping[int, str] = field(default_factory=dict)
    # flat argument / result index -> memory kind ("pinned_host", ...) for
    # values kept in another memory of their mesh.
    input_memory_kinds: Mapping[int, str] = field(default_factory=dict)
    output_memory_kinds: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OptimizeOptions:
    """The schedule, merges, and activation offloading."""

    schedule: ScheduleKind = ScheduleKind.NONE
    # The rest by keyword: split_backward came second, and a positional call
    # written for it must fail rather than shift into `order`.
    _: KW_ONLY
    # For ScheduleKind.EXPLICIT: called with the fragments (dicts, see
    # Partitioner.partition) and returns {mesh: [fragment key, ...]}.
    order: Callable[[list[dict[str, Any]]], Mapping[str, Sequence[str]]] \
        | None = None
    merge_rules: Sequence[tuple[str, str]] = ()
    # Called with the fragments; returns more (label, label) merge rules.
    merge_predicate: Callable[[list[dict[str, Any]]],
                              Sequence[tuple[str, str]]] | None = None
    # Keep forward residuals in pinned host memory until their backward:
    # True for every forward, or the named computations whose forwards.
    offload_activations: bool | Sequence[str] = False


class Partitioner:
    """A program as JAX lowered it (with a topology), parsed once.

        partitioner = Partitioner(text)
        computations, tensors = partitioner.named_ops()
        module, plan_json = partitioner.partition(
            ImportOptions(...), OptimizeOptions(...),
            ["infer-transfers=true", "remat=false"])

    `partition` runs import, optimize, sharding and export in one pipeline
    (the compiler's mpmd-partition) and may be called once. Exceptions
    raised by `order` or `merge_predicate` propagate as they are.
    """

    def __init__(self, text: str, *,
                 source_name: str = DEFAULT_SOURCE_NAME) -> None:
        try:
            self._native = _mpmd_compiler.Partitioner(text, source_name)
        except _mpmd_compiler.DiagnosticError as error:
            _raise_compiler_error(error)

    def named_ops(self) -> tuple[list[str], list[str]]:
        """The names of the program's named computations and named
        tensors, each sorted."""
        return self._native.named_ops()

    def auto_assign(self, *, stages: int, fixed: list[tuple[str, int]],
                    memory_limit: int = 0, gpipe: bool = False
                    ) -> dict[str, Any]:
        """The named computations' costs and their balanced split into
        `stages` contiguous stages (mpmd-auto-assign); `fixed`: [(name,
        stage)] placed by hand; `memory_limit`: bytes per stage. A dict
        with "costs", "microbatches", "inflight", "auto" and "by_count"
        ({"stage_of", "flops", "memory"}), or "error" (and "culprit") when
        no split fits. Reads the module; `partition` may follow."""
        return self._native.auto_assign(stages=stages, fixed=fixed,
                                        memory_limit=memory_limit,
                                        gpipe=gpipe)

    def partition(self, imports: ImportOptions, optimize: OptimizeOptions,
                  options: Sequence[str] = (), *, print_module: bool = True,
                  print_programs: bool = True) -> tuple[str | None, str]:
        """Returns the printed MPMD program and its execution plan (JSON
        text, see `mpmd.runtime.plan`). `options`: the other options of
        the compiler's mpmd-partition pipeline as its "NAME=VALUE" text
        (`mpmd.options.compiler_options` makes them from
        PartitioningOptions); options left out keep the compiler's
        defaults, and a malformed one, or one that `imports` or `optimize`
        carries, is a ValueError. Raises CompilerError.

        `print_module=False` returns (None, plan) and keeps the module:
        `module_text()` prints it when asked (printing is about a fifth of
        partitioning a small program). `print_programs=False` leaves the
        programs' texts out of the plan (no "module" entries; printing them
        is most of the plan's cost): `program_texts()` prints them when
        asked."""
        try:
            return self._native.partition(
                assignment=[(name, mesh, stage) for name, (mesh, stage)
                            in imports.assignment.items()],
                input_assignment=_indexed(imports.input_assignment,
                                          imports.input_memory_kinds),
                output_assignment=_indexed(imports.output_assignment,
                                           imports.output_memory_kinds),
                schedule=optimize.schedule,
                order=optimize.order,
                merge_rules=list(optimize.merge_rules),
                merge_predicate=optimize.merge_predicate,
                offload_activations=bool(optimize.offload_activations),
                offload_names=([] if isinstance(optimize.offload_activations,
                                                bool)
                               else list(optimize.offload_activations)),
                options=list(options), print_module=print_module,
                print_programs=print_programs)
        except _mpmd_compiler.DiagnosticError as error:
            _raise_compiler_error(error)

    def module_text(self) -> str:
        """The partitioned module, printed on the first call after
        `partition(..., print_module=False)`."""
        try:
            return self._native.module_text()
        except _mpmd_compiler.DiagnosticError as error:
            _raise_compiler_error(error)

    def program_texts(self) -> dict[str, str]:
        """{program: text} of the plan's programs (what the plan's
        "module" entries hold), printed on the first call after
        `partition(..., print_programs=False)`."""
        try:
            return dict(self._native.program_texts())
        except _mpmd_compiler.DiagnosticError as error:
            _raise_compiler_error(error)


def _indexed(assignment: Mapping[int, str], kinds: Mapping[int, str]
             ) -> list[tuple[int, str, str]]:
    return [(index, mesh, kinds.get(index, ""))
            for index, mesh in sorted(assignment.items())]


def op_catalog() -> list[dict[str, object]]:
    """What the compiler knows about each StableHLO and CHLO op name: one
    dict per op (`name`, `pure`, `elementwise`, `constant_like`,
    `cheap_to_clone`, `commutative`, `collective`, `has_regions`), sorted by
    name. Ops it does not list are treated conservatively (impure)."""
    return _mpmd_compiler.op_catalog()


def _to_diagnostic(raw: Sequence) -> Diagnostic:
    severity, location, message, notes = raw
    return Diagnostic(severity, location, message,
                      tuple(_to_diagnostic(note) for note in notes))


def _raise_compiler_error(error: _mpmd_compiler.DiagnosticError) -> NoReturn:
    summary, raw_diagnostics = error.args
    raise CompilerError(
        summary, [_to_diagnostic(raw) for raw in raw_diagnostics]) from None
