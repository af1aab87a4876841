"""One executable for meshes of one shape: a program compiled for one
mesh, loaded for another mesh's devices instead of compiled again.

    if shape_key(a) == shape_key(b): ...        # may share executables
    compiled = relocated(leader, origin, mesh, digest, ins, outs, donated)

The middle stages of a pipeline of equal blocks run the same program on
meshes of the same shape; `compile_programs` compiles it once and loads it
for the others (`MeshProgram.compile(like=...)`).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

__all__ = ["relocated", "shape_key"]

# An executable's serialized form, made once for all the meshes it is
# loaded for (serializing is about a third of a relocation).
_payloads: "weakref.WeakKeyDictionary[jax.stages.Compiled, tuple]" = \
    weakref.WeakKeyDictionary()
_payloads_lock = threading.Lock()


def shape_key(mesh: Mesh) -> tuple:
    """What two meshes must share for one's executable to run on the
    other's devices: axis names and sizes, axis types, device kind."""
    first = mesh.devices.flat[0]
    return (tuple(mesh.shape.items()), tuple(map(str, mesh.axis_types)),
            first.platform, first.device_kind)


def relocated(
    like: Any,
    origin: tuple[jax.stages.Compiled, Mesh],
    mesh: Mesh,
    digest: str,
    ins: tuple[NamedSharding, ...],
    outs: tuple[NamedSharding, ...],
    donated: tuple[int, ...],
) -> jax.stages.Compiled | None:
    """`like`'s executable loaded for `mesh`'s devices, or None where it
    does not apply: other text, mesh shape, shardings or donation, devices
    of other processes, or a JAX that refuses.

    The executable is serialized and loaded again with a device assignment
    of `mesh`'s devices in the order of `like.mesh`'s (what JAX's persistent
    cache does on GPU, whose keys leave the device assignment out): an SPMD
    executable refers to its devices by position only. Loading takes
    milliseconds where XLA's compile takes a large part of a second.

    `origin` is the executable as XLA compiled it, and its mesh. On CPU an
    executable that was itself loaded from bytes (relocated, or read from
    JAX's persistent cache) loses its JIT-compiled functions when serialized
    again ("Function ... not found" at run time): CPU programs are
    relocated only from fresh compiles, so not where the persistent cache
    may have served the leader.
    """
    def spec(s: NamedSharding) -> tuple:
        return (s.spec, s.memory_kind)

    if (like.digest != digest or shape_key(like.mesh) != shape_key(mesh)
            or like.donate_argnums != donated
            or tuple(map(spec, like.in_shardings)) != tuple(map(spec, ins))
            or tuple(map(spec, like.out_shardings)) != tuple(map(spec, outs))):
        return None
    here = jax.process_index()
    if any(d.process_index != here
           for m in (like.mesh, mesh) for d in m.devices.flat):
        return None
    if mesh.devices.flat[0].platform == "cpu" and \
            jax.config.jax_compilation_cache_dir:
        return None
    try:
        return _load_for(*origin, mesh)
    except Exception:  # an executable JAX cannot serialize, a newer JAX
        return None


def _load_for(compiled: jax.stages.Compiled, source: Mesh,
              target: Mesh) -> jax.stages.Compiled:
    import io  # noqa: PLC0415

    from jax._src import compiler as jax_compiler  # noqa: PLC0415
    from jax.experimental import serialize_executable  # noqa: PLC0415

    with _payloads_lock:
        serialized = _payloads.get(compiled)
    if serialized is None:
        serialized = serialize_executable.serialize(compiled)
        with _payloads_lock:
            _payloads[compiled] = serialized
    payload, in_tree, out_tree = serialized
    devices = list(target.devices.flat)
    moved = {a.id: b for a, b in zip(source.devices.flat, devices)}
    backend = devices[0].client
    options = jax_compiler.get_compile_options(
        num_replicas=1, num_partitions=len(devices),
        device_assignment=np.array(devices).reshape(1, -1), backend=backend)
    options.executable_build_options.use_spmd_partitioning = True

    class Unpickler(serialize_executable._JaxPjrtUnpickler):
        def persistent_load(self, pid: Any) -> Any:
            if pid[0] == "device" and pid[1] in moved:
                return moved[pid[1]]
            if pid[0] == "exec":
                return self.backend.deserialize_executable(
                    pid[1], executable_devices=self.execution_devices,
                    compile_options=options)
            return super().persistent_load(pid)

    unloaded, args_info, no_kwargs = Unpickler(
        io.BytesIO(payload), backend, devices).load()
    return jax.stages.Compiled(unloaded.load(), [],
                               in_tree.unflatten(args_info), out_tree,
                               no_kwargs=no_kwargs)
