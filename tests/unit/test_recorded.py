"""The record of what a run read (rwgate.settings.recorded): made by the layers that read,
re-checked
input by input before a memo replays."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from rwgate.settings import config, recorded
from rwgate.settings.config import load_settings
from rwgate.settings.files import memo_disabled


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A document folder with no configuration above it, and a user config folder of its own."""
    for name in list(os.environ):
        if name.startswith("RWGATE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    doc = tmp_path / "doc"
    doc.mkdir()
    return doc


def _remembered(doc: Path, cache: Path) -> Path:
    """A memo of one configuration load at ``doc``, as a front end would write it."""
    with recorded.recording() as rec:
        load_settings(doc)
    path = recorded.memo_path(cache, "test-memo", {"doc": str(doc)})
    assert recorded.remember(path, rec, {"exit": 0}, 3600, cache)
    return path


def _replays(path: Path, cache: Path) -> bool:
    return recorded.replay(path, cache) == {"exit": 0}


def test_the_configuration_layer_records_every_variable_and_file_it_consults(home: Path) -> None:
    with recorded.recording() as rec:
        load_settings(home)
    assert set(config._ENV) <= set(rec.env)  # set or not
    assert rec.env["RWGATE_POLICY"] is None
    assert rec.files[str(home / "rwgate.toml")] is None  # looked for, absent
    assert rec.files[str(home / "pyproject.toml")] is None
    assert rec.files[str(home.parent / "config" / "rwgate" / "config.toml")] is None


def test_a_variable_added_to_the_configuration_layer_invalidates_without_memo_code(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The promise by construction: a new setting read from the environment is in the record,
    and setting it stops the replay, with no memo code naming it."""
    monkeypatch.setitem(config._ENV, "RWGATE_BRAND_NEW", "timeout")
    memo = _remembered(home, tmp_path / "cache")
    assert json.loads(memo.read_bytes())["env"]["RWGATE_BRAND_NEW"] is None
    assert _replays(memo, tmp_path / "cache")
    monkeypatch.setenv("RWGATE_BRAND_NEW", "5")
    assert not _replays(memo, tmp_path / "cache")


@pytest.mark.parametrize("name", ["RWGATE_LOCK", "RWGATE_SINCE", "RWGATE_POLICY", "RWGATE_NO_MEMO"])
def test_each_setting_variable_invalidates(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    memo = _remembered(home, tmp_path / "cache")
    monkeypatch.setenv(name, "strict" if name == "RWGATE_POLICY" else "1")
    assert not _replays(memo, tmp_path / "cache")


def test_a_configuration_file_that_appears_changes_or_goes_invalidates(
    home: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    memo = _remembered(home, cache)
    (home / "rwgate.toml").write_text('policy = "strict"\n', encoding="utf-8")
    assert not _replays(memo, cache)  # appeared
    memo = _remembered(home, cache)
    assert _replays(memo, cache)
    (home / "rwgate.toml").write_text('policy = "permissive"\n', encoding="utf-8")
    assert not _replays(memo, cache)  # changed
    memo = _remembered(home, cache)
    (home / "rwgate.toml").unlink()
    assert not _replays(memo, cache)  # removed


def test_the_user_configuration_appearing_invalidates(home: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    memo = _remembered(home, cache)
    user = tmp_path / "config" / "rwgate" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("offline = true\n", encoding="utf-8")
    assert not _replays(memo, cache)


def test_the_snapshot_moved_or_re_imported_invalidates(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    snap = tmp_path / "snap.sqlite3"
    snap.write_bytes(
        b"SQLite format 3\0" + bytes(44) + b"\1\2\3\4" + bytes(4) + b"\5\6\7\x08" + bytes(28)
    )
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snap))
    from rwgate.settings.paths import default_snapshot_path

    with recorded.recording() as rec:
        load_settings(home)
        recorded.note_snapshot(default_snapshot_path(), recorded.snapshot_id(snap))
    assert rec.snapshot == (str(snap), "0102030405060708")
    memo = recorded.memo_path(cache, "test-memo", "x")
    assert recorded.remember(memo, rec, {"exit": 0}, 3600, cache)
    assert _replays(memo, cache)
    data = bytearray(snap.read_bytes())
    data[63] = 9  # a new import id, same size
    snap.write_bytes(bytes(data))
    assert not _replays(memo, cache)
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "elsewhere.sqlite3"))
    assert not _replays(memo, cache)


def test_a_snapshot_without_an_id_is_never_remembered(tmp_path: Path) -> None:
    with recorded.recording() as rec:
        recorded.note_snapshot(tmp_path / "old.sqlite3", "")
    assert not rec.complete
    assert not recorded.remember(tmp_path / "m.json", rec, {}, 60, None)


def test_read_files_are_re_checked_by_their_bytes(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(b"@article{a, doi={10.1/x}}\n")
    with recorded.recording() as rec:
        recorded.read_bytes(bib)
        assert not recorded.is_file(tmp_path / "extra.bib")
    memo = tmp_path / "m.json"
    recorded.remember(memo, rec, {"exit": 0}, 60, tmp_path)
    assert _replays(memo, tmp_path)
    bib.write_bytes(b"@article{a, doi={10.1/y}}\n")  # same size, same mtime would not matter
    assert not _replays(memo, tmp_path)
    recorded.remember(memo, rec, {"exit": 0}, 60, tmp_path)
    bib.write_bytes(b"@article{a, doi={10.1/x}}\n")
    assert _replays(memo, tmp_path)
    (tmp_path / "extra.bib").write_bytes(b"")
    assert not _replays(memo, tmp_path)


def test_the_earliest_expiry_ends_the_replay(tmp_path: Path) -> None:
    with recorded.recording() as rec:
        recorded.note_expiry(time.time() + 1000)
        recorded.note_expiry(time.time() - 1)  # an allow-list 'until' just passed
    memo = tmp_path / "m.json"
    recorded.remember(memo, rec, {"exit": 0}, 3600, tmp_path)
    assert not _replays(memo, tmp_path)
    with recorded.recording() as rec:
        pass
    recorded.remember(memo, rec, {"exit": 0}, 3600, tmp_path)
    assert json.loads(memo.read_bytes())["expires"] <= time.time() + 3600
    assert _replays(memo, tmp_path)


def test_listing_the_whole_environment_cannot_be_recorded(tmp_path: Path) -> None:
    with recorded.recording() as rec:
        list(recorded.environ({"A": "1"}))
    assert not rec.complete
    assert not recorded.remember(tmp_path / "m.json", rec, {}, 60, None)


def test_a_derived_input_needs_its_checker(tmp_path: Path) -> None:
    aux = tmp_path / "x.aux"
    with recorded.recording() as rec:
        recorded.note_derived("cites", aux, "a,b")
    memo = tmp_path / "m.json"
    recorded.remember(memo, rec, 1, 60, tmp_path)
    assert recorded.replay(memo, tmp_path) is None  # no checker for 'cites': no replay
    assert recorded.replay(memo, tmp_path, {"cites": lambda p: "a,b"}) == 1
    assert recorded.replay(memo, tmp_path, {"cites": lambda p: "a,b,c"}) is None


def test_a_replayed_memo_is_an_input_of_the_run_around_it(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(b"x")
    with recorded.recording() as inner:
        recorded.read_bytes(bib)
    memo = tmp_path / "m.json"
    recorded.remember(memo, inner, "parsed", 60, tmp_path)
    with recorded.recording() as outer:
        assert recorded.replay(memo, tmp_path) == "parsed"
    assert outer.files == inner.files and outer.expires is not None


def test_code_identity_follows_the_bytes_and_is_kept_by_stats(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_bytes(b"A = 1\n")
    (root / "sub" / "t.j2").write_bytes(b"{{ x }}\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "a.cpython.pyc").write_bytes(b"junk")
    assert recorded.code_files(str(root)) == ["a.py", "sub/t.j2"]
    cache = tmp_path / "cache"
    first, _ = recorded._code(cache, str(root))
    assert (cache / recorded.CODE_CACHE).is_file()
    assert recorded._code(cache, str(root))[0] == first
    (root / "a.py").write_bytes(b"A = 2\n")  # an edited editable install
    assert recorded._code(cache, str(root))[0] != first
    # The digest Lua recomputes: sha1 over "name NUL sha1(bytes) LF", in code_files order.
    import hashlib

    lines = "".join(
        f"{n}\0{hashlib.sha1((root / n).read_bytes()).hexdigest()}\n"
        for n in recorded.code_files(str(root))
    )
    assert recorded._code(None, str(root))[0] == hashlib.sha1(lines.encode()).hexdigest()


def test_rwgates_own_code_changing_invalidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with recorded.recording() as rec:
        pass
    memo = tmp_path / "m.json"
    recorded.remember(memo, rec, {"exit": 0}, 60, tmp_path)
    assert _replays(memo, tmp_path)
    data = json.loads(memo.read_bytes())
    data["code_id"] = "0" * 40  # as if written by other code
    memo.write_text(json.dumps(data), encoding="utf-8")
    assert not _replays(memo, tmp_path)


def test_no_memo_switch(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    assert not memo_disabled({})
    assert not memo_disabled({"RWGATE_NO_MEMO": "0"})
    assert memo_disabled({"RWGATE_NO_MEMO": "1"})
    monkeypatch.setenv("RWGATE_NO_MEMO", "1")
    assert load_settings(home).no_memo is True
    assert load_settings(home).no_cache is False  # the look-up cache stays


def test_a_memo_of_another_layout_is_not_replayed(tmp_path: Path) -> None:
    memo = tmp_path / "m.json"
    memo.write_text(json.dumps({"layout": 1, "payload": 1}), encoding="utf-8")
    assert recorded.replay(memo, tmp_path) is None
    shutil.rmtree(tmp_path)
    assert recorded.replay(memo, None) is None
