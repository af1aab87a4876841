"""Starts N local processes of one script as a multi-controller JAX job.

    python -m mpmd.launch -n 2 [--devices-per-process 4] script.py [args...]

The same shape as `torchrun`: every process runs `script.py` with the same
arguments; the launcher gives each the coordinator's address
(`JAX_COORDINATOR_ADDRESS`, which `jax.distributed.initialize` reads), its
process id and the number of processes (`MPMD_PROCESS_ID`,
`MPMD_NUM_PROCESSES`, which `mpmd.distributed.initialize` reads), and on
CPU as many host devices as asked. Output lines are prefixed with `[i]`.

When a process fails, the others get `--grace` seconds to exit on their own
(JAX's coordination service stops them once it misses the failed one's
heartbeats), then are killed; the launcher exits with the first failure's
code and says which process failed. For many hosts, start one process per
host yourself with the same variables (see README, "Many processes and
hosts").
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["COORDINATOR", "NUM_PROCESSES", "PROCESS_ID", "main"]

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


def _pump(stream, prefix: str, out) -> None:
    for line in iter(stream.readline, b""):
        out.write(prefix + line.decode(errors="replace"))
        out.flush()
    stream.close()


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def launch(command: list[str], count: int, *, devices: int | None = None,
           port: int | None = None, grace: float = 30.0,
           timeout: float | None = None) -> int:
    """Runs `command` as `count` processes; returns the job's exit code."""
    if count < 1:
        raise ValueError(f"the number of processes must be at least 1, got {count}")
    address = f"127.0.0.1:{port or _free_port()}"
    children = []
    pumps = []
    for process in range(count):
        child = subprocess.Popen(
            command, env=_child_env(dict(os.environ), process, count,
                                    address, devices),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        children.append(child)
        pump = threading.Thread(target=_pump, daemon=True, args=(
            child.stdout, f"[{process}] ", sys.stdout))
        pump.start()
        pumps.append(pump)
    start = time.monotonic()
    failed: tuple[int, int] | None = None
    deadline = None
    try:
        while any(child.poll() is None for child in children):
            now = time.monotonic()
            if failed is None:
                for process, child in enumerate(children):
                    code = child.poll()
                    if code not in (None, 0):
                        failed = (process, code)
                        deadline = now + grace
                        print(f"mpmd.launch: process {process} "
                              f"{_describe(code)}; the other processes get "
                              f"{grace:g} s to stop", file=sys.stderr,
                              flush=True)
                        break
                if (failed is None and timeout is not None
                        and now - start > timeout):
                    print(f"mpmd.launch: the job ran past --timeout "
                          f"{timeout:g} s; stopping it", file=sys.stderr,
                          flush=True)
                    failed = (-1, 124)
                    deadline = now
            if deadline is not None and now >= deadline:
                for child in children:
                    if child.poll() is None:
                        child.kill()
            time.sleep(0.05)
    except KeyboardInterrupt:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        for child in children:
            child.wait()
        raise
    for pump in pumps:
        pump.join(timeout=5)
    if failed is not None:
        return failed[1] if failed[1] > 0 else 1
    codes = [child.returncode for child in children]
    return next((c for c in codes if c != 0), 0)


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
                        help="stop the whole job after this many seconds")
    parser.add_argument("script", help="the Python script every process runs")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments of the script")
    options = parser.parse_args(argv)
    if options.nprocs < 1:
        parser.error(f"-n must be at least 1, got {options.nprocs}")
    if not os.path.exists(options.script):
        parser.error(f"no such script: {options.script}")
    return launch([sys.executable, options.script, *options.args],
                  options.nprocs, devices=options.devices_per_process,
                  port=options.port, grace=options.grace,
                  timeout=options.timeout)


if __name__ == "__main__":
    sys.exit(main())
