"""`rwgate data import --sample` (issue 46): the sample shipped in the package, imported into the
invoking user's snapshot as an extract named `sample:*`, never a registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.frontends.cli.data import main, sample_sources
from rwgate.sources.snapshot.source import Snapshot


def test_the_sample_ships_in_the_package() -> None:
    names = [s.url for s in sample_sources()]
    assert names[0] == "sample:retraction-watch/rw-sample.csv" and len(names) == 7
    assert all(s.path.is_file() and "rwgate/sample/" in s.path.as_posix() for s in sample_sources())


def test_import_sample_is_an_extract_even_with_allow_shrink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite3"
    assert main(["data", "import", "--sample", "--allow-shrink", "--snapshot", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rwgate: the bundled SAMPLE") and "not the full database" in out
    with Snapshot(path) as snap:
        assert not snap.is_registry
        assert {p.source.split("/")[0] for p in snap.provenance()} == {
            "sample:retraction-watch",
            "sample:crossref",
        }
        assert snap.query("10.1038/171737a0").outcome == "found"  # a recorded clean record
        assert snap.absence == "nothing"  # an unlisted work is never clean from it


def test_import_without_files_or_sample_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "import", "--snapshot", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--sample" in err
    assert not (tmp_path / "s.sqlite3").exists()
