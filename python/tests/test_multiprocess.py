"""Multi-controller runs: `python -m mpmd.launch` starts 2 or 4 local
processes (CPU, gloo) of multiprocess/train_step.py, each of which trains
with `mpmd` over the job's global devices for 3 steps and checks every
shard it holds against `jax.jit`. Plus the launcher's own behaviour and the
failure paths: a plan that differs between processes, a program failing on
one process, a process killed mid-step."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.multiprocess

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "multiprocess", "train_step.py")


def launch(processes: int, devices: int, *args: str,
           timeout: float = 400) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the launcher sets the device count
    return subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", str(processes),
         "--devices-per-process", str(devices), "--grace", "60",
         "--timeout", str(timeout - 30), WORKER, *args],
        env=env, capture_output=True, text=True, timeout=timeout)


def passed(result: subprocess.CompletedProcess, processes: int) -> None:
    lines = [line for line in result.stdout.splitlines()
             if "shards equal jax.jit" in line]
    assert result.returncode == 0 and len(lines) == processes, (
        result.stdout[-4000:] + result.stderr[-2000:])
    for line in lines:
        assert int(re.search(r"(\d+) shards", line).group(1)) > 0


def test_two_processes_two_meshes_each(tmp_path):
    # m1, m2 on process 0 and m3, m4 on process 1: transfers within a
    # process (m1 -> m2) and across (m2 -> m3, and back for the backward).
    # The first step's parameters are global arrays on m4 (process 1):
    # the call moves them to m1..m3 across processes.
    path = tmp_path / "trace.json"
    passed(launch(2, 4, "blocks", "--global-inputs", "--trace", str(path)),
           2)
    # A fourth, traced step: one Perfetto file with every process's steps.
    events = json.loads(path.read_text())["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events
               if e.get("name") == "thread_name"}
    slices = [e for e in events if e.get("ph") == "X"]
    meshes = {threads[e["tid"]] for e in slices if e["cat"] != "transfer"}
    assert meshes == {"m1", "m2", "m3", "m4"}
    moves = {(e["args"]["source"], e["args"]["target"]) for e in slices
             if e["cat"] == "transfer"}
    assert {("m1", "m2"), ("m2", "m3"), ("m3", "m2")} <= moves
    # Per mesh, 4 forwards and 4 backwards of each of its stages' calls.
    backward = [e for e in slices if threads[e["tid"]] == "m3"
                and e["cat"] == "backward"]
    assert len(backward) == 4


def test_four_processes_one_mesh_each():
    passed(launch(4, 2, "blocks"), 4)


def test_meshes_spanning_two_processes_with_sharded_stages():
    # m2 and m3 each have a device on both processes; the blocks'
    # parameters are sharded over the mesh axis (SPMD across processes
    # inside a stage).
    passed(launch(2, 4, "span", "--sharded"), 2)


def test_plans_that_differ_between_processes_are_an_error_on_each():
    result = launch(2, 2, "mlp", "--mismatch-process", "1", timeout=200)
    assert result.returncode != 0
    for process in (0, 1):
        assert re.search(
            rf"\[{process}\] mpmd.runtime.processes.ProcessError: the "
            r"processes compiled different plans for function "
            r"'two_stage_mlp_step' \(process 0: \w+, process 1: \w+\)",
            result.stdout), result.stdout[-4000:]


def test_a_process_that_does_not_compile_is_named():
    result = launch(2, 2, "mlp", "--skip-compile-process", "1", timeout=200)
    assert result.returncode != 0
    assert re.search(
        r"\[0\] mpmd.runtime.processes.ProcessError: process 1 has not "
        r"compiled function 'two_stage_mlp_step' \(compile #0 of this "
        r"process\) within 5 s", result.stdout), result.stdout[-4000:]


def test_meshes_of_different_sizes_across_processes():
    # m1 = 2 devices of process 0, m2 = 1 device of process 0 and 3 of
    # process 1: activations go 2 -> 4 devices, cotangents 4 -> 2, each
    # as rounds of collective-permutes of pieces.
    passed(launch(2, 3, "uneven", timeout=300), 2)


def test_a_program_failing_on_one_process_stops_the_others():
    result = launch(2, 2, "mlp", "--fail-process", "1", timeout=200)
    assert result.returncode != 0
    assert "[1] mpmd.runtime.executor.ProgramExecutionError: program" in \
        result.stdout, result.stdout[-4000:]
    # Process 0 was waiting for process 1's transfers: it says why it
    # stops, naming the failed process, program and mesh.
    assert re.search(r"\[0\] mpmd: stopping process 0 because process 1: "
                     r"ProgramExecutionError: program \S+ on mesh 'm2'",
                     result.stdout), result.stdout[-4000:]
    assert "ran past --timeout" not in result.stderr


def test_a_killed_process_stops_the_others():
    result = launch(2, 2, "mlp", "--die-process", "1", timeout=200)
    assert result.returncode != 0
    assert "mpmd.launch: process 1 was killed by SIGKILL" in result.stderr
    assert "ran past --timeout" not in result.stderr
    # Process 0 ended on its own (the transfer's peer is gone, or JAX's
    # coordination service missed process 1's heartbeats), not killed by
    # the launcher after the grace period.
    assert "shards equal jax.jit" not in result.stdout
    assert re.search(r"\[0\] .*(Connection closed by peer|Terminating "
                     r"process because the JAX distributed service detected "
                     r"fatal errors)", result.stdout), result.stdout[-4000:]


def test_launcher_reports_the_failed_process_and_its_code(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "import os, sys, time\n"
        "me = int(os.environ['MPMD_PROCESS_ID'])\n"
        "assert os.environ['MPMD_NUM_PROCESSES'] == '3'\n"
        "assert os.environ['JAX_COORDINATOR_ADDRESS'].startswith('127.0.0.1:')\n"
        "assert '--xla_force_host_platform_device_count=2' in os.environ['XLA_FLAGS']\n"
        "print('hello from', me, sys.argv[1:])\n"
        "if me == 2: sys.exit(7)\n"
        "time.sleep(600)\n")
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "3",
         "--devices-per-process", "2", "--grace", "1", str(script), "a", "b"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 7
    for process in range(3):
        assert f"[{process}] hello from {process} ['a', 'b']" in result.stdout
    assert "mpmd.launch: process 2 exited with code 7" in result.stderr


def test_launcher_stops_a_job_past_its_timeout(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("import time\ntime.sleep(600)\n")
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "2", "--timeout", "2",
         str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 124
    assert "mpmd.launch: the job ran past --timeout 2 s" in result.stderr


def test_launcher_refuses_bad_arguments(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "2",
         str(tmp_path / "missing.py")], capture_output=True, text=True,
        timeout=60)
    assert result.returncode == 2
    assert "no such script" in result.stderr
    script = tmp_path / "ok.py"
    script.write_text("pass\n")
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "0", str(script)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "at least 1" in result.stderr


def test_distributed_initialize_checks_the_process_id(monkeypatch):
    import mpmd.distributed

    monkeypatch.setenv("MPMD_NUM_PROCESSES", "2")
    monkeypatch.setenv("MPMD_PROCESS_ID", "5")
    with pytest.raises(mpmd.distributed.DistributedError,
                       match=r"process id 5 is not in \[0, 2\)"):
        mpmd.distributed.initialize("127.0.0.1:1")
    monkeypatch.setenv("MPMD_PROCESS_ID", "one")
    with pytest.raises(mpmd.distributed.DistributedError,
                       match=r"MPMD_PROCESS_ID='one' is not an integer"):
        mpmd.distributed.initialize("127.0.0.1:1")


def test_transfers_between_meshes_sharing_devices_are_not_supported_yet():
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from mpmd.runtime import processes

    devices = jax.devices()
    a = NamedSharding(Mesh(np.array(devices[:2]), ("x",)), PartitionSpec())
    b = NamedSharding(Mesh(np.array(devices[1:3]), ("x",)), PartitionSpec())
    x = jax.device_put(np.ones(4, np.float32), a)
    with pytest.raises(processes.ProcessError,
                       match="not supported yet: a transfer across processes "
                             "between meshes that share devices"):
        processes.cross_process_transfer(x, a, b, (4,), np.float32)
