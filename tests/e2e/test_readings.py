"""DESIGN.md rule 1: every reading the toolchain could take is judged, the most severe decides.

A key defined in two bibliography files (or in a file and inline): pandoc's citeproc prints the last
definition, BibTeX the first. On 30fc316 rwgate judged the first and warned "the first is used", so
with the retracted definition last, pandoc printed Wakefield 1998 with no note and a strict build
passed. Here every order is built through the real commands: strict fails, whatever the order.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest
from example_data import RWGATE, import_sample
from pandoc_build import pandoc, rw_filter

ROOT = Path(__file__).resolve().parents[2]
LUA = ROOT / "filters" / "rwgate.lua"

WAKEFIELD = (
    "@article{wk, title={Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive"
    " developmental disorder in children}, journal={The Lancet}, year={1998},"
    " doi={10.1016/S0140-6736(97)11096-0}}\n"
)
WATSON = (
    "@article{wk, title={Molecular structure of nucleic acids}, journal={Nature}, year={1953},"
    " doi={10.1038/171737a0}}\n"
)
INLINE_WATSON = """references:
- id: wk
  type: article-journal
  title: Molecular structure of nucleic acids
  container-title: Nature
  issued: 1953
  DOI: 10.1038/171737a0
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "RWGATE_OFFLINE": "1"}
    import_sample(env)
    return env


def _paper(folder: Path, files: list[str], inline: bool) -> None:
    (folder / "a.bib").write_text(WAKEFIELD, encoding="utf-8")
    (folder / "b.bib").write_text(WATSON, encoding="utf-8")
    front = f"bibliography: [{', '.join(files)}]\n" + (INLINE_WATSON if inline else "")
    (folder / "paper.md").write_text(f"---\n{front}---\n\nAs shown before [@wk].\n")


ORDERS = [
    (list(order), inline)
    for order in itertools.permutations(["a.bib", "b.bib"])
    for inline in (False, True)
]


@pytest.mark.parametrize(("files", "inline"), ORDERS)
def test_rwgate_check_judges_every_definition(env, tmp_path: Path, files, inline) -> None:
    _paper(tmp_path, files, inline)
    proc = subprocess.run(
        [RWGATE, "check", "--policy", "strict", "paper.md"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL  wk: Retracted 2010" in proc.stdout
    assert "duplicate key 'wk'" in proc.stdout + proc.stderr


@pytest.mark.parametrize(("files", "inline"), ORDERS)
@pytest.mark.parametrize("front", ["rw-filter", "lua"])
def test_the_build_stops_under_strict_whatever_the_order(
    env, tmp_path: Path, files, inline, front: str
) -> None:
    _paper(tmp_path, files, inline)
    filt = ["--filter", rw_filter()] if front == "rw-filter" else ["--lua-filter", str(LUA)]
    proc = subprocess.run(
        [pandoc(), "paper.md", "--citeproc", *filt, "-t", "plain", "-o", "out.txt"],
        cwd=tmp_path,
        env={**env, "RWGATE_POLICY": "strict", "RWGATE_FILTER": rw_filter()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0, proc.stderr
    assert "wk: retracted 2010" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_printed_retracted_definition_carries_its_note(env, tmp_path: Path) -> None:
    """The issue's own example: b.bib then a.bib, citeproc prints a.bib's Wakefield."""
    _paper(tmp_path, ["b.bib", "a.bib"], inline=False)
    proc = subprocess.run(
        [pandoc(), "paper.md", "--citeproc", "--filter", rw_filter(), "-t", "plain"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Ileal-Lymphoid-Nodular" in proc.stdout
    assert "Retracted 2010" in proc.stdout


def test_keys_that_carry_their_identifier_are_entries_without_a_bibliography(
    env, tmp_path: Path
) -> None:
    """A Manubot manuscript: `[@doi:…]` keys, no bibliography file (manubot's own filter resolves
    them). On 30fc316 this was "0 cited … cannot judge from the sources", exit 2; 2c1189c judged
    every DOI key. An arXiv key is looked up as its DataCite DOI, as `rwgate verify` reads it
    (rwgate.identify.ids): no complete Retraction Watch snapshot here, so it is unverified."""
    (tmp_path / "manu.md").write_text(
        "---\ntitle: A Manubot manuscript\n---\n\n"
        "As shown [@doi:10.1126/science.1256151; @arxiv:1706.03762] and"
        " [@url:https://doi.org/10.1038/171737a0].\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [RWGATE, "check", "-v", "--format", "json", "manu.md"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    status = {c["key"]: c["status"] for c in json.loads(proc.stdout)["citations"]}
    assert status == {
        "doi:10.1126/science.1256151": "retracted",
        "arxiv:1706.03762": "unverified",
        "url:https://doi.org/10.1038/171737a0": "clean",
    }, status
