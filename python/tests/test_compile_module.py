"""`mpmd.runtime.compile_module`: exported MPMD modules run on our runtime.

The modules under data/shardy/ were partitioned by the real Shardy:MPMD
(tools/make_shardy_modules.py, run in Shardy's environment; see the
README there) with GPipe, 1F1B and ZeroBubbleH1 with split backward
fragments; each runs here and equals `jax.jit`'s results stored beside it.
A module printed by our own `as_text("mpmd")` runs too. Bad input is an
`mpmd` error naming the mesh, argument or op.

Run as a script (`python -m mpmd.launch -n 2 --devices-per-process 4
test_compile_module.py`), it is one process of a job that runs the 1F1B
module over 4 meshes, two per process (test_two_processes_run_a_shardy_module).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
from mpmd.runtime import (CompiledModule, ModuleError, ModuleInputError,
                          compile_module)

DATA = pathlib.Path(__file__).resolve().parent / "data" / "shardy"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
CASES = {case["name"]: case for case in MANIFEST["cases"]}


def topology_of(case: dict) -> dict[str, Mesh]:
    """The meshes the case was partitioned for, on this process's (or the
    job's) devices in the same order."""
    devices = np.array(jax.devices(), dtype=object)
    return {name: Mesh(devices[mesh["devices"]].reshape(mesh["shape"]),
                       tuple(mesh["axes"]))
            for name, mesh in case["topology"].items()}


def load(name: str) -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    case = CASES[name]
    data = np.load(DATA / f"{name}.npz")
    return ((DATA / f"{name}.mlir").read_text(),
            [data[f"arg{i}"] for i in range(case["num_args"])],
            [data[f"out{i}"] for i in range(case["num_results"])])


def assert_equal(results, expected) -> None:
    assert len(results) == len(expected)
    for index, (got, want) in enumerate(zip(results, expected)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5,
                                   atol=1e-6, err_msg=f"result {index}")


_COMPILED: dict[str, CompiledModule] = {}


def compiled(name: str) -> CompiledModule:
    """Each stored module compiled once for the tests that only call it."""
    if name not in _COMPILED:
        _COMPILED[name] = compile_module(load(name)[0],
                                         topology_of(CASES[name]))
    return _COMPILED[name]


# --- Shardy's modules -------------------------------------------------------

def test_the_data_says_where_it_comes_from():
    assert MANIFEST["shardy_commit"] == \
        "9d5349dab7058c7718ef7420ad4e19918c6d1cbf"
    assert {(c["schedule"], c["mpmd_split_bwd_fragments"])
            for c in CASES.values()} == {("GPipe", False), ("1F1B", False),
                                         ("ZeroBubbleH1", True)}
    assert {len(c["topology"]) for c in CASES.values()} == {2, 3, 4}
    readme = (DATA / "README.md").read_text()
    assert MANIFEST["shardy_commit"] in readme
    assert "tools/make_shardy_modules.py" in readme


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_shardy_module_runs_and_equals_jax_jit(name):
    case = CASES[name]
    text, arguments, expected = load(name)
    run = compiled(name)
    results = run(*arguments)  # host data, placed by the call
    assert_equal(results, expected)
    # Each result is where main returns it, in its layout.
    for result, sharding in zip(results, run.output_shardings):
        assert result.sharding == sharding
    # Shardy's order runs as Shardy wrote it: per mesh, a forward and a
    # backward per microbatch (two backward parts where they were split).
    order = run.plan.mesh_order()
    assert set(order) == set(case["topology"])
    for mesh, labels in order.items():
        forwards = [label for label in labels if "(1)" not in label]
        assert len(forwards) == case["microbatches"], (mesh, labels)
        assert len(labels) >= 2 * case["microbatches"]
    if case["mpmd_split_bwd_fragments"]:
        assert any(len(labels) > 2 * case["microbatches"]
                   for labels in order.values())
    assert "mpmd.fragment_call" in run.module_text


def test_a_shardy_module_takes_arrays_in_place_and_keeps_them():
    text, arguments, expected = load("1f1b_fori_4meshes")
    run = compiled("1f1b_fori_4meshes")
    assert run.donated_inputs == ()
    placed = run.place(*arguments)
    assert [a.sharding for a in placed] == list(run.input_shardings)
    first = run(*placed)
    second = run(*placed)  # nothing donated: the inputs stay alive
    assert not any(a.is_deleted() for a in placed)
    assert_equal(first, expected)
    assert_equal(second, expected)
    # Arrays committed elsewhere move to their meshes device to device.
    elsewhere = [jax.device_put(a, jax.devices()[7]) for a in arguments]
    assert_equal(run(*elsewhere), expected)


def test_shardy_layouts_are_the_input_shardings():
    run = compiled("gpipe_call_2meshes_tp")
    meshes = topology_of(CASES["gpipe_call_2meshes_tp"])
    # params[i]['b'], params[i]['w'], xs, ys: Shardy sharded the weights'
    # columns (committed so) and what follows from them over "model".
    assert run.input_meshes() == ["mesh0", "mesh0", "mesh1", "mesh1",
                                  "mesh0", "mesh1"]
    assert run.input_shardings[1] == NamedSharding(meshes["mesh0"],
                                                   P(None, "model"))
    assert run.input_shardings[0] == NamedSharding(meshes["mesh0"],
                                                   P("model"))
    assert run.inputs[3] == jax.ShapeDtypeStruct(
        (8, 8), jnp.float32, sharding=NamedSharding(meshes["mesh1"],
                                                    P(None, "model")))
    assert run.outputs[-1].shape == () and run.output_meshes()[-1] == "mesh1"
    _, arguments, expected = load("gpipe_call_2meshes_tp")
    results = run(*arguments)
    assert_equal(results, expected)
    w = results[1]
    assert w.sharding.spec == P(None, "model")
    assert {shard.data.shape for shard in w.addressable_shards} == {(8, 4)}


def test_what_the_compiled_module_tells():
    run = compiled("zero_bubble_h1_split_3meshes")
    assert run.function == "main"
    assert set(run.meshes) == {"mesh0", "mesh1", "mesh2"}
    assert run.schedule_text().startswith("mesh0: F F F B")
    assert sum(map(len, run.programs_by_mesh().values())) == \
        len(run.plan.programs)
    assert "// program" in run.as_text()
    assert run.cost_analysis()["flops"] > 0
    assert repr(run) == ("<CompiledModule @main: 8 inputs, 7 outputs, "
                         f"{len(run.plan.programs)} programs on meshes "
                         "mesh0, mesh1, mesh2>")
    assert set(run.timings) == {"plan", "compile"}


# --- Our own modules ----------------------------------------------------------

def two_stage_step(params, xs, ys, lr):
    def loss(params, x, y):
        h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                                   name="first")(params[0], x)
        out = mpmd.named_computation(lambda w, h: h @ w,
                                     name="second")(params[1], h)
        return jnp.mean((out - y) ** 2)

    def body(i, carry):
        value, grads = jax.value_and_grad(loss)(params, xs[i], ys[i])
        return jax.tree.map(jnp.add, carry, (value, grads))

    zeros = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params))
    total, grads = mpmd.fori_loop(0, xs.shape[0], body, zeros)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), total


def two_meshes() -> dict[str, Mesh]:
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    return {"m1": Mesh(devices[0], ("x",)), "m2": Mesh(devices[1], ("x",))}


def our_data():
    keys = jax.random.split(jax.random.PRNGKey(3), 2)
    params = [jax.random.normal(keys[0], (8, 16)) / 3,
              jax.random.normal(keys[1], (16, 8)) / 4]
    xs = jax.random.normal(jax.random.PRNGKey(4), (4, 2, 8))
    return params, xs, jnp.cos(xs)


def test_our_own_exported_module_runs():
    topology = two_meshes()
    config = mpmd.make_config(
        topology, {"first": ("m1", 0), "second": ("m2", 1)},
        partitioning_options={"pipeline_schedule": "1f1b"})
    params, xs, ys = our_data()
    lowered = mpmd.jit(two_stage_step, config, donate_argnums=0).lower(
        params, xs, ys, 0.05)
    text = lowered.as_text("mpmd")
    assert "mpmd.specializes" in text  # programs shared by microbatches
    run = compile_module(text, topology)
    want = jax.tree.leaves(jax.jit(two_stage_step)(params, xs, ys, 0.05))
    # Host data and a Python float for the f32[] learning rate.
    results = run(*[np.asarray(a) for a in params], np.asarray(xs),
                  np.asarray(ys), 0.05)
    assert_equal(results, want)
    # The parameters are donated (donate_argnums=0): passed in place, they
    # are deleted by the call, as with mpmd.jit and jax.jit.
    assert run.donated_inputs == (0, 1)
    placed = jax.block_until_ready(run.place(
        *[np.asarray(a) for a in params], xs, ys, 0.05))
    assert_equal(run(*placed), want)
    assert placed[0].is_deleted() and placed[1].is_deleted()
    assert not placed[2].is_deleted()
    with pytest.raises(ModuleInputError,
                       match=r"argument 0 of @main was deleted \(donated to "
                             r"an earlier call\?\)"):
        run(*placed)
    # The same plan as mpmd.jit's: the same programs and steps.
    assert run.plan.programs.keys() == lowered.plan.programs.keys()
    assert run.schedule_text() == lowered.schedule_text()


# --- Bad input ----------------------------------------------------------------

def test_a_topology_without_one_of_the_modules_meshes():
    topology = topology_of(CASES["1f1b_fori_4meshes"])
    del topology["mesh2"]
    with pytest.raises(ModuleError, match=re.escape(
            "the topology has no mesh 'mesh2': the module's main runs on "
            "meshes 'mesh0', 'mesh1', 'mesh2', 'mesh3', and the topology "
            "given has 'mesh0', 'mesh1', 'mesh3'; add 'mesh2': a Mesh of "
            'axes <["data"=2]>')):
        compile_module(load("1f1b_fori_4meshes")[0], topology)


@pytest.mark.parametrize("shape, axes, given", [
    ((4,), ("data",), '<["data"=4]>'),
    ((2,), ("model",), '<["model"=2]>'),
    ((1, 2), ("data", "model"), '<["data"=1, "model"=2]>'),
])
def test_a_mesh_of_the_wrong_shape(shape, axes, given):
    topology = topology_of(CASES["zero_bubble_h1_split_3meshes"])
    devices = np.array(jax.devices()[:int(np.prod(shape))]).reshape(shape)
    topology["mesh1"] = Mesh(devices, axes)
    with pytest.raises(ModuleError, match=re.escape(
            f"mesh 'mesh1' of the topology has axes {given}, but the module "
            "declares 'mesh1' as <[\"data\"=2]>: give a Mesh of shape (2,) "
            "with axis names ('data',)")):
        compile_module(load("zero_bubble_h1_split_3meshes")[0], topology)


def test_meshes_that_share_devices():
    topology = topology_of(CASES["1f1b_fori_4meshes"])
    topology["mesh3"] = Mesh(topology["mesh1"].devices, ("data",))
    with pytest.raises(ModuleError, match=re.escape(
            "meshes 'mesh1' and 'mesh3' of the topology share device 2; "
            "each device belongs to one mesh of the module")):
        compile_module(load("1f1b_fori_4meshes")[0], topology)


def test_a_topology_that_is_not_meshes():
    text = load("gpipe_call_2meshes_tp")[0]
    with pytest.raises(ModuleError, match="takes the topology as a mapping "
                       "of mesh name to jax.sharding.Mesh, got list"):
        compile_module(text, list(topology_of(
            CASES["gpipe_call_2meshes_tp"]).values()))
    with pytest.raises(ModuleError, match=r"topology\['mesh0'\] is a "
                       r"ndarray, not a jax.sharding.Mesh"):
        compile_module(text, {"mesh0": np.array(jax.devices()[:4]),
                              "mesh1": np.array(jax.devices()[4:])})


def test_a_module_that_is_not_text():
    with pytest.raises(ModuleError, match="takes the module as text "
                       r"\(str\), got dict"):
        compile_module({"main": None}, two_meshes())
    # UTF-8 bytes are text.
    text, arguments, expected = load("gpipe_call_2meshes_tp")
    run = compile_module(text.encode(), topology_of(
        CASES["gpipe_call_2meshes_tp"]))
    assert_equal(run(*arguments), expected)


def test_device_ids_in_the_modules_topology_are_not_supported_yet():
    text = load("zero_bubble_h1_split_3meshes")[0].replace(
        '<"mesh1" : <["data"=2]>>', '<"mesh1" : <["data"=2], '
        'device_ids=[1, 0]>>', 1)
    with pytest.raises(ModuleError, match=re.escape(
            "not supported yet: mesh 'mesh1' of the module's topology lists "
            "device ids [1, 0]")):
        compile_module(text, topology_of(
            CASES["zero_bubble_h1_split_3meshes"]))


def test_arguments_of_the_wrong_shape_or_dtype():
    _, arguments, _ = load("1f1b_fori_4meshes")
    run = compiled("1f1b_fori_4meshes")
    wrong = list(arguments)
    wrong[3] = np.zeros((8, 4), np.float32)
    with pytest.raises(ModuleInputError, match=re.escape(
            "argument 3 of @main has type tensor<8x4xf32>, but @main takes "
            '!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>> there: pass an '
            "array of shape (8, 8) and dtype float32")):
        run(*wrong)
    wrong[3] = jnp.zeros((8, 8), jnp.int32)
    with pytest.raises(ModuleInputError, match=re.escape(
            "argument 3 of @main has type tensor<8x8xi32>, but @main takes "
            '!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>> there')):
        run(*wrong)
    wrong[3] = 1.5  # a Python float for a matrix
    with pytest.raises(ModuleInputError, match=re.escape(
            "argument 3 of @main has type tensor<f32>, but @main takes "
            '!mpmd.mesh_tensor<"mesh1", tensor<8x8xf32>>')):
        run(*wrong)
    wrong[3] = "weights"
    with pytest.raises(ModuleInputError, match=re.escape(
            "argument 3 of @main is a str, not an array")):
        run(*wrong)
    with pytest.raises(ModuleInputError, match=re.escape(
            "@main takes 10 arguments (flat, in order), got 9")):
        run(*arguments[:-1])


def test_a_python_number_takes_the_arguments_dtype_only_where_it_fits():
    topology = two_meshes()
    config = mpmd.make_config(topology, {"first": ("m1", 0),
                                         "second": ("m2", 1)})
    params, xs, ys = our_data()
    run = compile_module(mpmd.jit(two_stage_step, config).lower(
        params, xs, ys, 0.05).as_text(), topology)
    assert run.inputs[4].dtype == np.float32 and run.inputs[4].shape == ()
    want = jax.tree.leaves(jax.jit(two_stage_step)(params, xs, ys, 1.0))
    assert_equal(run(*params, xs, ys, 1), want)  # an int for f32: fits
    with pytest.raises(ModuleInputError, match=re.escape(
            "argument 4 of @main has type tensor<complex<f32>>, but @main "
            'takes !mpmd.mesh_tensor<"m1", tensor<f32>>')):
        run(*params, xs, ys, 1j)


UNEXPORTED = """
module {
  func.func public @main(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
      -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
      %1 = stablehlo.add %x, %x : tensor<4xf32>
      mpmd.return %1 : tensor<4xf32>
    } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>)
        -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    return %0 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  }
}
"""

WITHOUT_TOPOLOGY = """
module {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def test_a_module_with_fragments_left_in_main_is_not_exported():
    with pytest.raises(mpmd.CompilerError) as raised:
        compile_module(UNEXPORTED, {"m1": two_meshes()["m1"]},
                       source_name="fragments.mlir")
    message = str(raised.value)
    assert message.startswith(
        "compile_module: the module is not an exported MPMD module: "
        "'mpmd.fragment' op cannot be executed by the runtime")
    assert "(at fragments.mlir:6:10)" in message.splitlines()[0]
    assert "mpmd.fragment_call" in message and "has not been partitioned " \
        "and exported" in message
    assert raised.value.errors[0].location == "fragments.mlir:6:10"


def test_a_module_without_a_topology_is_not_exported():
    with pytest.raises(mpmd.CompilerError, match=re.escape(
            "compile_module: the module is not an exported MPMD module: no "
            "func.func has a 'topology' attribute")):
        compile_module(WITHOUT_TOPOLOGY, two_meshes())


def test_a_program_sharded_over_an_axis_its_mesh_lacks():
    text = """
    sdy.mesh @mesh = <["x"=2]>
    !m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    func.func @main(%arg0: !m) -> !m
        attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
      %0 = mpmd.fragment_call<mesh="m1", origin=["f"]> @p0(%arg0)
          : (!m) -> !m
      return %0 : !m
    }
    func.func private @p0(%x: tensor<4xf32>
        {sdy.sharding = #sdy.sharding<@mesh, [{"zz"}]>}) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }"""
    with pytest.raises(mpmd.CompilerError,
                       match=r"'mpmd.fragment_call' op calls @p0, whose "
                             r"argument 0 is sharded over axis \"zz\", which "
                             r"its mesh \"m1\" .* does not have"):
        compile_module(text, two_meshes())


def test_what_the_runtime_does_not_run_yet_says_so():
    token = """
module {
  func.func public @main(%arg0: !stablehlo.token,
                         %arg1: !mpmd.mesh_tensor<"m1", tensor<4xf32>>)
      -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
      attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
    return %arg1 : !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  }
}
"""
    with pytest.raises(mpmd.CompilerError, match=re.escape(
            "compile_module: not supported yet: argument 0 of @main is a "
            "!stablehlo.token")) as raised:
        compile_module(token, {"m1": two_meshes()["m1"]})
    assert "not an exported" not in str(raised.value)


def test_text_that_does_not_parse():
    with pytest.raises(mpmd.CompilerError, match=re.escape(
            "compile_module: the module does not parse or verify: custom op "
            "'modul' is unknown")):
        compile_module("modul {}", two_meshes())


# --- Many processes -------------------------------------------------------------

@pytest.mark.multiprocess
def test_two_processes_run_a_shardy_module():
    # mesh0 and mesh1 on process 0, mesh2 and mesh3 on process 1: each
    # runs its meshes' programs, the transfers mesh1 -> mesh2 and back
    # cross processes.
    run_in_two_processes(__file__, "shards equal jax.jit")


def run_in_two_processes(script: str, marker: str, *args: str) -> None:
    """Runs `script` as a job of two processes of 4 CPU devices each
    (`mpmd.launch`) and checks that both succeed and print `marker`."""
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the launcher sets the device count
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "2",
         "--devices-per-process", "4", "--timeout", "200", script, *args],
        env=env, capture_output=True, text=True, timeout=260)
    lines = [line for line in result.stdout.splitlines() if marker in line]
    assert result.returncode == 0 and len(lines) == 2, (
        result.stdout[-4000:] + result.stderr[-4000:])


def _one_process_of_a_job() -> None:
    import mpmd.distributed  # noqa: PLC0415

    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    name = "1f1b_fori_4meshes"
    text, arguments, expected = load(name)
    run = compile_module(text, topology_of(CASES[name]))
    assert len(run.executor.programs) < len(run.plan.programs)  # its own
    count = addressable_shards_equal(run(*arguments), expected)
    print(f"process {me}: {count} shards equal jax.jit", flush=True)


def addressable_shards_equal(results, expected) -> int:
    """Checks this process's shards of `results` against the whole
    `expected` arrays; returns how many there were (at least one)."""
    count = 0
    for result, want in zip(results, expected):
        for shard in result.addressable_shards:
            np.testing.assert_allclose(np.asarray(shard.data),
                                       want[shard.index], rtol=2e-5,
                                       atol=1e-6)
            count += 1
    assert count > 0
    return count


if __name__ == "__main__":
    _one_process_of_a_job()
