"""Hand a run of ``rw-filter`` or a LaTeX hook to a warm rwgate process (the resident worker).

pandoc starts a filter, and latexmk a BibTeX hook, as a fresh Python process on every build, and
most of such a run is importing Pydantic, panflute and the integrity core. The worker
(:mod:`rwgate.runtime.worker`) has them imported; a run handed to it is a ``fork`` that takes this
process's standard streams, working directory, environment, umask and arguments, and reports its
exit status here. The contract (Linux only, ``RWGATE_RESIDENT=0``, the socket's name and folder,
fail closed with exit status 3) is the README's "The resident worker".

Cheap to import: a delegated run imports this module and builtins only (no ``socket``, ``signal``,
``json`` or ``pathlib``, whose imports would cost more than the rest of the client).
"""

from __future__ import annotations

import _signal
import _socket
import os
import sys
import time  # builtin, loaded at start-up

TYPE_CHECKING = False  # typing itself costs more to import than all the rest of this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# Worker settings: they choose where a run happens, not what it decides (no memo key holds them).
ENV_SWITCH = "RWGATE_RESIDENT"
ENV_IDLE = "RWGATE_RESIDENT_IDLE"  # seconds a worker waits for work before it exits
# What the worker may run: the pandoc filter, rw-latexmk, and ``rwgate`` for the LaTeX hooks only.
ENTRIES = {"rw-filter": (), "rw-latexmk": (), "rwgate": ("bibtex", "biber")}
# Not handed over: a run whose standard input is a terminal (TeX may prompt there, and a process
# outside the terminal's foreground group that reads it is stopped), nor previews (-pv, -pvc),
# which outlive the build.
_TERMINAL_ENTRIES = frozenset({"rw-latexmk"})
_PREVIEW = frozenset({"-pv", "-pvc", "--pv", "--pvc"})
EXIT_LOST = 3  # the worker took the run and stopped before it ended
MAGIC = b"rwgate-resident/2"
# Read at start-up: a process started under other values would not be the same process. Every
# PYTHON* variable counts (PYTHONPATH, PYTHONWARNINGS, ...) but two that change no behaviour:
# import timings are the client's own (the worker is started without them), and .pyc writing.
_LOCALE_ENV = ("LANG", "LC_ALL", "LC_CTYPE")
_NOT_IDENTITY = frozenset({"PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE"})
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # rwgate/
_FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its NUL
START_EVERY = 30.0


def accepts(entry: str, argv: Sequence[str]) -> bool:
    """Whether the worker runs ``entry argv`` at all (``ENTRIES``): the client asks, the worker
    checks again."""
    allowed = ENTRIES.get(entry)
    return allowed is not None and (not allowed or (bool(argv) and argv[0] in allowed))


def enabled(env: Mapping[str, str]) -> bool:
    """Whether runs may be handed over on this system, under this environment."""
    off = env.get(ENV_SWITCH, "").strip().lower() in ("0", "off", "no", "false")
    return not off and sys.platform == "linux" and hasattr(_socket.socket, "sendmsg")


def socket_folder(env: Mapping[str, str]) -> str | None:
    """The user's private folder for worker sockets, created 0700; None when none is safe."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    uid = os.getuid()
    folder = os.path.join(runtime, "rwgate") if os.path.isabs(runtime) else f"/tmp/rwgate-{uid}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    directory = info.st_mode & 0o170000 == 0o040000  # not a link, not a file
    return folder if directory and info.st_uid == uid and not info.st_mode & 0o077 else None


def identity(env: Mapping[str, str]) -> str:
    """A name for the process a run would start: code, interpreter, installed packages, start-up
    environment. Stats only (about a millisecond): it is computed on every handed-over run."""
    import site

    try:
        from _blake2 import blake2s  # builtin: hashlib would load OpenSSL first
    except ImportError:  # pragma: no cover (a Python built without it)
        from hashlib import blake2s
    digest = blake2s(digest_size=12)
    digest.update(f"{sys.executable}\0{sys.version}\0{os.getuid()}\0".encode())
    digest.update(MAGIC)
    digest.update(place() or b"-")
    for name in sorted(env):
        if name in _LOCALE_ENV or (name.startswith("PYTHON") and name not in _NOT_IDENTITY):
            digest.update(os.fsencode(f"{name}={env[name]}\0"))
    for folder in site.getsitepackages():
        digest.update(f"{folder}\0{_mtime(folder)}\0".encode())
    for root, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            digest.update(os.fsencode(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0"))
    return str(digest.hexdigest())


def place(pid: str = "self") -> bytes | None:
    """Process ``pid``'s cgroup and namespaces (None: its cgroup cannot be read). A worker serves
    only clients in its own place (a run there is a run here, :mod:`rwgate.runtime.keeper`), so each
    cgroup or sandbox has a worker of its own."""
    try:
        with open(f"/proc/{pid}/cgroup", "rb") as handle:
            parts = [handle.read()]
    except OSError:
        return None
    for name in ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"):
        try:
            parts.append(os.fsencode(os.readlink(f"/proc/{pid}/ns/{name}")))
        except OSError:
            parts.append(b"-")
    return b"\0".join(parts)


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def lock_path(path: str) -> str:
    """The worker's lock file beside its socket: held while it serves, touched as it starts."""
    return path[: -len(".sock")] + ".lock" if path.endswith(".sock") else path + ".lock"


def socket_path(env: Mapping[str, str]) -> str | None:
    """Where the worker for this process would listen (None: no safe folder)."""
    folder = socket_folder(env)
    return None if folder is None else os.path.join(folder, f"{identity(env)}.sock")


def encode_request(
    entry: str, argv: Sequence[str], cwd: str, umask: int, env: Mapping[str, str]
) -> bytes:
    """A run as the worker reads it: NUL-separated fields (no argument, variable or path can hold
    a NUL), behind a 4-byte length."""
    fields = [MAGIC, *(os.fsencode(x) for x in (entry, cwd, oct(umask), str(len(argv))))]
    fields += [os.fsencode(a) for a in argv]
    fields += [os.fsencode(f"{k}={v}") for k, v in env.items()]
    payload = b"\0".join(fields)
    return len(payload).to_bytes(4, "big") + payload


def decode_request(payload: bytes) -> dict[str, Any] | None:
    """The run in ``payload`` (without its length), or None if it is not one this version sent."""
    fields = [os.fsdecode(f) for f in payload.split(b"\0")]
    if len(fields) < 5 or fields[0] != MAGIC.decode():
        return None
    entry, cwd, umask, count = fields[1:5]
    if not count.isdigit() or not umask.startswith("0o") or len(fields) < 5 + int(count):
        return None
    argv = fields[5 : 5 + int(count)]
    env = {}
    for item in fields[5 + int(count) :]:
        name, equals, value = item.partition("=")
        if not equals or not name:
            return None
        env[name] = value
    try:
        mask = int(umask, 8)
    except ValueError:
        return None
    return {"entry": entry, "argv": argv, "cwd": cwd, "umask": mask, "env": env}


def delegate(entry: str, argv: Sequence[str]) -> int | None:
    """Run ``entry argv`` in the resident worker: its exit status, or None to run it here."""
    env = os.environ
    if not accepts(entry, argv) or not enabled(env):
        return None
    if entry in _TERMINAL_ENTRIES and (os.isatty(0) or _PREVIEW.intersection(argv)):
        return None
    if _terminal_stops_writers():
        return None
    path = socket_path(env)
    if path is None or len(os.fsencode(path)) > _SOCKET_PATH_MAX:
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(5)
        conn.connect(path)
    except OSError:
        conn.close()
        start_worker(path)
        return None
    try:
        return _hand_over(conn, entry, list(argv))
    finally:
        conn.close()


def _terminal_stops_writers() -> bool:
    """Whether output goes to a terminal set to stop background writers (``stty tostop``): the
    run in the worker is outside the terminal's foreground group and would be stopped there."""
    for fd in (1, 2):
        if os.isatty(fd):
            import termios

            try:
                if termios.tcgetattr(fd)[3] & termios.TOSTOP:
                    return True
            except termios.error:
                return True
    return False


def _hand_over(conn: Any, entry: str, argv: list[str]) -> int | None:
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        request = encode_request(entry, argv, os.getcwd(), umask, os.environ)
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
        sent = conn.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        conn.sendall(request[sent:])
        pid_line = _line(conn)
    except (OSError, ValueError):
        return None  # nothing was taken (no cwd, a closed standard stream, no worker): run here
    if not pid_line.startswith(b"P") or not pid_line[1:].isdigit():
        return None
    # From here the run is the worker's: it may have read standard input, written output.
    pid = int(pid_line[1:])
    received: set[int] = set()
    forwarded = _forward_signals(pid, received)
    try:
        conn.settimeout(None)
        conn.sendall(b"G")
        end = _line(conn)
    except OSError:
        end = b""
    finally:
        for signum, handler in forwarded.items():
            _signal.signal(signum, handler)
    if end[:1] in (b"X", b"S") and end[1:].isdigit():
        code = int(end[1:])
        if end[:1] == b"X":
            return code
        if code in received:  # ended by the signal this process passed on: end by it too
            _signal.signal(code, _signal.SIG_DFL)
            os.kill(os.getpid(), code)
            return 128 + code
    sys.stderr.write(
        f"{entry}: ERROR: the resident rwgate worker stopped before the run ended"
        f" (set {ENV_SWITCH}=0 to run without it)\n"
    )
    return EXIT_LOST


def _line(conn: Any, limit: int = 64) -> bytes:
    """One short protocol line (without its newline); b"" if the other side went away."""
    data = b""
    while not data.endswith(b"\n") and len(data) < limit:
        chunk = conn.recv(1)
        if not chunk:
            return b""
        data += chunk
    return data.rstrip(b"\n")


def _forward_signals(pid: int, received: set[int]) -> dict[int, Any]:
    """Ctrl-C, a hang-up or a kill aimed at this process reaches the run in the worker and all
    it started (its process group, ``pid``). A kill that cannot be caught closes this process's
    socket, and the worker's keeper ends the group (:mod:`rwgate.runtime.keeper`)."""

    def forward(signum: int, _frame: object) -> None:
        received.add(signum)
        try:  # noqa: SIM105 (contextlib is an import this module does without)
            os.killpg(pid, signum)
        except OSError:
            pass

    return {signum: _signal.signal(signum, forward) for signum in _FORWARDED}


def start_worker(path: str) -> None:
    """Start the worker for ``path`` in the background (its own session, no terminal, no output);
    it serves from the next run on. Never waited for, never an error. Not again within
    ``START_EVERY`` seconds of the last start (the worker touches its lock file as it starts), so
    a worker that cannot start costs one attempt, not one per build."""
    try:
        if os.stat(lock_path(path)).st_mtime > time.time() - START_EVERY:
            return
    except OSError:
        pass
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    try:  # noqa: SIM105 (as above)
        subprocess.Popen(
            [sys.executable, "-P", "-m", "rwgate.runtime.worker", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
