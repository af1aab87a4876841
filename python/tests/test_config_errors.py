"""Every configuration error names what to change."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mpmd
from mpmd.config import ConfigError, make_config
from mpmd.origins import Origin
from mpmd.schedules import (FragmentInfo, FragmentKind, ScheduleError,
                            explicit_order, merge_pairs)
from mpmd.stages import jit


def meshes() -> dict[str, jax.sharding.Mesh]:
    devices = np.array(jax.devices()[:4]).reshape(2, 2)
    return {"m1": jax.sharding.Mesh(devices[0], ("x",)),
            "m2": jax.sharding.Mesh(devices[1], ("x",))}


def step(x, y):
    a = mpmd.named_computation(lambda v: v * 2, name="a")(x)
    return mpmd.named_computation(lambda v, w: v + w, name="b")(a, y)


def fragment(key: str, mesh: str = "m1", kind: str = "F",
             counter: int = 0) -> FragmentInfo:
    label = key.split("#")[0]
    name, _, count = label.partition("(")
    kinds = {"F": FragmentKind.FORWARD, "B": FragmentKind.BACKWARD}
    return FragmentInfo((Origin(name, int(count[:-1]) if count else 0),), 0,
                        counter, mesh, kinds[kind], label, key)


def test_empty_topology():
    with pytest.raises(ConfigError,
                       match="`topology` must have at least one mesh"):
        make_config({}, {})


def test_bad_mesh_name():
    with pytest.raises(ConfigError, match=r"mesh name 'm 1' is not a valid name"):
        make_config({"m 1": meshes()["m1"]}, {})


def test_bad_stage():
    with pytest.raises(ConfigError, match=r"assignment\['a'\] has stage -1"):
        make_config(meshes(), {"a": ("m1", -1)})


def test_io_assignment_names_unknown_mesh():
    with pytest.raises(ConfigError, match=r"Invalid mesh name\(s\) in "
                       "input_mesh_assignment: {'m3'} not in the topology"):
        make_config(meshes(), {"a": "m1"}, input_mesh_assignment={0: "m3"})


def test_io_assignment_index_out_of_range():
    config = make_config(meshes(), {"a": "m1", "b": "m2"},
                         input_mesh_assignment={5: "m1"})
    with pytest.raises(ConfigError, match="input_mesh_assignment index 5 is out of range: the function has 2 flat values"):
        jit(step, config).lower(jnp.ones(4), jnp.ones(4))


def test_io_assignment_structure_mismatch():
    config = make_config(meshes(), {"a": "m1", "b": "m2"},
                         output_mesh_assignment=("m2", "m2"))
    with pytest.raises(ConfigError, match="output_mesh_assignment must be a pytree prefix of the function's results"):
        jit(step, config).lower(jnp.ones(4), jnp.ones(4))


def test_io_assignment_pytree_places_inputs():
    config = make_config(meshes(), {"a": "m1", "b": "m2"},
                         input_mesh_assignment=(None, "m2"))
    lowered = jit(step, config).lower(jnp.ones(4), jnp.ones(4))
    assert [spec.mesh for spec in lowered.plan.inputs] == ["m1", "m2"]


def test_jit_needs_a_config():
    with pytest.raises(ConfigError, match="mpmd.jit needs a config from mpmd.make_config"):
        jit(step, {"a": "m1"})


def test_schedule_of_the_wrong_type():
    with pytest.raises(ConfigError, match="pipeline_schedule must be a built-in name"):
        make_config(meshes(), {}, partitioning_options={"pipeline_schedule": 3})


def test_contradictory_comparator():
    fragments = [fragment("a#0"), fragment("b#0")]
    with pytest.raises(ScheduleError, match="the schedule comparator is contradictory on mesh 'm1'"):
        explicit_order(lambda x, y: True, fragments)


def test_table_naming_an_idle_mesh():
    with pytest.raises(ScheduleError, match="names mesh 'm9', which runs no fragment"):
        explicit_order({"m9": [], "m1": ["a#0"]}, [fragment("a#0")])


def test_malformed_merge_rule():
    with pytest.raises(ScheduleError, match="a merge rule is a pair of fragment labels"):
        merge_pairs(["a:b"], [])


def test_merge_predicate_pairs_per_microbatch():
    fragments = [fragment("f#0"), fragment("f(1)#0", kind="B"),
                 fragment("f#1", counter=1), fragment("f(1)#1", kind="B",
                                                      counter=1),
                 fragment("g#0", mesh="m2")]
    pairs = merge_pairs(lambda a, b: a.label + "(1)" == b.label, fragments)
    assert pairs == [("f", "f(1)")]
