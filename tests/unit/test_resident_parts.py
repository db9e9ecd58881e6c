"""The resident worker's pieces that need no process: its name, its folder, what it accepts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rwgate.runtime import resident


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of rwgate's files standing in for the installed package."""
    copy = tmp_path / "rwgate"
    shutil.copytree(Path(resident.__file__).parents[1], copy)
    monkeypatch.setattr(resident, "_PACKAGE", str(copy))
    return copy


def test_changed_code_is_another_worker(package: Path) -> None:
    env = {"LANG": "C.UTF-8"}
    before = resident.identity(env)
    assert resident.identity(env) == before
    core = package / "core.py"
    core.write_text(core.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert resident.identity(env) != before
    edited = resident.identity(env)
    (package / "extra.py").write_text("", encoding="utf-8")
    assert resident.identity(env) != edited


def test_start_up_environment_is_another_worker(package: Path) -> None:
    base = {"LANG": "C.UTF-8", "HOME": "/home/a"}
    name = resident.identity(base)
    for changed in (
        {"PYTHONPATH": "/somewhere"},
        {"PYTHONWARNINGS": "error"},
        {"LC_ALL": "C"},
        {"LANG": "de_DE.ISO-8859-1"},
    ):
        assert resident.identity({**base, **changed}) != name, changed
    # What a run takes from its own environment, and import timings, do not matter here.
    for same in (
        {"HOME": "/home/b"},
        {"RWGATE_POLICY": "strict"},
        {"PYTHONPROFILEIMPORTTIME": "1"},
        {"PYTHONDONTWRITEBYTECODE": "1"},
    ):
        assert resident.identity({**base, **same}) == name, same


def test_the_socket_folder_is_private_or_none(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    found = resident.socket_folder(env)
    folder = tmp_path / "rwgate"
    assert found == str(folder)
    assert folder.stat().st_mode & 0o777 == 0o700
    os.chmod(folder, 0o755)
    assert resident.socket_folder(env) is None
    os.chmod(folder, 0o700)
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    shutil.rmtree(folder)
    folder.symlink_to(target)
    assert resident.socket_folder(env) is None  # a link is never followed
    # A relative runtime folder is not one: the /tmp fallback is used.
    assert resident.socket_folder({"XDG_RUNTIME_DIR": "relative"}) == f"/tmp/rwgate-{os.getuid()}"


def test_switch() -> None:
    assert not resident.enabled({"RWGATE_RESIDENT": "0"})
    assert not resident.enabled({"RWGATE_RESIDENT": "off"})
    assert resident.enabled({}) == resident.enabled({"RWGATE_RESIDENT": "1"})


def test_a_run_crosses_the_socket_unchanged() -> None:
    env = {"HOME": "/root", "ODD": "a=b\udcff", "EMPTY": "", "PATH": "/bin:/usr/bin"}
    argv = ["html", "--lua-memo", "/tmp/x y/\u00e9.json", ""]
    wire = resident.encode_request("rw-filter", argv, "/tmp/d\udcfe", 0o027, env)
    assert int.from_bytes(wire[:4], "big") == len(wire) - 4
    assert resident.decode_request(wire[4:]) == {
        "entry": "rw-filter",
        "argv": argv,
        "cwd": "/tmp/d\udcfe",
        "umask": 0o027,
        "env": env,
    }
    wrong_mask = wire[4:].replace(b"0o27", b"27")
    too_few = resident.encode_request("rw-filter", ["a", "b"], "/", 0, {})[4:].replace(
        b"\x002\x00", b"\x009\x00"
    )
    for broken in (b"", b"other/1\0rw-filter", wrong_mask, too_few, wire[4:] + b"\0no-equals"):
        assert resident.decode_request(broken) is None, broken


def _request(entry: str, argv: list[str]) -> dict[str, object]:
    wire = resident.encode_request(entry, argv, "/tmp", 0o022, {"HOME": "/root"})
    decoded = resident.decode_request(wire[4:])
    assert decoded is not None
    return decoded


def _valid(request: dict[str, object]) -> bool:
    entry, argv = request["entry"], request["argv"]
    assert isinstance(entry, str) and isinstance(argv, list)
    return resident.accepts(entry, argv)


def test_the_worker_runs_the_filter_and_the_hooks_only() -> None:
    assert _valid(_request("rw-filter", ["html"]))
    assert _valid(_request("rw-latexmk", ["-pdf", "paper.tex"]))
    assert _valid(_request("rwgate", ["bibtex", "paper"]))
    assert _valid(_request("rwgate", ["biber", "paper"]))
    for entry, argv in (
        ("rwgate", ["check", "paper.md"]),
        ("rwgate", ["mcp"]),
        ("rwgate", []),
        ("python", ["-c", "print(1)"]),
    ):
        assert not _valid(_request(entry, argv)), (entry, argv)


def test_a_recent_start_starts_no_other(tmp_path: Path) -> None:
    """A worker that cannot start costs one attempt, not one per build (no program is started
    here: the unit tier's guard would fail the test if one were)."""
    sock = str(tmp_path / "abc.sock")
    Path(resident.lock_path(sock)).touch()
    resident.start_worker(sock)
    assert resident.lock_path(sock) == str(tmp_path / "abc.lock")
