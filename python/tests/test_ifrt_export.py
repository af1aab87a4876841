"""`Lowered.as_text("ifrt")`: the partitioned program as IFRT IR, judged by
jaxlib's own Shardy:MPMD. For each program, our IFRT IR parses and verifies
with jaxlib's IFRT dialect and has the structure of what Shardy's lowering
(`jaxlib._sdy_mpmd.lower_to_ifrt`) makes of the same exported program: the
main function's signature and donated arguments, every call (atom program,
devices, mesh, donation, what it reads, what it waits for), every array
moved (copy or reshard, from what, from and to which array type) and what
the program returns. Both are parsed and walked; the text is not compared
(jaxlib merges copies differently, and prints the IFRT ops in pretty form).
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

import export_programs
import mpmd
import shardy_dialects
from meshes import MESHES, four_meshes, lower_transformer, transformer_data

CONTROL = "!ifrt.control"


def _attr(op: Any, name: str, default: str) -> str:
    try:
        return str(op.attributes[name])
    except KeyError:
        return default


def structure(text: str) -> dict[str, Any]:
    """What an IFRT IR program does, parsed and verified with jaxlib's
    dialects; values are named by where they come from (an argument, a
    call's result, a moved array), so that how moves are grouped into ops
    does not matter."""
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    module = shardy_dialects.parse(text)
    with module.context:
        top = list(module.body.operations)
        main = next(op for op in top if op.operation.name == "func.func")
        assert "ifrt.function" in main.attributes
        function_type = ir.FunctionType(
            ir.TypeAttr(main.attributes["function_type"]).value)
        donated = []
        if "arg_attrs" in main.attributes:
            donated = [index for index, attrs in enumerate(
                ir.ArrayAttr(main.attributes["arg_attrs"]))
                if "ifrt.donated" in ir.DictAttr(attrs)]
        block = main.regions[0].blocks[0]
        names: dict[Any, tuple] = {}
        for index, arg in enumerate(block.arguments):
            names[arg] = ("arg", index)
        calls, moves, returned = [], collections.Counter(), None
        call_of_control: dict[Any, int] = {}
        for op in block.operations:
            kind = op.operation.name
            inputs = [v for v in op.operands if str(v.type) != CONTROL]
            controls = [v for v in op.operands if str(v.type) == CONTROL]
            if kind == "ifrt.Call":
                index = len(calls)
                calls.append({
                    "callee": str(op.attributes["callee"]),
                    "devices": str(op.attributes["devices"]),
                    "mesh": str(op.attributes["ifrt.mesh_name"]),
                    "donated": _attr(op, "donated_input_indices",
                                     "array<i32>"),
                    "io_aliases": _attr(op, "io_aliases", "[]"),
                    "inputs": [names[v] for v in inputs],
                    "outputs": [str(r.type) for r in op.results][:-1],
                    "after": [call_of_control[c] for c in controls],
                })
                for number, result in enumerate(list(op.results)[:-1]):
                    names[result] = ("call", index, number)
                call_of_control[op.results[len(op.results) - 1]] = index
            elif kind in ("ifrt.CopyArrays", "ifrt.Reshard"):
                assert not controls, op
                for source, result in zip(inputs, list(op.results)[:-1]):
                    move = (kind, names[source], str(source.type),
                            str(result.type))
                    names[result] = ("moved",) + move
                    moves[move] += 1
            elif kind == "func.return":
                returned = [names[v] for v in op.operands]
            else:
                raise AssertionError(f"unexpected op in main: {op}")
        atoms = {}
        for op in top:
            if op.operation.name != "builtin.module":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            assert str(op.attributes["sym_visibility"]) == '"private"'
            functions = {ir.StringAttr(f.attributes["sym_name"]).value:
                         str(ir.TypeAttr(f.attributes["function_type"]).value)
                         for f in op.regions[0].blocks[0].operations
                         if f.operation.name == "func.func"}
            atoms[name] = functions
        return {"inputs": [str(t) for t in function_type.inputs],
                "results": [str(t) for t in function_type.results],
                "donated": donated, "calls": calls, "moves": moves,
                "returned": returned, "atoms": atoms}


def check_like_shardy(lowered: Any) -> dict[str, Any]:
    """Our IFRT IR and Shardy's lowering of the same exported program have
    the same structure; returns ours."""
    ours = structure(lowered.as_text("ifrt"))
    theirs = structure(shardy_dialects.lower_to_ifrt(lowered.as_text("mpmd")))
    for key in ("inputs", "results", "donated", "returned", "atoms"):
        assert ours[key] == theirs[key], key
    assert len(ours["calls"]) == len(theirs["calls"])
    for index, (mine, shardy) in enumerate(zip(ours["calls"],
                                               theirs["calls"])):
        assert mine == shardy, f"call {index}"
    assert ours["moves"] == theirs["moves"]
    # One IFRT call per fragment_call, one moved array per transfer.
    text = lowered.as_text("mpmd")
    assert len(ours["calls"]) == text.count("mpmd.fragment_call")
    assert sum(ours["moves"].values()) == text.count("mpmd.transfer ")
    return ours


def test_adam_pipeline():
    """The README's program: 1F1B over 8 microbatches on 4 meshes, programs
    shared by microbatches through their constants (specializations move
    into their own modules with the shared program)."""
    lowered = export_programs.adam_pipeline()
    ours = check_like_shardy(lowered)
    specialized = [name for name in ours["atoms"] if ".c" in name]
    assert specialized
    for name in specialized:
        shared = name.rsplit(".c", 1)[0]
        assert set(ours["atoms"][name]) == {"main", shared}
    # Each mesh's calls wait for the one before: the schedule holds.
    by_mesh = collections.defaultdict(list)
    for index, call in enumerate(ours["calls"]):
        by_mesh[call["mesh"]].append(index)
    for indices in by_mesh.values():
        for before, after in zip(indices, indices[1:]):
            assert ours["calls"][after]["after"] == [before]


def test_tensor_parallel_transformer_with_donation():
    lowered = export_programs.tensor_parallel_transformer()
    ours = check_like_shardy(lowered)
    assert ours["donated"]  # the parameters, given up by the caller
    assert any(call["io_aliases"] != "[]" for call in ours["calls"])
    assert any(call["donated"] != "array<i32>" for call in ours["calls"])
    assert any("2x1" in t or "1x2" in t for t in ours["inputs"])


def test_heterogeneous_meshes():
    """2 devices ("x",) feeding 2x2 ("x", "y"): the move between layouts
    is a reshard onto devices 2..5."""
    lowered = export_programs.heterogeneous_meshes()
    ours = check_like_shardy(lowered)
    assert [call["devices"] for call in ours["calls"]] == [
        "#ifrt<devices[0, 1]>", "#ifrt<devices[2, 3, 4, 5]>"]
    (kind, *_), = ours["moves"]
    assert kind == "ifrt.Reshard"


@pytest.mark.parametrize("schedule", ["zero-bubble-h1", "gpipe"])
def test_schedules(schedule):
    lowered = export_programs.transformer_with(schedule)
    ours = check_like_shardy(lowered)
    assert all(kind == "ifrt.CopyArrays" for kind, *_ in ours["moves"])


def test_zero_bubble_v():
    """ZB-V: two stages per mesh in a V, split backwards; each mesh's calls
    (both of its stages) wait for the one before, in the V's order."""
    import models

    meshes = MESHES[:2]
    assignment = models.v_assignment(4, meshes)
    topology = {name: four_meshes()[name] for name in meshes}
    config = mpmd.make_config(topology, assignment,
                              pipeline_schedule="zero-bubble-v")
    params, tokens, targets = transformer_data(4, 4)
    lowered = mpmd.jit(models.transformer_microbatched_step, config).lower(
        params, tokens, targets)
    ours = check_like_shardy(lowered)
    on_first = [call for call in ours["calls"] if call["mesh"] == '"m1"']
    assert all(call["after"] for call in on_first[1:])


def test_offloaded_activations_move_between_memory_kinds():
    """Residuals kept in pinned host memory: copies on one mesh between
    memory kinds, arrays with `memory_kind = "pinned_host"`."""
    lowered, _ = lower_transformer("1f1b", offload_activations=True)
    ours = check_like_shardy(lowered)
    to_host = [move for move in ours["moves"]
               if 'memory_kind = "pinned_host"' in move[3]]
    assert to_host and all(move[0] == "ifrt.CopyArrays" for move in to_host)


def test_compiler_ir_is_jaxlib_ifrt_module():
    lowered = export_programs.adam_pipeline("gpipe")
    module = lowered.compiler_ir("ifrt")
    text = str(module)
    # jaxlib knows the dialect: it prints the IFRT ops in pretty form.
    assert "ifrt.Call @" in text and '"ifrt.Call"' not in text
    assert "on devices [0, 1]" in text
    assert lowered.as_text("ifrt") is lowered.as_text("ifrt")


def test_lowering_a_program_that_is_not_exported_is_an_error():
    text = """
    !m = !mpmd.mesh_tensor<"m1", tensor<4xf32>>
    func.func @main(%arg0: !m) -> !m
        attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>>} {
      %0 = mpmd.fragment<mesh="m1", origin=["f"]> (%arg0) (%x: tensor<4xf32>) {
        mpmd.return %x : tensor<4xf32>
      } : (!m) -> !m
      return %0 : !m
    }
    """
    with pytest.raises(mpmd.CompilerError, match="run mpmd-export first"):
        mpmd.compiler.lower_to_ifrt(text)
