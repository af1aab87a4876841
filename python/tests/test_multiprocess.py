"""Multi-controller runs: `python -m mpmd.launch` starts 2 or 4 local
processes (CPU, gloo) of multiprocess/train_step.py, each of which trains
with `mpmd` over the job's global devices for 3 steps and checks every
shard it holds against `jax.jit`; multiprocess/adam.py, the optax training
loop called on its own results; multiprocess/loss.py, results read on
every process with `mpmd.fetch`. Plus the launcher's own behaviour and the
failure paths: a plan that differs between processes, a program failing on
one process, a process killed mid-step, `float(loss)` of a loss on another
process's mesh, a failure after the others finished, `mpmd.fetch` called
differently on different processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.multiprocess

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "multiprocess", "train_step.py")
LOSS = os.path.join(HERE, "multiprocess", "loss.py")
ADAM = os.path.join(HERE, "multiprocess", "adam.py")
RESHARD = os.path.join(HERE, "multiprocess", "reshard.py")


def launch(processes: int, devices: int, *args: str,
           timeout: float = 400, worker: str = WORKER,
           grace: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the launcher sets the device count
    return subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", str(processes),
         "--devices-per-process", str(devices), "--grace", str(grace),
         "--timeout", str(timeout - 30), worker, *args],
        env=env, capture_output=True, text=True, timeout=timeout)


def output(result: subprocess.CompletedProcess) -> str:
    """What the job printed: the processes' stdout, then their stderr
    (tracebacks, mpmd's stop messages) and the launcher's messages."""
    return result.stdout + result.stderr


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
        # A traceback, or (the process that reported second) a line after
        # the message saying it stops because of the other one.
        assert re.search(
            rf"\[{process}\] .*ProcessError: the "
            r"processes compiled different plans for function "
            r"'two_stage_mlp_step' \(process 0: \w+, process 1: \w+\)",
            output(result)), output(result)[-4000:]


def test_a_process_that_does_not_compile_is_named():
    result = launch(2, 2, "mlp", "--skip-compile-process", "1", timeout=200)
    assert result.returncode != 0
    assert re.search(
        r"\[0\] mpmd.runtime.processes.ProcessError: process 1 has not "
        r"compiled function 'two_stage_mlp_step' \(compile #0 of this "
        r"process\) within 5 s", output(result)), output(result)[-4000:]


def test_meshes_of_different_sizes_across_processes():
    # m1 = 2 devices of process 0, m2 = 1 device of process 0 and 3 of
    # process 1: activations go 2 -> 4 devices, cotangents 4 -> 2, each
    # as rounds of collective-permutes of pieces.
    passed(launch(2, 3, "uneven", timeout=300), 2)


def test_a_program_failing_on_one_process_stops_the_others():
    result = launch(2, 2, "mlp", "--fail-process", "1", timeout=200)
    assert result.returncode != 0
    assert "[1] mpmd.runtime.executor.ProgramExecutionError: program" in \
        result.stderr, output(result)[-4000:]
    # Process 0 was waiting for process 1's transfers: it says why it
    # stops, naming the failed process, program and mesh.
    assert re.search(r"\[0\] mpmd: stopping process 0 because process 1: "
                     r"ProgramExecutionError: program \S+ on mesh 'm2'",
                     result.stderr), output(result)[-4000:]
    assert "ran past --timeout" not in result.stderr
    assert re.search(r"mpmd.launch: process 1 failed first: "
                     r"ProgramExecutionError: program", result.stderr)


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
                     r"fatal errors)", output(result)), output(result)[-4000:]
    # Where the survivor saw it in a transfer (not JAX's heartbeat abort):
    # the error names the lost process, its mesh and the plan step.
    if "Connection closed by peer" in output(result):
        assert re.search(
            r"\[0\] mpmd: process 0 of 2: a transfer across processes lost "
            r"its peer: process 1 \(holding mesh 'm\d'\) stopped .* step "
            r"\d+ of the plan, the transfer m\d -> m\d of float32",
            output(result)), output(result)[-4000:]
        # The uncaught error is shown as the mpmd error it means, raised
        # from JAX's.
        assert re.search(
            r"\[0\] mpmd.runtime.processes.ProcessLostError: a transfer "
            r"across processes lost its peer: process 1", output(result)), \
            output(result)[-4000:]


def test_a_killed_peer_is_an_mpmd_error_the_survivor_can_catch():
    """Process 1 dies in the second step; process 0 reads its parameters
    with mpmd.fetch and catches mpmd.ProcessLostError naming process 1,
    its mesh and the plan step that waited on it."""
    result = launch(2, 2, "mlp", "--die-process", "1", "--catch-lost",
                    timeout=200)
    assert result.returncode != 0
    assert "ran past --timeout" not in result.stderr
    # Unless JAX's coordination service aborted process 0 first (it missed
    # process 1's heartbeats before the transfer noticed), it caught it.
    if "Terminating process because the JAX distributed service" not in \
            output(result):
        assert re.search(
            r"\[0\] process 0: caught ProcessLostError: processes \(1,\), "
            r"meshes \('m2',\), step \d+: a transfer across processes lost "
            r"its peer: process 1 \(holding mesh 'm2'\)", result.stdout), \
            output(result)[-4000:]


def test_a_lost_peer_is_named_with_its_mesh_and_step():
    """The message for JAX's bare "Connection closed by peer": the process
    gone, the mesh it held, the plan step waiting on it."""
    from mpmd.runtime import failures, processes

    failures.note_remote_transfer(7, "m2", "m3", "float32[4x8]@m3",
                                  {1: ["m3"]})
    try:
        error = RuntimeError("Gloo collective permute failed: [pair.cc:547] "
                             "Connection closed by peer [127.0.0.1]:1")
        wrapped = ValueError("reading the loss")
        wrapped.__cause__ = error
        lost = failures.lost_peer_error(wrapped)
        assert isinstance(lost, processes.ProcessLostError)
        import mpmd  # noqa: PLC0415
        assert processes.ProcessLostError is mpmd.ProcessLostError
        assert (lost.processes, lost.meshes, lost.step, lost.transfer) == \
            ((1,), ("m3",), 7, "m2 -> m3 of float32[4x8]@m3")
        # Found again where it is the cause of a later error.
        later = RuntimeError("reading")
        later.__cause__ = lost
        assert failures.lost_peer_error(later) is lost
        message = str(failures.lost_peer_error(wrapped))
        assert message == (
            "a transfer across processes lost its peer: process 1 (holding "
            "mesh 'm3') stopped (killed, or ended) while step 7 of the plan, "
            "the transfer m2 -> m3 of float32[4x8]@m3, was waiting on it")
        assert failures.lost_peer_error(RuntimeError("out of memory")) is None
    finally:
        failures._last_remote = None
        failures._lost.clear()


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


class _Ended:
    """A child process already ended with `code` (negative: the signal)."""

    def __init__(self, code):
        self.returncode = code

    def poll(self):
        return self.returncode

    def kill(self):
        raise AssertionError("an ended process is not killed")


def test_launcher_names_the_killed_process_first_among_those_ended_in_one_poll(
        tmp_path, capsys):
    # Process 1 was killed; process 0 failed on the lost connection before
    # the launcher's next poll saw either. The launcher names the killed
    # one first and exits with a failure, then says how process 0 ended.
    from mpmd import launch as launcher
    code = launcher._supervise([_Ended(1), _Ended(-9)], grace=5, timeout=None,
                               failures=str(tmp_path))
    assert code == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["mpmd.launch: process 1 was killed by SIGKILL",
                     "mpmd.launch: process 0 exited with code 1"]


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

    from mpmd.runtime import processes, remote

    devices = jax.devices()
    a = NamedSharding(Mesh(np.array(devices[:2]), ("x",)), PartitionSpec())
    b = NamedSharding(Mesh(np.array(devices[1:3]), ("x",)), PartitionSpec())
    x = jax.device_put(np.ones(4, np.float32), a)
    with pytest.raises(processes.ProcessError,
                       match="not supported yet: a transfer across processes "
                             "between meshes that share devices"):
        remote.cross_process_transfer(x, a, b, (4,), np.float32)


# --- A failure anywhere ends the job; results read on every process ---------


@pytest.mark.parametrize("initialize", ["mpmd", "jax"])
def test_float_of_a_loss_on_another_processs_mesh_ends_the_job(initialize):
    # The loss lives on m2, process 1's devices: float(loss) on process 0
    # raises JAX's "non-addressable" error, told how to read it instead;
    # process 0 ends at once (no wait in JAX's shutdown) and process 1,
    # waiting for process 0 in the next step's transfer, stops naming it.
    # The same when the script calls jax.distributed.initialize itself
    # (mpmd's failure handling then starts with the first compile).
    flags = ["--jax-initialize"] if initialize == "jax" else []
    start = time.monotonic()
    result = launch(2, 2, "float", *flags, worker=LOSS, timeout=150)
    elapsed = time.monotonic() - start
    text = output(result)
    assert result.returncode == 1, text[-4000:]
    assert elapsed < 60, f"the job took {elapsed:.0f} s to end"
    assert "[0] RuntimeError: Fetching value for `jax.Array` that spans " \
        "non-addressable" in result.stderr, text[-4000:]
    assert re.search(r"\[0\] mpmd: this array's devices are not all this "
                     r"process's .* call mpmd\.fetch\(x\) on every process",
                     result.stderr), text[-4000:]
    assert re.search(r"\[1\] mpmd: stopping process 1 because process 0: "
                     r"RuntimeError: Fetching value .* \(at loss\.py:\d+\) "
                     r"\[mpmd: read it on every process with "
                     r"mpmd\.fetch\(x\)\]", result.stderr), text[-4000:]
    assert re.search(r"mpmd\.launch: process 0 failed first: RuntimeError",
                     result.stderr), text[-4000:]
    # Both stopped on their own (the launcher would have waited --grace
    # 60 s before killing them).
    assert "the second step ended" not in result.stdout


@pytest.fixture(scope="module")
def fetched():
    return launch(2, 2, "fetch", worker=LOSS, timeout=150)


def test_fetch_reads_a_loss_on_every_process(fetched):
    # Every process, with or without the loss's devices, reads the loss
    # (and parameters on either mesh, an array sharded over both
    # processes, bfloat16) and finds jax.jit's values.
    assert fetched.returncode == 0, output(fetched)[-4000:]
    losses = re.findall(r"^\[(\d)\] process \1: loss (\S+) fetched, equal "
                        r"to jax\.jit$", fetched.stdout, re.M)
    assert sorted(p for p, _ in losses) == ["0", "1"], fetched.stdout
    assert losses[0][1] == losses[1][1]


def test_launcher_output_is_prefixed_lines_without_gloo_chatter(fetched):
    assert "[Gloo]" not in output(fetched)
    assert "peer ranks" not in output(fetched)
    for stream in (fetched.stdout, fetched.stderr):
        for line in stream.splitlines():
            assert re.match(r"\[[01]\] ", line), repr(line)


def test_adam_training_loop_in_two_processes():
    # m0, m1 on process 0 and m2, m3 on process 1: each layer's parameters
    # and Adam moments stay on their mesh over 6 calls, at most 2
    # compiles, losses (mpmd.fetch) and shards equal jax.jit.
    result = launch(2, 4, worker=ADAM, timeout=200)
    lines = re.findall(r"^\[(\d)\] process \1: 6 calls, [12] compiles, "
                       r"\d+ shards and the losses equal jax\.jit, every "
                       r"layer's state on its mesh$", result.stdout, re.M)
    assert result.returncode == 0 and sorted(lines) == ["0", "1"], \
        output(result)[-4000:]


def test_a_failure_after_the_others_finished_stops_them_at_exit():
    # Process 0 finished its script and waits at exit (where JAX's
    # shutdown would wait for process 1 regardless); process 1 then raises.
    result = launch(2, 2, "raise-late", worker=LOSS, timeout=150)
    text = output(result)
    assert result.returncode == 1, text[-4000:]
    assert "[0] process 0: finished" in result.stdout
    assert "[1] ValueError: a late failure on process 1" in result.stderr
    assert re.search(r"\[0\] mpmd: stopping process 0 because process 1: "
                     r"ValueError: a late failure on process 1 \(at "
                     r"loss\.py:\d+\)", result.stderr), text[-4000:]
    assert "was killed" not in result.stderr


def test_a_process_stuck_after_the_others_finished_is_named():
    # Process 1 sleeps; process 0 waits at exit for 3 s (EXIT_WAIT_S), then
    # ends, names it, and process 1 is stopped with that message.
    result = launch(2, 2, "stuck", worker=LOSS, timeout=150)
    text = output(result)
    assert result.returncode == 1, text[-4000:]
    assert re.search(r"\[0\] mpmd: process 0 finished its script, but "
                     r"processes \[1\] did not finish theirs within 3 s",
                     result.stderr), text[-4000:]
    assert re.search(r"\[1\] mpmd: stopping process 1 because process 0: "
                     r"it finished, but processes \[1\] did not finish",
                     result.stderr), text[-4000:]
    assert "[1] process 1: finished" not in result.stdout


def test_fetch_of_different_values_is_an_error():
    # Process 1 (the loss's owner) fetches a parameter where process 0
    # fetches the loss: process 0 sees another shape and says so.
    result = launch(2, 2, "fetch-mismatch", worker=LOSS, timeout=150)
    text = output(result)
    assert result.returncode == 1, text[-4000:]
    assert re.search(
        r"\[0\] mpmd\.runtime\.processes\.FetchError: mpmd\.fetch call #0: "
        r"process 1 published \[\[8, 16\], \"float32\"\] \(shape, dtype\) "
        r"where process 0 reads the value as \[\[\], \"float32\"\]: every "
        r"process must call mpmd\.fetch on the same values in the same "
        r"order", result.stderr), text[-4000:]
    assert re.search(r"\[1\] mpmd: stopping process 1 because process 0: "
                     r"FetchError", result.stderr), text[-4000:]


def test_fetch_another_process_never_makes_times_out():
    result = launch(2, 2, "fetch-missing", worker=LOSS, timeout=150)
    text = output(result)
    assert result.returncode == 1, text[-4000:]
    assert re.search(
        r"\[0\] mpmd\.runtime\.processes\.ProcessError: process 0 waited 3 s"
        r" in mpmd\.fetch \(call #0 of this process\) for process 1 to "
        r"publish the value: every process must call mpmd\.fetch",
        result.stderr), text[-4000:]
    assert re.search(r"\[1\] mpmd: stopping process 1 because process 0: "
                     r"ProcessError", result.stderr), text[-4000:]


def test_fetch_in_one_process_is_device_get():
    import jax
    import numpy as np

    import mpmd

    tree = {"a": jax.numpy.arange(3.0), "b": [np.ones(2), 1.5]}
    got = mpmd.fetch(tree)
    assert isinstance(got["a"], np.ndarray)
    np.testing.assert_array_equal(got["a"], np.arange(3.0))
    assert got["b"][1] == 1.5
    assert "fetch" in mpmd.__all__


def test_what_fetch_cannot_read_is_said_the_same_everywhere(monkeypatch):
    # Decided from type, dtype and size only, so every process raises
    # the same error before any process waits for another.
    import jax
    import numpy as np

    from mpmd.runtime import fetch, processes

    def traced(x):
        fetch._check_fetchable("x", x)
        return x

    with pytest.raises(processes.FetchError,
                       match=r"traced value at x: call it on the results"):
        jax.jit(traced)(np.ones(2))
    with pytest.raises(processes.FetchError,
                       match=r"of dtype key<fry>: fetch "
                             r"jax\.random\.key_data\(x\) instead"):
        fetch._check_fetchable("k", jax.random.key(0))
    monkeypatch.setattr(fetch, "FETCH_LIMIT_BYTES", 16)
    with pytest.raises(processes.FetchError,
                       match=r"small values: \['w'\] has 32 bytes, more "
                             r"than 16"):
        fetch._check_fetchable("['w']", jax.numpy.ones(8))


def test_non_addressable_error_gets_a_note_naming_fetch():
    from mpmd.runtime import failures

    error = RuntimeError("Fetching value for `jax.Array` that spans "
                         "non-addressable (non process local) devices is "
                         "not possible.")
    failures.add_fetch_note(error)
    failures.add_fetch_note(error)  # once only
    assert error.__notes__ == [failures.FETCH_NOTE]
    assert "mpmd.fetch(x)" in failures.FETCH_NOTE
    # Also when it is the cause of what reached the top.
    try:
        try:
            raise error
        except RuntimeError as inner:
            raise ValueError("while logging") from inner
    except ValueError as outer:
        failures.add_fetch_note(outer)
        assert outer.__notes__ == [failures.FETCH_NOTE]
    for text in ("something else", "Closing over jax.Array that spans "
                 "non-addressable (non process local) devices is not "
                 "allowed."):
        other = RuntimeError(text)
        failures.add_fetch_note(other)
        assert not getattr(other, "__notes__", None)
    summary = failures._summary(error, None)
    assert summary.endswith("[mpmd: read it on every process with "
                            "mpmd.fetch(x)]"), summary


# --- The launcher's output ---------------------------------------------------


CHATTY = """\
import os, sys, threading
me = os.environ["MPMD_PROCESS_ID"]
gloo = ("[Gloo] Rank {} is connected to {} peer ranks. Expected number of "
        "connected peer ranks is : 3\\n")
# gloo's own line, whole and cut into pieces by another thread's, and one
# that says a peer is missing.
os.write(1, gloo.format(0, 3).encode())
os.write(1, b"[Gloo] Rank [Gloo] Rank 1 is connected to 3 peer ranks. "
            b"Expected number of connected peer ranks is : 3\\n")
os.write(1, b"2 is connected to 3 peer ranks. Expected number of connected "
            b"peer ranks is : 3\\n")
os.write(1, b"[Gloo] Rank 2 is connected to 3 peer ranks. Expected number of "
            b"connected peer ranks is : [Gloo] Rank 3 is connected to 3 peer "
            b"ranks. Expected number of connected peer ranks is : 3\\n3\\n")
os.write(1, gloo.format(3, 2).encode())
def out():
    for i in range(300):
        print(f"out {me} {i} " + "x" * 50)   # two writes: text, newline
def err():
    for i in range(300):
        print(f"err {me} {i} " + "y" * 50, file=sys.stderr)
threads = [threading.Thread(target=out), threading.Thread(target=err)]
for t in threads: t.start()
for t in threads: t.join()
sys.stdout.write("last line without a newline")
"""


def run_chatty(tmp_path, *flags: str) -> subprocess.CompletedProcess:
    script = tmp_path / "chatty.py"
    script.write_text(CHATTY)
    return subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "-n", "2", *flags,
         str(script)], capture_output=True, text=True, timeout=60)


def test_launcher_writes_whole_prefixed_lines_per_stream(tmp_path):
    result = run_chatty(tmp_path)
    assert result.returncode == 0, result.stderr
    for process in (0, 1):
        outs = re.findall(rf"^\[{process}\] out {process} (\d+) x{{50}}$",
                          result.stdout, re.M)
        errs = re.findall(rf"^\[{process}\] err {process} (\d+) y{{50}}$",
                          result.stderr, re.M)
        assert outs == [str(i) for i in range(300)]
        assert errs == [str(i) for i in range(300)]
        assert f"[{process}] last line without a newline\n" in result.stdout
    for stream in (result.stdout, result.stderr):
        for line in stream.splitlines():
            assert re.match(r"\[[01]\] ", line), repr(line)
    # gloo's connection lines are gone, the one about a missing peer stays.
    assert result.stdout.count("peer ranks") == 4
    assert "[0] [Gloo] Rank 3 is connected to 2 peer ranks" in result.stdout


def test_launcher_verbose_keeps_gloo_lines(tmp_path):
    result = run_chatty(tmp_path, "--verbose")
    assert result.returncode == 0, result.stderr
    assert "[0] [Gloo] Rank 0 is connected to 3 peer ranks" in result.stdout
    assert result.stdout.count("peer ranks") == 24


def test_launcher_help_says_why_there_is_no_default_timeout():
    result = subprocess.run(
        [sys.executable, "-m", "mpmd.launch", "--help"],
        capture_output=True, text=True, timeout=60)
    text = " ".join(result.stdout.split())
    assert "default: none" in text and "may rightly take days" in text
    assert "--verbose" in text


def test_reshard_between_processes():
    """mpmd.reshard moves a tree from process 0's mesh to process 1's with
    another layout and back; each process checks the shards it holds."""
    result = launch(2, 4, worker=RESHARD, timeout=200)
    lines = [line for line in result.stdout.splitlines()
             if "equal after reshard" in line]
    assert result.returncode == 0 and len(lines) == 2, (
        result.stdout[-4000:] + result.stderr[-2000:])
    counts = sorted(int(re.search(r"(\d+) shards", line).group(1))
                    for line in lines)
    # Process 1 holds the moved tree (w and b on 4 devices each), process 0
    # the tree moved back.
    assert counts == [8, 8], counts
