"""The resident worker (rwgate.runtime.resident, rwgate.runtime.worker): a run handed to it is the
run itself.

Each test has its own runtime folder, so it starts its own worker and sees only its own socket.
Whether a run was handed over is observed, not assumed: with ``PYTHONPROFILEIMPORTTIME`` the
client lists what it imported itself, and a handed-over run never imports Pydantic there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from pandoc_build import build, copy_fixtures, pandoc, rw_filter

from conftest import require_tool
from fakes.crossref import FakeCrossref

T = TypeVar("T")
EMPTY_DOC = json.dumps({"pandoc-api-version": [1, 23, 1], "meta": {}, "blocks": []})


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's own runtime folder (removed after it, which stops its worker)."""
    folder = Path(tempfile.mkdtemp(prefix="rwt-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _filter(args: list[str], stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [rw_filter(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


def _serving(folder: Path) -> list[Path]:
    found = []
    for sock in sorted((folder / "rwgate").glob("*.sock")):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(sock))
            found.append(sock)
        except OSError:
            pass
        finally:
            probe.close()
    return found


def _until(found: Callable[[], T], seconds: float, what: str) -> T:
    """``found()`` once it is truthy, polled for up to ``seconds``; else the test fails."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def start_worker(folder: Path) -> Path:
    """Let a first run start this environment's worker, and wait until it serves."""
    first = _filter(["html"], EMPTY_DOC)
    assert first.returncode == 0, first.stderr
    return _until(lambda: _serving(folder), 60, f"a worker serves in {folder}")[0]


def _own_imports(stderr: str) -> set[str]:
    return set(re.findall(r"^import time:.*\|\s*(\S+)$", stderr, re.MULTILINE))


def _without_import_log(stderr: str) -> str:
    lines = stderr.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("import time:"))


def _worker_pid(sock: Path) -> int:
    out = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True, check=True
    )
    for line in out.stdout.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "rwgate.runtime.worker" in args and str(sock) in args:
            return int(pid)
    raise AssertionError(f"no worker process for {sock}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_a_handed_over_run_is_the_run_itself(
    tmp_path: Path, fake_crossref: FakeCrossref, runtime: Path
) -> None:
    """Differential: the same builds with the worker and without it give the same bytes."""
    copy_fixtures(tmp_path)
    start_worker(runtime)
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_CACHE": "1"}
    cases = {
        "default": ({}, "out.html"),
        "strict": ({"RWGATE_POLICY": "strict"}, "strict.html"),
        "docx": ({}, "out.docx"),
    }
    for name, (extra, output) in cases.items():
        local = build(tmp_path, ["--citeproc"], output, {**env, **extra, "RWGATE_RESIDENT": "0"})
        local_bytes = local.output.read_bytes() if local.output.exists() else None
        if local.output.exists():
            local.output.unlink()
        handed = build(
            tmp_path, ["--citeproc"], output, {**env, **extra, "PYTHONPROFILEIMPORTTIME": "1"}
        )
        assert handed.returncode == local.returncode, (name, handed.stderr)
        assert _without_import_log(handed.stderr) == local.stderr, name
        handed_bytes = handed.output.read_bytes() if handed.output.exists() else None
        if name == "docx":  # a zip whose members carry the time they were written
            assert (handed_bytes is None) == (local_bytes is None)
        else:
            assert handed_bytes == local_bytes, name
    # The gate failed under strict in both, and nothing was written.
    assert not (tmp_path / "strict.html").exists()
    # Handed over: the filter process itself never loaded the integrity core.
    direct = _filter(["html"], EMPTY_DOC, PYTHONPROFILEIMPORTTIME="1")
    assert "rwgate.runtime.resident" in _own_imports(direct.stderr)
    assert not {"pydantic", "panflute", "rwgate.core"} & _own_imports(direct.stderr)


def test_bad_input_and_arguments_behave_as_without_the_worker(runtime: Path) -> None:
    start_worker(runtime)
    for args, stdin in ((["html"], "not json"), (["html"], '{"blocks": []}')):
        local = _filter(args, stdin, RWGATE_RESIDENT="0")
        handed = _filter(args, stdin)
        assert (handed.returncode, handed.stdout, handed.stderr) == (
            local.returncode,
            local.stdout,
            local.stderr,
        )
        assert handed.returncode == 2 and handed.stderr.startswith("rw-filter: ERROR:")


def test_without_a_worker_the_run_runs_here_and_starts_one(runtime: Path) -> None:
    assert not _serving(runtime)
    first = _filter(["html"], EMPTY_DOC, PYTHONPROFILEIMPORTTIME="1")
    assert first.returncode == 0 and json.loads(first.stdout)["blocks"] == []
    assert "rwgate.frontends.pandoc.filter" in _own_imports(first.stderr)  # ran here
    assert len(_until(lambda: _serving(runtime), 60, "a worker serves")) == 1


def test_a_folder_others_can_enter_is_never_used(runtime: Path) -> None:
    (runtime / "rwgate").mkdir(mode=0o755)
    os.chmod(runtime / "rwgate", 0o755)
    run = _filter(["html"], EMPTY_DOC)
    assert run.returncode == 0
    time.sleep(1.0)
    assert list((runtime / "rwgate").iterdir()) == []  # no socket, no lock, no worker


def test_switched_off_by_the_user(runtime: Path) -> None:
    run = _filter(["html"], EMPTY_DOC, RWGATE_RESIDENT="0")
    assert run.returncode == 0
    time.sleep(0.5)
    assert not (runtime / "rwgate").exists() or not list((runtime / "rwgate").glob("*.sock"))


def _slow_run(tmp_path: Path, fake: FakeCrossref) -> subprocess.Popen[str]:
    """rw-filter judging a document while the fake Crossref takes 20 s to answer."""
    copy_fixtures(tmp_path)
    ast = subprocess.run(
        [pandoc(), "paper.md", "--citeproc", "-t", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fake.latency = 20.0
    proc = subprocess.Popen(
        [rw_filter(), "html"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RWGATE_CROSSREF_URL": fake.url, "RWGATE_TIMEOUT": "30"},
    )
    assert proc.stdin is not None
    proc.stdin.write(ast)
    proc.stdin.close()
    proc.stdin = None  # written and closed: communicate() has nothing to send
    return proc


def _wait_for_run(worker: int) -> int:
    """The run in the worker: the child of the keeper the worker forked for the connection."""

    def run() -> list[int]:
        return [pid for keeper in _children(worker) for pid in _children(keeper)]

    return _until(run, 30, "the run reaches the worker")[0]


def _slow_run_in_worker(
    folder: Path, fake: FakeCrossref, runtime: Path
) -> tuple[int, subprocess.Popen[str], int]:
    """A worker and a slow rw-filter run handed to it: (worker, client, the run in the worker)."""
    worker = _worker_pid(start_worker(runtime))
    proc = _slow_run(folder, fake)
    return worker, proc, _wait_for_run(worker)


def test_a_run_that_dies_in_the_worker_fails_closed(
    tmp_path: Path, fake_crossref: FakeCrossref, runtime: Path
) -> None:
    _worker, proc, run = _slow_run_in_worker(tmp_path, fake_crossref, runtime)
    os.kill(run, signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3
    assert out == ""  # no document: pandoc would write nothing
    assert "rw-filter: ERROR: the resident rwgate worker stopped before the run ended" in err
    assert len(_serving(runtime)) == 1  # the worker itself goes on serving


def test_ctrl_c_and_kill_reach_the_run(
    tmp_path: Path, fake_crossref: FakeCrossref, runtime: Path
) -> None:
    worker, proc, run = _slow_run_in_worker(tmp_path, fake_crossref, runtime)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    _until(lambda: not _alive(run), 10, "the interrupted run ends")
    # A client killed outright: its run in the worker ends too (it sees the client go).
    again = tmp_path / "again"
    again.mkdir()
    proc = _slow_run(again, fake_crossref)
    run = _wait_for_run(worker)
    proc.kill()
    proc.wait(timeout=10)
    _until(lambda: not _alive(run), 10, "the run ends with its client")


def test_the_worker_leaves_when_its_folder_goes(runtime: Path) -> None:
    worker = _worker_pid(start_worker(runtime))
    shutil.rmtree(runtime / "rwgate")
    _until(lambda: not _alive(worker), 15, "the worker leaves with its socket")


def test_modules_in_the_document_folder_never_run(tmp_path: Path, runtime: Path) -> None:
    """The hooks run in the document's folder: nothing there may stand in for a module."""
    marker = tmp_path / "ran"
    for name in ("json.py", "socket.py", "pydantic.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n", "utf-8")
    (tmp_path / "rwgate").mkdir()
    (tmp_path / "rwgate" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('rwgate')\n", "utf-8"
    )
    from rwgate.frontends.latex.latexmk_run import hook_command

    hook = hook_command().split("\n")
    for resident in ("0", "1"):
        run = subprocess.run(
            [*hook, "bibtex", "--ran", "0", "missing"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "RWGATE_RESIDENT": resident},
            timeout=60,
            check=False,
        )
        assert "Traceback" not in run.stderr, run.stderr
    assert not marker.exists(), marker.read_text()
    assert sys.executable  # the hook is this interpreter, run with -P


def _rw_latexmk(
    folder: Path, *args: str, stdin: int | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "rw-latexmk"), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        env={**os.environ, **env},
        timeout=180,
        check=False,
    )


def test_rw_latexmk_handed_over_builds_what_it_builds_alone(
    tmp_path: Path, fake_crossref: FakeCrossref, runtime: Path
) -> None:
    """The same LaTeX build, default and strict, with the worker and in its own process."""
    from test_latex_build import FIXTURES, contains, pdf_text

    start_worker(runtime)
    gate = re.compile(r"^rwgate: .*$", re.MULTILINE)
    for policy in ("default", "strict"):
        runs = {}
        for resident in ("0", "1"):
            folder = tmp_path / f"{policy}-{resident}"
            shutil.copytree(FIXTURES, folder)
            env = {
                "RWGATE_CROSSREF_URL": fake_crossref.url,
                "RWGATE_RESIDENT": resident,
                "RWGATE_POLICY": policy,
                "PYTHONPROFILEIMPORTTIME": "1",
            }
            run = _rw_latexmk(folder, "-pdf", "-interaction=nonstopmode", "natbib.tex", **env)
            runs[resident] = (run.returncode, gate.findall(run.stderr), folder)
            handed = "rwgate.frontends.latex.latexmk" not in _own_imports(run.stderr)
            assert handed == (resident == "1"), run.stderr[-2000:]
        assert runs["0"][:2] == runs["1"][:2], policy
        code, lines, folder = runs["1"]
        if policy == "strict":
            assert code == 1 and not (folder / "natbib.pdf").exists()
            assert (folder / "natbib.pdf.rejected").exists()
        else:
            assert code == 0 and contains(pdf_text(folder / "natbib.pdf"), "Retracted 2010")
        assert any("flagged" in line or "FAILED" in line or "failed" in line for line in lines)


def test_rw_latexmk_on_a_terminal_or_previewing_runs_in_its_own_process(runtime: Path) -> None:
    """TeX may prompt on the terminal, and -pv/-pvc outlive the build: never handed over."""
    import pty

    start_worker(runtime)
    parent, child = pty.openpty()
    try:
        on_tty = _rw_latexmk(runtime, "-help", stdin=child, PYTHONPROFILEIMPORTTIME="1")
    finally:
        os.close(parent)
        os.close(child)
    assert on_tty.returncode == 0 and "rwgate.frontends.latex.latexmk" in _own_imports(
        on_tty.stderr
    )
    preview = _rw_latexmk(runtime, "-pvc", "-help", PYTHONPROFILEIMPORTTIME="1")
    assert preview.returncode == 0 and "rwgate.frontends.latex.latexmk" in _own_imports(
        preview.stderr
    )
    piped = _rw_latexmk(runtime, "-help", PYTHONPROFILEIMPORTTIME="1")
    assert piped.returncode == 0 and "usage: rw-latexmk" in piped.stdout
    assert "rwgate.frontends.latex.latexmk" not in _own_imports(piped.stderr)  # handed over


def test_a_terminal_that_stops_background_writers_is_never_handed_over(runtime: Path) -> None:
    """``stty tostop``: a run outside the terminal's foreground group would stop, not write."""
    import pty
    import termios

    start_worker(runtime)
    parent, child = pty.openpty()
    try:
        for tostop, handed in ((False, True), (True, False)):
            attrs = termios.tcgetattr(child)
            attrs[3] = attrs[3] | termios.TOSTOP if tostop else attrs[3] & ~termios.TOSTOP
            termios.tcsetattr(child, termios.TCSANOW, attrs)
            run = subprocess.run(
                [rw_filter(), "html"],
                input=EMPTY_DOC.encode(),
                stdout=child,
                stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
                timeout=60,
                check=False,
            )
            assert run.returncode == 0
            imports = _own_imports(run.stderr.decode())
            assert ("rwgate.frontends.pandoc.filter" not in imports) == handed, tostop
            os.read(parent, 1 << 16)  # the document written to the terminal
    finally:
        os.close(parent)
        os.close(child)


def test_a_socket_path_too_long_for_the_system_means_no_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="rwt-" + "x" * 90, dir="/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
        for _ in range(2):
            assert _filter(["html"], EMPTY_DOC).returncode == 0
        time.sleep(0.5)
        assert list((folder / "rwgate").iterdir()) == []  # never started, never tried
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_killed_worker_removes_its_socket_and_the_next_prunes_what_others_left(
    runtime: Path,
) -> None:
    sock = start_worker(runtime)
    os.kill(_worker_pid(sock), signal.SIGTERM)
    _until(lambda: not sock.exists(), 10, "a killed worker removes its socket")
    # What a worker of other code left (killed outright): pruned when a worker starts.
    left = runtime / "rwgate" / "0123456789abcdef01234567"
    left.with_suffix(".sock").touch()
    left.with_suffix(".lock").touch()
    os.utime(left.with_suffix(".lock"), (0, 0))
    sock.with_suffix(".lock").unlink()  # no waiting for the start throttle
    start_worker(runtime)
    _until(lambda: not left.with_suffix(".lock").exists(), 10, "what others left is pruned")
    assert not left.with_suffix(".lock").exists() and not left.with_suffix(".sock").exists()


def test_a_run_keeps_the_client_s_time_zone(
    tmp_path: Path, fake_crossref: FakeCrossref, runtime: Path
) -> None:
    """An allow-list ``until`` counts in local days: a worker started in one time zone judges a
    run from another by the run's own (``TZ`` 26 hours apart: the local dates always differ)."""
    import datetime as dt

    from pandoc_build import write_doc

    copy_fixtures(tmp_path, "refs.bib")
    west = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=12)).date()  # today at UTC-12
    front = f"""
bibliography: refs.bib
rwgate:
  policy: strict
  allow:
  - key: wakefield1998
    reason: the essay is about it
    until: {west.isoformat()}
"""
    write_doc(tmp_path / "doc.md", front, "The retracted study [@wakefield1998].")
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_CACHE": "1"}
    os.environ["TZ"] = "Etc/GMT-14"  # the worker starts 14 hours east of UTC
    try:
        start_worker(runtime)
    finally:
        del os.environ["TZ"]
    for tz, passes in (("Etc/GMT+12", True), ("Etc/GMT-14", False), ("Etc/GMT+12", True)):
        for resident in ("1", "0"):
            out = build(
                tmp_path,
                ["--citeproc"],
                "out.html",
                {**env, "TZ": tz, "RWGATE_RESIDENT": resident},
                document="doc.md",
            )
            assert (out.returncode == 0) == passes, (tz, resident, out.stderr)


def _slow_latexmk(folder: Path, runtime: Path, **env: str) -> tuple[subprocess.Popen[str], int]:
    """rw-latexmk in a process group of its own, whose $pdflatex records its pid and sleeps:
    (the client, the sleeping TeX run), once the sleep has started."""
    from test_latex_build import FIXTURES

    shutil.copytree(FIXTURES, folder)
    pid_file = folder / "slow.pid"
    (folder / "latexmkrc").write_text(
        f"$pdflatex = 'echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}"
        " && exec sleep 41 #';\n",
        encoding="utf-8",
    )
    client = subprocess.Popen(
        [str(Path(sys.executable).parent / "rw-latexmk"), "-pdf", "natbib.tex"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1", **env},
        start_new_session=True,
    )
    slow = _until(lambda: pid_file.is_file() and pid_file.read_text().strip(), 120, "TeX starts")
    return client, int(slow)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_clients_group_ends_its_run_and_all_it_started(
    tmp_path: Path, runtime: Path, signum: int
) -> None:
    """``kill -KILL -- -<client group>``: the worker's run, latexmk and its TeX run end with it
    (they would in the client's own group), instead of running on under init."""
    require_tool("latexmk")
    start_worker(runtime)
    client, slow = _slow_latexmk(tmp_path / "doc", runtime)
    assert _alive(slow)
    started = time.monotonic()
    os.killpg(client.pid, signum)
    _err = client.communicate(timeout=30)[1]
    assert "rwgate.frontends.latex.latexmk" not in _own_imports(_err)  # it was the worker's run
    _until(lambda: not _alive(slow), 30, "the TeX run ends with its client")
    ended = time.monotonic() - started
    print(f"TeX run gone {ended:.2f} s after the client's group got signal {signum}")


def test_a_run_takes_its_clients_limits_and_niceness(tmp_path: Path, runtime: Path) -> None:
    """The run in the worker has the client's rlimits and nice, not the worker's."""
    import resource

    require_tool("latexmk")
    start_worker(runtime)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 200)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
        os.nice(3)

    from test_latex_build import FIXTURES

    folder = tmp_path / "doc"
    shutil.copytree(FIXTURES, folder)
    out = folder / "limits.txt"
    (folder / "latexmkrc").write_text(
        f"$pdflatex = 'sh -c \"ulimit -n; nice\" > {out}; exit 1 #';\n", encoding="utf-8"
    )
    run = subprocess.run(
        [str(Path(sys.executable).parent / "rw-latexmk"), "-pdf", "natbib.tex"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        preexec_fn=limited,
        timeout=180,
        check=False,
    )
    assert "rwgate.frontends.latex.latexmk" not in _own_imports(run.stderr), run.stderr[-2000:]
    limit, nice = out.read_text().split()
    assert int(limit) == lowered
    assert int(nice) == os.getpriority(os.PRIO_PROCESS, 0) + 3
