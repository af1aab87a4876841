"""`jax.lax.while_loop` whose body (or condition) spans meshes.

A loop of unknown length cannot be unrolled into one MPMD program, so
`mpmd.jit` cuts the traced program at such a loop into pieces, each an
ordinary MPMD program partitioned and compiled once: what comes before the
loop, the condition, the body and what comes after. A call runs the first
piece, then the condition's program and the body's in turn until the
condition, fetched as one boolean per iteration (`mpmd.fetch`, agreed
across processes), is false, then the last piece. The carry stays on the
meshes the body's program puts it on: each iteration passes the previous
one's results, laid out as the program takes them, so nothing moves or
compiles again whatever the number of iterations.

    step = mpmd.jit(greedy_decode, config)   # a while_loop over 2 meshes
    tokens, steps = step(params, prompt)     # 4 programs, compiled once

Limits ("not supported yet" errors name them): one such loop per function,
at the top level of it; no static arguments; the pieces' results are the
loop's, not donated. Loops whose body stays on one mesh need none of this
(they are one program's loop).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator, Sequence

import jax
from jax._src import core as jcore

from mpmd.errors import MpmdError

__all__ = ["LoopError", "LoopLowered", "LoopCompiled", "loop_across_meshes"]


class LoopError(MpmdError):
    """A while loop across meshes that cannot be run (its position, a
    second loop, static arguments)."""


def _holds_named_computation(jaxpr: Any) -> bool:
    from mpmd.frontend.primitives import named_computation_p  # noqa: PLC0415

    for eqn in jaxpr.eqns:
        if eqn.primitive is named_computation_p:
            return True
        for sub in jcore.jaxprs_in_params(eqn.params):
            if _holds_named_computation(sub):
                return True
    return False


def _spans_meshes(eqn: Any) -> bool:
    """Whether `eqn` is a `while` whose condition or body holds named
    computations."""
    return eqn.primitive.name == "while" and (
        _holds_named_computation(eqn.params["body_jaxpr"].jaxpr) or
        _holds_named_computation(eqn.params["cond_jaxpr"].jaxpr))


# Calls whose callee a loop across meshes may hide in (named as refused).
_CALLS = ("pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call")


def loop_across_meshes(closed: Any) -> int | None:
    """The position in `closed` (a ClosedJaxpr) of the top-level
    `while` whose condition or body holds named computations; None when
    there is none. Raises LoopError for a second one, or for one inside a
    called function."""
    found = None
    for index, eqn in enumerate(closed.jaxpr.eqns):
        if _spans_meshes(eqn):
            if found is not None:
                raise LoopError(
                    "not supported yet: two jax.lax.while_loops whose "
                    "bodies hold named computations in one function; "
                    "put each in its own mpmd.jit function")
            found = index
        elif eqn.primitive.name in _CALLS and any(
                _nested_loop(sub)
                for sub in jcore.jaxprs_in_params(eqn.params)):
            raise LoopError(
                "not supported yet: a jax.lax.while_loop whose body holds "
                f"named computations inside {eqn.primitive.name!r}; call "
                "the loop at the top level of the function mpmd.jit "
                "partitions")
    return found


def _nested_loop(jaxpr: Any) -> bool:
    return any(_spans_meshes(eqn) or any(
        _nested_loop(sub) for sub in jcore.jaxprs_in_params(eqn.params))
        for eqn in jaxpr.eqns)


class _Piece:
    """Part of the program as its own function: reads `reads` (vars), runs
    `eqns` (evaluated as JAX evaluates a jaxpr: each bound again, so
    named computations stay labelled), returns `writes`."""

    def __init__(self, name: str, reads: list[Any], eqns: list[Any],
                 writes: list[Any]) -> None:
        self.name = name
        self.reads = reads
        self.eqns = eqns
        self.writes = writes

    def function(self) -> Callable[..., list[Any]]:
        reads, eqns, writes = self.reads, self.eqns, self.writes

        def piece(*values: Any) -> list[Any]:
            env = dict(zip(reads, values))
            for eqn in eqns:
                params = eqn.primitive.get_bind_params(eqn.params)
                with eqn.ctx.manager:
                    outs = eqn.primitive.bind(
                        *[_read(env, v) for v in eqn.invars], **params)
                env.update(zip(eqn.outvars, outs if
                               eqn.primitive.multiple_results else [outs]))
            return [_read(env, v) for v in writes]

        piece.__name__ = piece.__qualname__ = self.name
        return piece


_PIECES = {"before_loop": "code before", "loop_condition": "condition",
           "loop_body": "body", "after_loop": "code after"}


def _where(eqn: Any) -> str:
    """The user's line of `eqn` (file:line), or "its place in the
    function" when JAX kept none."""
    from jax._src import source_info_util  # noqa: PLC0415

    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is None:
        return "its place in the function"
    return f"{frame.file_name}:{frame.start_line}"


def _read(env: dict, atom: Any) -> Any:
    if isinstance(atom, jcore.Literal):
        return atom.val
    return env[atom]


class LoopLowered:
    """The pieces of a function cut at its while loop across meshes; the
    shape of `Lowered` where it matters: `compile()`, and the pieces'
    `Lowered`s once a call has lowered them (`pieces`)."""

    def __init__(self, function: Any, traced: Any, index: int) -> None:
        if function.static_argnums:
            raise LoopError("not supported yet: static arguments in a "
                            "function with a jax.lax.while_loop across "
                            "meshes")
        closed = traced.jaxpr
        self._function = function
        self._out_tree = jax.tree_util.tree_structure(traced.out_info)
        self._closed = closed
        jaxpr = closed.jaxpr
        self._loop = jaxpr.eqns[index]
        self.where = _where(self._loop)
        before, after = jaxpr.eqns[:index], jaxpr.eqns[index + 1:]
        made_before = {v for eqn in before for v in eqn.outvars}
        used_later = _uses(after, jaxpr.outvars) | _uses([self._loop], [])
        made_after = {v for eqn in after for v in eqn.outvars}
        self._before = (_Piece("before_loop", _free(before), before,
                               [v for v in made_before if v in used_later])
                        if before else None)
        self._after = (_Piece("after_loop", _free(after), after,
                              [v for v in jaxpr.outvars
                               if not isinstance(v, jcore.Literal)
                               and v in made_after])
                       if after else None)
        params = self._loop.params
        self._cond_n = params["cond_nconsts"]
        self._body_n = params["body_nconsts"]
        cond, body = params["cond_jaxpr"], params["body_jaxpr"]
        self._cond_fn = _closed_function("loop_condition", cond)
        self._body_fn = _closed_function("loop_body", body)
        self._jits: dict[str, Any] = {}

    @contextlib.contextmanager
    def naming(self, piece: str) -> Iterator[None]:
        """An mpmd error from `piece` (its partitioning, its call) says
        which loop and which piece it comes from."""
        try:
            yield
        except MpmdError as error:
            if not getattr(error, "_mpmd_loop_named", False):
                error._mpmd_loop_named = True
                error.add_note(f"(in the {_PIECES[piece]} of the "
                               f"jax.lax.while_loop at {self.where}, which "
                               "mpmd.jit runs as programs of their own: "
                               "docs/loops.md)")
            raise

    def _jit(self, name: str, fn: Callable[..., Any]) -> Any:
        jitted = self._jits.get(name)
        if jitted is None:
            from mpmd.stages import jit  # noqa: PLC0415

            jitted = self._jits[name] = jit(fn, self._function.config)
        return jitted

    def compile(self) -> "LoopCompiled":
        return LoopCompiled(self)

    @property
    def pieces(self) -> dict[str, Any]:
        """The pieces' `mpmd.jit` functions by name (before_loop,
        loop_condition, loop_body, after_loop)."""
        return dict(self._jits)


class LoopCompiled:
    """Runs a `LoopLowered`: the pieces compile at the first call, once."""

    # No flat input layout to check a call against (mpmd.jit's fast path
    # for a Compiled): each piece checks its own.
    _expected = None

    def __init__(self, lowered: LoopLowered) -> None:
        self.lowered = lowered
        self.iterations: list[int] = []  # per call, the body's iterations

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(args, kwargs, None)

    def run_traced(self, *args: Any, **kwargs: Any
                   ) -> tuple[Any, dict[str, tuple[Any, Any]]]:
        """Runs like calling, and returns the results with, for the pieces
        before and after the loop, `{name: (Trace, plan)}` of their run
        (`Compiled.run_traced`; the loop's own pieces run untraced)."""
        traces: dict[str, tuple[Any, Any]] = {}
        return self._run(args, kwargs, traces), traces

    def _piece(self, piece: _Piece, env: dict, traces: dict | None
               ) -> None:
        lowered = self.lowered
        values = [env[v] for v in piece.reads]
        with _piece_warnings(), lowered.naming(piece.name):
            function = lowered._jit(piece.name, piece.function())
            if traces is None:
                results = function(*values)
            else:
                compiled = function.lower(*values).compile()
                results, trace = compiled.run_traced(*values)
                traces[piece.name] = (trace, compiled.plan)
        env.update(zip(piece.writes, results))

    def _run(self, args: tuple, kwargs: dict, traces: dict | None) -> Any:
        lowered = self.lowered
        closed = lowered._closed
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if len(leaves) != len(closed.jaxpr.invars):
            raise LoopError(
                f"the call has {len(leaves)} array arguments, the traced "
                f"function {len(closed.jaxpr.invars)}")
        env: dict[Any, Any] = dict(zip(closed.jaxpr.invars, leaves))
        env.update(zip(closed.jaxpr.constvars, closed.consts))
        if lowered._before is not None:
            self._piece(lowered._before, env, traces)
        loop = lowered._loop
        values = [_read(env, a) for a in loop.invars]
        cond_consts = values[:lowered._cond_n]
        body_consts = values[lowered._cond_n:lowered._cond_n +
                             lowered._body_n]
        carry = values[lowered._cond_n + lowered._body_n:]
        condition = lowered._jit("loop_condition", lowered._cond_fn)
        body = lowered._jit("loop_body", lowered._body_fn)
        from mpmd.runtime.fetch import fetch  # noqa: PLC0415

        count = 0
        while True:
            # The condition reads the carry where the body left it (on
            # several meshes, say): moving it there is the loop's nature.
            with _piece_warnings("moves it there at every call"), \
                    lowered.naming("loop_condition"):
                if not bool(fetch(condition(*cond_consts, *carry)[0])):
                    break
            # A carry value the body makes on one mesh and reads on
            # another moves each iteration (docs/loops.md).
            with _piece_warnings("moves it there at every call"), \
                    lowered.naming("loop_body"):
                carry = list(body(*body_consts, *carry))
            count += 1
        self.iterations.append(count)
        env.update(zip(loop.outvars, carry))
        if lowered._after is not None:
            self._piece(lowered._after, env, traces)
        outs = [_read(env, v) for v in closed.jaxpr.outvars]
        return jax.tree_util.tree_unflatten(lowered._out_tree, outs)


@contextlib.contextmanager
def _piece_warnings(*more: str) -> Iterator[None]:
    """A piece holds part of the program: the assignment's other names and
    the other meshes are the other pieces' (not the user's to fix)."""
    with warnings.catch_warnings():
        for text in ("assignment entry .* matches no", ".* runs? no program",
                     *more):
            warnings.filterwarnings("ignore", message=f".*{text}")
        yield


def _closed_function(name: str, closed: Any) -> Callable[..., list[Any]]:
    jaxpr, consts = closed.jaxpr, closed.consts

    def piece(*values: Any) -> list[Any]:
        return jcore.eval_jaxpr(jaxpr, consts, *values)

    piece.__name__ = piece.__qualname__ = name
    return piece


def _uses(eqns: Sequence[Any], outvars: Sequence[Any]) -> set[Any]:
    used = {v for v in outvars if not isinstance(v, jcore.Literal)}
    for eqn in eqns:
        used.update(v for v in eqn.invars if not isinstance(v, jcore.Literal))
    return used


def _free(eqns: Sequence[Any]) -> list[Any]:
    """The vars `eqns` read that they do not make, in first-use order."""
    made: set[Any] = set()
    free: list[Any] = []
    for eqn in eqns:
        for v in eqn.invars:
            if not isinstance(v, jcore.Literal) and v not in made and \
                    v not in free:
                free.append(v)
        made.update(eqn.outvars)
    return free
