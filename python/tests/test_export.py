"""mpmd.export: an MPMD program serialized with its plan and one
`jax.export` payload per program, read back and run without the compiler
(in another process that cannot import it, in one process and in two),
equal to `jax.jit`; and every way a payload or a call can be wrong."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import Mesh

import mpmd
import mpmd.export
from mpmd.export import ExportError, ExportInputError
from meshes import assert_trees_close
from test_training_loop import (data, init_params, make_step, meshes,
                                stage_assignment)

HERE = os.path.dirname(os.path.abspath(__file__))
LOADER = os.path.join(HERE, "export_loader.py")

optimizer = optax.adam(1e-2)
step = make_step(optimizer)


def adam_config():
    return mpmd.make_config(
        meshes(), stage_assignment(),
        partitioning_options={"pipeline_schedule": "1f1b",
                              "infer_transfers": True})


@pytest.fixture(scope="module")
def adam_export():
    """The pipelined Adam step (4 meshes x 2 devices, 8 microbatches,
    1F1B) exported, its arguments, and jax.jit's results."""
    params = init_params()
    xs, ys = data()
    state = optimizer.init(params)
    exported = mpmd.export.export(mpmd.jit(step, adam_config()))(
        params, state, xs, ys)
    expected = jax.jit(step)(params, state, xs, ys)
    return exported, (params, state, xs, ys), expected


def write_io(path, args, expected) -> None:
    flat = {f"in{i}": np.asarray(x)
            for i, x in enumerate(jax.tree.leaves((tuple(args), {})))}
    flat.update({f"out{i}": np.asarray(x)
                 for i, x in enumerate(jax.tree.leaves(expected))})
    np.savez(path, **flat)


def loader_files(adam_export, tmp_path) -> list[str]:
    """The export's bytes and its arguments and results on disk: the
    loader's command-line arguments."""
    exported, args, expected = adam_export
    data_path = tmp_path / "adam.mpmd"
    data_path.write_bytes(exported.serialize())
    write_io(tmp_path / "io.npz", args, expected)
    return [LOADER, str(data_path), str(tmp_path / "io.npz")]


def test_adam_step_runs_in_a_process_without_the_compiler(adam_export,
                                                          tmp_path):
    expected = adam_export[2]
    result = subprocess.run(
        [sys.executable, *loader_files(adam_export, tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    assert "export ran without the compiler" in result.stdout
    # Every leaf of parameters, both Adam moments, the count and the loss.
    shards = int(result.stdout.split(": ")[1].split()[0])
    assert shards >= len(jax.tree.leaves(expected))


def test_round_trip_equals_the_original_and_jax_jit(adam_export):
    exported, args, expected = adam_export
    loaded = mpmd.export.deserialize(exported.serialize())
    assert loaded.fun_name == "step"
    assert loaded.in_tree == jax.tree_util.tree_structure((args, {}))
    assert loaded.meshes == {f"m{i}": (("x", 2),) for i in range(4)}
    assert set(loaded.platforms.values()) == {("cpu",)}
    assert loaded.made_by["jax"] == jax.__version__
    assert len(loaded.plan.programs) == len(exported.plan.programs) > 4
    results = loaded.call(*args, topology=meshes())
    assert_trees_close(results, expected)
    original = mpmd.jit(step, adam_config())(*args)
    assert_trees_close(results, original, rtol=1e-6, atol=1e-7)
    # Layer i's parameters and moments stay on m{i}, as mpmd.jit puts them.
    new_params = results[0]
    for i in range(4):
        assert set(new_params[f"layer{i}"]["w"].sharding.device_set) == set(
            meshes()[f"m{i}"].devices.flat)
    # The training loop: called on its own results, compiled once.
    again = loaded.call(*results[:2], *args[2:], topology=meshes())
    reference = jax.jit(step)(*expected[:2], *args[2:])
    assert_trees_close(again, reference)
    assert len(loaded._compiled) == 1


def test_default_topology_and_other_devices(adam_export):
    exported, args, expected = adam_export
    # The default: meshes of the export's shapes over jax.devices() in order.
    assert_trees_close(exported.call(*args), expected)
    # The same shapes on other devices (reversed): runs the same.
    devices = jax.devices()[:8][::-1]
    other = exported.default_topology(devices)
    assert [d.id for d in other["m0"].devices.flat] == [7, 6]
    assert_trees_close(exported.call(*args, topology=other), expected)


class Point(NamedTuple):
    x: jax.Array
    scale: jax.Array


def test_keys_kwargs_static_arguments_and_namedtuples():
    topology = {"a": Mesh(np.array(jax.devices()[:2]), ("x",)),
                "b": Mesh(np.array(jax.devices()[2:4]), ("x",))}

    def f(point, key, power, *, bias):
        h = mpmd.named_computation(
            lambda p, k: p.x * p.scale + jax.random.normal(k, p.x.shape),
            name="first")(point, key)
        out = mpmd.named_computation(lambda h: h ** power + bias,
                                     name="second")(h)
        return Point(out, point.scale), jax.random.split(key)[0]

    config = mpmd.make_config(topology, {"first": "a", "second": "b"})
    point = Point(jnp.arange(8.0).reshape(4, 2), jnp.float32(2.0))
    key = jax.random.key(3)
    exported = mpmd.export.export(mpmd.jit(f, config, static_argnums=2))(
        point, key, 2, bias=jnp.ones((4, 2)))
    loaded = mpmd.export.deserialize(exported.serialize())
    assert [a.shape for a in loaded.in_avals] == [(4, 2), (), (), (4, 2)]
    assert jax.dtypes.issubdtype(loaded.in_avals[2].dtype,
                                 jax.dtypes.prng_key)
    # The static argument is fixed at export: the call takes the others.
    result, new_key = loaded.call(point, key, bias=jnp.ones((4, 2)),
                                  topology=topology)
    expected, expected_key = jax.jit(f, static_argnums=2)(
        point, key, 2, bias=jnp.ones((4, 2)))
    assert isinstance(result, Point)
    assert_trees_close(result, expected)
    assert jax.dtypes.issubdtype(new_key.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(jax.random.key_data(new_key),
                                  jax.random.key_data(expected_key))
    # Arguments of another structure or shape: the door's error, by path.
    with pytest.raises(ExportInputError, match="bias"):
        loaded.call(point, key, topology=topology)
    with pytest.raises(ExportInputError, match=r"has shape \(3, 2\)"):
        loaded.call(Point(jnp.zeros((3, 2)), jnp.float32(1)), key,
                    bias=jnp.ones((4, 2)), topology=topology)


def test_donated_arguments_are_donated_through_an_export():
    topology = {"a": Mesh(np.array(jax.devices()[:2]), ("x",)),
                "b": Mesh(np.array(jax.devices()[2:4]), ("x",))}

    def f(w, x):
        w, y = mpmd.named_computation(
            lambda w, x: (w + 1.0, jnp.sin(x) * w.sum()), name="s1")(w, x)
        return w, mpmd.named_computation(lambda y: y * 3, name="s2")(y)

    config = mpmd.make_config(topology, {"s1": "a", "s2": "b"})
    w, x = jnp.ones((4,)), jnp.arange(4.0)
    expected = jax.jit(f)(w, x)
    exported = mpmd.export.deserialize(mpmd.export.export(
        mpmd.jit(f, config, donate_argnums=0))(w, x).serialize())
    sharding = exported.compile(topology).executable.input_shardings[0]
    placed = jax.device_put(np.ones((4,), np.float32), sharding)
    result = exported.call(placed, x, topology=topology)
    assert placed.is_deleted()  # its buffer became the new w, as in mpmd.jit
    assert_trees_close(result, expected)


def test_exported_for_several_platforms_runs_on_cpu():
    topology = {"a": Mesh(np.array(jax.devices()[:2]), ("x",)),
                "b": Mesh(np.array(jax.devices()[2:4]), ("x",))}

    def f(x):
        y = mpmd.named_computation(jnp.sin, name="s1")(x)
        return mpmd.named_computation(lambda y: y @ y.T, name="s2")(y)

    config = mpmd.make_config(topology, {"s1": "a", "s2": "b"})
    x = jnp.arange(16.0).reshape(4, 4)
    exported = mpmd.export.export(mpmd.jit(f, config),
                                  platforms=("cuda", "cpu"))(x)
    assert exported.platforms == {"a": ("cuda", "cpu"), "b": ("cuda", "cpu")}
    np.testing.assert_allclose(exported.call(x, topology=topology),
                               jax.jit(f)(x), rtol=1e-5)
    # Per mesh: "a" for a GPU only.
    gpu_only = mpmd.export.export(mpmd.jit(f, config),
                                  platforms={"a": "cuda"})(x)
    assert gpu_only.platforms == {"a": ("cuda",), "b": ("cpu",)}
    with pytest.raises(ExportError, match=r"mesh 'a' of the topology is on "
                       r"cpu devices, and its programs were exported for "
                       r"cuda"):
        gpu_only.call(x, topology=topology)
    with pytest.raises(ExportError, match="names mesh 'c'"):
        mpmd.export.export(mpmd.jit(f, config), platforms={"c": "cpu"})(x)
    with pytest.raises(ExportError, match="platforms must be"):
        mpmd.export.export(mpmd.jit(f, config), platforms=3)


def test_a_stack_split_over_meshes_round_trips():
    # The scanned blocks split over 4 meshes: the pieces' boundary (one
    # array over the union of the meshes) comes back from the export.
    from test_stacks import (adamw_step, mlp_data, mlp_loss, mlp_params,
                             topology_of)

    topology = topology_of(4)
    adamw = optax.adamw(1e-2)
    step_fn = adamw_step(mlp_loss, adamw)
    params = mlp_params(jax.random.PRNGKey(0))
    state = adamw.init(params)
    config = mpmd.make_config(
        topology, {"embed": "m0", "blocks": ["m0", "m1", "m2", "m3"],
                   "head": "m3"},
        partitioning_options={"pipeline_schedule": "1f1b"})
    exported = mpmd.export.export(mpmd.jit(step_fn, config))(
        params, state, *mlp_data())
    loaded = mpmd.export.deserialize(exported.serialize())
    assert loaded.io.stacked
    results = loaded.call(params, state, *mlp_data(), topology=topology)
    assert_trees_close(results, jax.jit(step_fn)(params, state, *mlp_data()),
                       rtol=2e-5)
    union = mpmd.stack_sharding(topology, ["m0", "m1", "m2", "m3"])
    assert results[0]["blocks"]["w"].sharding == union


def test_a_while_loop_across_meshes_is_not_exported_yet():
    from test_while_loops import config, decode, params_and_prompts

    params, prompts = params_and_prompts()
    with pytest.raises(ExportError, match="not supported yet: exporting "
                       "LoopLowered .*'decode'.*while_loop"):
        mpmd.export.export(mpmd.jit(decode, config()))(params, prompts[0])


# --- what is refused -----------------------------------------------------------

@pytest.fixture(scope="module")
def small_export():
    topology = {"a": Mesh(np.array(jax.devices()[:2]), ("x",)),
                "b": Mesh(np.array(jax.devices()[2:4]), ("x",))}

    def f(x):
        y = mpmd.named_computation(jnp.cos, name="s1")(x)
        return mpmd.named_computation(lambda y: y * 3, name="s2")(y)

    config = mpmd.make_config(topology, {"s1": "a", "s2": "b"})
    return mpmd.export.export(mpmd.jit(f, config))(jnp.ones((4,))), topology


def header_of(data: bytes) -> tuple[dict, int]:
    """The header of a payload (magic, length, SHA-256, header, parts) and
    where it ends."""
    at = len(mpmd.export.MAGIC)
    (size,) = struct.unpack("<Q", data[at:at + 8])
    return json.loads(data[at + 40:at + 40 + size]), at + 40 + size


def with_header(data: bytes, header: dict) -> bytes:
    """The payload with another header (and that header's digest)."""
    _, end = header_of(data)
    text = json.dumps(header).encode()
    return (mpmd.export.MAGIC + struct.pack("<Q", len(text))
            + hashlib.sha256(text).digest() + text + data[end:])


def test_bad_payloads_name_what_is_wrong(small_export):
    exported, _ = small_export
    data = exported.serialize()
    with pytest.raises(ExportError, match="not an mpmd export"):
        mpmd.export.deserialize(b"PK\x03\x04" + data)
    with pytest.raises(ExportError, match="takes the bytes"):
        mpmd.export.deserialize("text")
    with pytest.raises(ExportError, match="too short"):
        mpmd.export.deserialize(data[:len(mpmd.export.MAGIC) + 3])
    with pytest.raises(ExportError, match="truncated.*header is"):
        mpmd.export.deserialize(data[:len(mpmd.export.MAGIC) + 60])
    with pytest.raises(ExportError, match=r"truncated.*part 'program:"):
        mpmd.export.deserialize(data[:-10])
    with pytest.raises(ExportError, match="bytes follow its last part"):
        mpmd.export.deserialize(data + b"\0")
    flipped = bytearray(data)
    flipped[-100] ^= 0xFF
    with pytest.raises(ExportError, match=r"corrupted.*SHA-256"):
        mpmd.export.deserialize(bytes(flipped))
    header, _ = header_of(data)
    with pytest.raises(ExportError, match=r"format version 99 \(made by mpmd "
                       r"0\.1\.0\).*reads format version 1 only"):
        mpmd.export.deserialize(with_header(data, dict(header, format=99)))
    plan = dict(header["plan"], version=7)
    with pytest.raises(ExportError, match="holds this execution plan is of "
                       "version 7"):
        mpmd.export.deserialize(with_header(data, dict(header, plan=plan)))
    broken = bytearray(data)
    broken[len(mpmd.export.MAGIC) + 40] = ord("X")
    with pytest.raises(ExportError, match="header does not match its "
                       "SHA-256"):
        mpmd.export.deserialize(bytes(broken))
    _, end = header_of(data)
    text = b"{not json"
    with pytest.raises(ExportError, match="header is not JSON"):
        mpmd.export.deserialize(
            mpmd.export.MAGIC + struct.pack("<Q", len(text))
            + hashlib.sha256(text).digest() + text + data[end:])
    # A plan that does not hold together: a step calling no program.
    header, _ = header_of(data)
    plan = json.loads(json.dumps(header["plan"]))
    call = next(step for step in plan["steps"] if step["op"] == "call")
    call["program"] = "nowhere"
    with pytest.raises(ExportError, match="header's 'plan' is malformed.*"
                       "calls program 'nowhere', which the plan does not "
                       "have"):
        mpmd.export.deserialize(with_header(data, dict(header, plan=plan)))


def test_topologies_that_do_not_fit(small_export):
    exported, topology = small_export
    devices = jax.devices()
    with pytest.raises(ExportError, match=r"mesh 'b' of the topology has "
                       r"axes <\[\"x\"=4\]>, but the export declares 'b' as "
                       r"<\[\"x\"=2\]>"):
        exported.call(jnp.ones((4,)), topology={
            "a": topology["a"], "b": Mesh(np.array(devices[4:8]), ("x",))})
    with pytest.raises(ExportError, match=r"the topology has no mesh 'b': "
                       r"the export's main runs on meshes 'a', 'b'"):
        exported.call(jnp.ones((4,)), topology={"a": topology["a"]})
    with pytest.raises(ExportError, match="share device 0"):
        exported.call(jnp.ones((4,)), topology={"a": topology["a"],
                                                "b": topology["a"]})
    with pytest.raises(ExportError, match="takes the topology as a mapping"):
        exported.call(jnp.ones((4,)), topology=[topology["a"]])
    with pytest.raises(ExportError, match=r"need 4 devices, and 3 are given"):
        exported.default_topology(devices[:3])


def test_what_cannot_be_exported():
    with pytest.raises(ExportError, match="takes a function made by "
                       "mpmd.jit"):
        mpmd.export.export(jax.jit(jnp.sin))

    class Box:
        def __init__(self, value):
            self.value = value

    jax.tree_util.register_pytree_node(
        Box, lambda b: ((b.value,), None), lambda _, c: Box(*c))
    topology = {"a": Mesh(np.array(jax.devices()[:2]), ("x",))}
    config = mpmd.make_config(topology, {"s": "a"})

    def f(box):
        return mpmd.named_computation(lambda v: v + 1, name="s")(box.value)

    with pytest.raises(ExportError, match=r"pytree cannot be serialized.*"
                       r"unregistered type.*Box"):
        mpmd.export.export(mpmd.jit(f, config))(Box(jnp.ones(2)))
    abstract = {"a": jax.sharding.AbstractMesh((2,), ("x",))}
    with pytest.raises(ExportError, match="needs meshes with devices"):
        mpmd.export.export(mpmd.jit(
            lambda x: mpmd.named_computation(jnp.sin, name="s")(x),
            mpmd.make_config(abstract, {"s": "a"})))(
            jax.ShapeDtypeStruct((2,), jnp.float32))


@pytest.mark.multiprocess
def test_export_runs_in_two_processes_without_the_compiler(adam_export,
                                                           tmp_path):
    # m0, m1 on process 0 and m2, m3 on process 1: the export made here
    # (one process, 8 devices) runs as a job of two, each process on its
    # meshes, transfers crossing between them.
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the launcher sets the device count
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "2",
         "--devices-per-process", "4", "--grace", "60", "--timeout", "250",
         *loader_files(adam_export, tmp_path), "--distributed"],
        env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in result.stdout.splitlines()
             if "export ran without the compiler" in line]
    assert result.returncode == 0 and len(lines) == 2, (
        result.stdout[-4000:] + result.stderr[-4000:])


# --- payloads mutated at random --------------------------------------------------

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def mutations(draw, size: int, header_end: int):
    """A truncation, a run of flipped bytes, inserted bytes, or a JSON
    edit of the header (a key removed, a value of another type)."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "header"]))
    if kind == "truncate":
        return kind, draw(st.integers(0, size - 1))
    if kind == "flip":
        return kind, (draw(st.integers(0, size - 1)),
                      draw(st.integers(1, 8)), draw(st.integers(1, 255)))
    if kind == "insert":
        return kind, (draw(st.integers(0, size)),
                      draw(st.binary(min_size=1, max_size=16)))
    return kind, (draw(st.sampled_from(
        ["format", "made_by", "function", "plan", "io", "argument_paths",
         "namedtuples", "in_avals", "parts", "program_parts"])),
        draw(st.sampled_from([None, 3, "x", [], {}, [1, "a"], {"a": 1}])),
        draw(st.booleans()))


def mutate(data: bytes, mutation) -> bytes:
    kind, args = mutation
    if kind == "truncate":
        return data[:args]
    if kind == "flip":
        at, count, mask = args
        mutated = bytearray(data)
        for i in range(at, min(at + count, len(data))):
            mutated[i] ^= mask
        return bytes(mutated)
    if kind == "insert":
        at, extra = args
        return data[:at] + extra + data[at:]
    key, value, remove = args
    header, _ = header_of(data)
    header = dict(header)
    if remove:
        header.pop(key, None)
    else:
        header[key] = value
    return with_header(data, header)


def test_mutated_payloads_raise_export_errors(small_export):
    # Whatever is done to the bytes: an ExportError naming what is wrong,
    # or an export that still runs (a mutation of nothing that is read) or
    # whose call raises an mpmd error (a shape or an axis name changed in
    # the header: the door's own checks); never another exception.
    exported, topology = small_export
    data = exported.serialize()
    _, header_end = header_of(data)
    expected = np.asarray(exported.call(jnp.ones((4,)), topology=topology))

    @seed(32)
    @settings(max_examples=int(os.environ.get("MPMD_EXPORT_FUZZ_EXAMPLES",
                                              "150")),
              deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(mutations(len(data), header_end))
    def check(mutation):
        mutated = mutate(data, mutation)
        try:
            loaded = mpmd.export.deserialize(mutated)
        except ExportError:
            return
        try:
            result = loaded.call(jnp.ones((4,)), topology=topology)
        except mpmd.MpmdError:
            return
        np.testing.assert_allclose(np.asarray(result), expected)

    check()
