"""The resident worker's pieces that need no process: its name, its folder, what it accepts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rwgate import resident, worker


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of rwgate's files standing in for the installed package."""
    copy = tmp_path / "rwgate"
    shutil.copytree(Path(resident.__file__).parent, copy)
    monkeypatch.setattr(resident, "_PACKAGE", copy)
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
    folder = resident.socket_folder(env)
    assert folder == tmp_path / "rwgate"
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
    assert resident.socket_folder({"XDG_RUNTIME_DIR": "relative"}) == Path(
        f"/tmp/rwgate-{os.getuid()}"
    )


def test_switch() -> None:
    assert not resident.enabled({"RWGATE_RESIDENT": "0"})
    assert not resident.enabled({"RWGATE_RESIDENT": "off"})
    assert resident.enabled({}) == resident.enabled({"RWGATE_RESIDENT": "1"})


def _request(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "protocol": resident.PROTOCOL,
        "entry": "rw-filter",
        "argv": ["html"],
        "cwd": "/tmp",
        "env": {"HOME": "/root"},
        "umask": 0o022,
    }
    return {**base, **changes}


def test_the_worker_runs_the_filter_and_the_hooks_only() -> None:
    assert worker._valid(_request())
    assert worker._valid(_request(entry="rwgate", argv=["bibtex", "paper"]))
    assert worker._valid(_request(entry="rwgate", argv=["biber", "paper"]))
    refused = [
        _request(entry="rwgate", argv=["check", "paper.md"]),
        _request(entry="rwgate", argv=["mcp"]),
        _request(entry="rwgate", argv=[]),
        _request(entry="python", argv=["-c", "print(1)"]),
        _request(protocol=0),
        _request(argv="html"),
        _request(argv=[1]),
        _request(env={"A": 1}),
        _request(env=["A=1"]),
        _request(cwd=None),
        _request(umask="022"),
        ["rw-filter"],
    ]
    for request in refused:
        assert not worker._valid(request), request
