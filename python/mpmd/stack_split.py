"""How a named computation's scanned layer stack is split over meshes.

    config = mpmd.make_config(topology, {
        "embed": "m0",
        "blocks": ["m0", "m1", "m2", "m3"],        # 8 layers: 2 per mesh
        "head": "m3"})
    config = mpmd.make_config(topology, {
        "blocks": mpmd.StackSplit(["m0", "m1"], layers=[3, 5])})

A named computation whose body runs its layers as one `jax.lax.scan` over
weights stacked on a leading layer axis (MaxText's `scan_layers`, flax
`nn.scan`/`nnx.scan`, penzai's `LayerStack`) may be assigned a list of
meshes: its iterations are split into contiguous ranges, one per mesh in
list order, each range a pipeline stage named `blocks[0:2]` (the layers it
holds, as a Python slice). This module only describes the split (no JAX);
`mpmd.frontend.stacks` makes the pieces when the program is traced and
`docs/stacks.md` tells the whole story.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Mapping, Sequence

__all__ = ["StackSplit", "piece_name", "stack_sharding"]


def piece_name(name: str, lo: int, hi: int) -> str:
    """The name of the piece of stack `name` that holds layers [lo, hi)."""
    return f"{name}[{lo}:{hi}]"


def _error(message: str) -> Exception:
    from mpmd.config import ConfigError  # noqa: PLC0415 - config imports us

    return ConfigError(message)


class StackSplit:
    """Where the layers of a scanned stack go: `meshes` in order (a mesh
    name, or `(mesh name, stage)`), and `layers`, how many layers each
    takes: None splits them evenly (the first meshes take one more where
    the count does not divide), a list gives the counts, and `"auto"`
    chooses them from the estimated work of every mesh (its other named
    computations included) when the program is lowered.

    A mesh may appear twice (V schedules, interleaved ones) only with
    stages that tell its pieces apart; without stages a repeated mesh gives
    each piece its position in the list as its stage."""

    __slots__ = ("meshes", "stages", "layers")

    def __init__(self, meshes: Sequence[Any],
                 layers: Sequence[int] | str | None = None):
        if isinstance(meshes, (str, bytes)) or not isinstance(
                meshes, collections.abc.Sequence):
            raise _error(f"a stack split's meshes must be a list of mesh "
                         f"names, got {meshes!r}")
        names: list[str] = []
        stages: list[int | None] = []
        for entry in meshes:
            stage = None
            if isinstance(entry, tuple):
                if len(entry) != 2:
                    raise _error(f"a stack split's mesh entry must be a mesh"
                                 f" name or (mesh name, stage), got {entry!r}")
                entry, stage = entry
                if isinstance(stage, bool) or not isinstance(stage, int) \
                        or stage < 0:
                    raise _error(f"a stack split's stage must be an int >= "
                                 f"0, got {stage!r}")
            if not isinstance(entry, str) or not entry:
                raise _error(f"a stack split lists meshes by name, got "
                             f"{entry!r} of type {type(entry).__name__}")
            names.append(entry)
            stages.append(stage)
        if len(names) < 2:
            raise _error(f"a stack split needs at least two meshes, got "
                         f"{names}; assign the computation to {names[0]!r} "
                         "without a list" if names else
                         "a stack split needs at least two meshes, got none")
        given = [s for s in stages if s is not None]
        if given and len(given) != len(stages):
            raise _error(f"a stack split gives stages for some meshes and "
                         f"not others ({list(zip(names, stages))}); give a "
                         "stage for every mesh or for none")
        if not given and len(set(names)) != len(names):
            stages = list(range(len(names)))
        placed = list(zip(names, stages))
        if len(set(placed)) != len(placed):
            raise _error(f"a stack split lists {placed} with a (mesh, stage) "
                         "twice; each piece needs its own")
        if layers is not None and layers != "auto":
            if isinstance(layers, str) or not isinstance(
                    layers, collections.abc.Sequence):
                raise _error(f"a stack split's layers must be None (even), "
                             f"\"auto\" or a list of counts, got {layers!r}")
            counts = list(layers)
            if len(counts) != len(names) or any(
                    isinstance(c, bool) or not isinstance(c, int) or c < 1
                    for c in counts):
                raise _error(f"a stack split's layers must be one count >= 1"
                             f" per mesh ({len(names)}), got {counts!r}")
            layers = tuple(counts)
        object.__setattr__(self, "meshes", tuple(names))
        object.__setattr__(self, "stages", tuple(stages))
        object.__setattr__(self, "layers", layers)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("StackSplit is immutable")

    def _key(self) -> tuple:
        return (self.meshes, self.stages, self.layers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StackSplit) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        entries = [m if s is None else (m, s)
                   for m, s in zip(self.meshes, self.stages)]
        if any(isinstance(e, tuple) for e in entries) or self.layers:
            layers = "" if self.layers is None else f", layers={self.layers!r}"
            return f"StackSplit({entries!r}{layers})"
        return f"StackSplit({list(self.meshes)!r})"

    @property
    def auto(self) -> bool:
        return self.layers == "auto"

    def with_layers(self, layers: Sequence[int]) -> "StackSplit":
        """The same meshes with the counts `layers` (an automatic choice)."""
        entries = [m if s is None else (m, s)
                   for m, s in zip(self.meshes, self.stages)]
        return StackSplit(entries, list(layers))

    def counts(self, length: int, name: str) -> tuple[int, ...]:
        """Layers per mesh for a stack of `length` layers."""
        k = len(self.meshes)
        if isinstance(self.layers, tuple):
            if sum(self.layers) != length:
                raise _error(
                    f"the stack of {name!r} has {length} layers, but its "
                    f"split gives {list(self.layers)} (sum "
                    f"{sum(self.layers)}); give counts that add up to "
                    f"{length}")
            return self.layers
        if length < k:
            raise _error(
                f"the stack of {name!r} has {length} layers, fewer than the "
                f"{k} meshes {list(self.meshes)} it is split over; list at "
                f"most {length} meshes")
        base, extra = divmod(length, k)
        return tuple(base + (1 if i < extra else 0) for i in range(k))

    def ranges(self, length: int, name: str) -> tuple[tuple[int, int], ...]:
        """The [lo, hi) layer range of each mesh, in list order."""
        bounds, lo = [], 0
        for count in self.counts(length, name):
            bounds.append((lo, lo + count))
            lo += count
        return tuple(bounds)


def as_stack_split(name: str, value: Any) -> StackSplit | None:
    """The split an assignment value asks for (a list of meshes, or a
    StackSplit), or None for a single mesh."""
    if isinstance(value, StackSplit):
        return value
    if isinstance(value, list):
        try:
            return StackSplit(value)
        except Exception as error:  # noqa: BLE001 - reworded with the name
            raise type(error)(f"assignment[{name!r}]: {error}") from None
    return None


def stack_sharding(topology: Mapping[str, Any], meshes: Sequence[str],
                   spec: Any = None) -> Any:
    """The `jax.sharding.NamedSharding` of a stack split evenly over the
    topology's `meshes` (`{"blocks": meshes}`): its layer axis over their
    devices (an outer axis "stage", one entry per mesh), so that each
    mesh's devices hold exactly its layers, laid out within each mesh as
    the PartitionSpec `spec` says of the stack (its first entry, the
    layers, usually None). Arrays placed so cross a call without a copy;
    `Lowered.function_named_shardings` gives the same for each argument.

        blocks = jax.device_put(blocks, mpmd.stack_sharding(
            topology, ["m0", "m1"], P(None, None, "x")))
    """
    from jax.sharding import PartitionSpec  # noqa: PLC0415

    from mpmd.runtime.boundary import stack_sharding as sharding  # noqa: PLC0415

    if isinstance(meshes, str) or not isinstance(meshes, (list, tuple)) \
            or not all(isinstance(m, str) for m in meshes):
        raise _error(f"stack_sharding: meshes must be a list of mesh names, "
                     f"got {meshes!r}")
    if spec is not None and not isinstance(spec, PartitionSpec):
        raise _error(f"stack_sharding: spec must be a "
                     f"jax.sharding.PartitionSpec or None, got {spec!r}")
    missing = [m for m in meshes if m not in topology]
    if missing:
        raise _error(f"stack_sharding: meshes {missing} are not in the "
                     f"topology's {sorted(topology)}")
    if len(set(meshes)) != len(meshes) or len(meshes) < 2:
        raise _error(f"stack_sharding lays a stack out over distinct meshes "
                     f"(two or more), got {list(meshes)}")
    try:
        return sharding([topology[m] for m in meshes],
                        PartitionSpec() if spec is None else spec)
    except ValueError as error:
        raise _error(f"stack_sharding over {list(meshes)}: {error}") \
            from None
