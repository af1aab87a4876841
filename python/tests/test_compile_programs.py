"""`compile_programs`: a plan's distinct programs compiled on several
threads give the programs one thread gives, in the plan's order, and the
first failing program (in that order) is the one reported."""

from __future__ import annotations

import dataclasses

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
