"""`rwgate verify refs.bib` through the real CLI entry point, against both loopback fakes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from fakes.openalex import FakeOpenAlex
from rwgate.frontends.cli.main import main

BIB = r"""
@article{watson1953,
  author  = {Watson, J. D. and Crick, F. H. C.},
  title   = {Molecular Structure of Nucleic Acids: {A} Structure for Deoxyribose Nucleic Acid},
  journal = {Nature},
  year    = {1953},
  doi     = {10.1038/171737a0}
}
@article{lacour2014,
  author  = {Green, Donald P. and LaCour, Michael J.},
  title   = {When contact changes minds: An experiment on transmission of support for gay equality},
  journal = {Science},
  year    = {2015}
}
@misc{vaswani2017,
  author        = {Vaswani, Ashish and Shazeer, Noam and others},
  title         = {Attention is all you need},
  year          = {2017},
  eprint        = {1706.03762},
  archiveprefix = {arXiv}
}
"""
INVENTED = r"""
@article{invented2021,
  author  = {Smith, John},
  title   = {Deep reinforcement learning predicts retraction cascades in peer review networks},
  journal = {Nature Methods},
  year    = {2021}
}
"""


@pytest.fixture
def env(
    fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeCrossref, FakeOpenAlex]]:
    with FakeOpenAlex() as fake_openalex:
        monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
        monkeypatch.setenv("RWGATE_OPENALEX_URL", fake_openalex.url)
        yield fake_crossref, fake_openalex


def write(tmp_path: Path, text: str, name: str = "refs.bib") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_json_report_for_every_entry(env, tmp_path: Path, capsys) -> None:
    bib = write(tmp_path, BIB)
    before = bib.read_bytes()
    code = main(["verify", "--format", "json", str(bib)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 == report["exit_code"]
    assert report["schema"] == "rwgate.verify/1"
    assert report["sources_answered"] == ["crossref", "openalex"]
    results = {r["key"]: r for r in report["results"]}
    assert {k: r["verdict"] for k, r in results.items()} == {
        "watson1953": "verified",
        "lacour2014": "verified",
        "vaswani2017": "verified",
    }
    lacour = results["lacour2014"]
    assert lacour["integrity"]["status"] == "retracted"
    assert lacour["integrity"]["key"] == "lacour2014"
    assert "year: cited 2015, found 2014" in lacour["warnings"]
    assert "DOI recovered from title: 10.1126/science.1256151" in lacour["info"]
    assert lacour["bibtex"].startswith("@article{lacour2014,")
    assert lacour["location"] == {"file": str(bib), "line": 9}
    assert results["vaswani2017"]["matched"]["doi"] == "10.48550/arxiv.1706.03762"
    assert report["summary"]["flagged"] == 1 and report["summary"]["verified"] == 3
    assert bib.read_bytes() == before


def test_text_report_and_gate_failure_for_an_invented_entry(env, tmp_path, capsys) -> None:
    bib = write(tmp_path, BIB + INVENTED)
    code = main(["verify", str(bib)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("rwgate: sources answered: crossref, openalex\n")
    assert "  FAIL  invented2021: not_found" in out
    assert "  FLAG  lacour2014: verified" in out and "retracted" in out
    assert "rwgate: 4 entries, 3 verified, 0 partial_match, 1 not_found" in out
    assert out.rstrip().endswith("rwgate: gate FAILED")


def test_strict_policy_fails_retracted_match_and_report_file(env, tmp_path, capsys) -> None:
    bib = write(tmp_path, BIB)
    target = tmp_path / "out" / "verify.json"
    code = main(["verify", "--policy", "strict", "--format", "json", "-o", str(target), str(bib)])
    assert code == 1
    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["summary"]["failed"] >= 1
    assert "rwgate: gate FAILED" in capsys.readouterr().err


def test_one_source_down_is_named(env, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RWGATE_OPENALEX_URL", closed_port_url())
    bib = write(tmp_path, BIB.split("@misc")[0])
    code = main(["verify", "--sources", "crossref,openalex", str(bib)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("rwgate: sources answered: crossref\n")
    refused = (
        r"rwgate: warning: openalex did not answer: openalex: 127\.0\.0\.1:\d+: connection refused"
    )
    assert re.search(refused, out), out


def test_bad_usage_and_unreadable_input_exit_2(env, tmp_path, capsys) -> None:
    assert main(["verify", str(tmp_path / "missing.bib")]) == 2
    assert "no such file" in capsys.readouterr().out
    bib = write(tmp_path, BIB)
    assert main(["verify", "--sources", "scholar", str(bib)]) == 2
    assert "unknown source 'scholar'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["verify"])
    assert exc.value.code == 2


def test_console_entry_point(env, tmp_path: Path) -> None:
    bib = write(tmp_path, INVENTED)
    run = subprocess.run(
        [sys.executable, "-m", "rwgate", "verify", "--format", "json", str(bib)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=60,
    )
    assert run.returncode == 1, run.stderr
    [result] = json.loads(run.stdout)["results"]
    assert result["verdict"] == "not_found" and "matched" not in result
