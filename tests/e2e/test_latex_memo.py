"""rw-latexmk's rebuild memo (issue 18): an unchanged rebuild replays the last passing gate without
starting the integrity core, and anything the verdict depends on makes it judge again.

Whether the core ran is observed, not assumed: the rebuild runs with ``PYTHONPROFILEIMPORTTIME``,
so Python itself lists every module rw-latexmk imported; and in its own process
(``RWGATE_RESIDENT=0``, as on a terminal, where rw-latexmk is never handed to the resident worker).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from test_latex_build import _tools, contains, doc, entry_text, pdf_text, rw_latexmk  # noqa: F401

from rwgate.sources.snapshot.source import import_files

RW_EXTRACT = Path(__file__).parents[1] / "fixtures" / "rw" / "rw-extract-2025.csv"
KUCSKO = "10.1038/nature12373"  # cited by natbib.tex, clean at Crossref (the fake)


def _memo_entries() -> list[Path]:
    return sorted((Path(os.environ["RWGATE_CACHE_DIR"]) / "latex-memo").glob("*.json"))


def _imported(run: subprocess.CompletedProcess[str]) -> set[str]:
    return set(re.findall(r"^import time:.*\|\s*(\S+)$", run.stderr, re.MULTILINE))


def _gate_text(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if line.startswith("rwgate: "))


def _rebuild(monkeypatch: pytest.MonkeyPatch, *args: str) -> subprocess.CompletedProcess[str]:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    monkeypatch.setenv("RWGATE_RESIDENT", "0")  # the memo key leaves it out: still a rebuild
    try:
        return rw_latexmk(*args, "natbib.tex")
    finally:
        monkeypatch.delenv("PYTHONPROFILEIMPORTTIME")
        monkeypatch.delenv("RWGATE_RESIDENT")


def test_an_unchanged_rebuild_replays_the_gate_without_the_core(
    doc: Path,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = rw_latexmk("natbib.tex")
    assert first.returncode == 0, first.stderr
    assert len(_memo_entries()) == 1
    again = _rebuild(monkeypatch)
    assert again.returncode == 0, again.stderr
    assert "rwgate.frontends.latex.memo" in _imported(again)
    assert not {"rwgate.core", "rwgate.settings.config", "pydantic"} & _imported(again)
    assert _gate_text(again.stderr) == _gate_text(first.stderr)
    assert "gate passed" in again.stderr and "2 annotated" in again.stderr

    # Touching nothing the verdict reads keeps replaying; an expired entry is judged again.
    entry = _memo_entries()[0]
    data = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(json.dumps({**data, "expires": 0}), encoding="utf-8")
    expired = _rebuild(monkeypatch)
    assert expired.returncode == 0 and "rwgate.core" in _imported(expired)
    assert _gate_text(expired.stderr) == _gate_text(first.stderr)


def _snapshot_listing(folder: Path, doi: str) -> Path:
    """A real Retraction Watch row (the first of the 2025 extract) moved onto ``doi``."""
    text = RW_EXTRACT.read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    fields = list(rows[0])
    row = {**rows[0], "OriginalPaperDOI": doi, "RetractionNature": "Retraction"}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\r\n")
    writer.writeheader()
    writer.writerow(row)
    path = folder / "one-row.csv"
    path.write_bytes(out.getvalue().encode("utf-8"))
    return path


def test_a_new_snapshot_is_seen_by_an_unchanged_rebuild(
    doc: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snapshot = tmp_path / "snapshot.sqlite3"
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    first = rw_latexmk("natbib.tex")
    assert first.returncode == 0, first.stderr
    assert len(_memo_entries()) == 1
    kucsko = entry_text(pdf_text(doc / "natbib.pdf"), "Nanometre-scale", "[2]")
    assert not contains(kucsko, "Retracted")

    imported = import_files(snapshot, [_snapshot_listing(tmp_path, KUCSKO)])
    assert imported.failed == []
    again = _rebuild(monkeypatch)  # latexmk has nothing to do; the data changed
    assert again.returncode == 0, again.stderr
    assert "rwgate.core" in _imported(again)
    assert "verdict changed" in again.stderr
    assert contains(entry_text(pdf_text(doc / "natbib.pdf"), "Nanometre-scale", "[2]"), "Retracted")


def test_a_changed_configuration_or_policy_is_judged_again(
    doc: Path,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert rw_latexmk("natbib.tex").returncode == 0
    (doc / "rwgate.toml").write_text('policy = "strict"\n', encoding="utf-8")
    strict = _rebuild(monkeypatch)
    assert strict.returncode == 1 and "gate FAILED" in strict.stderr
    assert not (doc / "natbib.pdf").exists()
    (doc / "rwgate.toml").unlink()
    # Back to the configuration of the remembered gate: latexmk rebuilds the renamed PDF, the
    # entry replays, and no rejected PDF is left beside the new one.
    back = _rebuild(monkeypatch)
    assert back.returncode == 0, back.stderr
    assert "rwgate.core" not in _imported(back)
    assert (doc / "natbib.pdf").is_file() and not (doc / "natbib.pdf.rejected").exists()


def test_a_failing_or_offline_gate_is_not_remembered(
    doc: Path,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert rw_latexmk("--policy", "strict", "natbib.tex").returncode == 1
    assert rw_latexmk("--offline", "natbib.tex").returncode == 0
    assert _memo_entries() == []
    again = _rebuild(monkeypatch, "--policy", "strict")
    assert again.returncode == 1 and "rwgate.core" in _imported(again)


def test_the_default_snapshot_moving_with_xdg_data_home_is_judged_again(
    doc: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RWGATE_SNAPSHOT")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "empty"))
    assert rw_latexmk("natbib.tex").returncode == 0
    assert len(_memo_entries()) == 1
    # Another data folder, whose default snapshot lists a cited work: no RWGATE_* variable moved.
    other = tmp_path / "data"
    imported = import_files(
        other / "rwgate" / "snapshot.sqlite3", [_snapshot_listing(tmp_path, KUCSKO)]
    )
    assert imported.failed == []
    monkeypatch.setenv("XDG_DATA_HOME", str(other))
    again = _rebuild(monkeypatch)
    assert again.returncode == 0, again.stderr
    assert "rwgate.core" in _imported(again) and "verdict changed" in again.stderr
    kucsko = entry_text(pdf_text(doc / "natbib.pdf"), "Nanometre-scale", "[2]")
    assert contains(kucsko, "Retracted")
