"""mpmd.runtime: one exported SPMD program on one mesh (MeshProgram) and
device-to-device moves between meshes (transfer).

Runs on 8 CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=8,
set here unless the backend is already up) split into two meshes of 4.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable, Iterator

import pytest

_FLAG = "--xla_force_host_platform_device_count"
if _FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}=8".strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

from jax._src import array as jax_array  # noqa: E402
from jax._src import util as jax_util  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import mpmd  # noqa: E402
from mpmd.runtime import (  # noqa: E402
    MeshProgram,
    ProgramCompileError,
    ProgramInputError,
    TransferError,
    clear_program_cache,
    program_cache_size,
    transfer,
)

ADD_TEXT = """
module {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}
"""


@pytest.fixture(scope="module")
def meshes() -> tuple[Mesh, Mesh]:
    if jax.device_count() < 8:
        pytest.skip(f"needs 8 devices ({_FLAG}=8 before JAX starts), has {jax.device_count()}")
    devices = jax.devices()
    return Mesh(np.array(devices[:4]), ("x",)), Mesh(np.array(devices[4:8]), ("y",))


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """JAX's internal test events (argument sharding, batched copies, XLA compiles)."""
    seen: list[str] = []
    monkeypatch.setattr(jax_util, "test_event_listener", lambda name, *a: seen.append(name))
    return seen


@pytest.fixture
def host_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts device-to-host reads of whole arrays (`ArrayImpl._value`), the
    path JAX takes when it reshards through the host."""
    reads: list[int] = []
    value = jax_array.ArrayImpl._value

    def spy(self: Any) -> Any:
        reads.append(1)
        return value.fget(self)

    monkeypatch.setattr(jax_array.ArrayImpl, "_value", property(spy))
    return reads


def _put(value: Any, sharding: NamedSharding) -> jax.Array:
    """`value` on `sharding` in buffers XLA owns. (`device_put` of a NumPy
    array may alias the host memory on CPU, even with may_alias=False;
    XLA then copies instead of reusing such a buffer when it is donated.)"""
    placed = jax.device_put(np.asarray(value), sharding)
    return _owned_copy(sharding)(placed)


_copies: dict[NamedSharding, Any] = {}


def _owned_copy(sharding: NamedSharding) -> Any:
    if sharding not in _copies:
        _copies[sharding] = jax.jit(jnp.copy, out_shardings=sharding)
    return _copies[sharding]


def _pointers(x: jax.Array) -> list[int]:
    return [shard.data.unsafe_buffer_pointer() for shard in x.addressable_shards]


def _rng(seed: int = 0) -> Any:
    return np.random.default_rng(seed)


# A small model, exported by JAX as our compiler prints programs.
def _mlp(w1: Any, b1: Any, w2: Any, x: Any) -> tuple[Any, Any]:
    h = jnp.tanh(x @ w1 + b1)
    return h @ w2, jnp.sum(h * h)


def _mlp_inputs() -> list[Any]:
    rng = _rng(1)
    return [
        rng.standard_normal((16, 32), dtype=np.float32),
        rng.standard_normal((32,), dtype=np.float32),
        rng.standard_normal((32, 8), dtype=np.float32),
        rng.standard_normal((8, 16), dtype=np.float32),
    ]


def _pretty(fn: Callable[..., Any], *args: Any, **jit_kwargs: Any) -> str:
    return jax.jit(fn, **jit_kwargs).lower(*args).as_text()


def _generic(fn: Callable[..., Any], *args: Any) -> str:
    module = jax.jit(fn).lower(*args).compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)


def _close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Numerics against jax.jit


@pytest.mark.parametrize("mesh_index", [0, 1])
def test_replicated_default_matches_jit(meshes: tuple[Mesh, Mesh], mesh_index: int) -> None:
    mesh = meshes[mesh_index]
    program = MeshProgram.compile(ADD_TEXT, mesh, name="add")
    replicated = NamedSharding(mesh, P())
    assert program.in_shardings == (replicated, replicated)
    assert program.out_shardings == (replicated,)
    assert [a.shape for a in program.in_avals] == [(4, 8), (8,)]
    assert [a.shape for a in program.out_avals] == [(4, 8)]
    assert program.name == "add" and program.mesh == mesh

    x, b = _rng().standard_normal((4, 8), dtype=np.float32), np.arange(8, dtype=np.float32)
    (out,) = program(_put(x, replicated), _put(b, replicated))
    assert isinstance(out, jax.Array)
    assert out.sharding == replicated
    # Every device of the mesh (and only those) holds the full value.
    assert {s.device for s in out.addressable_shards} == set(mesh.devices.flat)
    for shard in out.addressable_shards:
        assert shard.data.shape == (4, 8)
        _close(shard.data, x + b)
    _close(out, jax.jit(lambda a, c: a + c)(x, b))


@pytest.mark.parametrize("mesh_index", [0, 1])
@pytest.mark.parametrize("form", ["pretty", "generic"])
def test_batch_sharded_mlp_matches_jit(meshes: tuple[Mesh, Mesh], mesh_index: int, form: str) -> None:
    mesh = meshes[mesh_index]
    (axis,) = mesh.axis_names
    inputs = _mlp_inputs()
    text = (_pretty if form == "pretty" else _generic)(_mlp, *inputs)
    replicated = NamedSharding(mesh, P())
    batch = NamedSharding(mesh, P(None, axis))  # x is [features, batch]
    rows = NamedSharding(mesh, P(None, axis))
    program = MeshProgram.compile(
        text, mesh, name=f"mlp_{form}",
        in_shardings=[replicated, replicated, replicated, batch],
        out_shardings=[NamedSharding(mesh, P(None, None)), replicated],
    )
    args = [_put(v, s) for v, s in zip(inputs, program.in_shardings)]
    assert args[3].sharding == rows
    assert args[3].addressable_shards[0].data.shape == (8, 4)  # really split
    out, total = program(*args)
    expected_out, expected_total = jax.jit(_mlp)(*inputs)
    _close(out, expected_out)
    _close(total, expected_total)
    assert out.sharding == program.out_shardings[0]
    assert total.sharding == replicated


def test_sharded_outputs_keep_their_sharding(meshes: tuple[Mesh, Mesh]) -> None:
    mesh = meshes[1]
    sharded = NamedSharding(mesh, P("y"))
    replicated = NamedSharding(mesh, P())
    program = MeshProgram.compile(
        ADD_TEXT, mesh, name="add_rows",
        in_shardings=[sharded, replicated], out_shardings=[sharded],
    )
    x, b = _rng(2).standard_normal((4, 8), dtype=np.float32), np.ones(8, np.float32)
    (out,) = program(_put(x, sharded), _put(b, replicated))
    assert out.sharding == sharded
    assert [s.data.shape for s in out.addressable_shards] == [(1, 8)] * 4
    _close(out, x + b)


def test_module_with_shardy_annotations_from_jax(meshes: tuple[Mesh, Mesh]) -> None:
    """A module lowered with its own `sdy.mesh` (other axis name) runs on our mesh."""
    inputs = _mlp_inputs()
    other = Mesh(np.array(jax.devices()[:4]), ("data",))
    shardings = (NamedSharding(other, P()),) * 3 + (NamedSharding(other, P(None, "data")),)
    text = _pretty(_mlp, *inputs, in_shardings=shardings)
    assert "sdy.mesh" in text and "sdy.sharding" in text
    mesh = meshes[1]
    replicated = NamedSharding(mesh, P())
    program = MeshProgram.compile(
        text, mesh, name="mlp_sdy",
        in_shardings=[replicated] * 3 + [NamedSharding(mesh, P(None, "y"))],
    )
    out, total = program(*[_put(v, s) for v, s in zip(inputs, program.in_shardings)])
    expected_out, expected_total = jax.jit(_mlp)(*inputs)
    _close(out, expected_out)
    _close(total, expected_total)


def test_entry_function_other_than_main(meshes: tuple[Mesh, Mesh]) -> None:
    text = """
    module {
      func.func @p0_stage1_fwd(%a: tensor<4xi32>) -> (tensor<4xi32>, tensor<i1>) {
        %0 = func.call @double(%a) : (tensor<4xi32>) -> tensor<4xi32>
        %c = stablehlo.constant dense<true> : tensor<i1>
        return %0, %c : tensor<4xi32>, tensor<i1>
      }
      func.func private @double(%a: tensor<4xi32>) -> tensor<4xi32> {
        %0 = stablehlo.add %a, %a : tensor<4xi32>
        return %0 : tensor<4xi32>
      }
    }
    """
    mesh = meshes[0]
    program = MeshProgram.compile(text, mesh, name="p0_stage1_fwd")
    assert [(a.shape, a.dtype) for a in program.out_avals] == [((4,), np.int32), ((), np.bool_)]
    doubled, flag = program(_put(np.arange(4, dtype=np.int32), NamedSharding(mesh, P())))
    np.testing.assert_array_equal(np.asarray(doubled), [0, 2, 4, 6])
    assert bool(flag)


def test_pipeline_of_two_meshes_matches_jit(meshes: tuple[Mesh, Mesh]) -> None:
    """Stage 0 on devices 0-3, transfer, stage 1 on devices 4-7: same numbers
    as the whole function under jax.jit."""
    m0, m1 = meshes
    inputs = _mlp_inputs()
    w1, b1, w2, x = inputs

    def stage0(w1: Any, b1: Any, x: Any) -> Any:
        return jnp.tanh(x @ w1 + b1)

    def stage1(w2: Any, h: Any) -> Any:
        return h @ w2, jnp.sum(h * h)

    h_shape = jax.ShapeDtypeStruct((8, 32), jnp.float32)
    p0 = MeshProgram.compile(_generic(stage0, w1, b1, x), m0, name="stage0",
                             in_shardings=[NamedSharding(m0, P())] * 2 + [NamedSharding(m0, P("x"))],
                             out_shardings=[NamedSharding(m0, P("x"))])
    p1 = MeshProgram.compile(_generic(stage1, w2, h_shape), m1, name="stage1",
                             in_shardings=[NamedSharding(m1, P()), NamedSharding(m1, P("y"))])
    (h,) = p0(*[_put(v, s) for v, s in zip((w1, b1, x), p0.in_shardings)])
    out, total = p1(_put(w2, p1.in_shardings[0]), transfer(h, p1.in_shardings[1]))
    expected_out, expected_total = jax.jit(_mlp)(*inputs)
    _close(out, expected_out)
    _close(total, expected_total)


# ---------------------------------------------------------------------------
# Asynchronous dispatch


def test_call_returns_before_the_result_is_ready() -> None:
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))

    def heavy(a: Any) -> Any:
        return jax.lax.fori_loop(0, 400, lambda i, v: jnp.tanh(v @ a), a)

    a = (np.eye(192, dtype=np.float32) * 0.5)
    program = MeshProgram.compile(_pretty(heavy, a), mesh, name="heavy")
    arg = _put(a, NamedSharding(mesh, P()))
    program(arg)[0].block_until_ready()  # warm up
    start = time.perf_counter()
    (out,) = program(arg)
    dispatched = time.perf_counter() - start
    ready_at_return = out.is_ready()
    out.block_until_ready()
    total = time.perf_counter() - start
    assert isinstance(out, jax.Array)
    assert not ready_at_return, f"call blocked: dispatch {dispatched:.4f}s, total {total:.4f}s"
    assert out.is_ready()
    _close(out, jax.jit(heavy)(a))


# ---------------------------------------------------------------------------
# No copies of inputs already in place


def test_inputs_in_place_are_not_copied(meshes: tuple[Mesh, Mesh], events: list[str]) -> None:
    mesh = meshes[0]
    sharded, replicated = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    program = MeshProgram.compile(
        ADD_TEXT, mesh, name="add_donate", in_shardings=[sharded, replicated],
        out_shardings=[sharded], donate_argnums=[0],
    )
    b = _put(np.ones(8, np.float32), replicated)
    for step in range(3):
        x = _put(np.full((4, 8), step, np.float32), sharded)
        before = _pointers(x)
        events.clear()
        (out,) = program(x, b)
        # The donated buffers became the output: they were passed as they were.
        assert _pointers(out) == before
        assert x.is_deleted()
        _close(out, np.full((4, 8), step + 1, np.float32))
        if step > 0:  # after the first call, JAX's C++ fast path: no argument handling at all
            assert "_array_shard_arg" not in events and "batched_copy_array" not in events, events
    b_pointers = _pointers(b)
    assert not b.is_deleted() and _pointers(b) == b_pointers


def test_equivalent_sharding_is_accepted_without_copy(meshes: tuple[Mesh, Mesh]) -> None:
    mesh = meshes[0]
    program = MeshProgram.compile(
        ADD_TEXT, mesh, name="add_equiv", in_shardings=[NamedSharding(mesh, P("x")), NamedSharding(mesh, P())],
        out_shardings=[NamedSharding(mesh, P("x"))], donate_argnums=[0],
    )
    x = _put(np.ones((4, 8), np.float32), NamedSharding(mesh, P("x", None)))
    b = _put(np.ones(8, np.float32), NamedSharding(Mesh(mesh.devices, ("x",)), P(None)))
    assert x.sharding != program.in_shardings[0]
    before = _pointers(x)
    (out,) = program(x, b)
    assert _pointers(out) == before
    _close(out, np.full((4, 8), 2, np.float32))


# ---------------------------------------------------------------------------
# Donation


def test_donation_deletes_and_aliases(meshes: tuple[Mesh, Mesh]) -> None:
    mesh = meshes[1]
    replicated = NamedSharding(mesh, P())
    program = MeshProgram.compile(ADD_TEXT, mesh, name="donate", donate_argnums=[0])
    assert program.donate_argnums == (0,)
    assert "input_output_alias" in program.compiled.as_text()
    x, b = _put(np.zeros((4, 8), np.float32), replicated), _put(np.ones(8, np.float32), replicated)
    before = _pointers(x)
    (out,) = program(x, b)
    assert x.is_deleted() and not b.is_deleted()
    assert _pointers(out) == before  # XLA reused the donated buffers on every device
    _close(out, np.ones((4, 8), np.float32))
    # Using the donated array again is a clear error, not a crash.
    with pytest.raises(ProgramInputError, match=r"program 'donate' argument 0: .*deleted"):
        program(x, b)


def test_unusable_donation_keeps_the_argument(meshes: tuple[Mesh, Mesh]) -> None:
    """JAX semantics: a donated buffer XLA cannot reuse (no output of its
    shape) is not consumed, and compiling warns."""
    mesh = meshes[0]
    with pytest.warns(UserWarning, match="donated buffers were not usable"):
        program = MeshProgram.compile(ADD_TEXT, mesh, name="donate_bias", donate_argnums=[1])
    replicated = NamedSharding(mesh, P())
    b = _put(np.ones(8, np.float32), replicated)
    program(_put(np.zeros((4, 8), np.float32), replicated), b)[0].block_until_ready()
    assert not b.is_deleted()


# ---------------------------------------------------------------------------
# Input errors


@pytest.fixture
def add_on_m0(meshes: tuple[Mesh, Mesh]) -> tuple[MeshProgram, jax.Array, jax.Array]:
    mesh = meshes[0]
    program = MeshProgram.compile(ADD_TEXT, mesh, name="add")
    replicated = NamedSharding(mesh, P())
    return program, _put(np.ones((4, 8), np.float32), replicated), _put(np.ones(8, np.float32), replicated)


def test_input_on_other_mesh_is_rejected(meshes: tuple[Mesh, Mesh], add_on_m0: Any, host_reads: list[int]) -> None:
    program, x, b = add_on_m0
    elsewhere = _put(np.ones((4, 8), np.float32), NamedSharding(meshes[1], P()))
    with pytest.raises(ProgramInputError) as info:
        program(elsewhere, b)
    message = str(info.value)
    assert isinstance(info.value, mpmd.MpmdError)
    assert info.value.program == "add" and info.value.index == 0
    assert "program 'add' argument 0" in message
    assert "float32[4, 8]" in message and "devices [0, 1, 2, 3]" in message  # expected
    assert "devices [4, 5, 6, 7]" in message  # given
    assert "transfer" in message
    assert not host_reads


@pytest.mark.parametrize(
    "bad, given",
    [
        (lambda: jnp.ones((4, 8), jnp.float32), "uncommitted"),  # on the default device
        (lambda: np.ones((4, 8), np.float32), "not a jax.Array"),
        (lambda: 1.0, "float"),
    ],
    ids=["uncommitted", "numpy", "python_scalar"],
)
def test_input_not_on_the_mesh_is_rejected(add_on_m0: Any, bad: Callable[[], Any], given: str) -> None:
    program, _, b = add_on_m0
    with pytest.raises(ProgramInputError, match=rf"argument 0: expects .*{given}"):
        program(bad(), b)


def test_input_with_other_sharding_on_the_mesh_is_rejected(meshes: tuple[Mesh, Mesh], add_on_m0: Any) -> None:
    program, _, b = add_on_m0
    rows = _put(np.ones((4, 8), np.float32), NamedSharding(meshes[0], P("x")))
    with pytest.raises(ProgramInputError, match=r"argument 0: expects .*P\(\).*P\('x',\)"):
        program(rows, b)


@pytest.mark.parametrize(
    "value, text",
    [(np.ones((8, 4), np.float32), "float32\\[8, 4\\]"), (np.ones((4, 8), np.int32), "int32\\[4, 8\\]")],
    ids=["shape", "dtype"],
)
def test_wrong_shape_or_dtype_is_rejected(meshes: tuple[Mesh, Mesh], add_on_m0: Any, value: Any, text: str) -> None:
    program, _, b = add_on_m0
    with pytest.raises(ProgramInputError, match=rf"argument 0: expects jax.Array float32\[4, 8\].*got jax.Array {text}"):
        program(_put(value, NamedSharding(meshes[0], P())), b)


def test_wrong_argument_count_is_rejected(add_on_m0: Any) -> None:
    program, x, _ = add_on_m0
    with pytest.raises(ProgramInputError, match="takes 2 arguments, 1 given"):
        program(x)


def test_good_call_after_errors_still_works(add_on_m0: Any) -> None:
    program, x, b = add_on_m0
    with pytest.raises(ProgramInputError):
        program(b, x)
    _close(program(x, b)[0], np.full((4, 8), 2, np.float32))


# ---------------------------------------------------------------------------
# Compile errors


@pytest.mark.parametrize(
    "text, message",
    [
        ("module { garbage }", "invalid MLIR module"),
        (
            "module { func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {"
            " %0 = stablehlo.add %a, %a : tensor<4xf32> return %0 : tensor<8xf32> } }",
            "expects different type",
        ),
        (
            "module { func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {"
            " %0 = stablehlo.custom_call @no_such_target(%a) : (tensor<4xf32>) -> tensor<4xf32>"
            " return %0 : tensor<4xf32> } }",
            "no_such_target",  # XLA's message
        ),
        ("module { func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> } }",
         "neither a function named @main"),
        ("module { func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> { return %a : tensor<?xf32> } }",
         "dynamic shape"),
    ],
    ids=["syntax", "verifier", "xla", "no_entry", "dynamic"],
)
def test_invalid_program_raises_compile_error(meshes: tuple[Mesh, Mesh], text: str, message: str) -> None:
    with pytest.raises(ProgramCompileError, match=message) as info:
        MeshProgram.compile(text, meshes[1], name="broken_prog")
    assert isinstance(info.value, mpmd.MpmdError)
    assert "program 'broken_prog'" in str(info.value)
    assert "mesh <y=4> on devices [4, 5, 6, 7]" in str(info.value)


def test_bad_shardings_raise_compile_error(meshes: tuple[Mesh, Mesh]) -> None:
    m0, m1 = meshes
    with pytest.raises(ProgramCompileError, match="1 argument shardings given for 2 arguments"):
        MeshProgram.compile(ADD_TEXT, m0, name="s", in_shardings=[NamedSharding(m0, P())])
    with pytest.raises(ProgramCompileError, match="argument sharding 1 is on mesh <y=4>"):
        MeshProgram.compile(ADD_TEXT, m0, name="s", in_shardings=[NamedSharding(m0, P()), NamedSharding(m1, P())])
    with pytest.raises(ProgramCompileError, match="rank"):
        MeshProgram.compile(ADD_TEXT, m0, name="s", in_shardings=[NamedSharding(m0, P()), NamedSharding(m0, P(None, "x"))])
    three = Mesh(np.array(jax.devices()[:3]), ("x",))
    with pytest.raises(ProgramCompileError, match="mesh <x=3>.*dimension size is 4"):
        MeshProgram.compile(ADD_TEXT, three, name="s", in_shardings=[NamedSharding(three, P("x")), NamedSharding(three, P())])
    with pytest.raises(ProgramCompileError, match="donate_argnums has 2"):
        MeshProgram.compile(ADD_TEXT, m0, name="s", donate_argnums=[2])


# ---------------------------------------------------------------------------
# Compile cache


def test_compile_cache_reuses_executables(meshes: tuple[Mesh, Mesh], events: list[str]) -> None:
    m0, m1 = meshes
    text = ADD_TEXT.replace("stablehlo.add", "stablehlo.subtract")  # unique to this test
    events.clear()
    first = MeshProgram.compile(text, m0, name="sub")
    assert events.count("pxla_cached_compilation") == 1
    size = program_cache_size()
    again = MeshProgram.compile(text, m0, name="sub_again")
    assert again.compiled is first.compiled and again.name == "sub_again"
    assert events.count("pxla_cached_compilation") == 1 and program_cache_size() == size

    other_mesh = MeshProgram.compile(text, m1, name="sub")
    donating = MeshProgram.compile(text, m0, name="sub", donate_argnums=[0])
    sharded = MeshProgram.compile(text, m0, name="sub", in_shardings=[NamedSharding(m0, P("x")), NamedSharding(m0, P())])
    executables = {id(p.compiled) for p in (first, other_mesh, donating, sharded)}
    assert len(executables) == 4
    assert program_cache_size() == size + 3

    clear_program_cache()
    assert program_cache_size() == 0
    assert MeshProgram.compile(text, m0, name="sub").compiled is not first.compiled


# ---------------------------------------------------------------------------
# transfer


def _transfer_cases() -> Iterator[tuple[str, str]]:
    for src in ("replicated", "rows", "cols"):
        for dst in ("replicated", "rows", "cols", "2x2", "two_devices", "same_mesh_rows", "same_devices_reversed"):
            yield src, dst


@pytest.mark.parametrize("src, dst", list(_transfer_cases()))
def test_transfer_is_device_to_device(meshes: tuple[Mesh, Mesh], host_reads: list[int], src: str, dst: str) -> None:
    m0, m1 = meshes
    devices = jax.devices()
    sources = {
        "replicated": NamedSharding(m0, P()),
        "rows": NamedSharding(m0, P("x")),
        "cols": NamedSharding(m0, P(None, "x")),
    }
    targets = {
        "replicated": NamedSharding(m1, P()),
        "rows": NamedSharding(m1, P("y")),
        "cols": NamedSharding(m1, P(None, "y")),
        "2x2": NamedSharding(Mesh(np.array(devices[4:8]).reshape(2, 2), ("a", "b")), P("b", "a")),
        "two_devices": NamedSharding(Mesh(np.array(devices[6:8]), ("z",)), P("z")),
        "same_mesh_rows": NamedSharding(m0, P("x")),
        "same_devices_reversed": NamedSharding(Mesh(np.array(devices[3::-1]), ("x",)), P(None, "x")),
    }
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    x = _put(data, sources[src])
    host_reads.clear()
    y = transfer(x, targets[dst])
    assert y.sharding == targets[dst]
    assert not host_reads, "transfer read the array back to the host"
    assert not x.is_deleted()
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), data[shard.index])


@pytest.mark.parametrize("src_axes, src_spec, dst_axes, dst_spec, fraction", [
    # A 2x2 mesh, batch-sharded, to a 2-device mesh without that axis: the
    # two halves cross and the target gathers them.
    ((2, 2), P("data"), (2,), P(), 1 / 2),
    # The other way round: the target's layout, coarsened to the 2 source
    # devices, crosses; the target slices.
    ((2,), P("model"), (2, 2), P("data", "model"), 1 / 2),
    # Each target device receives exactly its shard.
    ((2, 2), P("data", "model"), (2,), P(None, "model"), 1 / 2),
    # 2 devices to 4 with the target split 4 ways along one dimension.
    ((2,), P("model"), (4,), P("model"), 1 / 2),
    # Pieces as big as the 2 target devices can take one each; the target
    # gathers them, no device of the source ever holds the whole array.
    ((2, 2), P(("data", "model")), (2,), P(), 1 / 2),
])
def test_transfer_between_mesh_sizes_moves_pieces(
        monkeypatch: pytest.MonkeyPatch, host_reads: list[int],
        src_axes: tuple[int, ...], src_spec: P, dst_axes: tuple[int, ...],
        dst_spec: P, fraction: float) -> None:
    """Meshes with different numbers of devices: the array crosses as pieces
    of one intermediate layout, copied device to device, never through the
    host and never larger than the layouts require."""
    devices = jax.devices()
    names = {1: ("model",), 2: ("data", "model")}
    source = Mesh(np.array(devices[:int(np.prod(src_axes))]).reshape(src_axes),
                  names[len(src_axes)])
    target = Mesh(np.array(devices[4:4 + int(np.prod(dst_axes))]).reshape(dst_axes),
                  names[len(dst_axes)])
    data = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    x = _put(data, NamedSharding(source, src_spec))
    copied: list[int] = []
    device_put = jax.device_put

    def spy(value: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, jax.Array) and len(value.sharding.device_set) == 1:
            copied.append(value.size)
        return device_put(value, *args, **kwargs)

    monkeypatch.setattr(jax, "device_put", spy)
    host_reads.clear()
    y = transfer(x, NamedSharding(target, dst_spec))
    assert not host_reads
    assert len(copied) == target.size
    assert set(copied) == {int(data.size * fraction)}
    assert y.sharding == NamedSharding(target, dst_spec)
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), data[shard.index])


def test_transfer_same_sharding_is_identity(meshes: tuple[Mesh, Mesh]) -> None:
    x = _put(np.ones((4, 8), np.float32), NamedSharding(meshes[1], P("y")))
    assert transfer(x, NamedSharding(meshes[1], P("y"))) is x


def test_transfer_same_layout_copies_shard_by_shard(meshes: tuple[Mesh, Mesh], events: list[str]) -> None:
    m0, m1 = meshes
    x = _put(np.ones((8, 8), np.float32), NamedSharding(m0, P("x")))
    events.clear()
    y = transfer(x, NamedSharding(m1, P("y")))
    assert "batched_copy_array" in events and "pxla_cached_compilation" not in events
    assert {s.device for s in y.addressable_shards} == set(m1.devices.flat)


def test_transfer_errors(meshes: tuple[Mesh, Mesh]) -> None:
    m0, m1 = meshes
    x = _put(np.ones((4, 8), np.float32), NamedSharding(m0, P()))
    with pytest.raises(TransferError, match="NamedSharding"):
        transfer(x, jax.sharding.SingleDeviceSharding(jax.devices()[4]))
    with pytest.raises(TransferError, match="jax.Array"):
        transfer(np.ones(3), NamedSharding(m1, P()))
    with pytest.raises(TransferError, match=r"cannot lay out float32\[4, 8\]"):
        transfer(x, NamedSharding(Mesh(np.array(jax.devices()[5:8]), ("z",)), P("z")))
    x.delete()
    with pytest.raises(TransferError, match="deleted"):
        transfer(x, NamedSharding(m1, P()))
    assert issubclass(TransferError, mpmd.MpmdError)


def test_no_warnings_on_plain_use(meshes: tuple[Mesh, Mesh]) -> None:
    m0, m1 = meshes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        program = MeshProgram.compile(ADD_TEXT, m1, name="quiet", donate_argnums=[0])
        x = transfer(_put(np.ones((4, 8), np.float32), NamedSharding(m0, P("x"))), NamedSharding(m1, P()))
        (out,) = program(x, _put(np.ones(8, np.float32), NamedSharding(m1, P())))
        out.block_until_ready()
