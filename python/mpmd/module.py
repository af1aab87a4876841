"""The front door for exported MPMD modules: ours, or one the real
Shardy:MPMD partitioned.

    run = mpmd.runtime.compile_module(text, topology)
    results = run(*arguments)          # main's flat arguments, in order

`text` is an MPMD module as partitioning leaves it: `main` carries the
topology and calls outlined SPMD programs with `mpmd.fragment_call`, moving
values between meshes with `mpmd.transfer` (what `as_text("mpmd")` prints,
`mpmd.jit`'s or Shardy:MPMD's). `topology` maps each mesh name of the
module to a `jax.sharding.Mesh` of the declared axes.

The compiler reads the execution plan off the module (the plan `mpmd.jit`
runs, `mpmd.runtime.plan`); the runtime compiles every distinct program
once for its mesh and runs the plan (`PlanExecutable`, under
`CompiledModule`), as it does for `mpmd.jit`. In a job of several processes
every process calls `compile_module` and the module the same way: each runs
the programs of the meshes it holds devices of and its part of the
transfers. This door needs the compiler, so it lives above the runtime
(`mpmd.runtime.compile_module` is this function, for existing callers).
"""

from __future__ import annotations

import re
import time
from typing import Any, Mapping

import jax
from jax.sharding import Mesh

from mpmd.errors import CompilerError
from mpmd.runtime.module import (CompiledModule, ModuleError,
                                 check_topology_type, meshes_of_devices,
                                 plan_meshes)
from mpmd.runtime.plan import ExecutionPlan

__all__ = ["ShardyProgram", "compile_module", "compile_shardy"]


# What compile_module needs, for messages that refuse a module.
_EXPORTED = (
    "compile_module runs an exported MPMD module, as `as_text(\"mpmd\")` of "
    "mpmd.jit or of Shardy:MPMD prints it: a public `main` with a "
    "`topology` attribute whose arguments and results are "
    "!mpmd.mesh_tensor values, and whose body only calls outlined programs "
    "(mpmd.fragment_call) and moves values between meshes (mpmd.transfer); "
    "a module still holding mpmd.fragment, mpmd.named_computation or "
    "mpmd.call ops in main has not been partitioned and exported")

# The empty pass pipeline: the module is read as it is.
_NO_PASSES = "builtin.module()"


def compile_module(text: str, topology: Mapping[str, Mesh] | None = None,
                   *, source_name: str = "<module>") -> "CompiledModule":
    """Compiles an exported MPMD module for `topology` and returns a
    `CompiledModule`: call it with `main`'s arguments, flat and in order
    (`jax.Array`s, numpy arrays or Python scalars), and it returns `main`'s
    results as a list of `jax.Array`s.

    `topology` maps every mesh name of the module's topology to a
    `jax.sharding.Mesh` with the declared axis names and sizes, in order
    (`<"m1" : <["data"=2, "model"=2]>>` takes `Mesh(devices.reshape(2, 2),
    ("data", "model"))`), no two of them sharing a device; other meshes
    in it are ignored. `source_name` names the text in the compiler's
    messages.

    `text` may be a jaxlib MLIR module instead (its text is read), and
    may be an IFRT IR program (jaxlib's `_sdy_mpmd.lower_to_ifrt`,
    `as_text("ifrt")`; either printed form): its calls name their devices
    (logical ids: positions in `jax.devices()`, the device list Shardy's
    own compile takes by default), so the topology may be left out; given,
    it must have the same meshes on the same devices (`mpmd-import-ifrt`
    says how IFRT IR reads as meshes).

    Raises `CompilerError` when the compiler cannot read the module or
    build its plan (its diagnostics name the op), `ModuleError` when the
    topology does not fit the module, `ProgramCompileError` when XLA cannot
    compile a program, `UnsupportedMemoryKindError` when a value is to live
    in a memory its mesh's devices lack, and `ProcessError` when the
    processes of a job compiled different modules or topologies.
    """
    start = time.perf_counter()
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    elif hasattr(text, "operation") and hasattr(text, "body"):
        # An MLIR module of jaxlib's bindings (Shardy's
        # `lowered.compiler_ir()`, `Lowered.compiler_ir("ifrt")`): its text.
        text = str(text)
    if not isinstance(text, str):
        raise ModuleError(
            f"compile_module takes the module as text (str), got "
            f"{type(text).__name__}; pass str(module) or "
            "lowered.as_text(\"mpmd\")")
    if not isinstance(source_name, str):
        raise ModuleError(
            f"compile_module: source_name must be a str, got "
            f"{source_name!r} of type {type(source_name).__name__}")
    ifrt = is_ifrt(text)
    if topology is None and not ifrt:
        raise ModuleError(
            "compile_module needs the topology of an MPMD module (a mapping "
            "of its mesh names to jax.sharding.Mesh); only IFRT IR names "
            "its devices itself")
    meshes = (None if topology is None else
              check_topology_type(topology, "compile_module", ModuleError))
    pipeline = _NO_PASSES
    if ifrt:
        # IFRT IR's device ids are logical: positions in the list of
        # devices the program is compiled for, here `jax.devices()`.
        ids = ",".join(str(i) for i in range(len(jax.devices())))
        pipeline = f"builtin.module(mpmd-import-ifrt{{available-devices={ids}}})"
    try:
        module_text, plan_json = _compile_to_plan(text, pipeline,
                                                  source_name)
    except CompilerError as error:
        raise _refused(error, ifrt) from None
    plan = ExecutionPlan.from_json(plan_json)
    read = time.perf_counter()
    if ifrt:
        meshes = meshes_of_devices(plan, meshes, "the IFRT IR program",
                                   ModuleError)
    meshes = plan_meshes(plan, meshes, "the module", ModuleError)
    # Every process of a job must run the same plan on the same devices,
    # or they would wait for each other's transfers forever.
    compiled = CompiledModule.compile(module_text, plan, meshes,
                                      f"module @{plan.function} "
                                      f"({source_name})")
    compiled.timings = {"plan": read - start,
                        "compile": time.perf_counter() - read}
    return compiled


# IFRT IR: its main function carries `ifrt.function`, its values are
# `!ifrt.array`s.
_IFRT = re.compile(r"\bifrt\.function\b|!ifrt\.array<")
# The parser's words for an op of a registered dialect it does not know.
_UNKNOWN_OP = re.compile(r"custom op '(ifrt\.\w+)' is unknown")


def is_ifrt(text: str) -> bool:
    """Whether `text` is an IFRT IR program rather than an MPMD module."""
    return _IFRT.search(text) is not None


def _compile_to_plan(text: str, pipeline: str,
                     source_name: str) -> tuple[str, str]:
    from mpmd.compiler import compile_to_plan  # noqa: PLC0415

    return compile_to_plan(text, pipeline, source_name=source_name)


def _refused(error: CompilerError, ifrt: bool = False) -> CompilerError:
    """The compiler's error with its first diagnostic as the headline (the
    op or argument at fault, where in the text) and, where the plan could
    not be built, what an exported module is; the compiler's text is kept
    as a note."""
    first = next(iter(error.errors), None)
    message = first.message if first is not None else error.summary
    where = (f" (at {first.location})"
             if first is not None and first.location else "")
    notes: list[str] = []
    unknown = _UNKNOWN_OP.search(message)
    if unknown:
        headline = (f"compile_module: not supported yet: the IFRT op "
                    f"{unknown.group(1)}{where}; mpmd runs ifrt.Call, "
                    "ifrt.CopyArrays and ifrt.Reshard")
    elif ifrt and error.summary.startswith("failed to parse"):
        headline = (f"compile_module: the IFRT IR program does not parse or "
                    f"verify: {message}{where}")
    elif ifrt:
        headline = f"compile_module: {message}{where}"
    elif error.summary.startswith("failed to parse"):
        headline = (f"compile_module: the module does not parse or verify: "
                    f"{message}{where}")
    elif message.startswith("not supported yet"):
        # An exported module using what the runtime does not run yet.
        headline = f"compile_module: {message}{where}"
    else:
        headline = (f"compile_module: the module is not an exported MPMD "
                    f"module: {message}{where}")
        notes = [f"note: {_EXPORTED}"]
    return CompilerError(headline, error.diagnostics, notes=notes,
                         retold=True)


# --- A Shardy user's door ------------------------------------------------------

class ShardyProgram:
    """What Shardy's `mpmd.jit(f, ...).lower(*args)` gives, compiled on the
    mpmd runtime (`compile_shardy`): call it with `f`'s arguments (the same
    pytrees) and it returns `f`'s results (the same pytree of
    `jax.Array`s), as Shardy's `lowered.compile()` would on Pathways.

    `module` is the `CompiledModule` of the lowered program's IFRT IR
    (its meshes, shardings, plan, `run_traced`, ...).
    """

    def __init__(self, module: "CompiledModule", input_tree: Any,
                 output_tree: Any, kept: list[int], constants: list[Any]):
        self.module = module
        self._input_tree = input_tree
        self._output_tree = output_tree
        self._kept = kept
        self._constants = constants

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Shardy's input tree is the positional arguments' (keywords, where
        # a version keeps them, beside them).
        leaves, tree = jax.tree.flatten(args)
        if kwargs or tree != self._input_tree:
            leaves, tree = jax.tree.flatten((args, kwargs))
        if tree != self._input_tree:
            raise ModuleError(
                f"the program takes arguments of structure "
                f"{self._input_tree}, got {jax.tree.structure(args)}")
        # Shardy's main takes the constants it closed over first, then the
        # arguments it kept (those the function reads).
        flat = list(self._constants) + [leaves[i] for i in self._kept]
        return jax.tree.unflatten(self._output_tree, self.module(*flat))

    def __repr__(self) -> str:
        return f"<ShardyProgram over {self.module!r}>"


def compile_shardy(lowered: Any,
                   topology: Mapping[str, Mesh] | None = None
                   ) -> ShardyProgram:
    """Runs a program lowered by Shardy:MPMD's own `mpmd.jit` (its
    `MpmdLowered`) without Pathways: its IFRT IR (`lowered.as_text()`) is
    compiled with `compile_module`, and the result takes and returns the
    function's pytrees. `topology`, when given, is checked against the
    devices the IFRT IR names."""
    needed = ("as_text", "input_tree", "output_tree")
    if not all(hasattr(lowered, name) for name in needed):
        raise ModuleError(
            "compile_shardy takes the Lowered of Shardy's mpmd.jit "
            "(`mpmd.jit(f, ...).lower(*args)`, with as_text(), input_tree "
            f"and output_tree), got {type(lowered).__name__}; pass IFRT IR "
            "or MPMD text to compile_module")
    text = lowered.as_text("ifrt")
    module = compile_module(text, topology,
                            source_name=f"<{type(lowered).__name__}>")
    constants = list(getattr(lowered, "const_args", None) or [])
    kept = getattr(lowered, "kept_inputs_indices", None)
    if kept is None:
        kept = range(len(module.plan.inputs) - len(constants))
    return ShardyProgram(module, lowered.input_tree, lowered.output_tree,
                         list(kept), constants)
