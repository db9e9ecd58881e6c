"""One run handed to the resident worker, kept tied to its client: it lives and dies with it.

The worker forks a **keeper** for each connection. The keeper forks the **run** into a process
group of its own with the client's process state (streams, directory, environment, umask,
arguments, resource limits, niceness), then watches the client's socket and the run: the run's
exit status goes to the client (``X<code>``, or ``S<signal>``); a client that goes (any signal,
SIGKILL of its process group included, closes its end of the socket) takes the run's process
group with it, and everything the run started that left it (back to the keeper as a child
subreaper). A run the keeper cannot make the client's (another cgroup or namespace, a limit or
niceness this process may not take) is never started: the client runs it itself.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any

from rwgate.runtime import resident
from rwgate.runtime.launch import run_here

GRACE = 1.0  # seconds between SIGTERM and SIGKILL for a run whose client went
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLLRDHUP = 0x2000


def keep(conn: socket.socket) -> None:
    """Serve one connection, in a fork of the worker; never returns (``os._exit``)."""
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        conn.settimeout(10)
        request, fds = _request(conn)
        client = peer(conn)[0]
        if request is None or len(fds) != 3 or not client or not same_place(client):
            os._exit(0)  # the client runs it itself
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        run = _start(conn, request, fds, client)
        if run is None:
            os._exit(0)
        conn.sendall(b"P%d\n" % run[0])
        if conn.recv(1) != b"G":
            _end(run[0], 0)  # the client gave up and runs the entry itself
            os._exit(0)
        os.write(run[1], b"G")
        os.close(run[1])
        status = _watch(conn, run[0])
        conn.setblocking(True)
        if status is None:
            _end(run[0], GRACE)
        else:
            code = os.waitstatus_to_exitcode(status)
            conn.sendall(b"X%d\n" % code if code >= 0 else b"S%d\n" % -code)
    except BaseException:  # nothing may escape into the worker's own loop
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    os._exit(0)


def _request(conn: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    while 4 <= len(data) < 4 + int.from_bytes(data[:4], "big"):
        more = conn.recv(1 << 16)
        if not more:
            return None, fds
        data += more
    if len(data) < 4:
        return None, fds
    request = resident.decode_request(data[4 : 4 + int.from_bytes(data[:4], "big")])
    if request is None or not resident.accepts(request["entry"], request["argv"]):
        return None, fds
    return request, fds


def peer(conn: socket.socket) -> tuple[int, int]:
    """The client's pid and uid: ``(0, -1)`` when unknown (another pid namespace gives no pid)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return 0, -1
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def same_place(pid: int) -> bool:
    """Whether process ``pid`` is in this process's cgroup and namespaces (a run here would be
    a run there); False when that cannot be read."""
    mine = resident.place()
    return mine is not None and resident.place(str(pid)) == mine


def _start(
    conn: socket.socket, request: dict[str, Any], fds: list[int], client: int
) -> tuple[int, int] | None:
    """Fork the run into its own process group with the client's limits and niceness; (its
    pid, the pipe that lets it go), or None when it cannot be the client's."""
    import resource

    names = sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))
    try:
        rlimits = [
            (getattr(resource, n), resource.prlimit(client, getattr(resource, n))) for n in names
        ]
        limits = rlimits, os.getpriority(os.PRIO_PROCESS, client)
    except (OSError, ValueError):
        return None
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        _run_child(conn, request, fds, limits, ready_w, go_r)
    os.close(ready_w)
    os.close(go_r)
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also done in the child: whichever comes first
    with os.fdopen(ready_r, "rb") as ready:
        if ready.read(1) != b"R":
            os.close(go_w)
            _end(pid, 0)
            return None
    return pid, go_w


def _run_child(
    conn: socket.socket,
    request: dict[str, Any],
    fds: list[int],
    limits: tuple[list[tuple[int, tuple[int, int]]], int],
    ready: int,
    go: int,
) -> None:
    """The run: the client's process state, then the entry point; exits with its status."""
    code = 0
    try:
        os.setpgid(0, 0)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the keeper killed: the run goes too
        conn.close()
        if not _take_limits(limits):
            os.write(ready, b"F")
            os._exit(0)
        os.write(ready, b"R")
        os.close(ready)
        with os.fdopen(go, "rb") as wait:
            if wait.read(1) != b"G":
                os._exit(0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _become(request, fds)
        code = _run(request["entry"], request["argv"])
        _flush()
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
            _flush()
        code = 1
    os._exit(code)


def _take_limits(limits: tuple[list[tuple[int, tuple[int, int]]], int]) -> bool:
    import resource

    rlimits, nice = limits
    try:
        for which, value in rlimits:
            if resource.getrlimit(which) != value:
                resource.setrlimit(which, value)
        if os.getpriority(os.PRIO_PROCESS, 0) != nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    except (OSError, ValueError):
        return False  # a higher hard limit or a lower niceness than this process may take
    return True


def _prctl(option: int, value: int) -> None:
    """Linux ``prctl``; without it (or ctypes) the keeper still ends the run's process group."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _watch(conn: socket.socket, run: int) -> int | None:
    """The run's wait status when it ends, or None as soon as the client is gone."""
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(run)
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLHUP | _POLLRDHUP)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    conn.setblocking(False)
    while True:
        done, status = os.waitpid(run, os.WNOHANG)
        if done:
            return status
        for fd, _events in poller.poll(None if pidfd is not None else 100):
            if fd == conn.fileno() and _client_gone(conn):
                return None


def _client_gone(conn: socket.socket) -> bool:
    try:
        return conn.recv(64) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _end(run: int, grace: float) -> None:
    """End the run's process group and everything the run left behind (this process's other
    children, as their subreaper): SIGTERM, up to ``grace`` seconds, then SIGKILL."""
    with contextlib.suppress(OSError):
        os.killpg(run, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _group_alive(run):
        _reap()
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(run, signal.SIGKILL)
    deadline = time.monotonic() + 2 * GRACE
    while time.monotonic() < deadline:
        children = _children()
        if not children:
            break
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        _reap()
        time.sleep(0.01)
    _reap()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return any(_pgid_of(pid) == pgid for pid in _children())


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _children() -> list[int]:
    """This process's live (not yet reaped) children, orphans it adopted included."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            pids = [int(p) for p in handle.read().split()]
    except OSError:
        pids = []
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """The client's streams, directory, umask and environment, as if this process were it."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # the C library keeps the time zone it read: the client's TZ, as it would read it
    sys.argv = [request["entry"], *request["argv"]]
    # sys.__std*__ too: code that falls back to them must find the client's streams
    sys.stdin = sys.__stdin__ = _stream(0, sys.__stdin__)  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = _stream(1, sys.__stdout__)  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = _stream(2, sys.__stderr__)  # type: ignore[misc]


def _stream(fd: int, like: Any) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as Python makes it at start-up (same encoding and errors,
    line-buffered on a terminal, and always for stderr)."""
    encoding = getattr(like, "encoding", None) or "utf-8"
    errors = getattr(like, "errors", None) or "strict"
    if fd == 0:
        return io.TextIOWrapper(open(0, "rb", closefd=False), encoding, errors)
    line = fd == 2 or os.isatty(fd)
    through = bool(getattr(like, "write_through", False))  # PYTHONUNBUFFERED, -u
    raw = open(fd, "wb", closefd=False)  # noqa: SIM115 (the process's own stream)
    return io.TextIOWrapper(raw, encoding, errors, line_buffering=line, write_through=through)


def _run(entry: str, argv: list[str]) -> int:
    """The entry point, with Python's own rules for SystemExit and uncaught exceptions."""
    import atexit

    try:
        result: object = run_here(entry, argv)
    except SystemExit as exc:
        result = exc.code
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        atexit._run_exitfuncs()
    if result is None:
        return 0
    if isinstance(result, int):
        return result & 0xFF  # as the process's exit status would be
    print(result, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
