"""`compile_programs`: a plan's distinct programs compiled on several
threads give the programs one thread gives, in the plan's order, and the
first failing program (in that order) is the one reported."""

from __future__ import annotations

import dataclasses

import numpy as np

import pytest

import mpmd
from mpmd.runtime.executor import compile_programs
from mpmd.runtime.program import ProgramCompileError, clear_program_cache
from meshes import MESHES, four_meshes, transformer_data


@pytest.fixture(scope="module")
def plan_and_meshes():
    import models

    topology = four_meshes()
    config = mpmd.make_config(
        topology, models.transformer_assignment(4, MESHES),
        partitioning_options={"pipeline_schedule": "1f1b"})
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        *transformer_data(4, 4))
    return lowered.plan, topology


def test_threads_compile_the_same_programs_in_plan_order(plan_and_meshes):
    plan, topology = plan_and_meshes
    clear_program_cache()
    one = compile_programs(dict(plan.programs), topology, workers=1)
    clear_program_cache()
    many = compile_programs(dict(plan.programs), topology, workers=4)
    assert list(many) == list(plan.programs) == list(one)
    for name in plan.programs:
        assert many[name].mesh is one[name].mesh
        assert many[name].in_shardings == one[name].in_shardings
        assert many[name].out_avals == one[name].out_avals
        # The same executable (its text differs only in the Python stack
        # recorded as metadata).
        assert (many[name].compiled.cost_analysis()
                == one[name].compiled.cost_analysis())


def test_the_first_failing_program_in_plan_order_is_reported(
        plan_and_meshes):
    plan, topology = plan_and_meshes
    specs = dict(plan.programs)
    names = list(specs)
    broken = {name: dataclasses.replace(specs[name],
                                        module="module { not mlir")
              for name in names[1:3]}
    specs.update(broken)
    with pytest.raises(ProgramCompileError) as caught:
        compile_programs(specs, topology, workers=4)
    assert caught.value.program == names[1]


def test_equivalent_inputs_are_used_without_a_copy():
    """An argument whose sharding is equivalent to the program's input (a
    SingleDeviceSharding on a one-device mesh's device; an equal mesh with
    other axis names) is passed as it is: the program reads its buffers."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices()
    one = {"m1": Mesh(np.array(devices[:1]), ("x",)),
           "m2": Mesh(np.array(devices[2:4]), ("x",))}

    def f(a, b):
        a = mpmd.named_computation(lambda a: a * 2, name="f")(a)
        return mpmd.named_computation(lambda b: b + 1, name="g")(b), a

    compiled = mpmd.jit(f, mpmd.make_config(one, {"f": "m1", "g": "m2"})
                        ).lower(jnp.ones(4), jax.device_put(
                            jnp.ones((2, 4)),
                            NamedSharding(one["m2"], P("x")))).compile()
    single = jax.device_put(jnp.arange(4.0), devices[0])
    renamed = jax.device_put(
        jnp.ones((2, 4)),
        NamedSharding(Mesh(np.array(devices[2:4]), ("y",)), P("y")))
    expected = compiled.executor.input_shardings()
    assert single.sharding != expected[0]
    assert renamed.sharding != expected[1]
    placed = compiled._place_inputs((single, renamed), {})
    for before, after in zip((single, renamed), placed):
        assert [s.data.unsafe_buffer_pointer()
                for s in before.addressable_shards] == [
            s.data.unsafe_buffer_pointer() for s in after.addressable_shards]
    b, a = compiled(single, renamed)
    np.testing.assert_array_equal(a, np.arange(4.0) * 2)
    np.testing.assert_array_equal(b, np.full((2, 4), 2.0))
    # The call path takes them as they are too, and a loop passing the same
    # arrays again reuses their relabelling (no work per call).
    from mpmd import arguments

    memo = {}
    first = arguments.as_placed((single, renamed), compiled._expected, memo)
    again = arguments.as_placed((single, renamed), compiled._expected, memo)
    assert first is not None and all(x is y for x, y in zip(first, again))
    for before, after in zip((single, renamed), first):
        assert after.sharding in expected
        assert [s.data.unsafe_buffer_pointer()
                for s in before.addressable_shards] == [
            s.data.unsafe_buffer_pointer() for s in after.addressable_shards]
    # An uncommitted array is not taken as it is (the call places it).
    assert arguments.as_placed((jnp.arange(4.0), renamed),
                               compiled._expected) is None


def test_every_program_goes_in_the_users_persistent_cache(tmp_path):
    """With only jax_compilation_cache_dir set, each program is written to
    JAX's persistent cache, though each compiles in well under JAX's
    default 1 s threshold; a second process reads them back (every
    compile a cache hit) and its partition too."""
    import os
    import subprocess
    import sys

    script = f"""
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
import mpmd
hits = []
jax.monitoring.register_event_listener(
    lambda name, **kw: hits.append(name)
    if name == "/jax/compilation_cache/cache_hits" else None)
devices = np.array(jax.devices()[:4]).reshape(2, 2)
topology = {{"m1": jax.sharding.Mesh(devices[0], ("x",)),
            "m2": jax.sharding.Mesh(devices[1], ("x",))}}
def f(x):
    x = mpmd.named_computation(lambda a: a * 2, name="a")(x)
    return mpmd.named_computation(lambda a: a + 1, name="b")(x)
lowered = mpmd.jit(f, mpmd.make_config(topology, {{"a": "m1", "b": "m2"}})
                   ).lower(jnp.ones(8))
value = float(lowered.compile()(jnp.ones(8))[0])
print(len(lowered.plan.programs), value, len(hits),
      lowered.partition_cached)
"""
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    first = subprocess.run([sys.executable, "-c", script], env=env,
                           capture_output=True, text=True, check=True)
    programs, value, hits, cached = first.stdout.split()
    assert value == "3.0" and hits == "0" and cached == "False"
    entries = [p for p in tmp_path.iterdir() if p.is_file()]
    assert len(entries) >= int(programs)
    second = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True, check=True)
    programs, value, hits, cached = second.stdout.split()
    assert value == "3.0" and cached == "True"
    assert int(hits) >= int(programs)
    # Read back, not written again.
    assert len([p for p in tmp_path.iterdir() if p.is_file()]) == len(entries)


def test_meshes_of_one_shape_compile_a_shared_program_once():
    """m2 and m3 each run one block: the same programs, compiled once and
    loaded for the other mesh's devices; the step still equals jax.jit."""
    import jax
    import numpy as np

    import models
    from mpmd.runtime.program import compile_counts

    topology = four_meshes()
    assignment = {"embed": ("m1", 0), "block0": ("m1", 0),
                  "block1": ("m2", 1), "block2": ("m3", 2),
                  "block3": ("m4", 3), "head": ("m4", 3)}
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": "1f1b"})
    args = transformer_data(4, 4)
    step = models.transformer_microbatched_step
    lowered = mpmd.jit(step, config).lower(*args)
    programs = lowered.plan.programs
    texts = {mesh: sorted(programs[name].module for name in names)
             for mesh, names in lowered.programs_by_mesh().items()}
    assert texts["m2"] == texts["m3"]

    clear_program_cache()
    compiled = lowered.compile()
    counts = compile_counts()
    distinct = {(spec.module, tuple(map(str, spec.in_shardings)),
                 tuple(map(str, spec.out_shardings)), spec.donated_args)
                for spec in programs.values()}
    assert counts == {"compiled": len(distinct),
                      "relocated": len(programs) - len(distinct)}
    assert counts["relocated"] >= len(texts["m3"])
    for name, program in compiled.executor.programs.items():
        assert program.mesh is topology[programs[name].mesh]

    got = compiled(*args)
    want = jax.jit(step)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                   rtol=1e-5, atol=1e-6)
    placed = jax.tree.leaves(got[0]["blocks"][2])[0]
    assert placed.sharding.mesh == topology["m3"]


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_every_microbatch_of_a_stage_calls_one_program(schedule):
    """The first microbatch's accumulation starts from the loop's zeros
    and the last one's is followed by the update: neither makes a program
    of its own. Per mesh: a forward and a backward per named computation,
    plus the code before the loop (the zeros) and after it (the update),
    one of each per named computation whose gradients they hold (so the
    blocks' are one program on every mesh)."""
    import re

    import models

    microbatches = 4
    topology = four_meshes()
    assignment = models.transformer_assignment(4, MESHES)
    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": schedule})
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        *transformer_data(microbatches, 4))
    for mesh, names in lowered.programs_by_mesh().items():
        named = sum(1 for m, _ in assignment.values() if m == mesh)
        staged = [n for n in names if "_stage" in n]
        assert len(staged) <= 2 * named, (mesh, names)
        assert len(names) <= 4 * named, (mesh, names)
        for name in staged:
            calls = re.search(r"_calls(\d+)to(\d+)$", name)
            assert calls and calls.groups() == ("0", str(microbatches - 1)), (
                mesh, names)


def test_each_program_knows_the_bytes_live_beside_it(plan_and_meshes):
    """The plan carries each program's reserved bytes (those of the
    exported function's `reserved_hbm_bytes`), kept out of the program text
    that is compiled; on CPU no XLA option is derived from them."""
    from mpmd.runtime.program import reserved_memory_options

    plan, topology = plan_and_meshes
    assert all(spec.reserved_bytes >= 0 for spec in plan.programs.values())
    # Parameters of the other blocks, activations of other microbatches.
    assert sum(spec.reserved_bytes > 0 for spec in plan.programs.values()) >= (
        len(plan.programs) // 2)
    assert not any("reserved_hbm_bytes" in spec.module
                   for spec in plan.programs.values())
    assert reserved_memory_options(topology["m1"], 1 << 30) == {}


def test_reserved_bytes_become_the_gpu_schedulers_memory_share():
    from types import SimpleNamespace

    from mpmd.runtime.program import reserved_memory_options

    def mesh_of(platform, limit):
        device = SimpleNamespace(platform=platform,
                                 memory_stats=lambda: {"bytes_limit": limit})
        return SimpleNamespace(devices=np.array([device], dtype=object))

    gib = 1 << 30
    options = reserved_memory_options(mesh_of("gpu", 80 * gib), 20 * gib)
    assert options == {"xla_gpu_memory_limit_slop_factor": 71}  # 95 * 0.75
    assert reserved_memory_options(mesh_of("gpu", 80 * gib), 0) == {}
    assert reserved_memory_options(mesh_of("gpu", 8 * gib), 9 * gib) == {
        "xla_gpu_memory_limit_slop_factor": 1}
    assert reserved_memory_options(mesh_of("cpu", 8 * gib), gib) == {}


def test_relocation_loads_from_the_executable_xla_compiled():
    """A program relocated from a relocated one loads the original
    executable: on CPU, one loaded from bytes loses its compiled functions
    when serialized again ("Function ... not found" when run)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from mpmd.runtime.program import MeshProgram, compile_counts

    def f(w, x):
        return jnp.tanh(x @ w) * jax.nn.sigmoid(x) + jnp.exp(x)

    w, x = jnp.ones((8, 8)) / 8, jnp.ones((8, 8))
    text = jax.jit(f).lower(w, x).as_text()
    devices = jax.devices()
    meshes = [Mesh(np.array(devices[i:i + 2]), ("x",)) for i in (0, 2, 4)]
    clear_program_cache()
    previous = None
    for mesh in meshes:
        shardings = [NamedSharding(mesh, P()), NamedSharding(mesh, P("x"))]
        program = MeshProgram.compile(
            text, mesh, name="f", in_shardings=shardings,
            out_shardings=[NamedSharding(mesh, P("x"))], like=previous)
        out = program(*(jax.device_put(a, s)
                        for a, s in zip((w, x), shardings)))[0]
        np.testing.assert_allclose(np.asarray(out), np.asarray(f(w, x)),
                                   rtol=1e-6)
        previous = program
    assert compile_counts() == {"compiled": 1, "relocated": 2}
    assert previous.origin is not None


def test_no_relocation_on_cpu_with_a_persistent_cache(tmp_path):
    """With JAX's persistent cache a leader may come back from bytes, which
    on CPU cannot be relocated whole: every mesh compiles (or reads its own
    cache entry)."""
    import jax

    import models
    from mpmd.runtime.program import compile_counts

    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        topology = four_meshes()
        assignment = {"embed": ("m1", 0), "block0": ("m1", 0),
                      "block1": ("m2", 1), "block2": ("m3", 2),
                      "block3": ("m4", 3), "head": ("m4", 3)}
        config = mpmd.make_config(
            topology, assignment,
            partitioning_options={"pipeline_schedule": "1f1b"})
        lowered = mpmd.jit(models.transformer_microbatched_step,
                           config).lower(*transformer_data(2, 4))
        clear_program_cache()
        lowered.compile()
        assert compile_counts()["relocated"] == 0
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)
