"""One exported SPMD program compiled with XLA for one mesh.

Route: the program's StableHLO text is embedded, as a private function called
once, into a `jax.jit` computation whose boundary carries the mesh's
NamedShardings and the donation; `jit(...).lower(...).compile()` gives a
`jax.stages.Compiled`. Calls then go through JAX's C++ dispatch fast path
(the same one a plain `jax.jit` uses): asynchronous, no host round trip,
donation and output `jax.Array` construction handled by JAX. The only Python
work per call is a check that no argument is deleted or uncommitted
(about 0.1 us per argument).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import mlir
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mpmd.errors import MpmdError
from mpmd.runtime.exported_program import ExportedProgram
from mpmd.runtime.placement import equivalent
from mpmd.runtime.relocation import relocated

__all__ = [
    "MeshProgram",
    "lower_program",
    "ProgramCompileError",
    "ProgramError",
    "ProgramInputError",
    "clear_program_cache",
    "compile_counts",
    "reserved_memory_options",
    "program_cache_size",
]


class ProgramError(MpmdError):
    """Base class of the errors of compiling or running a mesh program."""


class ProgramCompileError(ProgramError):
    """A program could not be parsed, lowered or compiled for its mesh."""

    def __init__(self, program: str, mesh: Mesh, message: str):
        self.program = program
        self.mesh = mesh
        self.message = message
        super().__init__(
            f"cannot compile program '{program}' for mesh {_describe_mesh(mesh)}: "
            f"{message}"
        )


class ProgramInputError(ProgramError):
    """A program was called with an argument it cannot take as is."""

    def __init__(self, program: str, index: int | None, message: str):
        self.program = program
        self.index = index
        where = "" if index is None else f" argument {index}"
        super().__init__(f"program '{program}'{where}: {message}")


# ---------------------------------------------------------------------------
# Parsing the program text


@dataclass(frozen=True)
class _Source:
    """Program text as a primitive parameter: hashed by digest, short repr.
    For a program from an export, `exported` holds it (and `text` is
    empty)."""

    text: str = field(repr=False, compare=False)
    digest: str
    entry: str
    exported: Any = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        return f"<program {self.entry} {self.digest[:12]}>"


_DTYPE_CANDIDATES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
    "complex128", "int4", "uint4", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
)
_ir_dtypes: dict[str, np.dtype] | None = None


def _ir_type_to_dtype(element_type: Any) -> np.dtype | None:
    """The NumPy dtype of an MLIR element type (inside an active context)."""
    global _ir_dtypes
    if _ir_dtypes is None:
        table: dict[str, np.dtype] = {}
        for name in _DTYPE_CANDIDATES:
            dtype = getattr(jnp, name, None)
            if dtype is None:
                continue
            try:
                key = str(mlir.dtype_to_ir_type(np.dtype(dtype)))
            except TypeError:
                continue
            table.setdefault(key, np.dtype(dtype))  # i1 -> bool (listed first)
        _ir_dtypes = table
    return _ir_dtypes.get(str(element_type))


def _entry_function(module: Any) -> Any:
    """`@main`, else the only public `func.func` of the module; None if neither."""
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    for op in funcs:
        if ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    public = [
        op
        for op in funcs
        if "sym_visibility" not in op.attributes
        or ir.StringAttr(op.attributes["sym_visibility"]).value == "public"
    ]
    return public[0] if len(public) == 1 else None


def _parse_signature(
    text: str,
) -> tuple[str, tuple[jax.core.ShapedArray, ...], tuple[jax.core.ShapedArray, ...]]:
    """Entry function name, input and output avals of a StableHLO module.

    Raises ValueError with a readable message when the text is not a module
    JAX's MLIR context accepts or its entry signature is not tensors only.
    """
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    with mlir.make_ir_context():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # MLIRError carries the diagnostics in str(e)
            raise ValueError(f"invalid MLIR module: {e}") from None
        entry = _entry_function(module)
        if entry is None:
            raise ValueError(
                "the module has neither a function named @main nor exactly one "
                "public func.func to run"
            )
        name = ir.StringAttr(entry.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)

        def avals(types: Sequence[Any], what: str) -> tuple[jax.core.ShapedArray, ...]:
            out = []
            for i, t in enumerate(types):
                try:
                    rt = ir.RankedTensorType(t)
                except ValueError:
                    raise ValueError(
                        f"@{name} {what} {i} has type {t}; only ranked tensors are supported"
                    ) from None
                if not rt.has_static_shape:
                    raise ValueError(f"@{name} {what} {i} has dynamic shape {t}")
                dtype = _ir_type_to_dtype(rt.element_type)
                if dtype is None:
                    raise ValueError(f"@{name} {what} {i} has unsupported element type {rt.element_type}")
                if jax.dtypes.canonicalize_dtype(dtype) != dtype:
                    raise ValueError(
                        f"@{name} {what} {i} has 64-bit type {t}; enable jax_enable_x64 to run it"
                    )
                out.append(jax.core.ShapedArray(tuple(rt.shape), dtype))
            return tuple(out)

        return name, avals(ftype.inputs, "argument"), avals(ftype.results, "result")


# ---------------------------------------------------------------------------
# The primitive that embeds the program in a jit computation

_program_p = Primitive("mpmd_program")
_program_p.multiple_results = True


def _program_abstract_eval(*args: Any, source: _Source, out_avals: tuple) -> tuple:
    del args, source
    return out_avals


def _program_lowering(ctx: Any, *args: Any, source: _Source, out_avals: tuple) -> Any:
    from jax._src.lib.mlir import ir  # noqa: PLC0415
    from jax._src.lib.mlir.dialects import func as func_dialect  # noqa: PLC0415

    del out_avals
    submodule = ir.Module.parse(source.text, context=ctx.module_context.context)
    if source.entry != "main":
        symtab = ir.SymbolTable(submodule.operation)
        if "main" in symtab:  # cannot happen: @main would have been the entry
            raise ValueError("module has both @main and another entry function")
        symtab.set_symbol_name(symtab[source.entry], "main")
        for op in submodule.body.operations:
            symtab.replace_all_symbol_uses(source.entry, "main", op)
    callee = mlir.merge_mlir_modules(
        ctx.module_context.module,
        f"mpmd_{source.entry}",
        submodule,
        dst_symtab=ctx.module_context.symbol_table,
    )
    callee_type = ir.FunctionType(
        ir.TypeAttr(ctx.module_context.symbol_table[callee].attributes["function_type"]).value
    )
    call = func_dialect.CallOp(callee_type.results, ir.FlatSymbolRefAttr.get(callee), list(args))
    return call.results


_program_p.def_abstract_eval(_program_abstract_eval)
mlir.register_lowering(_program_p, _program_lowering)


# ---------------------------------------------------------------------------
# Compile cache

_cache: dict[tuple, Any] = {}
_cache_lock = threading.Lock()


_signatures: dict[str, tuple[str, tuple, tuple]] = {}
_counts = {"compiled": 0, "relocated": 0}
# id(relocated executable) -> the executable XLA compiled that it was loaded
# from (kept while the relocated one is in _cache).
_origins: dict[int, Any] = {}


def _signature(text: str, digest: str) -> tuple[str, tuple, tuple]:
    """`_parse_signature`, remembered by digest."""
    found = _signatures.get(digest)
    if found is None:
        found = _signatures[digest] = _parse_signature(text)
    return found


def clear_program_cache() -> None:
    """Forget every compiled executable (later compiles start from scratch)
    and reset `compile_counts`."""
    with _cache_lock:
        _cache.clear()
        _signatures.clear()
        _origins.clear()
        _counts.update(compiled=0, relocated=0)


def compile_counts() -> dict[str, int]:
    """Executables made since the last `clear_program_cache`: "compiled" by
    XLA (or read from JAX's persistent cache), and "relocated": loaded for
    another mesh of the same shape from a program compiled for one."""
    with _cache_lock:
        return dict(_counts)


def program_cache_size() -> int:
    """How many executables the compile cache holds."""
    return len(_cache)


# ---------------------------------------------------------------------------
# MeshProgram


def _describe_mesh(mesh: Mesh) -> str:
    axes = ", ".join(f"{n}={s}" for n, s in mesh.shape.items())
    ids = [d.id for d in mesh.devices.flat]
    return f"<{axes}> on devices {ids}"


def _describe_aval(aval: Any) -> str:
    return f"{np.dtype(aval.dtype).name}{list(aval.shape)}"


def _describe_value(x: Any) -> str:
    if isinstance(x, jax.Array):
        try:
            if x.is_deleted():
                return f"a deleted (donated?) jax.Array {x.dtype.name}{list(x.shape)}"
            ids = sorted(d.id for d in x.sharding.device_set)
        except Exception:  # noqa: BLE001 - best-effort description only
            ids = []
        committed = "" if getattr(x, "_committed", True) else " (uncommitted)"
        return (
            f"jax.Array {x.dtype.name}{list(x.shape)} on devices {ids} "
            f"with sharding {x.sharding}{committed}"
        )
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return f"{type(x).__name__} {np.dtype(x.dtype).name}{list(x.shape)} (not a jax.Array)"
    return f"{type(x).__name__} (not a jax.Array)"


def _check_shardings(
    what: str,
    shardings: Sequence[Any] | None,
    avals: Sequence[jax.core.ShapedArray],
    mesh: Mesh,
) -> tuple[NamedSharding, ...]:
    if shardings is None:
        replicated = NamedSharding(mesh, PartitionSpec())
        return (replicated,) * len(avals)
    shardings = tuple(shardings)
    if len(shardings) != len(avals):
        raise ValueError(f"{len(shardings)} {what} shardings given for {len(avals)} {what}s")
    for i, s in enumerate(shardings):
        if not isinstance(s, NamedSharding):
            raise ValueError(f"{what} sharding {i} is {s!r}, not a NamedSharding")
        if s.mesh != mesh:
            raise ValueError(
                f"{what} sharding {i} is on mesh {_describe_mesh(s.mesh)}, not on the program's mesh"
            )
    return shardings


@dataclass(frozen=True, eq=False)
class MeshProgram:
    """One SPMD program compiled for one mesh.

    Build with `MeshProgram.compile`; call with `jax.Array`s already laid out
    as `in_shardings` on `mesh` (no copies are made: anything else raises
    `ProgramInputError`). A call dispatches asynchronously like `jax.jit` and
    returns the results as a list of `jax.Array`s with `out_shardings`.
    A donated argument whose buffers XLA reuses for an output is deleted by
    the call; one it cannot reuse (no output of its type) stays valid, and
    JAX warns at compile time (JAX's semantics).
    """

    name: str
    mesh: Mesh
    in_avals: tuple[jax.core.ShapedArray, ...]
    out_avals: tuple[jax.core.ShapedArray, ...]
    in_shardings: tuple[NamedSharding, ...]
    out_shardings: tuple[NamedSharding, ...]
    donate_argnums: tuple[int, ...]
    compiled: jax.stages.Compiled = field(repr=False)
    # The sha256 of the program's text.
    digest: str = field(default="", repr=False)
    # XLA options it was compiled with (reserved_memory_options).
    options: dict[str, Any] = field(default_factory=dict, repr=False)
    # For a program loaded from another mesh's executable: that executable,
    # as XLA compiled it, and its mesh (what later relocations load from: on
    # CPU an executable loaded from bytes cannot be serialized whole again).
    origin: tuple[jax.stages.Compiled, Mesh] | None = field(default=None,
                                                           repr=False)
    _expected: tuple[tuple[NamedSharding, tuple[int, ...], np.dtype], ...] = field(
        init=False, repr=False
    )

    def __post_init__(self) -> None:
        expected = tuple(
            (s, tuple(a.shape), np.dtype(a.dtype))
            for s, a in zip(self.in_shardings, self.in_avals)
        )
        object.__setattr__(self, "_expected", expected)

    @classmethod
    def compile(
        cls,
        stablehlo_text: "str | ExportedProgram",
        mesh: Mesh,
        *,
        name: str,
        in_shardings: Sequence[NamedSharding] | None = None,
        out_shardings: Sequence[NamedSharding] | None = None,
        donate_argnums: Sequence[int] = (),
        like: MeshProgram | None = None,
        reserved_bytes: int = 0,
    ) -> MeshProgram:
        """Compile `stablehlo_text` (entry `@main`, or its only public function)
        with XLA for exactly the devices of `mesh`; or a program read from
        an export (`ExportedProgram`), called through `jax.export`.

        `like`: the same text already compiled for another mesh of the same
        shape (axis names and sizes, device kind) with the same shardings
        (in that mesh's terms) and donation. Its executable is then loaded
        for `mesh`'s devices instead of compiling again (see `relocation.relocated`);
        where that fails, the program is compiled.

        `reserved_bytes`: bytes per device that other values of the step
        keep alive on `mesh` while the program runs; given to XLA where the
        backend takes it (`reserved_memory_options`).

        Shardings default to replicated on `mesh` (shardings written in the
        module, e.g. `sdy.sharding`, only constrain the inside). The same
        text compiled for the same mesh, shardings and donation reuses the
        cached executable (whose XLA name is the first compile's `name`).
        Raises `ProgramCompileError` naming the program and the mesh.
        """
        source, in_avals, out_avals, ins, outs, donated = _checked(
            stablehlo_text, mesh, name, in_shardings, out_shardings, donate_argnums)
        digest = source.digest
        options = reserved_memory_options(mesh, reserved_bytes)

        key = (digest, tuple(d.id for d in mesh.devices.flat), mesh, ins, outs,
               donated, tuple(sorted(options.items())))
        with _cache_lock:
            compiled = _cache.get(key)
        origin = _origins.get(id(compiled)) if compiled is not None else None
        if compiled is None and like is not None and like.options == options:
            origin = like.origin or (like.compiled, like.mesh)
            compiled = relocated(like, origin, mesh, digest, ins, outs,
                                  donated)
            if compiled is not None:
                with _cache_lock:
                    _counts["relocated"] += 1
                    compiled = _cache.setdefault(key, compiled)
                    _origins[id(compiled)] = origin
            else:
                origin = None
        if compiled is None:
            # Compiled outside the lock so that threads compile in parallel; a
            # race compiles twice and keeps the first.
            lowered = _lower(name, mesh, source, in_avals, out_avals, ins, outs, donated)
            try:
                with _cache_every_program():
                    compiled = lowered.compile(compiler_options=options or None)
            except Exception as e:  # JaxRuntimeError (XLA), ...
                raise ProgramCompileError(name, mesh, f"{type(e).__name__}: {e}") from e
            with _cache_lock:
                _counts["compiled"] += 1
                compiled = _cache.setdefault(key, compiled)
        return cls(name, mesh, in_avals, out_avals, ins, outs, donated, compiled,
                   digest, options, origin)

    def __call__(self, *args: jax.Array) -> list[jax.Array]:
        """Run the program; returns without waiting for the results."""
        if len(args) != len(self._expected):
            raise ProgramInputError(
                self.name, None, f"takes {len(self._expected)} arguments, {len(args)} given"
            )
        # JAX's C++ dispatch compares each argument's shape, dtype and
        # sharding with the executable's and leaves the fast path on any
        # difference (we translate its errors below). What it does not
        # refuse: deleted (donated) arrays, which crash jaxlib 0.10.2
        # (SIGSEGV) on multi-device executables, and uncommitted arrays or
        # host data, which it would silently copy onto the mesh.
        try:
            for a in args:
                if a.is_deleted() or not a._committed:
                    error = self._input_error(args)
                    if error is not None:
                        raise error
                    break
        except AttributeError:  # not a jax.Array
            error = self._input_error(args)
            if error is not None:
                raise error from None
        try:
            return self.compiled(*args)
        except (TypeError, ValueError) as e:
            error = self._input_error(args)
            if error is not None:
                raise error from e
            raise

    def dispatcher(self) -> Any:
        """A callable running the program without `__call__`'s checks: JAX's
        C++ dispatch of the executable (what `jax.stages.Compiled` calls
        after its first call), or the Compiled itself where JAX gives no
        such path. For callers whose arguments are known to fit, such as
        the executor walking its plan."""
        compiled = self.compiled
        try:
            fast = compiled._executable.create_cpp_call(compiled._params)
        except Exception:  # a JAX without it: the public call
            fast = None
        return fast if fast is not None else compiled

    def _describe_expected(self, i: int) -> str:
        return (
            f"jax.Array {_describe_aval(self.in_avals[i])} with sharding "
            f"{self.in_shardings[i].spec} on mesh {_describe_mesh(self.mesh)}"
        )

    def _input_error(self, args: Sequence[Any]) -> ProgramInputError | None:
        """The error for the first argument the program cannot take as is.

        Accepted: arrays with the expected shape and dtype whose sharding is
        equivalent to the expected one on the same devices (JAX then reuses
        their buffers; no copy).
        """
        for i, (a, (sharding, shape, dtype)) in enumerate(zip(args, self._expected)):
            problem = None
            if not isinstance(a, jax.Array):
                problem = "not a jax.Array"
            elif a.is_deleted():
                problem = "deleted"
            elif tuple(a.shape) != shape or np.dtype(a.dtype) != dtype:
                problem = "shape/dtype"
            elif a.sharding != sharding and not (
                tuple(a.sharding._device_assignment) == tuple(sharding._device_assignment)
                and equivalent(a.sharding, sharding, len(shape))
            ):
                problem = "placement"
            if problem is not None:
                hint = ""
                if problem == "placement":
                    hint = "; move it with mpmd.runtime.transfer(x, sharding) first"
                return ProgramInputError(
                    self.name, i,
                    f"expects {self._describe_expected(i)}, got {_describe_value(a)}{hint}",
                )
        return None

    def __repr__(self) -> str:
        ins = ", ".join(_describe_aval(a) for a in self.in_avals)
        outs = ", ".join(_describe_aval(a) for a in self.out_avals)
        return f"MeshProgram({self.name!r}, ({ins}) -> ({outs}), mesh {_describe_mesh(self.mesh)})"


def lower_program(
    stablehlo_text: "str | ExportedProgram",
    mesh: Mesh,
    *,
    name: str,
    in_shardings: Sequence[NamedSharding] | None = None,
    out_shardings: Sequence[NamedSharding] | None = None,
) -> jax.stages.Lowered:
    """`stablehlo_text` lowered by JAX for `mesh`, not compiled: what XLA's
    cost analysis reads before compiling. Raises `ProgramCompileError`."""
    source, in_avals, out_avals, ins, outs, _ = _checked(
        stablehlo_text, mesh, name, in_shardings, out_shardings, ())
    return _lower(name, mesh, source, in_avals, out_avals, ins, outs, ())


# XLA's GPU scheduler keeps its working set within this share (percent) of
# the device memory by default (xla_gpu_memory_limit_slop_factor).
_GPU_DEFAULT_SLOP_PERCENT = 95


def reserved_memory_options(mesh: Mesh, reserved_bytes: int) -> dict[str, Any]:
    """XLA compile options that leave `reserved_bytes` per device to the
    step's other live values, where the backend has such an option.

    GPU: XLA's latency-hiding scheduler (and the passes that trade memory
    for speed after it) plans within `xla_gpu_memory_limit_slop_factor`
    percent of the device memory (95 by default); the share left after the
    reserved bytes is given instead. CPU has no memory limit to give (its
    compiler does not schedule for memory), and TPU's option
    (`xla_tpu_user_reserved_hbm_bytes`, which Shardy's export targets) is
    not in this JAX build's flags: nothing is passed there."""
    device = mesh.devices.flat[0]
    if reserved_bytes <= 0 or device.platform not in ("gpu", "cuda", "rocm"):
        return {}
    try:
        limit = (device.memory_stats() or {}).get("bytes_limit", 0)
    except Exception:  # a backend without memory statistics
        return {}
    if not limit:
        return {}
    free = max(0.0, 1.0 - reserved_bytes / limit)
    return {"xla_gpu_memory_limit_slop_factor":
            max(1, int(_GPU_DEFAULT_SLOP_PERCENT * free))}


def _cache_every_program() -> Any:
    """Where the user set JAX's persistent compilation cache
    (`jax_compilation_cache_dir`), every program goes in it: an MPMD step
    is many small programs, each under JAX's default minimum compile time
    for caching (1 s), which together cost what one large one does. A
    context of this thread only (JAX's config contexts are thread-local)."""
    from jax._src import config as jax_config  # noqa: PLC0415

    if not jax.config.jax_compilation_cache_dir:
        return contextlib.nullcontext()
    return jax_config.persistent_cache_min_compile_time_secs(0.0)


def _checked(
    stablehlo_text: "str | ExportedProgram",
    mesh: Mesh,
    name: str,
    in_shardings: Sequence[NamedSharding] | None,
    out_shardings: Sequence[NamedSharding] | None,
    donate_argnums: Sequence[int],
) -> tuple:
    """The program's source, avals, shardings and donations, checked
    against its signature; `ProgramCompileError` names what does not fit."""
    if not isinstance(mesh, Mesh):
        raise ProgramCompileError(name, mesh, f"mesh must be a jax.sharding.Mesh, got {mesh!r}")
    exported = None
    if isinstance(stablehlo_text, ExportedProgram):
        exported, digest, entry = stablehlo_text.exported, \
            stablehlo_text.digest, "main"
        stablehlo_text = ""
    else:
        digest = hashlib.sha256(stablehlo_text.encode()).hexdigest()
    try:
        if exported is not None:
            in_avals, out_avals = (tuple(
                jax.core.ShapedArray(tuple(a.shape), a.dtype) for a in avals)
                for avals in (exported.in_avals, exported.out_avals))
        else:
            entry, in_avals, out_avals = _signature(stablehlo_text, digest)
        ins = _check_shardings("argument", in_shardings, in_avals, mesh)
        outs = _check_shardings("result", out_shardings, out_avals, mesh)
        donated = tuple(sorted(set(int(i) for i in donate_argnums)))
        for i in donated:
            if not 0 <= i < len(in_avals):
                raise ValueError(f"donate_argnums has {i}, but the program has {len(in_avals)} arguments")
    except ValueError as e:
        raise ProgramCompileError(name, mesh, str(e)) from None
    return (_Source(stablehlo_text, digest, entry, exported), in_avals,
            out_avals, ins, outs, donated)


def _lower(
    name: str,
    mesh: Mesh,
    source: _Source,
    in_avals: tuple[jax.core.ShapedArray, ...],
    out_avals: tuple[jax.core.ShapedArray, ...],
    in_shardings: tuple[NamedSharding, ...],
    out_shardings: tuple[NamedSharding, ...],
    donated: tuple[int, ...],
    platforms: tuple[str, ...] | None = None,
) -> Any:
    """The program lowered by JAX for `mesh` (a `jax.stages.Lowered`); with
    `platforms`, exported for them instead (a `jax.export.Exported`)."""
    if source.exported is not None:
        exported = source.exported

        def run(*args: jax.Array) -> list[jax.Array]:
            return list(exported.call(*args))
    else:
        def run(*args: jax.Array) -> list[jax.Array]:
            return list(_program_p.bind(*args, source=source,
                                        out_avals=out_avals))

    run.__name__ = run.__qualname__ = _identifier(name)
    jitted = jax.jit(
        run,
        in_shardings=in_shardings,
        out_shardings=list(out_shardings),
        donate_argnums=donated,
        keep_unused=True,  # the executable takes exactly the program's arguments
    )
    try:
        specs = [
            jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
            for a, s in zip(in_avals, in_shardings)
        ]
        if platforms is not None:
            return jax.export.export(jitted, platforms=platforms)(*specs)
        return jitted.lower(*specs)
    except Exception as e:  # MLIRError, ValueError, custom calls jax.export refuses, ...
        what = "jax.export: " if platforms is not None else ""
        raise ProgramCompileError(name, mesh, f"{what}{type(e).__name__}: {e}") from e



def _identifier(name: str) -> str:
    ident = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return ident if ident and not ident[0].isdigit() else f"p_{ident}"
