"""mpmd.jit's stages have the shape of jax.stages: trace -> lower ->
compile -> call, with static and donated arguments as in jax.jit."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd


def meshes(count: int) -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:8]).reshape(count, -1)
    return {f"m{i + 1}": jax.sharding.Mesh(devices[i], ("x",))
            for i in range(count)}


def two_layers(params, x):
    h = mpmd.named_computation(lambda w, x: jnp.tanh(x @ w),
                               name="l1")(params["w1"], x)
    return {"y": mpmd.named_computation(lambda w, h: h @ w,
                                        name="l2")(params["w2"], h)}


CONFIG = None


def config():
    global CONFIG
    if CONFIG is None:
        CONFIG = mpmd.make_config(meshes(2), {"l1": "m1", "l2": "m2"})
    return CONFIG


def inputs():
    params = {"w1": jnp.linspace(-1.0, 1.0, 32).reshape(4, 8),
              "w2": jnp.linspace(0.0, 1.0, 16).reshape(8, 2)}
    return params, jnp.linspace(-2.0, 2.0, 12).reshape(3, 4)


def test_trace_lower_compile_call():
    params, x = inputs()
    traced = mpmd.jit(two_layers, config()).trace(params, x)
    assert isinstance(traced, mpmd.Traced)
    assert "named_computation" in str(traced.jaxpr)
    assert traced.out_info["y"].shape == (3, 2)
    lowered = traced.lower()
    want = jax.jit(two_layers).lower(params, x)
    assert lowered.in_tree == want.in_tree
    assert lowered.out_tree == want.out_tree
    compiled = lowered.compile()
    assert compiled.in_tree == want.in_tree
    assert compiled.out_tree == want.out_tree
    np.testing.assert_allclose(compiled(params, x)["y"],
                               jax.jit(two_layers)(params, x)["y"], rtol=1e-6)


def test_text_and_ir_in_each_dialect():
    params, x = inputs()
    lowered = mpmd.jit(two_layers, config()).lower(params, x)
    assert lowered.as_text() == lowered.as_text("mpmd")
    assert "mpmd.fragment_call" in lowered.as_text()
    jax_text = lowered.as_text("stablehlo")
    assert "mpmd.named_computation" in jax_text and "topology" in jax_text
    assert "mpmd.fragment_call" not in jax_text
    with pytest.raises(mpmd.MpmdError, match="not supported yet: dialect 'hlo'"):
        lowered.as_text("hlo")
    assert "topology" in str(lowered.compiler_ir("stablehlo"))
    module = lowered.compiler_ir()
    assert "mpmd.fragment_call" in str(module.operation)
    compiled = lowered.compile()
    text = compiled.as_text()
    assert text.count("// program ") == len(lowered.plan.programs)
    assert "HloModule" in text


def test_cost_analysis_counts_every_call():
    params, x = inputs()
    lowered = mpmd.jit(two_layers, config()).lower(params, x)
    want = jax.jit(two_layers).lower(params, x).cost_analysis()["flops"]
    before = lowered.cost_analysis()["flops"]
    after = lowered.compile().cost_analysis()["flops"]
    # Both matmuls and the tanh, once each, as in the single program.
    assert before == pytest.approx(want, rel=0.1)
    assert after > 0


def scaled_sum(x, power, y, *, shift=0.0):
    def body(x, y):
        return (x ** power) * y + shift
    return mpmd.named_computation(body, name="f")(x, y)


@pytest.mark.parametrize("static", [(1,), (-2,)])
def test_static_argnums_as_in_jax_jit(static):
    config = mpmd.make_config(meshes(2), {"f": "m2"})
    step = mpmd.jit(scaled_sum, config, static_argnums=static)
    reference = jax.jit(scaled_sum, static_argnums=static)
    x, y = jnp.arange(1.0, 5.0), jnp.full(4, 0.5)
    for power in (2, 3, 2):
        np.testing.assert_allclose(step(x, power, y), reference(x, power, y))
    # One lowering per static value; the second 2 reused the first.
    assert len(step._cache) == 2
    np.testing.assert_allclose(step(x, 3, y, shift=1.0),
                               reference(x, 3, y, shift=1.0))


def test_unhashable_static_argument():
    config = mpmd.make_config(meshes(2), {"f": "m2"})
    step = mpmd.jit(scaled_sum, config, static_argnums=(1,))
    with pytest.raises(mpmd.ConfigError, match="static argument"):
        step(jnp.ones(4), [2], jnp.ones(4))


def update(params, scale, x):
    def body(w, x):
        return w - scale * jnp.outer(x, x)[: w.shape[0], : w.shape[1]]
    return mpmd.named_computation(body, name="f")(params, x)


def test_donate_and_static_together_as_in_jax_jit():
    config = mpmd.make_config(meshes(2), {"f": "m1"})
    step = mpmd.jit(update, config, static_argnums=(1,), donate_argnums=(0,))
    w, x = jnp.ones((4, 4)), jnp.arange(4.0)
    want = jax.jit(update, static_argnums=(1,))(w, 0.5, x)
    lowered = step.lower(w, 0.5, x)
    placed = jax.device_put(w, lowered.function_named_shardings.inputs[0])
    got = lowered.compile()(placed, 0.5, x)
    np.testing.assert_allclose(got, want)
    assert placed.is_deleted()
    assert sum(len(p.donated_args) for p in lowered.plan.programs.values()) == 1


def test_partition_text_is_printed_when_first_used():
    # What the shared partition benchmark (and a user of
    # mpmd.lowering.partition) does with the module: str methods on it.
    from mpmd.compiler import Partitioner
    from mpmd.lowering import ModuleText, partition

    params, x = inputs()
    lowered = mpmd.jit(two_layers, config()).lower(params, x)
    text, plan = partition(config(), Partitioner(lowered.jax_text()),
                           {}, {}, {}, {})
    assert isinstance(text, ModuleText)
    assert repr(text) == "ModuleText(not printed yet)"
    assert "mpmd.fragment_call" in text
    assert repr(text) == "ModuleText(printed)"
    calls = [line for line in text.splitlines()
             if "mpmd.fragment_call" in line]
    assert len(calls) == 2 and text.count("mpmd.fragment_call") >= 2
    assert str(text) == text() == lowered.as_text()
    assert text == lowered.as_text() and len(text) == len(str(text))
    with pytest.raises(AttributeError):
        text.splitline  # noqa: B018  (not a str method)


def test_plan_programs_are_printed_when_first_read():
    from mpmd.compiler import Partitioner
    from mpmd.lowering import PlanText, execution_plan, partition
    from mpmd.runtime.plan import ExecutionPlan

    params, x = inputs()
    jax_text = mpmd.jit(two_layers, config()).lower(params, x).jax_text()

    class Eager(Partitioner):
        def partition(self, *args, **kwargs):
            return super().partition(*args, **dict(kwargs,
                                                   print_programs=True))

    # The plan the compiler writes in one go, texts and all.
    _, eager = partition(config(), Eager(jax_text), {}, {}, {}, {})
    whole = json.loads(eager.light)
    assert all(p["module"].startswith('"builtin.module"')
               for p in whole["programs"].values())

    _, plan = partition(config(), Partitioner(jax_text), {}, {}, {}, {})
    assert isinstance(plan, PlanText)
    light = json.loads(plan.light)
    assert set(light["programs"]) == set(whole["programs"])
    assert not any("module" in p for p in light["programs"].values())
    read = execution_plan(plan)
    assert list(read.programs) == sorted(whole["programs"])
    assert repr(plan) == "PlanText(not printed yet)"
    for name, spec in read.programs.items():
        assert spec.module == whole["programs"][name]["module"]
    assert read == ExecutionPlan.from_json(json.dumps(whole))
    assert json.loads(str(plan)) == whole
    assert plan.program_texts() == {name: p["module"] for name, p
                                    in whole["programs"].items()}


def test_deferred_texts_are_asked_for_in_order():
    from mpmd import _mpmd_compiler
    from mpmd.compiler import ImportOptions, OptimizeOptions, Partitioner

    params, x = inputs()
    jax_text = mpmd.jit(two_layers, config()).lower(params, x).jax_text()
    partitioner = Partitioner(jax_text)
    with pytest.raises(ValueError, match="follows a partition"):
        partitioner.program_texts()
    imports = ImportOptions({"l1": ("m1", None), "l2": ("m2", None)})
    optimize = OptimizeOptions(mpmd.compiler.ScheduleKind.NONE)
    module, plan = partitioner.partition(imports, optimize,
                                         print_module=False,
                                         print_programs=False)
    assert module is None and '"module"' not in plan
    pool = _mpmd_compiler._context_pool()
    texts = partitioner.program_texts()
    assert texts and all(t.startswith('"builtin.module"')
                         for t in texts.values())
    assert partitioner.program_texts() == texts  # printed once
    # The module (and its context) is kept for the module's text, and
    # freed once that is printed.
    assert _mpmd_compiler._context_pool()["idle"] == pool["idle"]
    assert "mpmd.fragment_call" in partitioner.module_text()
    assert _mpmd_compiler._context_pool()["idle"] == min(pool["idle"] + 1,
                                                        pool["max_idle"])
    # A partition that printed its programs has none left to print.
    eager = Partitioner(jax_text)
    eager.partition(imports, optimize)
    with pytest.raises(ValueError, match="print_programs=False"):
        eager.program_texts()


def test_partition_results_hold_no_cycles():
    # The texts keep the partitioned module (and its MLIR context) until
    # they are printed; dropping them must free it at once, not at the
    # next garbage collection.
    import gc

    from mpmd import _mpmd_compiler
    from mpmd.compiler import Partitioner
    from mpmd.lowering import partition

    params, x = inputs()
    jax_text = mpmd.jit(two_layers, config()).lower(params, x).jax_text()
    gc.collect()
    gc.disable()
    try:
        text, plan = partition(config(), Partitioner(jax_text),
                               {}, {}, {}, {})
        pool = _mpmd_compiler._context_pool()
        del text, plan
        assert _mpmd_compiler._context_pool()["idle"] == min(
            pool["idle"] + 1, pool["max_idle"])
    finally:
        gc.enable()
