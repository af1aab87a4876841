"""`label_modules`: a library model's submodules as named computations,
chosen from outside, without editing the model's code.

    import equinox as eqx, jax, jax.numpy as jnp
    import mpmd

    model = eqx.nn.MLP(4, 4, 8, depth=2, key=jax.random.PRNGKey(0))
    model = mpmd.label_modules(model, "layers.*")
    model(jnp.ones(4))   # runs "layers.0", "layers.1", "layers.2"

A selected submodule, when called, runs as `mpmd.named_computation` named
by its path in the model, dotted as PyTorch names modules ("blocks.3",
"encoder.layers.0.attn"); `prefix="policy"` gives "policy.blocks.3".
`select` chooses the submodules:

* a class or a tuple of classes: every submodule that is an instance;
* a string: a glob over paths (`fnmatch`: "blocks.*", "blocks.[0-3]");
* a list of exact paths (each must exist);
* a predicate `select(path, module) -> bool`.

The outermost match wins: a match inside a selected submodule is not
labelled separately, it runs inside its ancestor's computation; a labelled
submodule is not searched again. The model itself is never selected; call
it in `mpmd.named_computation` for that.
Selecting nothing raises `FrontendError` listing some of the paths there
are.

Each library has its own kind of model, so each gets its own treatment:

* equinox (`eqx.Module`): a new model, each selected submodule replaced by
  `EqxLabelled(module=<submodule>, name=<path>)` (with `eqx.tree_at`). The
  parameters are the same arrays in the same order; their paths gain one
  `.module` step (`blocks[0].module.weight`), so optimizer states made for
  the unlabelled model do not fit the labelled one.
* flax nnx (`nnx.Module`): a labelled copy (`nnx.clone`: new Variables
  that share the arrays), each selected attribute or list entry replaced by
  `NnxLabelled(module, name)`. Its call splits the module's state out,
  runs it in the named computation and writes back the variables the call
  changed (batch statistics, RNG counters), as `nnx.split`, `nnx.merge` and
  `nnx.update` would by hand. State paths gain a `module` step.
* flax linen (`nn.Module`): a `LinenLabelled` object with the module's
  `init` and `apply` (same signatures, same variable trees) that run it
  under `nn.intercept_methods`, turning `__call__` of each selected module
  (by `module.path`, "blocks_0.Dense_0", or by type) into a named
  computation. `init` is not labelled; it checks the selection.
* penzai (`pz.nn.Layer`): a new model, selected layers replaced (with
  penzai's selectors) by `PenzaiLabelled(module=<layer>, name=<path>)`;
  paths are field names and list indices ("body.sublayers.2"). A
  `LayerStack` is one layer: it may be selected, its inside is not.

The libraries are imported only for a model of theirs.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import sys
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any, Callable, Sequence, Union

import jax
import numpy as np

from mpmd.frontend.errors import FrontendError
from mpmd.frontend.primitives import named_computation

__all__ = ["label_modules"]

Selection = Union[type, tuple, str, Sequence[str], Callable[[str, Any], bool]]

# Paths as tuples of keys (attribute names, indices, dict keys).
Path = tuple


def label_modules(model: Any, select: Selection, *, prefix: str = "") -> Any:
    """`model` with the submodules chosen by `select` labelled: each runs as
    `mpmd.named_computation` named by its dotted path in the model
    ("blocks.3"; "prefix.blocks.3" with `prefix`). See the module
    docstring for `select` and for what each library gets back."""
    if not isinstance(prefix, str):
        raise FrontendError(
            f"label_modules: prefix must be a str, got {prefix!r}")
    selector = _Selector.of(select)
    library = _library_of(model)
    if library == "equinox":
        return _label_equinox(model, selector, prefix)
    if library == "nnx":
        return _label_nnx(model, selector, prefix)
    if library == "linen":
        return LinenLabelled(model, selector, prefix)
    return _label_penzai(model, selector, prefix)


# --- selection ---------------------------------------------------------------


def _dotted(path: Path) -> str:
    return ".".join(str(key) for key in path)


def _name(prefix: str, path: Path) -> str:
    dotted = _dotted(path)
    return f"{prefix}.{dotted}" if prefix else dotted


@dataclasses.dataclass(frozen=True)
class _Selector:
    """What `select` asked for, as a test of (dotted path, module)."""

    describe: str
    test: Callable[[str, Any], bool]
    exact: tuple[str, ...] = ()

    @staticmethod
    def of(select: Any) -> "_Selector":
        if isinstance(select, type) or (
                isinstance(select, tuple) and select
                and all(isinstance(c, type) for c in select)):
            classes = select if isinstance(select, tuple) else (select,)
            names = " or ".join(c.__name__ for c in classes)
            return _Selector(f"an instance of {names}",
                             lambda _, module: isinstance(module, classes))
        if isinstance(select, str):
            if not select:
                raise FrontendError(
                    "label_modules: select is an empty string; give a glob "
                    "over paths such as 'blocks.*'")
            return _Selector(
                f"at a path matching {select!r}",
                lambda path, _: fnmatch.fnmatchcase(path, select))
        if isinstance(select, (list, tuple, set, frozenset)) and all(
                isinstance(p, str) for p in select):
            wanted = tuple(select)
            if not wanted:
                raise FrontendError(
                    "label_modules: select is an empty list of paths")
            return _Selector(f"at one of the paths {list(wanted)}",
                             lambda path, _: path in wanted, exact=wanted)
        if callable(select):
            described = getattr(select, "__qualname__", repr(select))
            return _Selector(
                f"one where {described}(path, module) is true",
                lambda path, module: bool(select(path, module)))
        raise FrontendError(
            f"label_modules: select must be a class or tuple of classes, a "
            f"glob over paths ('blocks.*'), a list of exact paths or a "
            f"predicate select(path, module) -> bool; got {select!r}")


def _choose(candidates: Sequence[tuple[Path, Any]], selector: _Selector,
            model: Any, hint: str = "") -> list[tuple[Path, Any]]:
    """The candidates `selector` takes, outermost first wins, in the
    candidates' order; `FrontendError` when none is, or when an exact path
    is not one of them."""
    chosen: set[Path] = set()
    for path, module in sorted(candidates, key=lambda c: len(c[0])):
        covered = any(path[:n] in chosen for n in range(len(path)))
        if not covered and selector.test(_dotted(path), module):
            chosen.add(path)
    available = [(_dotted(p), type(m).__name__) for p, m in candidates]
    if selector.exact:
        known = {p for p, _ in available}
        missing = [p for p in selector.exact if p not in known]
        if missing:
            near = sorted({c for p in missing for c in
                           difflib.get_close_matches(p, known, n=3)})
            close = f" (did you mean {near}?)" if near else ""
            raise FrontendError(
                f"label_modules: no submodule of {type(model).__name__} at "
                f"{missing}{close}; {_some_paths(available)}{hint}")
    if not chosen:
        raise FrontendError(
            f"label_modules selected nothing in {type(model).__name__}: no "
            f"submodule is {selector.describe}; {_some_paths(available)}"
            f"{hint}")
    return [(p, m) for p, m in candidates if p in chosen]


def _some_paths(available: Sequence[tuple[str, str]], limit: int = 8) -> str:
    if not available:
        return "the model has no submodules"
    shallow = sorted(available, key=lambda a: a[0].count("."))
    shown = ", ".join(f"{p!r} ({t})" for p, t in shallow[:limit])
    more = len(available) - limit
    return (f"its submodules include {shown}"
            + (f" and {more} more" if more > 0 else ""))


# --- which library ------------------------------------------------------------


def _library_of(model: Any) -> str:
    # A model's library is imported already: checking sys.modules keeps
    # mpmd from importing the others.
    def instance(module: str, attribute: str) -> bool:
        lib = sys.modules.get(module)
        cls = getattr(lib, attribute, None) if lib is not None else None
        return isinstance(cls, type) and isinstance(model, cls)

    if instance("equinox", "Module"):
        return "equinox"
    if instance("flax.nnx", "Module"):
        return "nnx"
    if instance("flax.linen", "Module"):
        return "linen"
    if instance("penzai.core.struct", "Struct"):
        return "penzai"
    raise FrontendError(
        f"label_modules supports models of equinox (eqx.Module), flax nnx "
        f"(nnx.Module), flax linen (nn.Module) and penzai (pz.nn.Layer); "
        f"got a {type(model).__module__}.{type(model).__qualname__}. Label "
        f"other code by calling it in mpmd.named_computation(fn, "
        f"name=...)")


# --- pytree models: equinox and penzai ----------------------------------------


def _key_part(key: Any) -> Any:
    for attribute in ("name", "idx", "key"):
        if hasattr(key, attribute):
            return getattr(key, attribute)
    return str(key)


def _pytree_modules(root: Any, is_module: Callable[[Any], bool],
                    opaque: Callable[[Any], bool]
                    ) -> list[tuple[Path, tuple, Any]]:
    """Every module under `root` (not `root`), in pre-order, as (dotted
    path parts, jax key path, module); `opaque` modules are not entered."""
    found: list[tuple[Path, tuple, Any]] = []

    def visit(node: Any, keys: tuple) -> None:
        leaves = jax.tree_util.tree_flatten_with_path(
            node, is_leaf=lambda x: x is not node and is_module(x))[0]
        for sub_keys, leaf in leaves:
            if leaf is node or not is_module(leaf):
                continue
            full = keys + tuple(sub_keys)
            found.append((tuple(_key_part(k) for k in full), full, leaf))
            if not opaque(leaf):
                visit(leaf, full)

    visit(root, ())
    return found


def _at_keys(tree: Any, keys: tuple) -> Any:
    for key in keys:
        if isinstance(key, jax.tree_util.GetAttrKey):
            tree = getattr(tree, key.name)
        elif isinstance(key, jax.tree_util.SequenceKey):
            tree = tree[key.idx]
        elif isinstance(key, jax.tree_util.DictKey):
            tree = tree[key.key]
        else:
            raise FrontendError(
                f"not supported yet: label_modules through a pytree node "
                f"flattened without keys ({key!r}); label the submodule by "
                f"calling it in mpmd.named_computation instead")
    return tree


class _Constant:
    """A Python scalar among a call's arguments, held out of the trace:
    `train=True` must reach the module as a bool it can branch on (as
    `eqx.filter_jit` keeps it), not as a traced array."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _hold_scalars(tree: Any) -> Any:
    return jax.tree.map(
        lambda x: _Constant(x) if isinstance(x, (bool, int, float, complex))
        and not isinstance(x, np.generic) else x, tree)


def _release_scalars(tree: Any) -> Any:
    return jax.tree.map(lambda x: x.value if isinstance(x, _Constant) else x,
                        tree, is_leaf=lambda x: isinstance(x, _Constant))


def _call_module(module: Any, args: Any, kwargs: Any) -> Any:
    args, kwargs = _release_scalars((args, kwargs))
    return module(*args, **kwargs)


def _forwarded(self: Any, attribute: str) -> Any:
    """Attribute reads a wrapper does not answer go to the module it
    wraps, so code that reads `model.blocks[0].num_heads` keeps working.
    Private names are not forwarded: the libraries probe those while
    building the wrapper itself."""
    if attribute.startswith("_"):
        raise AttributeError(attribute)
    inner = self.__dict__.get("module")
    if inner is None:
        raise AttributeError(attribute)
    return getattr(inner, attribute)


@functools.cache
def _eqx_wrapper() -> type:
    import equinox as eqx  # noqa: PLC0415

    class EqxLabelled(eqx.Module):
        """Runs `module(*args, **kwargs)` as the named computation
        `name`."""

        module: Any
        name: str = eqx.field(static=True)

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return named_computation(_call_module, name=self.name)(
                self.module, *_hold_scalars((args, kwargs)))

        __getattr__ = _forwarded

    return _exported(EqxLabelled)


def _label_equinox(model: Any, selector: _Selector, prefix: str) -> Any:
    import equinox as eqx  # noqa: PLC0415

    wrapper = _eqx_wrapper()
    found = _pytree_modules(
        model, lambda x: isinstance(x, eqx.Module),
        lambda x: isinstance(x, wrapper))
    found = [f for f in found if not isinstance(f[2], wrapper)]
    keys_of = {path: keys for path, keys, _ in found}
    chosen = _choose([(p, m) for p, _, m in found], selector, model)
    wrappers = [wrapper(module=m, name=_checked_name(prefix, p))
                for p, m in chosen]
    return eqx.tree_at(
        lambda tree: [_at_keys(tree, keys_of[p]) for p, _ in chosen],
        model, wrappers)


@functools.cache
def _penzai_wrapper() -> type:
    from penzai import pz  # noqa: PLC0415

    @pz.pytree_dataclass
    class PenzaiLabelled(pz.nn.Layer):
        """Runs `module(argument, **side_inputs)` as the named computation
        `name`. Mutable variables bound in the layer or its inputs
        (`pz.Parameter`, `pz.StateVariable`) go in as frozen values and
        the ones the call changed are written back."""

        module: pz.nn.Layer
        name: str = dataclasses.field(metadata={"pytree_node": False})

        def __call__(self, argument: Any, /, **side_inputs: Any) -> Any:
            unbound, variables = pz.unbind_variables(
                (self.module, *_hold_scalars((argument, side_inputs))))
            values = tuple(v.freeze() for v in variables)

            def run(unbound: Any, values: tuple) -> Any:
                fresh = [v.unfreeze_as_copy() for v in values]
                layer, arg, sides = pz.bind_variables(unbound, fresh)
                arg, sides = _release_scalars((arg, sides))
                out = layer(arg, **sides)
                # Only changed values leave the computation: returning a
                # parameter it only read would make its later readers
                # (and their gradients) depend on this computation.
                changed = {i: v.freeze() for i, (v, old) in
                           enumerate(zip(fresh, values))
                           if not _same_leaves(v.freeze().value, old.value)}
                return out, changed

            out, changed = named_computation(run, name=self.name)(
                unbound, values)
            for index, value in changed.items():
                variables[index].update(value)
            return out

        __getattr__ = _forwarded

    return _exported(PenzaiLabelled)


def _label_penzai(model: Any, selector: _Selector, prefix: str) -> Any:
    from penzai import pz  # noqa: PLC0415

    wrapper = _penzai_wrapper()
    found = _pytree_modules(
        model, lambda x: isinstance(x, pz.nn.Layer),
        lambda x: isinstance(x, (pz.nn.LayerStack, wrapper)))
    found = [f for f in found if not isinstance(f[2], wrapper)]
    stacks = [p for p, _, m in found if isinstance(m, pz.nn.LayerStack)]
    hint = (f". The inside of a LayerStack is not searched: select the "
            f"stack itself ({_dotted(stacks[0])!r})" if stacks else "")
    chosen = {p for p, _ in _choose([(p, m) for p, _, m in found], selector,
                                    model, hint)}
    names = {keys: _checked_name(prefix, p)
             for p, keys, _ in found if p in chosen}
    return pz.select(model).at_keypaths(set(names)).apply(
        lambda keys, layer: wrapper(module=layer, name=names[keys]),
        with_keypath=True)


def _same_leaves(a: Any, b: Any) -> bool:
    """Whether two pytrees hold the very same leaf objects: inside a
    trace, a variable the call did not write still holds its input
    tracer."""
    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    return tree_a == tree_b and all(x is y for x, y in zip(leaves_a, leaves_b))


def _checked_name(prefix: str, path: Path) -> str:
    name = _name(prefix, path)
    named_computation(_call_module, name=name)   # raises InvalidNameError
    return name


def _exported(cls: type) -> type:
    """`cls` named as an attribute of this module (found by pickle through
    the module's `__getattr__`)."""
    cls.__module__ = __name__
    cls.__qualname__ = cls.__name__
    return cls


def __getattr__(attribute: str) -> Any:
    # The wrapper classes need their library: they are built on first use.
    builders = {"EqxLabelled": _eqx_wrapper, "NnxLabelled": _nnx_wrapper,
                "PenzaiLabelled": _penzai_wrapper}
    if attribute in builders:
        return builders[attribute]()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


# --- flax nnx -------------------------------------------------------------------


class _NodeSlot:
    """Where a graph node (an `nnx.Rngs`, a module) stood among a call's
    arguments while it travels in the split state."""

    def __repr__(self) -> str:
        return "<nnx node>"


_NODE_SLOT = _NodeSlot()


@functools.cache
def _nnx_wrapper() -> type:
    from flax import nnx  # noqa: PLC0415
    from flax.nnx import graphlib  # noqa: PLC0415

    def leaves_by_path(state: Any) -> dict[Any, list[Any]]:
        return {path: jax.tree.leaves(var)
                for path, var in nnx.to_flat_state(state)}

    def changed_state(before: dict[Any, list[Any]], after: Any) -> Any:
        return nnx.from_flat_state([
            (path, var) for path, var in nnx.to_flat_state(after)
            if not _same_leaves(before.get(path), jax.tree.leaves(var))])

    class NnxLabelled(nnx.Module):
        """Runs `module(*args, **kwargs)` as the named computation `name`,
        the module's state (and that of nnx objects among the arguments,
        such as `nnx.Rngs`) an explicit input, and keeps the updates the
        call makes to it."""

        def __init__(self, module: Any, name: str):
            self.module = module
            self.name = name

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            leaves, treedef = jax.tree_util.tree_flatten(
                (args, kwargs), is_leaf=graphlib.is_graph_node)
            nodes = [x for x in leaves if graphlib.is_graph_node(x)]
            slotted = _hold_scalars(treedef.unflatten(
                [_NODE_SLOT if graphlib.is_graph_node(x) else x
                 for x in leaves]))
            graphdef, state = nnx.split((self.module, nodes))

            def run(state: Any, slotted: Any) -> Any:
                # Taken first: merge puts these very Variables in the
                # module, and the call writes to them.
                before = leaves_by_path(state)
                module, call_nodes = nnx.merge(graphdef, state)
                it = iter(call_nodes)
                call_args, call_kwargs = jax.tree.map(
                    lambda x: next(it) if x is _NODE_SLOT else x,
                    _release_scalars(slotted),
                    is_leaf=lambda x: x is _NODE_SLOT)
                out = module(*call_args, **call_kwargs)
                # Only what the call wrote leaves the computation: a
                # parameter returned unchanged would make its later
                # readers depend on this computation.
                return out, changed_state(before,
                                          nnx.state((module, call_nodes)))

            out, changed = named_computation(run, name=self.name)(
                state, slotted)
            nnx.update((self.module, nodes), changed)
            return out

        __getattr__ = _forwarded

    return _exported(NnxLabelled)


def _nnx_child(node: Any, key: Any) -> Any:
    if isinstance(key, int) or isinstance(node, Mapping):
        return node[key]
    return getattr(node, key)


def _nnx_replace(node: Any, path: Path, value: Any) -> Any:
    """Puts `value` at `path` under `node`, in place where the containers
    are mutable; returns `node`, or its replacement when it is a tuple."""
    key, rest = path[0], path[1:]
    if rest:
        value = _nnx_replace(_nnx_child(node, key), rest, value)
    if isinstance(node, tuple):
        items = list(node)
        items[key] = value
        return (type(node)(*items) if hasattr(node, "_fields")
                else type(node)(items))
    if isinstance(key, int) or isinstance(node, MutableMapping):
        node[key] = value
    else:
        setattr(node, key, value)
    return node


def _label_nnx(model: Any, selector: _Selector, prefix: str) -> Any:
    from flax import nnx  # noqa: PLC0415

    wrapper = _nnx_wrapper()
    model = nnx.clone(model)
    found: list[tuple[Path, Any]] = []
    inside_wrapper: set[Path] = set()
    for path, module in sorted(nnx.iter_modules(model),
                               key=lambda c: len(c[0])):
        if not path or any(path[:n] in inside_wrapper
                           for n in range(len(path))):
            continue
        if isinstance(module, wrapper):
            inside_wrapper.add(path)
            continue
        found.append((tuple(path), module))
    for path, module in _choose(found, selector, model):
        _nnx_replace(model, path, wrapper(module, _checked_name(prefix, path)))
    return model


# --- flax linen -------------------------------------------------------------------


class LinenLabelled:
    """A linen module's `init` and `apply` with selected submodules
    labelled: `apply` runs `__call__` of each selected module (outermost
    first wins) as a named computation named by its `module.path`
    ("blocks_0", "blocks_0.Dense_0"), as `nn.intercept_methods` lets it
    from outside. `init` runs unlabelled (the variables it creates belong
    to no computation yet). Both raise `FrontendError` when the selection
    matched no module the call ran. Labelled modules must not write
    variables (`mutable=[...]` collections such as batch statistics or
    sown intermediates)."""

    def __init__(self, module: Any, selector: _Selector, prefix: str):
        self.module = module
        self._selector = selector
        self._prefix = prefix
        self._local = threading.local()

    def __repr__(self) -> str:
        return (f"LinenLabelled({self.module!r}, "
                f"select={self._selector.describe!r})")

    def init(self, rngs: Any, *args: Any, **kwargs: Any) -> Any:
        """`module.init(rngs, *args, **kwargs)`, unlabelled."""
        return self._run(self.module.init, rngs, args, kwargs, label=False)

    def apply(self, variables: Any, *args: Any, **kwargs: Any) -> Any:
        """`module.apply(variables, *args, **kwargs)`, the selected modules
        labelled."""
        return self._run(self.module.apply, variables, args, kwargs,
                         label=True)

    def _run(self, method: Callable[..., Any], first: Any, args: Any,
             kwargs: Any, label: bool) -> Any:
        import flax.linen as nn  # noqa: PLC0415

        called: dict[Path, Any] = {}

        def intercept(next_fun: Callable[..., Any], args: Any, kwargs: Any,
                      context: Any) -> Any:
            module = context.module
            if context.method_name != "__call__" or not module.path:
                return next_fun(*args, **kwargs)
            path = tuple(module.path)
            called.setdefault(path, module)
            if (not label or getattr(self._local, "inside", False)
                    or not self._selector.test(_dotted(path), module)):
                return next_fun(*args, **kwargs)
            self._local.inside = True
            try:
                return self._labelled_call(next_fun, module, path, args,
                                           kwargs)
            finally:
                self._local.inside = False

        with nn.intercept_methods(intercept):
            result = method(first, *args, **kwargs)
        if kwargs.get("method") is None:
            # Checked after the call: linen modules exist only while it runs.
            for path, _ in _choose(list(called.items()), self._selector,
                                   self.module):
                _checked_name(self._prefix, path)
        return result

    def _labelled_call(self, next_fun: Callable[..., Any], module: Any,
                       path: Path, args: Any, kwargs: Any) -> Any:
        name = _name(self._prefix, path)
        before = {id(x) for x in jax.tree.leaves(module.variables)}

        def run(args: Any, kwargs: Any) -> Any:
            args, kwargs = _release_scalars((args, kwargs))
            out = next_fun(*args, **kwargs)
            written = sorted(
                collection for collection, tree in module.variables.items()
                if any(id(x) not in before for x in jax.tree.leaves(tree)))
            if written:
                raise FrontendError(
                    f"not supported yet: the labelled linen module {name!r} "
                    f"({type(module).__name__}) writes variables (in "
                    f"{written}) inside its named computation; call it "
                    f"without mutable collections "
                    f"(e.g. use_running_average=True, no sow), or select "
                    f"modules that only read their variables")
            return out

        # The variables the module reads are tracers of the enclosing
        # trace: the named computation takes them as operands.
        return named_computation(run, name=name)(
            *_hold_scalars((args, kwargs)))
