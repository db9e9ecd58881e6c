"""DESIGN.md rule 2 (issue 45): a build verifies that what citeproc printed is what rwgate judged.

The differential test: a key defined in two or three bibliography files and inline, in every
order, built through real pandoc 2.17, 2.19.2, 3.5 and the wheel's; the DOI each build prints is
the DOI rwgate's report says it judged (every definition is judged, the one pandoc prints leads).

Then rule 2 itself: when the printed entry is not one rwgate judged (here, a two-stage build whose
.bib changed between citeproc and the filter, as a Makefile or an editor save can do), rw-filter and
the Lua filter stop the build with one line naming the key, what was printed and what was judged.
Before this, both passed: the output showed Wakefield 1998 without a note, judged as Watson 1953.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from example_data import import_sample
from pandoc_build import FIXTURES, pandoc, rw_filter
from pandoc_matrix import ROOT, VERSIONS, pandoc_of, path_with

LUA = ROOT / "filters" / "rwgate.lua"

# Three works the sample snapshot does not list: each is `unverified` offline, so no definition
# is worse than another and the judged DOI is the one rwgate says pandoc prints.
DOIS = {"a": "10.5555/rwgate.a", "b": "10.5555/rwgate.b", "c": "10.5555/rwgate.c"}
INLINE_DOI = "10.5555/rwgate.inline"


def _bib(doi: str) -> str:
    return f"@article{{k, title={{Work {doi[-1]}}}, journal={{J}}, year={{2001}}, doi={{{doi}}}}}\n"


def _csl(doi: str) -> str:
    work = {
        "id": "k",
        "type": "article-journal",
        "title": "Work c",
        "issued": {"date-parts": [[2001]]},
    }
    return json.dumps([{**work, "DOI": doi}])


ORDERS = [
    (list(files), inline)
    for n in (2, 3)
    for files in itertools.permutations(["a.bib", "b.bib", "c.json"], n)
    if n == 3 or "c.json" not in files
    for inline in (False, True)
]


def _write(folder: Path, files: list[str], inline: bool) -> None:
    (folder / "a.bib").write_text(_bib(DOIS["a"]), encoding="utf-8")
    (folder / "b.bib").write_text(_bib(DOIS["b"]), encoding="utf-8")
    (folder / "c.json").write_text(_csl(DOIS["c"]), encoding="utf-8")
    refs = (
        "references:\n- id: k\n  type: article-journal\n  title: Work inline\n"
        f"  issued: 2001\n  DOI: {INLINE_DOI}\n"
        if inline
        else ""
    )
    front = f"bibliography: [{', '.join(files)}]\n{refs}"
    (folder / "paper.md").write_text(f"---\n{front}---\n\nSee [@k].\n", encoding="utf-8")


def _printed_dois(text: str) -> list[str]:
    return [d.lower() for d in re.findall(r"https://doi\.org/(10\.\S+?)\.?(?:\s|$)", text)]


@pytest.fixture
def env() -> dict[str, str]:
    env = {**os.environ, "RWGATE_OFFLINE": "1", "RWGATE_NO_MEMO": "1"}
    import_sample(env)
    return env


@pytest.mark.parametrize("version", VERSIONS)
def test_the_printed_entry_is_the_judged_one_in_every_order(
    version: str, tmp_path: Path, env: dict[str, str]
) -> None:
    exe = pandoc_of(version)
    env = {**env, "PATH": path_with(exe), "RWGATE_REPORT": "report.json"}
    for at, (files, inline) in enumerate(ORDERS):
        folder = tmp_path / str(at)
        folder.mkdir()
        _write(folder, files, inline)
        # the Lua filter (its own citeproc) too, where all three files and inline define k
        fronts = ["rw-filter", "lua"] if len(files) == 3 and inline else ["rw-filter"]
        for front in fronts:
            _judged_is_printed(exe, folder, env, front, files, inline)


def _judged_is_printed(
    exe: str, folder: Path, env: dict[str, str], front: str, files: list[str], inline: bool
) -> None:
    filt = ["--filter", rw_filter()] if front == "rw-filter" else ["--lua-filter", str(LUA)]
    cmd = [exe, "paper.md", "--citeproc", *filt, "-t", "plain", "-o", "out"]
    env = {**env, "RWGATE_FILTER": rw_filter()}
    proc = subprocess.run(
        cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    said = (front, files, inline, proc.stderr)
    assert "Traceback" not in proc.stderr, said
    if proc.returncode != 0:  # the build stopped: nothing printed unjudged
        assert "rw-filter: ERROR:" in proc.stderr, said
        return
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    (judged,) = [c["doi"] for c in report["citations"] if c["key"] == "k"]
    printed = _printed_dois((folder / "out").read_text(encoding="utf-8"))
    assert printed == [judged], said
    # and pandoc prints the last definition: inline, else the last file listed
    last = INLINE_DOI if inline else DOIS[files[-1][0]]
    assert judged == last, said


# --- rule 2: a printed entry rwgate did not judge stops the build -------------------------------

WAKEFIELD = (
    "@article{wk, title={Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive"
    " developmental disorder in children}, journal={The Lancet}, year={1998}%s}\n"
)
WATSON = (
    "@article{wk, title={Molecular structure of nucleic acids}, journal={Nature}, year={1953}%s}\n"
)
OTHER = "@article{other, title={Deep learning}, journal={Nature}, year={2015}%s}\n"


def _two_stage(
    folder: Path,
    env: dict[str, str],
    front: str,
    printed: str,
    judged: str,
    csl: str = "",
) -> subprocess.CompletedProcess[str]:
    """citeproc renders ``printed``; then the .bib becomes ``judged`` and the filter runs."""
    (folder / "a.bib").write_text(printed, encoding="utf-8")
    style = f"csl: {csl}\n" if csl else ""
    body = "See [@wk] and [@other].\n" if "other" in printed else "See [@wk].\n"
    (folder / "paper.md").write_text(f"---\nbibliography: a.bib\n{style}---\n\n{body}")
    subprocess.run(
        [pandoc(), "paper.md", "--citeproc", "-t", "json", "-o", "stage.json"],
        cwd=folder,
        env=env,
        check=True,
    )
    (folder / "a.bib").write_text(judged, encoding="utf-8")
    filt = ["--filter", rw_filter()] if front == "rw-filter" else ["--lua-filter", str(LUA)]
    return subprocess.run(
        [pandoc(), "stage.json", *filt, "-t", "plain", "-o", "out.txt"],
        cwd=folder,
        env={**env, "RWGATE_FILTER": rw_filter()},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("rw-filter: ERROR:")]


@pytest.mark.parametrize("front", ["rw-filter", "lua"])
@pytest.mark.parametrize("policy", ["default", "strict"])
def test_a_printed_doi_that_was_not_judged_stops_the_build(
    env: dict[str, str], tmp_path: Path, front: str, policy: str
) -> None:
    env = {**env, "RWGATE_POLICY": policy}
    wakefield = WAKEFIELD % ", doi={10.1016/S0140-6736(97)11096-0}"
    watson = WATSON % ", doi={10.1038/171737a0}"
    proc = _two_stage(tmp_path, env, front, wakefield, watson)
    assert proc.returncode != 0, proc.stderr  # (pandoc: 83, a filter failed; Lua: rw-filter's 1)
    assert not (tmp_path / "out.txt").exists()
    assert "Traceback" not in proc.stderr
    (line,) = _errors(proc.stderr)
    assert "wk: the bibliography prints doi:10.1016/s0140-6736(97)11096-0" in line
    assert "rwgate judged doi:10.1038/171737a0" in line


@pytest.mark.parametrize("front", ["rw-filter", "lua"])
def test_a_printed_title_in_a_titled_style_that_was_not_judged(
    env: dict[str, str], tmp_path: Path, front: str
) -> None:
    """No DOIs: the style prints titles (the other entry shows its judged one), and wk's entry
    prints Wakefield's title where Watson's was judged. Strict stops; default warns."""
    other = OTHER % ""
    printed, judged = WAKEFIELD % "" + other, WATSON % "" + other
    stopped = _two_stage(tmp_path, {**env, "RWGATE_POLICY": "strict"}, front, printed, judged)
    assert stopped.returncode != 0, stopped.stderr
    (line,) = _errors(stopped.stderr)
    assert 'wk: the bibliography prints "' in line and "Ileal-Lymphoid-Nodular" in line
    assert 'rwgate judged "Molecular structure of nucleic acids"' in line
    warned = _two_stage(tmp_path, env, front, printed, judged)
    assert warned.returncode == 0, warned.stderr
    assert "rw-filter: WARNING: wk: the bibliography prints" in warned.stderr


@pytest.mark.parametrize("front", ["rw-filter", "lua"])
def test_a_style_that_prints_neither_doi_nor_title_is_said(
    env: dict[str, str], tmp_path: Path, front: str
) -> None:
    """A style like APS's prints no article title and no DOI: one warning, no stop, even under
    strict (a stop would fail every build in such a style). (With a DOI, pandoc 3 links the
    entry to it: that DOI is what is verified.)"""
    (tmp_path / "bare.csl").write_bytes((FIXTURES / "bare.csl").read_bytes())
    watson = WATSON % ""
    strict = {**env, "RWGATE_POLICY": "strict"}
    proc = _two_stage(tmp_path, strict, front, watson, watson, "bare.csl")
    assert proc.returncode == 0, proc.stderr
    assert (
        "rw-filter: WARNING: cannot verify that the printed entries of wk are the works judged"
        in proc.stderr
    )


@pytest.mark.parametrize("front", ["rw-filter", "lua"])
def test_a_printed_entry_that_is_the_judged_one_passes(
    env: dict[str, str], tmp_path: Path, front: str
) -> None:
    watson = WATSON % ", doi={10.1038/171737a0}"
    proc = _two_stage(tmp_path, {**env, "RWGATE_POLICY": "strict"}, front, watson, watson)
    assert proc.returncode == 0, proc.stderr
    assert "cannot verify" not in proc.stderr and "ERROR" not in proc.stderr
    assert "Molecular Structure of Nucleic Acids" in (tmp_path / "out.txt").read_text()
