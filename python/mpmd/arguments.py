"""The arguments of an `mpmd.jit` function: how they are traced (shape and
dtype only), named (`params['w1']`), keyed for the cache, and checked
against a compiled program's inputs at call time.

    paths = argument_paths(fn, static, len(args), flat_paths)
    placed = as_placed(leaves, compiled_inputs)   # None: something to move
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.sharding import NamedSharding

from mpmd.errors import ConfigError
from mpmd.runtime.executable import ArgumentProblem, dtype_name
from mpmd.runtime.placement import as_placed, fits
from mpmd.shardings import off_topology, topology_devices

__all__ = ["abstract", "argument_paths", "as_placed", "check_argnums",
           "describe_argument",
           "describe_mismatch",
           "fits", "leaf_key", "leaf_paths", "normalize_argnums",
           "off_topology_as_host", "path_text", "split_static", "static_key",
           "topology_devices"]

def abstract(value: Any) -> Any:
    """What JAX traces for an argument: its shape and dtype only. Arrays on
    different meshes cannot be traced together by `jax.jit`; their layouts
    reach the compiler as `sdy.sharding` attributes instead."""
    if isinstance(value, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(value.shape, value.dtype,
                                    weak_type=value.weak_type)
    aval = jax.typeof(value)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype,
                                weak_type=getattr(aval, "weak_type", False))


def split_static(args: Sequence[Any], static: frozenset[int]
                 ) -> tuple[list[Any], list[Any]]:
    dynamic = [a for i, a in enumerate(args) if i not in static]
    fixed = [a for i, a in enumerate(args) if i in static]
    return dynamic, fixed


def check_argnums(value: Any, what: str) -> tuple[int, ...]:
    """`static_argnums` / `donate_argnums` as a tuple of ints, as `jax.jit`
    takes them (an int, or a sequence of ints); else a ConfigError."""
    values = (value,) if isinstance(value, (int, np.integer)) else value
    if isinstance(values, (str, bytes)) or not isinstance(
            values, Sequence) or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer))
            for v in values):
        raise ConfigError(f"{what} is {value!r}; give an int or a sequence "
                          "of ints (positions of arguments), as jax.jit "
                          "takes them")
    return tuple(int(v) for v in values)


def normalize_argnums(argnums: Sequence[int] | int, count: int
                      ) -> frozenset[int]:
    if isinstance(argnums, int):
        argnums = (argnums,)
    return frozenset(i % count if count else i for i in argnums)


def off_topology_as_host(leaves: Sequence[Any], devices: frozenset
                         ) -> Sequence[Any]:
    """`leaves` with each array committed to a device outside the topology
    (`devices`, `shardings.topology_devices`) replaced by its shape and
    dtype: lowering treats such an array as host data and each call moves
    it (`docs/runtime.md`, arguments), so it keys and fits as host data
    does. `leaves` itself when there is none (or no devices: an abstract
    topology)."""
    if not devices:
        return leaves
    replaced = None
    for index, value in enumerate(leaves):
        if isinstance(value, jax.Array) and getattr(value, "_committed",
                                                    False) \
                and off_topology(value.sharding, devices):
            if replaced is None:
                replaced = list(leaves)
            replaced[index] = jax.ShapeDtypeStruct(value.shape, value.dtype)
    return leaves if replaced is None else replaced


def static_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise ConfigError(f"static argument {value!r} is not hashable; static"
                          " arguments must be hashable, as in jax.jit") from None
    return (type(value), value)


def leaf_key(value: Any) -> Any:
    """What of an argument decides the lowering: shape, dtype, and the
    layout of a committed array (a fixed point of sharding propagation)."""
    layout = None
    if isinstance(value, jax.Array) and getattr(value, "_committed", False):
        sharding = value.sharding
        layout = sharding
        if isinstance(sharding, NamedSharding):
            # P("x", None) and P("x") lay the array out alike.
            spec = list(sharding.spec)
            while spec and spec[-1] is None:
                spec.pop()
            layout = (sharding.mesh, tuple(spec), sharding.memory_kind)
    return (np.shape(value), str(getattr(value, "dtype", type(value))),
            layout)


def argument_paths(fn: Callable, static: frozenset[int], count: int,
                   paths: Sequence[Any]) -> list[str]:
    """`params['w1']` for key 'w1' of the parameter named `params`: the
    pytree path of each flat argument, led by the parameter's name (as the
    signature of `fn` gives it; `args[i]` where it does not)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(count):
        param = params[i] if i < len(params) else None
        if param is None or param.kind in (param.VAR_POSITIONAL,
                                           param.VAR_KEYWORD):
            names.append(f"args[{i}]")
        else:
            names.append(param.name)
    dynamic_names = [n for i, n in enumerate(names) if i not in static]
    texts = []
    for path in paths:
        head, rest = path[0], tuple(path[1:])
        if getattr(head, "idx", None) == 0 and rest:  # positional
            index = rest[0].idx
            texts.append(dynamic_names[index] + path_text(rest[1:]))
        elif rest:  # keyword
            texts.append(str(getattr(rest[0], "key", rest[0]))
                         + path_text(rest[1:]))
        else:
            texts.append(path_text(path))
    return texts


def path_text(path: Any) -> str:
    """`[0]['w1']` for the first positional argument's key 'w1'."""
    return jax.tree_util.keystr(tuple(path))


def leaf_paths(tree: Any) -> list[str]:
    dummy = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    return [path_text(path)
            for path, _ in jax.tree_util.tree_flatten_with_path(dummy)[0]]


# --- a call whose arguments are not the lowered pytree ----------------------

class _Slot:
    """A leaf of the lowered pytree, rebuilt to compare a call against it:
    `index` is its flat position."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def describe_mismatch(expected: Any, given: Any,
                      paths: Sequence[str] = (),
                      specs: Sequence[tuple] = (), limit: int = 8,
                      function: str | None = None) -> str:
    """Why `given` (the call's `(args, kwargs)`, static arguments left out)
    is not laid out as `expected` (the lowered `in_tree`): the paths that
    are missing, those that are extra, the nodes of another type, then the
    leaves present in both with another shape or dtype (`specs`: (shape,
    dtype, ...) per lowered leaf), each named in the user's terms as
    `paths` (`Lowered.argument_paths`) names the lowered leaves. Called on
    the error path only: it flattens with paths."""
    try:
        lowered = jax.tree_util.tree_unflatten(
            expected, [_Slot(i) for i in range(expected.num_leaves)])
    except Exception:  # noqa: BLE001 - a node that cannot rebuild
        lowered = None
    names = _positional_names(expected, paths)
    report = _Report(names, specs)
    if lowered is not None:
        report.walk(lowered, given, ())
    if not (report.missing or report.extra or report.kinds or report.types):
        # A node that cannot be rebuilt from stand-in leaves: the trees.
        report.kinds.append(f"the arguments are laid out as "
                            f"{jax.tree_util.tree_structure(given)}, "
                            f"lowered as {expected}")
    return report.text(limit, function)


def _positional_names(expected: Any, paths: Sequence[str]) -> dict[int, str]:
    """Dynamic positional index -> the parameter's name, read back from the
    lowered leaves' user paths (`params['w1']` for path [0][0]['w1'])."""
    names: dict[int, str] = {}
    if expected.num_leaves != len(paths):
        return names
    try:
        raw = jax.tree_util.tree_flatten_with_path(
            jax.tree_util.tree_unflatten(expected,
                                         [0] * expected.num_leaves))[0]
    except Exception:  # noqa: BLE001 - a node that cannot rebuild
        return names
    for (path, _), text in zip(raw, paths):
        if len(path) >= 2 and getattr(path[0], "idx", None) == 0:
            rest = path_text(path[2:])
            if text.endswith(rest) and len(text) > len(rest):
                names.setdefault(path[1].idx, text[:len(text) - len(rest)])
    return names


def _one_level(node: Any) -> list[tuple[Any, Any]]:
    """(key, child) of each child of a pytree node."""
    return [(path[0], child) for path, child in
            jax.tree_util.tree_flatten_with_path(
                node, is_leaf=lambda child: child is not node)[0]]


def _is_leaf(value: Any) -> bool:
    """A pytree leaf (None and empty containers are nodes)."""
    tree = jax.tree_util.tree_structure(value)
    return tree.num_nodes == 1 and tree.num_leaves == 1


def _kind(value: Any, specs: Sequence[tuple]) -> str:
    """How a message describes a pytree node or leaf."""
    if isinstance(value, _Slot):
        return (_type_text(*specs[value.index][:2])
                if value.index < len(specs) else "an array")
    if value is None:
        return "None"
    if _is_leaf(value):
        aval = _aval(value)
        return _type_text(*aval) if aval else f"a {type(value).__name__}"
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in sorted(value, key=str))
        return f"a {type(value).__name__} with keys {{{keys}}}" if value \
            else f"an empty {type(value).__name__}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


def _aval(value: Any) -> tuple[tuple[int, ...], Any] | None:
    """(shape, dtype) of a leaf as a call takes it (a Python scalar typed
    as jax.jit types it), None for what is not array-like."""
    try:
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            return tuple(value.shape), value.dtype
        array = np.asarray(value)
        if array.dtype == object:
            return None
        return array.shape, np.dtype(jax.dtypes.canonicalize_dtype(
            array.dtype))
    except Exception:  # noqa: BLE001 - not array-like
        return None


def _aux_text(node: Any) -> str:
    """The auxiliary data of a one-level pytree, shortened for a message."""
    try:
        text = repr(node.node_data()[1])
    except Exception:  # noqa: BLE001 - a node without printable data
        return "(unprintable)"
    return text if len(text) <= 80 else text[:77] + "..."


def _type_text(shape: Sequence[int], dtype: Any) -> str:
    """`float32[4,5]` (`float32[]` for a scalar), as jax.jit prints types."""
    return f"{dtype_name(dtype)}[{','.join(map(str, shape))}]"


class _Report:
    """The differences `describe_mismatch` finds, in the user's terms."""

    def __init__(self, names: dict[int, str], specs: Sequence[tuple]):
        self.names = names
        self.specs = specs
        self.missing: list[str] = []
        self.extra: list[str] = []
        self.kinds: list[str] = []
        self.types: list[str] = []
        # Top-level names missing positionally / given by keyword (and the
        # other way round), to say how they were passed.
        self.moved: set[str] = set()
        self._top_missing: dict[str, str] = {}
        self._top_extra: dict[str, str] = {}

    def name(self, path: tuple) -> str:
        if not path:
            return "the arguments"
        head = getattr(path[0], "idx", None)
        if len(path) == 1:
            return "the positional arguments" if head == 0 \
                else "the keyword arguments"
        if head == 0:
            index = path[1].idx
            return self.names.get(index, f"args[{index}]") + path_text(
                path[2:])
        return str(getattr(path[1], "key", path[1])) + path_text(path[2:])

    def _top(self, path: tuple) -> tuple[str, str] | None:
        """('positional'|'keyword', name) of a whole top-level argument."""
        if len(path) != 2:
            return None
        head = getattr(path[0], "idx", None)
        return ("positional" if head == 0 else "keyword", self.name(path))

    def _leaves(self, node: Any, path: tuple, into: list[str]) -> None:
        """Each leaf under `node` (the node itself if it has none)."""
        flat = jax.tree_util.tree_flatten_with_path(node)[0]
        if not flat:
            into.append(f"{self.name(path)} ({_kind(node, self.specs)})")
        for sub, leaf in flat:
            into.append(f"{self.name(path + tuple(sub))} "
                        f"({_kind(leaf, self.specs)})")

    def walk(self, lowered: Any, given: Any, path: tuple) -> None:
        lowered_leaf = isinstance(lowered, _Slot)
        given_leaf = _is_leaf(given)
        if lowered_leaf and given_leaf:
            self._compare(lowered, given, path)
            return
        if lowered_leaf or given_leaf or type(lowered) is not type(given):
            self.kinds.append(f"{self.name(path)} is "
                              f"{_kind(given, self.specs)}, lowered as "
                              f"{_kind(lowered, self.specs)}")
            return
        mine = {jax.tree_util.keystr((key,)): (key, child)
                for key, child in _one_level(lowered)}
        theirs = {jax.tree_util.keystr((key,)): (key, child)
                  for key, child in _one_level(given)}
        for text, (key, child) in mine.items():
            if text not in theirs:
                self._leaves(child, path + (key,), self.missing)
                top = self._top(path + (key,))
                if top:
                    self._top_missing[top[1]] = top[0]
        for text, (key, child) in theirs.items():
            if text not in mine:
                self._leaves(child, path + (key,), self.extra)
                top = self._top(path + (key,))
                if top:
                    self._top_extra[top[1]] = top[0]
        if mine.keys() == theirs.keys():
            shape = jax.tree_util.tree_structure
            ours = shape(lowered, is_leaf=lambda x: x is not lowered)
            yours = shape(given, is_leaf=lambda x: x is not given)
            if ours != yours:
                self.kinds.append(
                    f"{self.name(path)} is {_kind(given, self.specs)} whose "
                    f"static fields (pytree auxiliary data) "
                    f"{_aux_text(yours)} differ from the lowered "
                    f"{_aux_text(ours)}")
        for text, (key, child) in mine.items():
            if text in theirs:
                self.walk(child, theirs[text][1], path + (key,))

    def _compare(self, slot: _Slot, value: Any, path: tuple) -> None:
        if slot.index >= len(self.specs):
            return
        shape, dtype = self.specs[slot.index][:2]
        aval = _aval(value)
        if aval is None:
            self.types.append(f"{self.name(path)} is a "
                              f"{type(value).__name__}, lowered for "
                              f"{_type_text(shape, dtype)}")
        elif tuple(aval[0]) != tuple(shape) or aval[1] != dtype:
            self.types.append(f"{self.name(path)} is "
                              f"{_type_text(*aval)}, lowered for "
                              f"{_type_text(shape, dtype)}")

    def text(self, limit: int, function: str | None) -> str:
        for name, how in self._top_missing.items():
            other = self._top_extra.get(name)
            if other is not None and other != how:
                self.moved.add(f"{name} is passed as a {other} argument but "
                               f"was lowered as a {how} one; pass it the "
                               "same way (a call's pytree includes how "
                               "each argument is passed, as in jax.jit)")
        lines = []
        for title, entries in (("missing", self.missing),
                               ("extra", self.extra),
                               ("another type", self.kinds),
                               ("another shape or dtype", self.types),
                               ("passed another way", sorted(self.moved))):
            if not entries:
                continue
            shown = entries[:limit]
            more = (f"; and {len(entries) - limit} more"
                    if len(entries) > limit else "")
            lines.append(f"  * {title}: " + "; ".join(shown) + more)
        called = (f"{function!r} was called" if function
                  else "the function was called")
        return (f"{called} with arguments whose pytree differs from the one "
                "it was lowered for (Lowered.in_tree):\n" + "\n".join(lines)
                + "\npass arguments of the lowered structure, or lower "
                "again for these (calling the mpmd.jit function lowers "
                "and compiles once per structure, as jax.jit does)")


def describe_argument(paths: Sequence[str]) -> Any:
    """How `mpmd.jit` words a problem with an argument: by its pytree path
    (`params['w1']`), as lowered."""
    def describe(problem: ArgumentProblem) -> str:
        index = problem.index
        where = paths[index] if index < len(paths) else f"[{index}]"
        if problem.kind == "deleted":
            return (f"argument {where} was deleted (donated to an earlier "
                    "call?); pass a live array")
        shape, dtype = problem.expected
        if problem.kind == "not_array":
            return (f"argument {where} is a {problem.type_name}, not an "
                    f"array; the program was lowered for shape {shape} and "
                    f"dtype {dtype_name(dtype)}")
        return (f"argument {where} has shape {problem.shape} and dtype "
                f"{dtype_name(problem.dtype)}, but the program was lowered "
                f"for shape {shape} and dtype {dtype_name(dtype)}; lower "
                "again for new shapes")

    return describe
