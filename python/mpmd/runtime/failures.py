"""A failure in one process of a job stops the others, with a message
naming it.

    install_failure_handling()     # once; mpmd.distributed.initialize,
                                   # the first compile and fetch call it
    report_failure("ProgramExecutionError: program p3 on mesh 'm2' ...")
    # every other process prints "mpmd: stopping process 0 because
    # process 1: ProgramExecutionError: ..." and ends (exit code 1)

A process that fails leaves the others waiting: in a transfer for data
that will never come (gloo notices only a closed connection), or at exit,
where JAX's `distributed.shutdown` waits for every process. So:

- an uncaught exception (`sys.excepthook`) prints its traceback, publishes
  "process i: Kind: message" under one key of JAX's coordination service
  (the first report wins) and ends the process with `os._exit(1)`: no exit
  handlers, so no wait in JAX's shutdown;
- every process runs a thread that polls that key and, when another
  process's report appears, prints it and ends its own process;
- a process that reaches the end of its script waits at exit until every
  process has got there (or a report appears) before JAX shuts down.

Process 0 hosts the coordination service: when it stops, the others lose
the service and JAX ends them with its own message. So process 0, before
it ends, waits (at most `STOP_WAIT_S`) until every other process has said
it is stopping too, so that they end with the report instead.

A process that dies (killed, out of memory) leaves its peers in a transfer
with JAX's bare "Connection closed by peer"; `lost_peer_error` turns that
into a `ProcessLostError` naming the process, its mesh and the plan step
(`note_remote_transfer` keeps the latest transfer across processes). An
uncaught error of reading an array whose devices are not all this
process's (`float(loss)` of another process's loss) gets a note saying to
read it with `mpmd.fetch` (`add_fetch_note`).

The launcher (`python -m mpmd.launch`) names the process that failed first
from the file each process writes its report to (`FAILURE_FILE`, an
environment variable): its name lives here, since the runtime writes the
file, and the launcher imports it from here (the runtime imports nothing
from the launcher).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from typing import Any

from mpmd.runtime.environment import FAILURE_FILE
from mpmd.runtime.processes import ProcessLostError, _job

__all__ = ["FAILURE_FILE", "FETCH_NOTE", "add_fetch_note",
           "install_failure_handling", "lost_peer_error",
           "note_remote_transfer", "report_failure", "watch_failures"]


_FAILURE_KEY = "mpmd/failure"
_STOPPED_DIR = "mpmd/stopped/"  # + process id: ending because of a failure
_DONE_DIR = "mpmd/done/"        # + process id: reached the end of its script
# How long process 0 waits for the others to see a failure before it ends.
STOP_WAIT_S = 10.0
# How long a process that finished waits at exit for the others to finish.
EXIT_WAIT_S = 300.0
_POLL_S = 0.5
_watcher: threading.Thread | None = None
_stopping = threading.Event()
_install_lock = threading.Lock()
_stop_lock = threading.Lock()
_previous_hook: Any = None
FETCH_NOTE = (
    "mpmd: this array's devices are not all this process's (in a job of "
    "several processes, a result on another process's mesh has no data "
    "here). To read small results such as a loss on every process, call "
    "mpmd.fetch(x) on every process, in the same order: it returns numpy "
    "arrays.")
FETCH_HINT = "mpmd: read it on every process with mpmd.fetch(x)"

# The latest transfer across processes this process issued: (plan step,
# source mesh, target mesh, type, {peer process: its meshes of the two}).
# A transfer whose peer is gone fails in JAX's collectives with a bare
# "Connection closed by peer", met wherever the result is read; this says
# which process and which step it was.
_last_remote: tuple[int, str, str, str, dict[int, list[str]]] | None = None
_LOST_PEER = ("Connection closed by peer", "Connection reset by peer")
# The processes found gone: nobody waits for them to say they stop.
_lost: set[int] = set()


def note_remote_transfer(step: int, source: str, target: str, what: str,
                         peers: dict[int, list[str]]) -> None:
    """Called by the executor before each transfer across processes."""
    global _last_remote
    _last_remote = (step, source, target, what, peers)


def lost_peer_error(error: BaseException) -> ProcessLostError | None:
    """`error` (or what caused it) as the ProcessLostError it means, when
    it is JAX's error for a transfer whose peer went away (or already one):
    which process went away, the meshes it holds, and the transfer (plan
    step) that was waiting on it; else None. Raise it `from error`."""
    link, seen = error, set()
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, ProcessLostError):
            return link
        if any(mark in str(link) for mark in _LOST_PEER):
            break
        link = link.__cause__ or link.__context__
    if link is None or _last_remote is None:
        return None
    step, source, target, what, peers = _last_remote
    gone = ", ".join(f"process {p} (holding mesh "
                     f"{' and '.join(repr(m) for m in meshes)})"
                     for p, meshes in sorted(peers.items()))
    transfer = f"{source} -> {target} of {what}"
    _lost.update(peers)
    return ProcessLostError(
        f"a transfer across processes lost its peer: {gone} stopped "
        f"(killed, or ended) while step {step} of the plan, the transfer "
        f"{transfer}, was waiting on it",
        tuple(sorted(peers)),
        tuple(dict.fromkeys(m for _, meshes in sorted(peers.items())
                            for m in meshes)),
        step, transfer)


def report_failure(message: str) -> bool:
    """Tells every process of the job that this one failed. The first
    report wins: returns whether this one was stored."""
    job = _job()
    if job is None:
        return False
    client, me, _ = job
    if _reported(client) is not None:
        return False
    # For `python -m mpmd.launch`, which names the process that failed
    # first: written before the report, which may end the others at once.
    path = os.environ.get(FAILURE_FILE)
    if path:
        try:
            with open(path, "w", encoding="utf-8") as file:
                lines = message.strip().splitlines()
                file.write((lines[0] if lines else "")[:2000] + "\n")
        except OSError:
            path = None
    try:
        client.key_value_set(_FAILURE_KEY, f"process {me}: {message}")
        return True
    except Exception:  # noqa: BLE001 - another's came first, or no service
        if path:
            try:
                os.remove(path)
            except OSError:
                pass
        return False


def _reported(client: Any) -> str | None:
    try:
        return client.key_value_try_get(_FAILURE_KEY)
    except Exception:  # noqa: BLE001 - not set yet (NOT_FOUND), no service
        return None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed or replaced streams
            pass


def _end(client: Any, me: int, count: int, code: int = 1) -> None:
    """Ends this process after a failure (this one's or another's): says
    so through the service and, on process 0, which hosts the service,
    first waits for the others to say so too."""
    _flush()
    try:
        client.key_value_set(f"{_STOPPED_DIR}{me}", "1")
    except Exception:  # noqa: BLE001 - the service is gone
        pass
    if me == 0:
        deadline = time.monotonic() + STOP_WAIT_S
        alive = count - len(_lost - {me})
        while time.monotonic() < deadline:
            try:
                if len(client.key_value_dir_get(_STOPPED_DIR)) >= alive:
                    break
            except Exception:  # noqa: BLE001 - the service is gone
                break
            time.sleep(0.05)
    _flush()
    os._exit(code)


def _stop_for(client: Any, me: int, count: int, failure: str,
              own: str | None = None) -> None:
    """Ends this process because another one failed (`failure`: the
    report, "process i: Kind: message")."""
    if not _stop_lock.acquire(blocking=False):
        # Another thread of this process is already ending it.
        while True:
            time.sleep(60)
    text = f"mpmd: stopping process {me} because {failure}\n"
    if own:
        text += f"mpmd: (process {me} raised too: {own})\n"
    try:
        sys.stderr.write(text)
    except Exception:  # noqa: BLE001 - stderr closed
        pass
    _end(client, me, count)


def _frame_of_user(tb: Any) -> str:
    """Where the failing line is: the innermost frame outside JAX and
    mpmd (the user's line), else the innermost."""
    import traceback  # noqa: PLC0415

    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    library = (os.sep + "jax" + os.sep, os.sep + "jaxlib" + os.sep,
               os.sep + "mpmd" + os.sep)
    chosen = next((f for f in reversed(frames)
                   if not any(part in f.filename for part in library)),
                  frames[-1])
    return f" (at {os.path.basename(chosen.filename)}:{chosen.lineno})"


def _headline(error: BaseException) -> str:
    """`Kind: the first line of its message`."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def _summary(error: BaseException, tb: Any) -> str:
    """One line for the other processes: kind, first line, the user's
    line, and the notes."""
    text = _headline(error)
    if len(text) > 600:
        text = text[:600] + " ..."
    text += _frame_of_user(tb)
    for note in getattr(error, "__notes__", ()) or ():
        note = FETCH_HINT if note == FETCH_NOTE else str(note).strip()
        text += f" [{note}]"
    return text


def add_fetch_note(error: BaseException) -> None:
    """Adds `FETCH_NOTE` to JAX's "spans non-addressable devices" error
    (met by `float(x)`, `np.asarray(x)`, `print(x)` of an array whose data
    is not all this process's), or to an error it caused."""
    seen = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if "Fetching value for `jax.Array` that spans non-addressable" in \
                str(link):
            notes = getattr(error, "__notes__", ()) or ()
            if FETCH_NOTE not in notes:
                error.add_note(FETCH_NOTE)
            return
        link = link.__cause__ or link.__context__


def _excepthook(kind: type, error: BaseException, tb: Any) -> None:
    try:
        add_fetch_note(error)
    except Exception:  # noqa: BLE001 - a note is a nicety
        pass
    job = _job()
    previous = _previous_hook or sys.__excepthook__
    if job is None:
        previous(kind, error, tb)
        return
    client, me, count = job
    summary = _summary(error, tb)
    lost_error = lost_peer_error(error)
    lost = None if lost_error is None else str(lost_error)
    if lost_error is not None and lost_error.__cause__ is None and \
            lost_error is not error:
        # JAX's error met outside mpmd's code (a plain read of an array):
        # shown as the mpmd error it means, raised from it.
        summary = f"ProcessLostError: {lost} [{summary}]"
        lost_error.__cause__ = error
        kind, error = type(lost_error), lost_error
    if not report_failure(summary):
        failure = _reported(client)
        if failure is not None and not failure.startswith(f"process {me}:"):
            # Another process failed first; this one's error (a transfer
            # whose peer went away, ...) most likely follows from it.
            _stop_for(client, me, count, failure, own=summary)
    previous(kind, error, tb)
    try:
        if lost is not None:
            sys.stderr.write(f"mpmd: process {me} of {count}: {lost}\n")
        sys.stderr.write(
            f"mpmd: process {me} of {count} failed ({type(error).__name__});"
            " the other processes are told to stop\n")
    except Exception:  # noqa: BLE001 - stderr closed
        pass
    _stop_lock.acquire(blocking=False)
    _end(client, me, count)


def _at_exit() -> None:
    """Before JAX's shutdown: waits until every process has finished its
    script, or ends this one if another reports a failure meanwhile."""
    job = _job()
    if job is None or _stopping.is_set():
        _stop_watching()
        return
    client, me, count = job
    try:
        client.key_value_set(f"{_DONE_DIR}{me}", "1")
    except Exception:  # noqa: BLE001 - the service is gone
        _stop_watching()
        return
    deadline = time.monotonic() + EXIT_WAIT_S
    while True:
        failure = _reported(client)
        if failure is not None:
            if failure.startswith(f"process {me}:"):
                # This process reported a failure and then went on (the
                # error was caught): the others are stopping.
                _stop_lock.acquire(blocking=False)
                _end(client, me, count)
            _stop_for(client, me, count, failure)
        try:
            done = {key.rsplit("/", 1)[-1]
                    for key, _ in client.key_value_dir_get(_DONE_DIR)}
        except Exception:  # noqa: BLE001 - the service is gone
            break
        if len(done) >= count:
            break
        if time.monotonic() > deadline:
            missing = [p for p in range(count) if str(p) not in done]
            sys.stderr.write(
                f"mpmd: process {me} finished its script, but processes "
                f"{missing} did not finish theirs within {EXIT_WAIT_S:g} s;"
                " ending this one (the job is stuck: they may wait for "
                "a step this process did not run)\n")
            report_failure(f"it finished, but processes {missing} did not "
                           f"finish within {EXIT_WAIT_S:g} s of it")
            _stop_lock.acquire(blocking=False)
            _end(client, me, count)
        time.sleep(0.1)
    _stop_watching()


def _stop_watching() -> None:
    _stopping.set()
    watcher = _watcher
    if watcher is not None and watcher is not threading.current_thread():
        watcher.join(timeout=2 * _POLL_S)


def watch_failures(poll_s: float = _POLL_S) -> None:
    """Starts (once) the thread that stops this process when another one
    reports a failure."""
    global _watcher
    job = _job()
    if job is None:
        return
    client, me, count = job
    with _install_lock:
        if _watcher is not None:
            return

        def watch() -> None:
            while not _stopping.wait(poll_s):
                failure = _reported(client)
                if failure is None:
                    continue
                if failure.startswith(f"process {me}:"):
                    return  # ours: this process raises it itself
                _stop_for(client, me, count, failure)

        _watcher = threading.Thread(target=watch, name="mpmd-failure-watch",
                                    daemon=True)
        _watcher.start()


def install_failure_handling() -> None:
    """In a job of several processes (no-op otherwise), once: an uncaught
    exception ends this process promptly and stops the others with a
    message naming it (`sys.excepthook`, chaining the previous hook); a
    thread stops this process when another reports a failure; at exit the
    process waits for the others to finish (see the comment above).
    `mpmd.distributed.initialize`, compiling with `mpmd` and `fetch` call
    it."""
    global _previous_hook
    if _job() is None:
        return
    with _install_lock:
        if _previous_hook is None:
            _previous_hook = sys.excepthook
            sys.excepthook = _excepthook
            # atexit runs handlers last-registered first: this one runs
            # before JAX's own (registered when JAX was imported), which
            # shuts the client down.
            atexit.register(_at_exit)
    watch_failures()
