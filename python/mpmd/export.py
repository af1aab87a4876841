"""Export an MPMD program and run it later, elsewhere, without the compiler.

    exported = mpmd.export.export(mpmd.jit(step, config))(params, batch)
    data = exported.serialize()                      # bytes
    ...
    exported = mpmd.export.deserialize(data)         # no compiler needed
    new_params, loss = exported.call(params, batch, topology=meshes)

As `jax.export` does for one program: an export holds what the runtime
needs and nothing of the compiler. That is the execution plan (what runs
where, in which order, what is donated, where values live), the pytree
structures of the arguments and results, how each argument is held (typed
keys as their data, split stacks in pieces), and each distinct program
serialized by `jax.export` (StableHLO's portable artifact, which later JAX
versions read), exported for the platforms asked for. Loading and calling
import only the runtime: neither the compiler's extension nor the C++ step
loop's (without it the same steps run in a Python loop, with the same
numbers).

The payload (`serialize`): the magic line `MPMD-EXPORT`, an 8-byte
little-endian length and the SHA-256 of the JSON header that follows
(format version, the versions that made it, the plan, the IO, the size and
SHA-256 of each part), then the parts: the pytree structures (a `jax.export` payload of a function that
takes the arguments and returns the results' structure) and one
`jax.export` payload per distinct program (programs equal but for their
mesh share one). `deserialize` checks the magic,
the header's digest, the format, every part's size and digest, the plan's
version and that it holds together, and says which differs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import struct
from typing import Any, Callable, Iterator, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from mpmd.errors import MpmdError
from mpmd.runtime.boundary import KeyImpl, LeafIO, ProgramIO, StackPiece
from mpmd.runtime.executable import InputError, PlanExecutable
from mpmd.runtime.executor import partition_spec
from mpmd.runtime.module import check_topology_type, plan_meshes
from mpmd.runtime.plan import (CallStep, ExecutionPlan, PlanVersionError,
                               check_consistency)
from mpmd.runtime.exported_program import ExportedProgram

__all__ = ["ExportError", "ExportInputError", "Exported", "FORMAT_VERSION",
           "deserialize", "export"]

MAGIC = b"MPMD-EXPORT\n"
# The payload's layout and header fields; a reader takes this one only.
FORMAT_VERSION = 1


class ExportError(MpmdError, ValueError):
    """An export cannot be made, read, or run as asked: a payload that is
    truncated, corrupted or of another format, a topology that is not the
    one exported for, platforms the programs were not exported for."""


class ExportInputError(ExportError, InputError):
    """An exported function was called with arguments that do not match
    those it was exported for (an InputError, as through `mpmd.jit`)."""


# --- making one -----------------------------------------------------------------

def export(function: Any, *,
           platforms: str | Sequence[str] | Mapping[str, Any] | None = None
           ) -> Callable[..., "Exported"]:
    """`export(mpmd.jit(f, config))(*args, **kwargs)` lowers `f` for
    `args` (arrays or `jax.ShapeDtypeStruct`s) and returns an `Exported`.

    `platforms`: what each program is exported for ("cpu", "cuda",
    "rocm", "tpu"); a name or a sequence of names for every mesh, or a
    mapping of mesh name to them for topologies mixing platforms (a GPU
    mesh and a CPU mesh). By default each mesh's programs are exported for
    the platform of its devices. A program exported for several platforms
    runs on any of them (`jax.export`'s multi-platform lowering). The
    topology's meshes must have devices (not `AbstractMesh`es): the export
    records their shapes, and `call` takes meshes of the same names and
    shapes, on any devices.

    Static arguments (`static_argnums`) are fixed at export: `call` takes
    the others, as `jax.export` does."""
    from mpmd.stages import MpmdFunction  # noqa: PLC0415 - the front end

    if not isinstance(function, MpmdFunction):
        raise ExportError(
            "mpmd.export.export takes a function made by mpmd.jit (as "
            "jax.export.export takes one made by jax.jit), got "
            f"{type(function).__name__}")
    _check_platforms(platforms)

    def exporter(*args: Any, **kwargs: Any) -> Exported:
        from mpmd import arguments  # noqa: PLC0415

        from mpmd.stages import Lowered  # noqa: PLC0415

        lowered = function.lower(*args, **kwargs)
        if not isinstance(lowered, Lowered) or lowered.plan_json is None:
            # A while loop across meshes: a host loop over several plans.
            raise ExportError(
                f"not supported yet: exporting {type(lowered).__name__} "
                f"(function {getattr(function.fn, '__name__', '?')!r}); "
                "an export holds one plan, and a jax.lax.while_loop across "
                "meshes runs several from the host")
        dynamic = arguments.split_static(args, lowered.static_argnums)[0]
        leaves = jax.tree_util.tree_leaves((tuple(dynamic), kwargs))
        return _from_lowered(lowered, platforms, leaves)

    return exporter


def _check_platforms(platforms: Any) -> None:
    values = (platforms.values() if isinstance(platforms, Mapping)
              else [platforms])
    for value in values:
        names = [value] if isinstance(value, str) or value is None \
            else value
        if not isinstance(names, (list, tuple)) or not all(
                isinstance(name, str) for name in names if name is not None):
            raise ExportError(
                f"platforms must be a platform name ('cpu', 'cuda'), a "
                "sequence of them, or a mapping of mesh name to those, got "
                f"{platforms!r}")


def _device_platform(device: Any) -> str:
    """The platform name `jax.export` takes for `device` ("cuda" for an
    NVIDIA GPU, whose `device.platform` is "gpu")."""
    platform = device.platform
    if platform == "gpu":
        version = str(getattr(device.client, "platform_version", "")).lower()
        return "rocm" if "rocm" in version else "cuda"
    return platform


def _mesh_platforms(platforms: Any, name: str, mesh: Mesh
                    ) -> tuple[str, ...]:
    chosen = platforms.get(name) if isinstance(platforms, Mapping) \
        else platforms
    if chosen is None:
        return (_device_platform(mesh.devices.flat[0]),)
    return (chosen,) if isinstance(chosen, str) else tuple(chosen)


def _from_lowered(lowered: Any, platforms: Any,
                  leaves: Sequence[Any]) -> "Exported":
    from mpmd.runtime.exported_program import export_program  # noqa: PLC0415

    topology = dict(lowered.config.topology)
    for name, mesh in topology.items():
        if not isinstance(mesh, Mesh):
            raise ExportError(
                f"mesh {name!r} of the topology is a {type(mesh).__name__}; "
                "export needs meshes with devices (the programs are lowered "
                "for their shardings): give a jax.sharding.Mesh of the "
                "shape the export will run on")
    if isinstance(platforms, Mapping):
        unknown = sorted(set(platforms) - set(topology))
        if unknown:
            raise ExportError(
                f"platforms names mesh {unknown[0]!r}, which the topology "
                f"does not have (it has {', '.join(map(repr, topology))})")
    plan = lowered.plan
    plan_data = json.loads(str(lowered.plan_json))
    parts: list[tuple[str, bytes]] = [("trees", _trees_payload(
        lowered.in_tree, lowered.out_tree))]
    # Programs the same but for their mesh (a pipeline's middle stages)
    # get the same bytes, so that the runtime compiles one and loads it
    # for the other meshes, as from text.
    exported_as: dict[tuple, bytes] = {}
    # Program name -> its part (programs with equal bytes share one).
    program_parts: dict[str, str] = {}
    for name, spec in plan.programs.items():
        mesh = topology[spec.mesh]
        targets = _mesh_platforms(platforms, spec.mesh, mesh)
        key = (spec.module, tuple(mesh.axis_names), mesh.devices.shape,
               tuple(map(str, spec.in_shardings)),
               tuple(map(str, spec.out_shardings)), spec.donated_args,
               targets)
        data = exported_as.get(key)
        if data is None:
            data = exported_as[key] = export_program(
                spec.module, mesh, name=name, platforms=targets,
                in_shardings=[NamedSharding(mesh, partition_spec(layout))
                              for layout in spec.in_shardings] or None,
                out_shardings=[NamedSharding(mesh, partition_spec(layout))
                               for layout in spec.out_shardings] or None,
                donate_argnums=spec.donated_args)
        part = f"program:{hashlib.sha256(data).hexdigest()[:16]}"
        if part not in program_parts.values():
            parts.append((part, data))
        program_parts[name] = part
        plan_data["programs"][name]["module"] = ""
    header = {
        "format": FORMAT_VERSION,
        "made_by": _versions(),
        "function": lowered.function_name,
        "plan": plan_data,
        "io": _io_to_json(lowered.io),
        "argument_paths": list(lowered.argument_paths),
        "program_parts": program_parts,
        "namedtuples": [f"{kind.__module__}:{kind.__qualname__}" for kind in
                        _namedtuples(lowered.in_tree, lowered.out_tree)],
        "in_avals": [_aval_to_json(leaf) for leaf in leaves],
    }
    return Exported._build(header, parts)


def _versions() -> dict[str, str]:
    import jaxlib  # noqa: PLC0415

    import mpmd  # noqa: PLC0415

    return {"mpmd": mpmd.__version__, "jax": jax.__version__,
            "jaxlib": jaxlib.__version__}


def _trees_payload(in_tree: Any, out_tree: Any) -> bytes:
    """The structures of the arguments and results, in `jax.export`'s
    serialization (which knows JAX's containers, namedtuples and custom
    nodes registered with `jax.export.register_pytree_node_serialization`):
    a function of the arguments' structure (scalar stand-ins) that returns
    the results' structure."""
    for cls in _namedtuples(in_tree, out_tree):
        _register_namedtuple(cls)
    scalar = jax.ShapeDtypeStruct((), np.float32)
    arguments = jax.tree_util.tree_unflatten(
        in_tree, [scalar] * in_tree.num_leaves)
    zeros = [np.float32(0)] * out_tree.num_leaves

    def structure(arguments: Any) -> Any:
        del arguments
        return jax.tree_util.tree_unflatten(out_tree, zeros)

    try:
        carrier = jax.export.export(jax.jit(structure),
                                    platforms=("cpu",))(arguments)
        return bytes(carrier.serialize())
    except ValueError as error:
        raise ExportError(
            f"the arguments' or results' pytree cannot be serialized: "
            f"{error} (jax.export serializes JAX's containers; register "
            "other node types in the exporting and the loading process)"
        ) from None


def _namedtuples(*trees: Any) -> list[type]:
    """The namedtuple types among the nodes of `trees` (optax's states):
    `jax.export` serializes those it is told of, which mpmd does for the
    importable ones (`_register_namedtuple`)."""
    found: dict[type, None] = {}
    stack = list(trees)
    while stack:
        tree = stack.pop()
        data = tree.node_data()
        if data is not None:
            kind = data[0]
            if isinstance(kind, type) and issubclass(kind, tuple) and \
                    hasattr(kind, "_fields") and \
                    "<locals>" not in kind.__qualname__:
                found[kind] = None
        stack.extend(tree.children())
    return list(found)


def _register_namedtuple(kind: type) -> None:
    """Tells `jax.export` how to serialize namedtuple `kind`, under the
    name `mpmd:<module>:<qualname>`; nothing if it knows already."""
    try:
        jax.export.register_namedtuple_serialization(
            kind, serialized_name=f"mpmd:{kind.__module__}:{kind.__qualname__}")
    except ValueError:  # registered before (by mpmd, or by the user)
        pass


def _import_namedtuple(name: str) -> None:
    """Registers the namedtuple an export's header names (`module:qualname`)
    in this process, importing its module."""
    import importlib  # noqa: PLC0415

    module_name, _, qualname = name.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise ExportError(
            f"the export's arguments or results hold a {qualname} of module "
            f"{module_name!r}, which this process cannot import ({error}): "
            "install what defines it") from None
    _register_namedtuple(value)


def _aval_to_json(leaf: Any) -> dict[str, Any]:
    aval = leaf if isinstance(leaf, jax.ShapeDtypeStruct) else jax.typeof(leaf)
    dtype = aval.dtype
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return {"shape": list(aval.shape), "key": dtype._impl.name}  # noqa: SLF001
    return {"shape": list(aval.shape), "dtype": np.dtype(dtype).name}


def _aval_from_json(data: dict[str, Any]) -> jax.ShapeDtypeStruct:
    if "key" in data:
        dtype = jax.eval_shape(
            lambda: jax.random.key(0, impl=data["key"])).dtype
    else:
        dtype = np.dtype(jax.numpy.dtype(data["dtype"]))  # bfloat16 too
    return jax.ShapeDtypeStruct(tuple(data["shape"]), dtype)


def _io_to_json(io: ProgramIO) -> dict[str, Any]:
    def leaf(value: LeafIO) -> dict[str, Any]:
        data: dict[str, Any] = {"count": value.count}
        if value.stack is not None:
            data["stack"] = value.stack.stack
            data["bounds"] = [list(b) for b in value.stack.bounds]
            data["meshes"] = list(value.meshes)
        if value.key_impl is not None:
            data["key"] = value.key_impl.dtype._impl.name  # noqa: SLF001
        return data

    return {"inputs": [leaf(v) for v in io.inputs],
            "outputs": [leaf(v) for v in io.outputs]}


def _io_from_json(data: dict[str, Any]) -> ProgramIO:
    def leaf(value: dict[str, Any]) -> LeafIO:
        stack = None
        if "stack" in value:
            stack = StackPiece(value["stack"],
                               tuple(tuple(b) for b in value["bounds"]))
        key = None
        if "key" in value:
            key = KeyImpl.of(_aval_from_json({"shape": [],
                                              "key": value["key"]}))
        return LeafIO(value["count"], stack, tuple(value.get("meshes", ())),
                      key)

    return ProgramIO(tuple(leaf(v) for v in data["inputs"]),
                     tuple(leaf(v) for v in data["outputs"]))


# --- reading one ----------------------------------------------------------------

def deserialize(data: bytes | bytearray | memoryview) -> "Exported":
    """The `Exported` that `Exported.serialize` gave as `data`. Raises
    `ExportError` naming what is wrong: not an export, another format
    version, a part truncated or corrupted, a plan of another version."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise ExportError(
            "mpmd.export.deserialize takes the bytes Exported.serialize "
            f"gave, got {type(data).__name__}")
    if not data.startswith(MAGIC):
        raise ExportError(
            "not an mpmd export: the data does not start with "
            f"{MAGIC!r} (got {data[:len(MAGIC)]!r}); it is what "
            "Exported.serialize() returns")
    at = len(MAGIC)
    if len(data) < at + 8 + 32:
        raise ExportError(
            f"truncated mpmd export: {len(data)} bytes, too short for its "
            "header's length and digest")
    (size,) = struct.unpack("<Q", data[at:at + 8])
    digest = data[at + 8:at + 40]
    at += 40
    if len(data) < at + size:
        raise ExportError(
            f"truncated mpmd export: its header is {size} bytes, and only "
            f"{len(data) - at} follow")
    if hashlib.sha256(data[at:at + size]).digest() != digest:
        raise ExportError(
            "corrupted mpmd export: its header does not match its SHA-256")
    try:
        header = json.loads(data[at:at + size].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExportError(
            f"corrupted mpmd export: its header is not JSON ({error})"
        ) from None
    at += size
    if not isinstance(header, dict):
        raise ExportError("corrupted mpmd export: its header is not a JSON "
                          "object")
    fmt = header.get("format")
    made_by = header.get("made_by")
    if not isinstance(made_by, dict):
        made_by = {}
    if type(fmt) is not int or fmt != FORMAT_VERSION:
        raise ExportError(
            f"this mpmd export is of format version {fmt!r} (made by mpmd "
            f"{made_by.get('mpmd', '?')}), and this mpmd reads format "
            f"version {FORMAT_VERSION} only: export it again with this "
            "version")
    parts: list[tuple[str, bytes]] = []
    listed = header.get("parts")
    if not isinstance(listed, list) or not all(
            isinstance(part, dict) and isinstance(part.get("name"), str)
            and type(part.get("size")) is int and part["size"] >= 0
            and isinstance(part.get("sha256"), str) for part in listed):
        raise ExportError(
            "corrupted mpmd export: its header's list of parts is not a "
            "list of {name, size, sha256}")
    for part in listed:
        end = at + part["size"]
        if len(data) < end:
            raise ExportError(
                f"truncated mpmd export: part {part['name']!r} needs "
                f"{part['size']} bytes at offset {at}, and the data ends at "
                f"{len(data)}")
        blob = data[at:end]
        if hashlib.sha256(blob).hexdigest() != part["sha256"]:
            raise ExportError(
                f"corrupted mpmd export: part {part['name']!r} does not "
                "match its SHA-256 in the header")
        parts.append((part["name"], blob))
        at = end
    if at != len(data):
        raise ExportError(
            f"corrupted mpmd export: {len(data) - at} bytes follow its "
            "last part")
    return Exported._read(header, parts, data)


class Exported:
    """An exported MPMD function: `call` it on a topology of the same mesh
    names and shapes; `serialize` it to bytes (`deserialize` reads them).

    Attributes: `fun_name`, `in_tree` / `out_tree` (the dynamic arguments'
    `(args, kwargs)` structure and the results'), `in_avals` (a
    `jax.ShapeDtypeStruct` per flat argument), `meshes` (mesh name ->
    ((axis, size), ...)), `platforms` (mesh name -> the platforms its
    programs were exported for), `made_by` (the versions of mpmd, jax and
    jaxlib that made it), `plan` (the execution plan)."""

    def __init__(self) -> None:  # made by export() or deserialize()
        self._data: bytes | None = None
        self._compiled: dict[tuple, Any] = {}

    @classmethod
    def _build(cls, header: dict[str, Any],
               parts: list[tuple[str, bytes]]) -> "Exported":
        header = dict(header, parts=[
            {"name": name, "size": len(blob),
             "sha256": hashlib.sha256(blob).hexdigest()}
            for name, blob in parts])
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        data = b"".join([MAGIC, struct.pack("<Q", len(text)),
                         hashlib.sha256(text).digest(), text,
                         *(blob for _, blob in parts)])
        return cls._read(header, parts, data)

    @classmethod
    def _read(cls, header: dict[str, Any], parts: list[tuple[str, bytes]],
              data: bytes) -> "Exported":
        self = cls()
        self._data = data
        blobs = dict(parts)
        made_by = header.get("made_by")
        made_by = made_by if isinstance(made_by, dict) else {}
        with _section("plan"):
            try:
                self.plan = ExecutionPlan.from_json(json.dumps(header["plan"]))
            except PlanVersionError as error:
                raise ExportError(
                    f"this mpmd export (made by mpmd "
                    f"{made_by.get('mpmd', '?')}) holds {error}") from None
        with _section("function"):
            self.fun_name: str = _typed(header["function"], str)
        with _section("made_by"):
            self.made_by: dict[str, str] = {
                _typed(k, str): _typed(v, str) for k, v in made_by.items()}
        with _section("io"):
            self.io = _io_from_json(header["io"])
        with _section("argument_paths"):
            self.argument_paths: list[str] = [
                _typed(path, str) for path in header["argument_paths"]]
        with _section("in_avals"):
            self.in_avals = tuple(_aval_from_json(a)
                                  for a in header["in_avals"])
        with _section("namedtuples"):
            for name in header.get("namedtuples", ()):
                _import_namedtuple(_typed(name, str))
        if "trees" not in blobs:
            raise ExportError("corrupted mpmd export: it has no part "
                              "'trees' (the pytree structures)")
        carrier = _jax_deserialize(blobs["trees"], "the pytree structures")
        # The carrier takes ((args, kwargs),) and returns the results.
        self.in_tree = carrier.in_tree.children()[0].children()[0]
        self.out_tree = carrier.out_tree
        self.plan = _with_programs(self.plan, header, blobs,
                                   self.made_by.get("jax", "?"))
        self.meshes = {mesh.name: mesh.axes for mesh in self.plan.meshes}
        self.platforms = {mesh: () for mesh in self.meshes}
        for spec in self.plan.programs.values():
            self.platforms[spec.mesh] = tuple(spec.module.exported.platforms)
        return self

    def serialize(self) -> bytes:
        """The export as bytes, for `mpmd.export.deserialize`."""
        assert self._data is not None
        return self._data

    @property
    def fingerprint(self) -> str:
        """The SHA-256 of the payload: every process of a job checks it
        has the same export."""
        return hashlib.sha256(self.serialize()).hexdigest()

    def default_topology(self, devices: Sequence[Any] | None = None
                         ) -> dict[str, Mesh]:
        """Meshes of the export's names and shapes over `devices` (default
        `jax.devices()`), in the order of the export's topology, each
        taking the next devices."""
        devices = list(jax.devices() if devices is None else devices)
        needed = sum(int(np.prod([s for _, s in axes], dtype=np.int64))
                     for axes in self.meshes.values())
        if len(devices) < needed:
            raise ExportError(
                f"the export's meshes "
                f"({', '.join(f'{n!r}: {_axes_text(a)}' for n, a in self.meshes.items())}) "
                f"need {needed} devices, and {len(devices)} are given; "
                "pass topology= with meshes of those shapes")
        topology, at = {}, 0
        for name, axes in self.meshes.items():
            shape = tuple(size for _, size in axes)
            count = int(np.prod(shape, dtype=np.int64))
            topology[name] = Mesh(np.array(devices[at:at + count],
                                           dtype=object).reshape(shape),
                                  tuple(axis for axis, _ in axes))
            at += count
        return topology

    def compile(self, topology: Mapping[str, Mesh] | None = None
                ) -> "CompiledExport":
        """The export compiled for `topology` (default:
        `default_topology()`); `call` does this once per topology."""
        if topology is None:
            topology = self.default_topology()
        meshes = plan_meshes(
            self.plan, check_topology_type(topology, "Exported.call",
                                           ExportError),
            "the export", ExportError)
        key = tuple((name, mesh.axis_names,
                     tuple(d.id for d in mesh.devices.flat))
                    for name, mesh in meshes.items())
        compiled = self._compiled.get(key)
        if compiled is None:
            for name, mesh in meshes.items():
                platform = _device_platform(mesh.devices.flat[0])
                exported_for = self.platforms.get(name, ())
                if exported_for and platform not in exported_for:
                    raise ExportError(
                        f"mesh {name!r} of the topology is on {platform} "
                        f"devices, and its programs were exported for "
                        f"{', '.join(exported_for)}: export with "
                        f"platforms={{{name!r}: ...}} naming {platform!r}")
            from mpmd.arguments import describe_argument  # noqa: PLC0415

            executable = PlanExecutable.compile(
                self.plan, meshes, self.fingerprint,
                f"export of {self.fun_name!r}", io=self.io,
                describe=describe_argument(self.argument_paths),
                error=ExportInputError)
            compiled = self._compiled[key] = CompiledExport(self, executable)
        return compiled

    def call(self, *args: Any, topology: Mapping[str, Mesh] | None = None,
             **kwargs: Any) -> Any:
        """Runs the export on `topology` (mesh name -> `Mesh`, the names
        and shapes it was exported with; default `default_topology()`)
        with the dynamic arguments, and returns the results in their
        pytree. The first call on a topology compiles its programs."""
        return self.compile(topology)(*args, **kwargs)

    def __repr__(self) -> str:
        meshes = ", ".join(f"{n}: {_axes_text(a)}"
                           for n, a in self.meshes.items())
        return (f"<mpmd.export.Exported {self.fun_name!r}: "
                f"{len(self.plan.programs)} programs on {meshes}>")


def _with_programs(plan: ExecutionPlan, header: dict[str, Any],
                   blobs: dict[str, bytes], made_with: str) -> ExecutionPlan:
    """`plan` with each program read from its part (`ExportedProgram`),
    checked to hold together and to call each program with its arity."""
    with _section("program_parts"):
        program_parts = {_typed(k, str): _typed(v, str) for k, v in
                         header["program_parts"].items()}
    read: dict[str, ExportedProgram] = {}
    programs = {}
    for name, spec in plan.programs.items():
        part = program_parts.get(name)
        blob = blobs.get(part) if part is not None else None
        if blob is None:
            raise ExportError(f"corrupted mpmd export: program {name!r} of "
                              "its plan has no part")
        if part not in read:
            try:
                read[part] = ExportedProgram.from_bytes(blob)
            except Exception as error:  # noqa: BLE001 - jax's own errors
                raise ExportError(
                    f"program {name!r} of this mpmd export cannot be read by "
                    f"this JAX ({jax.__version__}; it was made with "
                    f"{made_with}): {error}") from None
        programs[name] = dataclasses.replace(spec, module=read[part])
    plan = dataclasses.replace(plan, programs=programs)
    with _section("plan"):
        check_consistency(plan)
        for index, step in enumerate(plan.steps):
            if not isinstance(step, CallStep):
                continue
            exported = programs[step.program].module.exported
            given = len(step.inputs) + len(step.constants)
            if given != len(exported.in_avals) or \
                    len(step.outputs) != len(exported.out_avals):
                raise ValueError(
                    f"step {index} calls program {step.program!r} with "
                    f"{given} values for {len(step.outputs)} results, and it "
                    f"takes {len(exported.in_avals)} and returns "
                    f"{len(exported.out_avals)}")
    return plan


@contextlib.contextmanager
def _section(name: str) -> Iterator[None]:
    """Reading the header's field `name`: anything malformed there (a
    field missing, a value of another type) is an ExportError naming it."""
    try:
        yield
    except ExportError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError,
            OverflowError) as error:
        raise ExportError(
            f"corrupted mpmd export: its header's {name!r} is malformed "
            f"({type(error).__name__}: {error})") from None


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise TypeError(f"{value!r} is not a {kind.__name__}")
    return value


def _axes_text(axes: Sequence[tuple[str, int]]) -> str:
    return "<[" + ", ".join(f'"{a}"={s}' for a, s in axes) + "]>"


def _jax_deserialize(blob: bytes, what: str) -> Any:
    try:
        return jax.export.deserialize(bytearray(blob))
    except Exception as error:  # noqa: BLE001 - jax's own errors
        raise ExportError(
            f"{what} of this mpmd export cannot be read by this JAX "
            f"({jax.__version__}): {type(error).__name__}: {error}"
        ) from None


class CompiledExport:
    """An export compiled for one topology; call it with the dynamic
    arguments (a thin wrapper over the runtime's `PlanExecutable`, as
    `mpmd.jit`'s `Compiled` is)."""

    def __init__(self, exported: Exported, executable: PlanExecutable):
        self.exported = exported
        self.executable = executable
        self.meshes = dict(executable.meshes)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self.exported.in_tree:
            from mpmd.arguments import describe_mismatch  # noqa: PLC0415

            raise ExportInputError(describe_mismatch(
                self.exported.in_tree, (tuple(args), kwargs),
                self.exported.argument_paths, self.executable.expected,
                function=self.exported.fun_name))
        return jax.tree_util.tree_unflatten(self.exported.out_tree,
                                            self.executable(leaves))

    def as_text(self) -> str:
        """What XLA compiled: each program's optimized HLO."""
        return self.executable.as_text()
