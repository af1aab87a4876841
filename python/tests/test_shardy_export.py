"""What `Lowered.as_text("mpmd")` prints is a program the real Shardy:MPMD
(jaxlib's `_sdy_mpmd`, the pinned jaxlib) parses, verifies and lowers to
IFRT IR: homogeneous and heterogeneous topologies, sharded and replicated
values, donation, and programs shared by microbatches through constant
arguments."""

from __future__ import annotations

import re

import pytest

import export_programs
import shardy_dialects


def calls_and_copies(text: str) -> tuple[int, int]:
    return (len(re.findall(r"mpmd\.fragment_call", text)),
            len(re.findall(r"mpmd\.transfer", text)))


def check_with_shardy(text: str) -> str:
    """Parses, verifies and lowers `text` with jaxlib's Shardy; checks that
    IFRT IR has a call per fragment_call and a copy or reshard per
    transfer."""
    shardy_dialects.parse(text)
    ifrt = shardy_dialects.lower_to_ifrt(text)
    calls, transfers = calls_and_copies(text)
    assert ifrt.count("ifrt.Call ") == calls
    # A copy or reshard may move several arrays at once.
    moved = sum(group.count("%") for group in re.findall(
        r"ifrt\.(?:CopyArrays|Reshard)\(([^)]*)\)", ifrt))
    assert moved == transfers
    return ifrt


def test_adam_pipeline_with_shared_programs():
    """The README's program: 1F1B over 8 microbatches, one program per
    stage and kind shared through constant arguments (a microbatch's
    index), each call passing all its callee's arguments."""
    lowered = export_programs.adam_pipeline()
    text = lowered.as_text("mpmd")
    assert "mpmd.specializes" in text  # programs shared by microbatches
    assert "sdy.mesh @mesh = " in text
    check_with_shardy(text)
    # The specializations do not change what runs: one program per shared
    # body in the plan.
    assert not any(".c" in name for name in lowered.plan.programs)


def test_tensor_parallel_transformer_with_donation():
    lowered = export_programs.tensor_parallel_transformer()
    text = lowered.as_text()
    assert '{"model"}' in text and "tf.aliasing_output" in text
    ifrt = check_with_shardy(text)
    assert "donated" in ifrt or "io_aliases" in ifrt


def test_heterogeneous_meshes():
    """2 devices ("x",) feeding 2x2 ("x", "y"), which Shardy itself cannot
    partition: each mesh shape has its own sdy.mesh, and Shardy lowers the
    program (the move between the layouts is a reshard)."""
    lowered = export_programs.heterogeneous_meshes()
    text = lowered.as_text()
    declared = dict(re.findall(r"sdy\.mesh @(\w+) = <(\[[^]]*\])>", text))
    assert sorted(declared.values()) == ['["x"=2, "y"=2]', '["x"=2]']
    ifrt = check_with_shardy(text)
    assert "ifrt.Reshard" in ifrt


@pytest.mark.parametrize("schedule", ["gpipe", "zero-bubble-h1"])
def test_schedules_export_for_shardy(schedule):
    lowered = export_programs.transformer_with(schedule)
    check_with_shardy(lowered.as_text())
