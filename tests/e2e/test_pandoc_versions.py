"""rw-filter, the Lua filter and ``rwgate check`` under every pandoc version rwgate supports.

Before: with Debian's 2.17 the Lua filter ended in a Lua traceback (`rwgate.lua:410: attempt to
call a nil value (field 'citeproc')`), `rwgate check refs.ris` could not read RIS, no floor was
written anywhere, and `rwgate check` ran pandoc unbounded (5,000 nested raw-LaTeX environments:
24 s, 4.7 GB).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pandoc_build import FIXTURES, FLAGGED_KEYS, copy_fixtures, rw_filter
from pandoc_matrix import ROOT, VERSIONS, pandoc_of, path_with

from fakes.crossref import FakeCrossref

LUA = ROOT / "filters" / "rwgate.lua"
BIN = Path(sys.executable).parent


def _entries(html: str) -> dict[str, str]:
    found = re.findall(r'<div id="ref-([^"]+)" class="csl-entry"[^>]*>(.*?)\n</div>', html, re.S)
    return dict(found)


def _build(
    tmp_path: Path, exe: str, middle: list[str], fake: FakeCrossref, **env: str
) -> subprocess.CompletedProcess[str]:
    copy_fixtures(tmp_path)
    cmd = [exe, "paper.md", "--wrap=none", *middle, "-o", "out.html"]
    full = {**os.environ, "PATH": path_with(exe), "RWGATE_CROSSREF_URL": fake.url, **env}
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300, check=False
    )
    assert "Traceback" not in proc.stderr and "traceback" not in proc.stderr, proc.stderr
    return proc


def _notes_in_entries(tmp_path: Path) -> None:
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    entries = _entries(html)
    for key in FLAGGED_KEYS:
        assert "rw-notice" in entries[key], (key, entries.get(key))
    assert html.count("rw-notice") == len(FLAGGED_KEYS)  # once each: in its entry only
    assert html.count('id="refs"') == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_rw_filter_after_citeproc(
    version: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    exe = pandoc_of(version)
    proc = _build(tmp_path, exe, ["--citeproc", "--filter", rw_filter()], fake_crossref)
    assert proc.returncode == 0, proc.stderr
    _notes_in_entries(tmp_path)


@pytest.mark.parametrize("version", VERSIONS)
def test_lua_filter_renders_and_annotates(
    version: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    exe = pandoc_of(version)
    proc = _build(tmp_path, exe, ["--lua-filter", str(LUA), "--citeproc"], fake_crossref)
    assert proc.returncode == 0, proc.stderr
    _notes_in_entries(tmp_path)


@pytest.mark.parametrize("version", VERSIONS)
def test_strict_stops_the_build_in_both_filters(
    version: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    exe = pandoc_of(version)
    for middle in (["--citeproc", "--filter", rw_filter()], ["--lua-filter", str(LUA)]):
        proc = _build(tmp_path, exe, middle, fake_crossref, RWGATE_POLICY="strict")
        assert proc.returncode != 0, proc.stderr
        assert "rw-filter: ERROR" in proc.stderr
        assert not (tmp_path / "out.html").exists()


def test_lua_filters_own_citeproc_on_2_17_runs_under_the_heap_bound(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """pandoc 2.17 has no pandoc.utils.citeproc: the Lua filter runs the same binary, bounded."""
    exe = pandoc_of("2.17")
    proc = _build(
        tmp_path, exe, ["--lua-filter", str(LUA)], fake_crossref, RWGATE_PANDOC_HEAP_MB="2"
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "rwgate: pandoc's citeproc needed more than 2 MB; split the document"
    )


def test_rw_filter_refuses_a_pandoc_below_the_floor_in_one_line() -> None:
    """What a pandoc older than 2.17 hands a JSON filter: its version in PANDOC_VERSION."""
    ast = subprocess.run(
        [pandoc_of("newest"), str(FIXTURES / "paper.md"), "-t", "json"],
        capture_output=True,
        timeout=120,
        check=True,
    ).stdout
    env = {**os.environ, "PANDOC_VERSION": "2.9.2.1"}
    proc = subprocess.run(
        [rw_filter(), "html"], input=ast, env=env, capture_output=True, timeout=120, check=False
    )
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        "rw-filter: ERROR: pandoc 2.9.2.1 is older than 2.17, the oldest rw-filter supports: "
        "install a newer pandoc (https://pandoc.org/installing.html) or put the one "
        "`pip install pypandoc-binary` ships first on PATH"
    ]


def _check(tmp_path: Path, args: list[str], exe: str | None = None, **env: str):
    path = path_with(exe) if exe else os.environ["PATH"]
    return subprocess.run(
        [str(BIN / "rwgate"), "check", *args],
        cwd=tmp_path,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_check_reads_markdown_with_2_17_and_ris_with_the_wheel(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """2.17 (at the floor) reads Markdown; it has no RIS reader, so the wheel's reads the .ris,
    and one line says so."""
    exe = pandoc_of("2.17")
    copy_fixtures(tmp_path)
    done = _check(tmp_path, ["paper.md"], exe, RWGATE_CROSSREF_URL=fake_crossref.url)
    assert done.returncode == 0, done.stderr
    assert "wakefield1998" in done.stdout and "rwgate: pandoc" not in done.stderr
    (tmp_path / "refs.ris").write_bytes((ROOT / "tests/fixtures/ris/refs.ris").read_bytes())
    done = _check(tmp_path, ["refs.ris"], exe, RWGATE_CROSSREF_URL=fake_crossref.url)
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("rwgate: pandoc")]
    assert said == [
        "rwgate: pandoc 2.17.1.1 on PATH is older than 2.19, the oldest pandoc's RIS reader "
        "supports: reading with the pypandoc-binary wheel's pandoc "
        + subprocess.run(
            [pandoc_of("newest"), "--version"], capture_output=True, text=True
        ).stdout.split()[1]
    ]


def _nested(tmp_path: Path) -> Path:
    """The issue's document: a citation, then 5,000 nested raw-LaTeX environments (80 kB)."""
    body = "See [@wakefield1998].\n\n" + "\\begin{x}\n" * 5000 + "\\end{x}\n" * 5000
    copy_fixtures(tmp_path, "refs.bib")
    (tmp_path / "nested.md").write_text(f"---\nbibliography: refs.bib\n---\n\n{body}", "utf-8")
    return tmp_path / "nested.md"


def test_check_stops_pandoc_at_the_heap_bound(tmp_path: Path) -> None:
    _nested(tmp_path)
    done = _check(tmp_path, ["nested.md"], RWGATE_PANDOC_HEAP_MB="256")
    assert done.returncode == 2
    said = "rwgate: error: nested.md: pandoc needed more than 256 MB; split the document"
    assert said in done.stdout.splitlines(), done.stdout
    assert done.stderr == "rwgate: exit 2: could not read nested.md\n"


def test_check_stops_pandoc_at_the_time_bound(tmp_path: Path) -> None:
    _nested(tmp_path)
    done = _check(tmp_path, ["nested.md"], RWGATE_PANDOC_SECONDS="1")
    assert done.returncode == 2
    said = "rwgate: error: nested.md: pandoc took longer than 1 s; split the document"
    assert said in done.stdout.splitlines(), done.stdout
    assert done.stderr == "rwgate: exit 2: could not read nested.md\n"


@pytest.mark.parametrize("version", ["3.5", "newest"])
def test_quarto_extension_under_emulated_quarto(
    version: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """Quarto 1.4 to 1.10 bundle pandoc 3.1.12 to 3.10: the extension at `post-finalize`, then
    Quarto's citeproc, as quarto-emulation.lua runs them (see tests/fixtures/quarto/README.md)."""
    exe = pandoc_of(version)
    quarto = ROOT / "tests" / "fixtures" / "quarto"
    shutil.copy(quarto / "paper.qmd", tmp_path / "paper.qmd")
    copy_fixtures(tmp_path, "refs.bib")
    defaults = tmp_path / "quarto-defaults.yaml"
    emulation = quarto / "quarto-emulation.lua"
    defaults.write_text(f"from: markdown\nfilters:\n  - {emulation}\n  - citeproc\n", "utf-8")
    env = {
        **os.environ,
        "PATH": path_with(exe),
        "RWGATE_CROSSREF_URL": fake_crossref.url,
        "RWGATE_TEST_EXTENSION": str(ROOT / "_extensions" / "rwgate"),
    }
    proc = subprocess.run(
        [exe, "paper.qmd", "-d", str(defaults), "--wrap=none", "-o", "out.html"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    entries = _entries(html)
    assert set(entries) == {"wakefield1998", "lacour2014", "kucsko2013"}
    assert "rw-notice" in entries["wakefield1998"] and "rw-notice" in entries["lacour2014"]
    assert "rw-notice" not in entries["kucsko2013"]
    assert html.count('id="refs"') == 1
