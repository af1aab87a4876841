"""Starts N local processes of one script as a multi-controller JAX job.

    python -m mpmd.launch -n 2 [--devices-per-process 4] [--grace 30]
                          [--timeout S] [--verbose] script.py [args...]

The same shape as `torchrun`: every process runs `script.py` with the same
arguments; the launcher gives each the coordinator's address
(`JAX_COORDINATOR_ADDRESS`, which `jax.distributed.initialize` reads), its
process id and the number of processes (`MPMD_PROCESS_ID`,
`MPMD_NUM_PROCESSES`, which `mpmd.distributed.initialize` reads), and on
CPU as many host devices as asked.

Output: each process's stdout goes to the launcher's stdout and its stderr
to its stderr, read through separate pipes and written a whole line at a
time (one lock for all), each line prefixed with `[i] `. gloo's "[Gloo]
Rank N is connected to M peer ranks" lines (one per device, printed by the
CPU collectives with no setting to turn them off) are dropped unless
`--verbose`; a line saying a peer is not connected is kept.

Failures: in a script that uses `mpmd` (see `mpmd.distributed`), an
uncaught exception ends its process at once and the other processes stop
with a message naming it. The launcher says which process exited first and
how (of processes seen ended in the same 50 ms poll, one killed by a
signal first), how the others that end within the grace period ended, and
which one failed first by its own account (`MPMD_FAILURE_FILE`);
the others get `--grace` seconds to exit on their own, then are killed; the
launcher exits with the first failure's code.

There is no default `--timeout`: a training run may rightly take days, and
a process that fails or dies already ends the job (above, and JAX's
heartbeats). What it would catch is a job hung with every process alive
(processes running different steps, say): set it in CI, or where a run's
length is known. For many hosts, start one process per host yourself with
the same variables (see README, "Many processes and hosts").
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from mpmd.errors import MpmdError
# The runtime writes the failure file, so the variable's name lives there.
from mpmd.runtime.environment import FAILURE_FILE

__all__ = ["COORDINATOR", "LaunchError", "NUM_PROCESSES", "PROCESS_ID",
           "launch", "main",
           # Re-exported from mpmd.runtime.environment for existing
           # importers.
           "FAILURE_FILE"]

COORDINATOR = "JAX_COORDINATOR_ADDRESS"
NUM_PROCESSES = "MPMD_NUM_PROCESSES"
PROCESS_ID = "MPMD_PROCESS_ID"


def _free_port() -> int:
    # Only to choose a port for JAX's coordination service; nothing of ours
    # listens on it.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _child_env(base: dict[str, str], process: int, count: int,
               address: str, devices: int | None) -> dict[str, str]:
    env = dict(base)
    env[COORDINATOR] = address
    env[NUM_PROCESSES] = str(count)
    env[PROCESS_ID] = str(process)
    env["PYTHONUNBUFFERED"] = "1"
    if devices is not None:
        flags = re.sub(r"--xla_force_host_platform_device_count=\S+", "",
                       env.get("XLA_FLAGS", "")).strip()
        env["XLA_FLAGS"] = (flags + " " if flags else "") + \
            f"--xla_force_host_platform_device_count={devices}"
    return env


# gloo (CPU collectives) prints one line per local device when a process
# joins the collectives, on std::cout, with no setting to turn it off. The
# line is dropped when every peer is connected (kept otherwise: it then
# says something). Several of gloo's threads write at once, so one line may
# hold pieces of several: a line made only of these pieces is dropped too.
_GLOO_LINE = re.compile(
    r"\[Gloo\] Rank \d+ is connected to (\d+) peer ranks\. Expected number "
    r"of connected peer ranks is : (\d+)")
_GLOO_PIECES = re.compile(
    r"\[Gloo\] Rank |\d+| is connected to | peer ranks\. |Expected number "
    r"of connected peer ranks is : |\s+")


def _quiet(line: str, after_gloo: bool = False) -> str | None:
    """`line` without gloo's connection messages; None when nothing else
    is left. `after_gloo`: the stream's previous line was one of them (a
    line of digits then is the end of a message cut by another)."""
    if "[Gloo]" not in line and "peer ranks" not in line and not (
            after_gloo and line.strip().isdigit()):
        return line
    short = [m for m in _GLOO_LINE.finditer(line) if m.group(1) != m.group(2)]
    if not short and not _GLOO_PIECES.sub("", line):
        return None  # connection messages only, whole or in pieces
    kept = _GLOO_LINE.sub(
        lambda m: "" if m.group(1) == m.group(2) else m.group(0), line)
    if not kept.strip():
        return None
    return kept if kept.endswith("\n") else kept + "\n"


# One lock for every process's output: a line is written whole, prefix
# and all, before another pump writes.
_write_lock = threading.Lock()


def _pump(stream, prefix: str, out, verbose: bool) -> None:
    """Copies one output stream of one process, line by line, prefixed."""
    after_gloo = False
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        if not line.endswith("\n"):
            line += "\n"  # the last line, unterminated: still whole
        if not verbose:
            kept = _quiet(line, after_gloo)
            after_gloo = kept is None
            if kept is None:
                continue
            line = kept
        with _write_lock:
            out.write(prefix + line)
            out.flush()
    stream.close()


def _say(text: str) -> None:
    with _write_lock:
        print(text, file=sys.stderr, flush=True)


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _first_failure(directory: str, count: int) -> tuple[int, str] | None:
    """The process that failed first by its own account (`mpmd` writes
    the file of `FAILURE_FILE` when an uncaught exception ends a
    process) and what it raised."""
    found = []
    for process in range(count):
        path = os.path.join(directory, f"failure-{process}")
        try:
            with open(path, encoding="utf-8") as file:
                found.append((os.path.getmtime(path), process,
                              file.read().strip()))
        except OSError:
            continue
    return min(found)[1:] if found else None


def launch(command: list[str], count: int, *, devices: int | None = None,
           port: int | None = None, grace: float = 30.0,
           timeout: float | None = None, verbose: bool = False) -> int:
    """Runs `command` as `count` processes; returns the job's exit code.
    Each process's stdout and stderr go to the launcher's, line by line,
    prefixed with `[i] `. A malformed argument is a `LaunchError` naming
    it."""
    _check_arguments(command, count, devices, port, grace, timeout)
    address = f"127.0.0.1:{port or _free_port()}"
    failures = tempfile.mkdtemp(prefix="mpmd-launch-")
    children = []
    pumps = []
    try:
        for process in range(count):
            env = _child_env(dict(os.environ), process, count, address,
                             devices)
            env[FAILURE_FILE] = os.path.join(failures, f"failure-{process}")
            child = subprocess.Popen(command, env=env,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
            children.append(child)
            # A pump per stream: a process's stdout and stderr are separate
            # pipes, so a line of one is never cut by a write to the other.
            for stream, out in ((child.stdout, sys.stdout),
                                (child.stderr, sys.stderr)):
                pump = threading.Thread(target=_pump, daemon=True, args=(
                    stream, f"[{process}] ", out, verbose))
                pump.start()
                pumps.append(pump)
        code = _supervise(children, grace, timeout, failures)
        for pump in pumps:
            pump.join(timeout=5)
        return code
    finally:
        shutil.rmtree(failures, ignore_errors=True)


def _supervise(children: list[subprocess.Popen], grace: float,
               timeout: float | None, failures: str) -> int:
    """Waits for the processes; on the first failure gives the others
    `grace` seconds, then kills them. Returns the job's exit code."""
    start = time.monotonic()
    failed: tuple[int, int] | None = None
    deadline = None
    reported: set[int] = set()

    def check(now: float) -> None:
        nonlocal failed, deadline
        ended = [(process, child.returncode)
                 for process, child in enumerate(children)
                 if process not in reported
                 and child.poll() not in (None, 0)]
        if not ended:
            return
        # Processes seen ended in one poll (50 ms apart) ended in an order
        # the launcher cannot see; one killed by a signal is the likelier
        # cause of the others' errors, so it is named first.
        ended.sort(key=lambda item: (item[1] > 0, item[0]))
        running = any(child.poll() is None for child in children)
        for process, code in ended:
            reported.add(process)
            if failed is None:
                failed = (process, code)
                deadline = now + grace
                _say(f"mpmd.launch: process {process} {_describe(code)}"
                     + ("; the other processes get "
                        f"{grace:g} s to stop" if running else ""))
                first = _first_failure(failures, len(children))
                if first is not None:
                    _say(f"mpmd.launch: process {first[0]} failed first: "
                         f"{first[1]}")
            elif deadline is not None and now < deadline:
                _say(f"mpmd.launch: process {process} {_describe(code)}")

    try:
        while any(child.poll() is None for child in children):
            now = time.monotonic()
            check(now)
            if (failed is None and timeout is not None
                    and now - start > timeout):
                _say(f"mpmd.launch: the job ran past --timeout "
                     f"{timeout:g} s; stopping it")
                failed = (-1, 124)
                deadline = now
            if deadline is not None and now >= deadline:
                for child in children:
                    if child.poll() is None:
                        child.kill()
            time.sleep(0.05)
        check(time.monotonic())  # ended since the last poll
    except KeyboardInterrupt:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        for child in children:
            child.wait()
        raise
    if failed is not None:
        return failed[1] if failed[1] > 0 else 1
    return 0


class LaunchError(MpmdError, ValueError):
    """An argument of `launch` cannot start a job as given."""


def _check_arguments(command: Any, count: Any, devices: Any, port: Any,
                     grace: Any, timeout: Any) -> None:
    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if isinstance(command, (str, bytes)) or not isinstance(
            command, (list, tuple)) or not command or not all(
            isinstance(part, str) for part in command):
        raise LaunchError(f"launch: command is {command!r}; give the "
                          "program and its arguments as a list of strings, "
                          "e.g. [sys.executable, 'train.py']")
    if not whole(count) or count < 1:
        raise LaunchError(f"launch: count (the number of processes) is "
                          f"{count!r}; give an int of at least 1")
    if devices is not None and (not whole(devices) or devices < 1):
        raise LaunchError(f"launch: devices (CPU devices per process) is "
                          f"{devices!r}; give an int of at least 1, or None")
    if port is not None and (not whole(port) or not 0 < port < 65536):
        raise LaunchError(f"launch: port is {port!r}; give a port number "
                          "(1-65535), or None for a free one")
    for name, value, least in (("grace", grace, 0.0),
                               ("timeout", timeout, None)):
        if value is None and name == "timeout":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or value < 0 or (least is None and value == 0):
            raise LaunchError(f"launch: {name} is {value!r}; give a number "
                              "of seconds (> 0)" + (", or None" if name ==
                                                   "timeout" else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpmd.launch",
        description="Run a script as N local processes of one JAX job.")
    parser.add_argument("-n", "--nprocs", type=int, required=True,
                        help="number of processes")
    parser.add_argument("--devices-per-process", type=int, default=None,
                        help="CPU devices each process gets "
                        "(--xla_force_host_platform_device_count)")
    parser.add_argument("--port", type=int, default=None,
                        help="coordinator port (default: a free one)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds the others get to stop after a "
                        "process fails (default 30)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop the whole job after this many seconds "
                        "(default: none; a training run may rightly take "
                        "days, and a failed or killed process already stops"
                        " the job; use it in CI, or for a job that may hang "
                        "with every process alive)")
    parser.add_argument("--verbose", action="store_true",
                        help="keep gloo's '[Gloo] Rank N is connected to M "
                        "peer ranks' lines (dropped by default)")
    parser.add_argument("script", help="the Python script every process runs")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments of the script")
    options = parser.parse_args(argv)
    if options.nprocs < 1:
        parser.error(f"-n must be at least 1, got {options.nprocs}")
    if options.devices_per_process is not None and \
            options.devices_per_process < 1:
        parser.error("--devices-per-process must be at least 1, got "
                     f"{options.devices_per_process}")
    if options.port is not None and not 0 < options.port < 65536:
        parser.error(f"--port must be a port number (1-65535), got "
                     f"{options.port}")
    if options.grace < 0:
        parser.error(f"--grace must be >= 0 seconds, got {options.grace}")
    if options.timeout is not None and options.timeout <= 0:
        parser.error(f"--timeout must be > 0 seconds, got {options.timeout}")
    if not os.path.exists(options.script):
        parser.error(f"no such script: {options.script}")
    return launch([sys.executable, options.script, *options.args],
                  options.nprocs, devices=options.devices_per_process,
                  port=options.port, grace=options.grace,
                  timeout=options.timeout, verbose=options.verbose)


if __name__ == "__main__":
    sys.exit(main())
