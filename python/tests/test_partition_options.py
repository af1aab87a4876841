"""The simple partitioning options travel as the compiler's own option text:
declared once, as metadata on PartitioningOptions' fields, turned into
"NAME=VALUE" entries by `compiler_options`, and parsed by the binding with
the options of the mpmd-partition pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import pytest

import mpmd
from mpmd.compiler import ImportOptions, OptimizeOptions, Partitioner
from mpmd.errors import ConfigError
from mpmd.options import COMPILER, PartitioningOptions, compiler_options

# Two layers on two meshes and a nameless op reading both: it needs a
# transfer, which only infer-transfers lets mesh inference add.
CROSS_MESH = """
!t = tensor<4xf32>
func.func @main(%x: !t, %y: !t) -> !t
    attributes {topology = #mpmd.topology<<"m1" : <["x"=1]>>, <"m2" : <["x"=1]>>>} {
  %0 = mpmd.named_computation<"layer1"> (%x) (%a: !t) {
    %1 = stablehlo.add %a, %a : !t
    mpmd.return %1 : !t
  } : (!t) -> !t
  %2 = mpmd.named_computation<"layer2"> (%y) (%a: !t) {
    %3 = stablehlo.multiply %a, %a : !t
    mpmd.return %3 : !t
  } : (!t) -> !t
  %4 = stablehlo.subtract %0, %2 : !t
  func.return %4 : !t
}
"""
ASSIGNMENT = ImportOptions({"layer1": ("m1", 0), "layer2": ("m2", 1)})


def test_the_switches_are_declared_on_the_fields():
    assert compiler_options(PartitioningOptions()) == [
        "infer-transfers=false", "infer-cross-mesh-reductions=false",
        "merge-last-stage=false", "split-backward=false", "remat=false",
        "merge-remat=false"]
    assert "remat=true" in compiler_options(PartitioningOptions(remat=True))
    # Shardy's keys set the same fields, so the same text.
    assert compiler_options(PartitioningOptions(
        mpmd_infer_transfers=True)) == compiler_options(
            PartitioningOptions(infer_transfers=True))
    explicit = {"pipeline_schedule", "fragment_merge_rules",
                "offload_activations", "auto_memory_limit_bytes"}
    assert {f.name for f in fields(PartitioningOptions)
            if COMPILER not in f.metadata} == explicit


def test_every_declared_name_is_an_option_of_mpmd_partition():
    text = " ".join(compiler_options(PartitioningOptions(
        infer_transfers=True)))
    printed = mpmd.run_pipeline(
        CROSS_MESH,
        f"mpmd-partition{{assignment=layer1=m1:0,layer2=m2:1 {text}}}")
    assert "mpmd.fragment_call" in printed


@dataclass(frozen=True)
class Other:
    name: str = field(default="a", metadata={COMPILER: "name"})
    count: int = field(default=3, metadata={COMPILER: "count"})
    python_only: str = "not sent"


def test_values_are_written_as_mlir_reads_them():
    assert compiler_options(Other()) == ["name=a", "count=3"]
    # A space would end the value: braces keep it whole (MLIR strips them).
    assert compiler_options(Other(name="a b"))[0] == "name={a b}"
    assert compiler_options(Other(name=""))[0] == "name="
    for bad in ("a{b", "a}", 'say "x"', "it's"):
        with pytest.raises(ConfigError, match="braces or quotes"):
            compiler_options(Other(name=bad))
    with pytest.raises(TypeError, match="a bool, int or str"):
        compiler_options(Other(name=None))


def test_the_text_reaches_the_compiler():
    with pytest.raises(mpmd.CompilerError, match="infer-transfers=true"):
        Partitioner(CROSS_MESH).partition(
            ASSIGNMENT, OptimizeOptions(), ["infer-transfers=false"])
    # Left out: the compiler's default (false).
    with pytest.raises(mpmd.CompilerError, match="infer-transfers=true"):
        Partitioner(CROSS_MESH).partition(ASSIGNMENT, OptimizeOptions())
    module, plan = Partitioner(CROSS_MESH).partition(
        ASSIGNMENT, OptimizeOptions(), ["infer-transfers=true"])
    assert "mpmd.transfer" in module and '"version": 1' in plan


def test_the_module_is_printed_when_asked():
    printed, plan = Partitioner(CROSS_MESH).partition(
        ASSIGNMENT, OptimizeOptions(), ["infer-transfers=true"])
    partitioner = Partitioner(CROSS_MESH)
    with pytest.raises(ValueError, match="follows a partition"):
        partitioner.module_text()
    none, lazy_plan = partitioner.partition(
        ASSIGNMENT, OptimizeOptions(), ["infer-transfers=true"],
        print_module=False)
    assert none is None and lazy_plan == plan
    # The kept module is partitioned once and read nowhere else.
    with pytest.raises(ValueError, match="already partitioned"):
        partitioner.partition(ASSIGNMENT, OptimizeOptions(),
                              ["infer-transfers=true"], print_module=False)
    with pytest.raises(ValueError, match="already partitioned"):
        partitioner.auto_assign(stages=2, fixed=[])
    assert partitioner.module_text() == printed
    assert partitioner.module_text() == printed  # printed once, kept


def test_lowering_prints_the_module_on_first_use():
    from mpmd.lowering import module_text, partition

    import jax

    mesh = jax.sharding.AbstractMesh((1,), ("x",))
    config = mpmd.make_config(
        {"m1": mesh, "m2": mesh},
        {"layer1": ("m1", 0), "layer2": ("m2", 1)},
        partitioning_options={"infer_transfers": True})
    text, plan = partition(config, Partitioner(CROSS_MESH), {}, {}, {}, {})
    assert callable(text)
    printed = module_text(text)
    assert "mpmd.transfer" in printed and module_text(printed) is printed
    assert '"version": 1' in plan


@pytest.mark.parametrize("entry, message", [
    ("no-such-option=true", "no such option no-such-option"),
    ("schedule=1f1b", "partition option 'schedule' is an argument of its "
                      "own"),
    ("assignment=layer1=m1", "partition option 'assignment' is an argument"),
    ("merge-rules=a:b", "partition option 'merge-rules' is an argument"),
    # cl's own message about the value goes to stderr.
    ("remat=maybe", "invalid partition options 'infer-transfers=true "
                    "remat=maybe'"),
])
def test_malformed_text_is_a_value_error(entry, message):
    with pytest.raises(ValueError, match=message):
        Partitioner(CROSS_MESH).partition(
            ASSIGNMENT, OptimizeOptions(), ["infer-transfers=true", entry])


def test_optimize_options_past_the_schedule_are_keywords():
    # split_backward used to come second: a call written for it fails
    # rather than passing a bool as the order.
    with pytest.raises(TypeError):
        OptimizeOptions(mpmd.compiler.ScheduleKind.NONE, True)
