"""`compile_module` runs IFRT IR: the form Shardy:MPMD hands to Pathways.

Shardy's own modules (data/shardy/, partitioned by the real Shardy:MPMD),
lowered to IFRT IR by jaxlib's `_sdy_mpmd.lower_to_ifrt`, run in both
printed forms (jaxlib's and generic) and equal `jax.jit`'s results stored
beside them; no topology is needed (the calls name their devices). Our own
`as_text("ifrt")` of the tests' programs runs and equals `mpmd.jit`. A
stand-in for Shardy's `MpmdLowered` (its `as_text`, `input_tree`,
`output_tree`, `kept_inputs_indices`, `const_args`) goes through
`compile_shardy` in one call. Bad IFRT IR is an error naming the op.

Run as a script under `mpmd.launch -n 2`, it is one process of a job that
runs the 1F1B module's IFRT IR, whose calls span both processes.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import jax
import numpy as np
import pytest

import mpmd
import shardy_dialects
from mpmd.runtime import ModuleError, compile_module
from test_compile_module import addressable_shards_equal, run_in_two_processes

DATA = pathlib.Path(__file__).resolve().parent / "data" / "shardy"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
CASES = {case["name"]: case for case in MANIFEST["cases"]}

_IFRT: dict[tuple[str, bool], str] = {}


def ifrt_text(name: str, generic: bool = False) -> str:
    """Shardy's module `name`, lowered to IFRT IR by jaxlib, printed in
    jaxlib's form or generic."""
    key = (name, generic)
    if key not in _IFRT:
        module = shardy_dialects.parse((DATA / f"{name}.mlir").read_text())
        with module.context:
            shardy_dialects.sdy_mpmd().lower_to_ifrt(module)
            _IFRT[(name, False)] = str(module)
            _IFRT[(name, True)] = module.operation.get_asm(
                print_generic_op_form=True)
    return _IFRT[key]


def data_of(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    case = CASES[name]
    data = np.load(DATA / f"{name}.npz")
    return ([data[f"arg{i}"] for i in range(case["num_args"])],
            [data[f"out{i}"] for i in range(case["num_results"])])


def assert_equal(results, expected) -> None:
    assert len(results) == len(expected)
    for index, (got, want) in enumerate(zip(results, expected)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want),
                                   rtol=2e-5, atol=1e-6,
                                   err_msg=f"result {index}")


# --- Shardy's modules, lowered by jaxlib --------------------------------------

@pytest.mark.parametrize("generic", [False, True], ids=["jaxlib", "generic"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_shardy_ifrt_runs_and_equals_jax_jit(name, generic):
    text = ifrt_text(name, generic)
    assert ("ifrt.Call @" in text) != generic  # the form asked for
    run = compile_module(text)
    arguments, expected = data_of(name)
    assert_equal(run(*arguments), expected)
    # The meshes are the calls' device lists, named as the calls name them.
    case = CASES[name]
    assert list(run.meshes) == list(case["topology"])
    for mesh_name, mesh in case["topology"].items():
        assert [d.id for d in run.meshes[mesh_name].devices.flat] == \
            [jax.devices()[i].id for i in mesh["devices"]]
        # Axis names are the atom programs' sdy.mesh; where they declare
        # none (every array replicated), IFRT IR has no names: one axis.
        axes = (tuple(mesh["axes"]) if case["tensor_parallel"]
                else ("devices",))
        assert run.meshes[mesh_name].axis_names == axes


def calls_by_mesh(plan: Any) -> dict[str, list[str]]:
    """Per mesh, the programs its calls run, in order."""
    calls: dict[str, list[str]] = {}
    for step in plan.steps:
        if hasattr(step, "program"):
            calls.setdefault(step.mesh, []).append(step.program)
    return calls


def test_a_jaxlib_module_is_read_as_its_text():
    """Shardy's `lowered.compiler_ir()` (a module of jaxlib's bindings)
    goes in as it is."""
    name = "gpipe_call_2meshes_tp"
    module = shardy_dialects.parse(ifrt_text(name))
    arguments, expected = data_of(name)
    assert_equal(compile_module(module)(*arguments), expected)


def test_shardy_ifrt_has_the_plan_of_its_mpmd_module():
    """IFRT IR and the MPMD module it was lowered from give the same
    programs (texts, layouts, donations) and calls."""
    name = "zero_bubble_h1_split_3meshes"
    case = CASES[name]
    devices = np.array(jax.devices(), dtype=object)
    topology = {mesh: jax.sharding.Mesh(
        devices[spec["devices"]].reshape(spec["shape"]), tuple(spec["axes"]))
        for mesh, spec in case["topology"].items()}
    ours = compile_module(ifrt_text(name)).plan
    theirs = compile_module((DATA / f"{name}.mlir").read_text(),
                            topology).plan
    assert ours.programs == theirs.programs
    assert [(t.mesh, t.shape, t.dtype) for t in ours.inputs] == \
        [(t.mesh, t.shape, t.dtype) for t in theirs.inputs]
    assert calls_by_mesh(ours) == calls_by_mesh(theirs)


def test_tensor_parallel_layouts_are_read_from_sharding_params():
    run = compile_module(ifrt_text("gpipe_call_2meshes_tp"))
    specs = [sharding.spec for sharding in run.input_shardings]
    # b sharded over "model", w's columns over "model", data replicated.
    assert specs[0] == jax.sharding.PartitionSpec("model")
    assert specs[1] == jax.sharding.PartitionSpec(None, "model")
    assert specs[5] == jax.sharding.PartitionSpec(None, None, "model")


def test_a_topology_given_is_checked_against_the_devices():
    name = "gpipe_call_2meshes_tp"
    devices = np.array(jax.devices(), dtype=object)
    good = {"mesh0": jax.sharding.Mesh(devices[:4].reshape(2, 2),
                                       ("data", "model")),
            "mesh1": jax.sharding.Mesh(devices[4:].reshape(2, 2),
                                       ("data", "model"))}
    arguments, expected = data_of(name)
    assert_equal(compile_module(ifrt_text(name), good)(*arguments), expected)
    swapped = {"mesh0": good["mesh1"], "mesh1": good["mesh0"]}
    with pytest.raises(ModuleError, match=r"mesh 'mesh0' of the topology is "
                       r"axes .* over devices \[4, 5, 6, 7\], but the IFRT "
                       r"IR program runs it as .* over devices \[0, 1, 2, 3\]"):
        compile_module(ifrt_text(name), swapped)
    with pytest.raises(ModuleError, match="the topology has no mesh 'mesh1'"):
        compile_module(ifrt_text(name), {"mesh0": good["mesh0"]})


def test_an_mpmd_module_still_needs_its_topology():
    with pytest.raises(ModuleError, match="needs the topology of an MPMD "
                       "module"):
        compile_module((DATA / "1f1b_fori_4meshes.mlir").read_text())


# --- Our own IFRT IR ------------------------------------------------------------

def test_our_ifrt_of_the_adam_pipeline_equals_mpmd_jit():
    import optax
    import test_training_loop as loop

    optimizer = optax.adam(1e-2)
    params = loop.init_params()
    arguments = (params, optimizer.init(params), *loop.data())
    config = mpmd.make_config(loop.meshes(), loop.stage_assignment(),
                              partitioning_options={
                                  "pipeline_schedule": "1f1b",
                                  "infer_transfers": True})
    lowered = mpmd.jit(loop.make_step(optimizer), config).lower(*arguments)
    run = compile_module(lowered.as_text("ifrt"))
    want = jax.tree.leaves(lowered.compile()(*arguments))
    assert_equal(run(*jax.tree.leaves(arguments)), want)
    assert calls_by_mesh(run.plan) == calls_by_mesh(lowered.plan)


def _same_as_the_mpmd_module(lowered: Any) -> None:
    """Our IFRT IR and our MPMD text of `lowered` run to the same results
    on the same (random) arguments."""
    ours = compile_module(lowered.as_text("ifrt"))
    reference = compile_module(lowered.as_text("mpmd"),
                               lowered.config.topology)
    rng = np.random.default_rng(0)
    arguments = [rng.standard_normal(spec.shape).astype(spec.dtype)
                 if np.issubdtype(spec.dtype, np.floating)
                 else np.zeros(spec.shape, spec.dtype)
                 for spec in reference.inputs]
    assert_equal(ours(*arguments), reference(*arguments))
    assert [s.spec for s in ours.input_shardings] == \
        [s.spec for s in reference.input_shardings]
    assert ours.donated_inputs == reference.donated_inputs


@pytest.mark.parametrize("which", ["tensor_parallel_transformer",
                                   "heterogeneous_meshes",
                                   "zero-bubble-h1", "gpipe",
                                   "zero-bubble-v", "offloaded"])
def test_our_ifrt_of_the_export_programs_runs(which):
    import export_programs
    from meshes import lower_transformer

    if which in ("zero-bubble-h1", "gpipe"):
        lowered = export_programs.transformer_with(which)
    elif which == "zero-bubble-v":
        lowered = zero_bubble_v()
    elif which == "offloaded":
        # Residuals in pinned host memory: copies between memory kinds.
        lowered, _ = lower_transformer("1f1b", offload_activations=True)
        assert 'memory_kind = "pinned_host"' in lowered.as_text("ifrt")
    else:
        lowered = getattr(export_programs, which)()
    _same_as_the_mpmd_module(lowered)


def zero_bubble_v() -> Any:
    """ZB-V: two stages per mesh in a V, split backwards."""
    import models
    from meshes import MESHES, four_meshes, transformer_data

    meshes = MESHES[:2]
    config = mpmd.make_config({name: four_meshes()[name] for name in meshes},
                              models.v_assignment(4, meshes),
                              pipeline_schedule="zero-bubble-v")
    params, tokens, targets = transformer_data(4, 4)
    return mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)


# --- A Shardy user's Lowered ------------------------------------------------------

class ShardyLowered:
    """What `compile_shardy` reads of Shardy's `MpmdLowered`: `as_text()`
    (IFRT IR by default), the pytrees of the arguments and results, the
    kept inputs and the constants. Built from a stored case."""

    def __init__(self, name: str):
        self._text = ifrt_text(name)
        case = CASES[name]
        stages = len(case["topology"])
        params = [{"b": 0, "w": 0} for _ in range(stages)]
        # As Shardy's: the positional arguments' structure.
        self.input_tree = jax.tree.structure((params, 0, 0))
        self.output_tree = jax.tree.structure((params, 0))
        self.kept_inputs_indices = list(range(case["num_args"]))
        self.const_args = []

    def as_text(self, dialect: str | None = None) -> str:
        assert dialect in (None, "ifrt")
        return self._text


def test_compile_shardy_takes_a_shardy_lowered_in_one_call():
    name = "1f1b_fori_4meshes"
    arguments, expected = data_of(name)
    run = mpmd.runtime.compile_shardy(ShardyLowered(name))
    stages = len(CASES[name]["topology"])
    params = [{"b": arguments[2 * i], "w": arguments[2 * i + 1]}
              for i in range(stages)]
    new_params, loss = run(params, arguments[-2], arguments[-1])
    assert_equal(jax.tree.leaves((new_params, loss)), expected)
    assert isinstance(new_params[0]["w"], jax.Array)
    with pytest.raises(ModuleError, match="takes arguments of structure"):
        run(params, arguments[-2])


def test_compile_shardy_refuses_what_is_not_a_lowered():
    with pytest.raises(ModuleError, match="compile_shardy takes the Lowered "
                       "of Shardy's mpmd.jit"):
        mpmd.runtime.compile_shardy("module {}")


EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "examples"
           / "shardy_without_pathways.py")


def test_the_example_runs():
    """examples/shardy_without_pathways.py as a user runs it (here without
    Shardy's package: the stored module's IFRT IR)."""
    result = subprocess.run([sys.executable, str(EXAMPLE), "--stored"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "18 shards equal jax.jit" in result.stdout


@pytest.mark.multiprocess
def test_the_example_runs_in_two_processes():
    run_in_two_processes(str(EXAMPLE), "shards equal jax.jit", "--stored")


# --- Bad IFRT IR ----------------------------------------------------------------

ARRAY = "!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, {}>"
REPLICATED = ("!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<1 to [0] on "
              "2>, {}>")


def program(body: str, *, devices: str = "[0, 1]",
            atom: str | None = None) -> str:
    """A one-call IFRT IR program whose main holds `body`."""
    a = ARRAY.format(devices)
    atom = atom or """
      sdy.mesh @mesh = <["x"=2]>
      func.func @main(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
          -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
        %0 = stablehlo.negate %x : tensor<4xf32>
        return %0 : tensor<4xf32>
      }"""
    return f"""
    module {{
      func.func @main(%arg0: {a}) -> {a} attributes {{ifrt.function}} {{
        {body}
      }}
      module @neg attributes {{sym_visibility = "private"}} {{
        {atom}
      }}
    }}"""


GOOD_CALL = (f"%o, %c = ifrt.Call @neg::@main(%arg0) on devices [0, 1] "
             f"{{ifrt.mesh_name = \"m\"}} : ({ARRAY.format('[0, 1]')}) -> "
             f"{ARRAY.format('[0, 1]')}\n        return %o : "
             f"{ARRAY.format('[0, 1]')}")


def test_a_small_program_runs():
    run = compile_module(program(GOOD_CALL))
    (result,) = run(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(result),
                                  -np.arange(4, dtype=np.float32))
    assert result.sharding.spec == jax.sharding.PartitionSpec("x")


def test_one_atom_on_two_meshes_with_two_donation_patterns():
    a, b = ARRAY.format("[0, 1]"), ARRAY.format("[2, 3]")
    body = f"""%o, %c = ifrt.Call @neg::@main(%arg0) on devices [0, 1]
        {{ifrt.mesh_name = "m"}} : ({a}) -> {a}
        %p, %d = ifrt.Call @neg::@main(%o) on devices [0, 1]
        {{ifrt.mesh_name = "m", donated_input_indices = array<i32: 0>}}
        : ({a}) -> {a}
        %q, %e = ifrt.CopyArrays(%p) : ({a}) -> {b}
        %r, %f = ifrt.Call @neg::@main(%q) on devices [2, 3]
        {{ifrt.mesh_name = "n"}} : ({b}) -> {b}
        return %r : {b}"""
    text = program(body).replace(f"-> {a} attributes", f"-> {b} attributes")
    run = compile_module(text)
    x = np.arange(4, dtype=np.float32)
    (result,) = run(x)
    np.testing.assert_array_equal(np.asarray(result), -x)
    assert [d.id for d in result.sharding.device_set] == [2, 3] or \
        sorted(d.id for d in result.sharding.device_set) == [
            jax.devices()[2].id, jax.devices()[3].id]
    # A program per mesh and donation pattern.
    assert sorted(run.plan.programs) == ["neg", "neg.variant", "neg.variant_1"]


def refused(text: str, match: str) -> mpmd.CompilerError:
    with pytest.raises(mpmd.CompilerError, match=match) as info:
        compile_module(text)
    return info.value


def test_unknown_devices():
    a = ARRAY.format("[0, 99]")
    text = program(f"""%o, %c = ifrt.Call @neg::@main(%arg0) on devices
        [0, 99] : ({a}) -> {a}
        return %o : {a}""").replace(ARRAY.format("[0, 1]"), a)
    error = refused(text, r"'ifrt.Call' op runs on device 99, which is not "
                          r"a device of this job")
    assert error.errors[0].location.startswith("<module>:")


def test_a_copy_between_mismatched_layouts():
    a, r = ARRAY.format("[0, 1]"), REPLICATED.format("[2, 3]")
    refused(program(f"""%o, %c = ifrt.CopyArrays(%arg0) : ({a}) -> {r}
        return %arg0 : {a}"""),
            r"'ifrt.CopyArrays' op copies input 0 from sharding "
            r".* to .*; a copy keeps the layout \(ifrt.Reshard changes it\)")


def test_a_call_whose_signature_does_not_match_its_callee():
    b = ("!ifrt.array<tensor<8xf32>, #ifrt.sharding_param<2 to [0] on 2>, "
         "[0, 1]>")
    text = program(f"""%o, %c = ifrt.Call @neg::@main(%arg0, %arg0) on
        devices [0, 1] : ({ARRAY.format('[0, 1]')}, {ARRAY.format('[0, 1]')})
        -> {b}
        return %arg0 : {ARRAY.format('[0, 1]')}""")
    refused(text, r"'ifrt.Call' op calls @neg::@main, which takes 1 "
                  r"arguments and returns 1 results, with 2 inputs")


def test_a_module_without_a_main():
    refused(program(GOOD_CALL).replace("attributes {ifrt.function}", ""),
            r"an IFRT IR program has one main function \(a func.func with "
            r"the `ifrt.function` attribute\), found 0")


def test_ops_outside_the_subset_are_not_supported_yet():
    a = ARRAY.format("[0, 1]")
    remap = (f"%o, %c = ifrt.RemapArrays(%arg0) mappings = [] : ({a}) -> "
             f"{a}\n return %o : {a}")
    refused(program(remap), r"not supported yet: the IFRT op "
                            r"ifrt.RemapArrays .*; mpmd runs ifrt.Call")
    generic = (f'%o:2 = "ifrt.After"(%arg0) : ({a}) -> ({a}, '
               f"!ifrt.control)\n return %o#0 : {a}")
    refused(program(generic), r"'ifrt.After' op not supported yet: mpmd "
                              r"runs ifrt.Call, ifrt.CopyArrays and "
                              r"ifrt.Reshard")
    refused(program(GOOD_CALL.replace(
        'ifrt.mesh_name = "m"', "x = #ifrt.layout<auto>")),
        r"not supported yet: the IFRT attribute #ifrt.layout")


def test_a_sharding_over_part_of_a_mesh_axis_is_not_supported_yet():
    four = ("!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 4>, "
            "[0, 1, 2, 3]>")
    atom = """
      sdy.mesh @mesh = <["x"=4]>
      func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
        return %x : tensor<4xf32>
      }"""
    text = program(f"""%o, %c = ifrt.Call @neg::@main(%arg0) on devices
        [0, 1, 2, 3] : ({four}) -> {four}
        return %o : {four}""", atom=atom).replace(ARRAY.format("[0, 1]"),
                                                  four)
    refused(text, r"not supported yet: the sharding "
                  r"#ifrt.sharding_param<2 to \[0\] on 4> of tensor<4xf32> "
                  r"on devices \[0, 1, 2, 3\] is no sharding over whole axes "
                  r"of mesh \"m\"|devices_0_1_2_3")


def test_a_sharding_param_that_does_not_fit_its_devices():
    bad = ("!ifrt.array<tensor<4xf32>, #ifrt.sharding_param<2 to [0] on 2>, "
           "[0, 1, 2]>")
    refused(program(GOOD_CALL).replace(ARRAY.format("[0, 1]"), bad),
            r"the sharding is over 2 devices, but the array is on 3")


def test_calls_that_disagree_on_a_mesh():
    a, b = ARRAY.format("[0, 1]"), ARRAY.format("[2, 3]")
    body = f"""%o, %c = ifrt.Call @neg::@main(%arg0) on devices [0, 1]
        {{ifrt.mesh_name = "m"}} : ({a}) -> {a}
        %p, %d = ifrt.CopyArrays(%o) : ({a}) -> {b}
        %q, %e = ifrt.Call @neg::@main(%p) on devices [2, 3]
        {{ifrt.mesh_name = "m"}} : ({b}) -> {b}
        return %o : {a}"""
    refused(program(body), r"'ifrt.Call' op runs on devices \[2, 3\] as mesh "
                           r"\"m\", which other calls run on devices \[0, 1\]")


# --- Two processes --------------------------------------------------------------

@pytest.mark.multiprocess
def test_two_processes_run_ifrt_ir_whose_calls_span_both():
    # The 1F1B module on 4 meshes of 2 devices: meshes 0 and 1 on process 0
    # (devices 0-3), meshes 2 and 3 on process 1 (devices 4-7).
    run_in_two_processes(__file__, "IFRT IR shards equal jax.jit")


def _one_process_of_a_job() -> None:
    import mpmd.distributed  # noqa: PLC0415

    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    name = "1f1b_fori_4meshes"
    run = compile_module(ifrt_text(name))
    # Each process compiles only its meshes' programs.
    assert len(run.executor.programs) < len(run.plan.programs)
    arguments, expected = data_of(name)
    count = addressable_shards_equal(run(*arguments), expected)
    print(f"process {me}: {count} IFRT IR shards equal jax.jit", flush=True)


if __name__ == "__main__":
    _one_process_of_a_job()


# --- IFRT IR mutated at random -----------------------------------------------------

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Tokens of IFRT IR a mutation swaps in: devices, sharding params, op and
# attribute names, types.
_TOKENS = ["[0, 1]", "[1, 0]", "[0, 99]", "[]", "2 to [0] on 2",
           "1 to [0] on 2", "2 to [0] on 4", " to [0] on 1", "ifrt.Call",
           "ifrt.CopyArrays", "ifrt.Reshard", "ifrt.After", "@neg::@main",
           "@main", "ifrt.function", "tensor<4xf32>", "tensor<8xf32>",
           "memory_kind = \"pinned_host\"", "io_aliases = [array<i32: 0, 0>]",
           "donated_input_indices = array<i32: 0>", "#ifrt<devices[0, 1]>",
           "!ifrt.control", "after %c", "%arg0", "%o", ",", ")", ">"]


@st.composite
def ifrt_mutations(draw, size: int):
    kind = draw(st.sampled_from(["delete", "insert", "replace"]))
    at = draw(st.integers(0, size - 1))
    if kind == "delete":
        return kind, at, draw(st.integers(1, 24)), ""
    return kind, at, draw(st.integers(1, 12)), draw(st.sampled_from(_TOKENS))


def test_mutated_ifrt_ir_raises_mpmd_errors():
    # Whatever is done to the text: a CompilerError or ModuleError naming
    # what is wrong, or a program that still runs; never another exception
    # (nor a crash of the process).
    text = program(GOOD_CALL)
    x = np.arange(4, dtype=np.float32)

    @seed(35)
    @settings(max_examples=int(os.environ.get("MPMD_IFRT_FUZZ_EXAMPLES",
                                              "120")),
              deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(ifrt_mutations(len(text)))
    def check(mutation):
        kind, at, length, token = mutation
        if kind == "delete":
            mutated = text[:at] + text[at + length:]
        elif kind == "insert":
            mutated = text[:at] + token + text[at:]
        else:
            mutated = text[:at] + token + text[at + length:]
        try:
            run = compile_module(mutated)
        except mpmd.MpmdError:
            return
        try:
            run(x)
        except mpmd.MpmdError:
            return

    check()
