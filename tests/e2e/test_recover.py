"""DOI recovery in `rwgate check`: entries without a DOI judged through a verified title match.

Real CLI entry point, real HTTP to the loopback fake Crossref and fake OpenAlex; a subprocess
shows that a check without recovery never loads the verification machinery.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from fakes.openalex import FakeOpenAlex
from rwgate.contract.models import Reference
from rwgate.frontends.cli.main import main
from rwgate.frontends.kit import judge
from rwgate.settings.config import ConfigError, load_settings

LACOUR = "10.1126/science.1256151"
LACOUR_NOTICE = "10.1126/science.aac6638"
# The LaCour & Green record of the fake Crossref (issued 2014), cited without any DOI (nor a URL
# holding one) and with the print year 2015: title, authors and venue agree, the year is one off.
BIB = r"""
@article{lacour2014,
  author  = {LaCour, Michael J. and Green, Donald P.},
  title   = {When contact changes minds: {An} experiment on transmission of support
             for gay equality},
  journal = {Science},
  year    = {2015}
}
@article{wakefield1998,
  author  = {Wakefield, A. J.},
  title   = {Ileal-lymphoid-nodular hyperplasia},
  journal = {The Lancet},
  year    = {1998},
  doi     = {10.1016/S0140-6736(97)11096-0}
}
@article{invented2021,
  author  = {Smith, John},
  title   = {Deep reinforcement learning predicts retraction cascades in peer review networks},
  journal = {Nature Methods},
  year    = {2021}
}
"""


@pytest.fixture
def fake_openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as fake:
        yield fake


@pytest.fixture
def env(
    fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex, monkeypatch: pytest.MonkeyPatch
) -> tuple[FakeCrossref, FakeOpenAlex]:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_OPENALEX_URL", fake_openalex.url)
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "4")
    return fake_crossref, fake_openalex


@pytest.fixture
def bib(tmp_path: Path) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["check", "--no-history", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def by_key(report: dict) -> dict[str, dict]:
    return {c["key"]: c for c in report["citations"]}


def test_recovered_doi_is_judged_retracted_with_its_reason(env, bib, capsys) -> None:
    before = bib.read_bytes()
    code, report = run_json(capsys, "--recover-dois", "--policy", "strict", str(bib))
    cits = by_key(report)
    lacour = cits["lacour2014"]
    assert (lacour["status"], lacour["doi"], lacour["action"]) == ("retracted", LACOUR, "fail")
    assert [n["doi"] for n in lacour["notices"]] == [LACOUR_NOTICE]
    # The documented score: 0.45 title + 0.25 authors + 0.20 * 0.8 (year one off) + 0.10 venue.
    assert lacour["reason"] == "DOI recovered from title (verified match, confidence 0.96)"
    assert lacour["year"] == 2014  # the record's metadata, as for any judged DOI
    assert cits["wakefield1998"]["status"] == "retracted"
    assert "reason" not in cits["wakefield1998"]  # its DOI was in the entry
    assert (cits["invented2021"]["status"], cits["invented2021"]["reason"]) == (
        "no_doi",
        "entry has no DOI",
    )
    assert code == 1 and report["warnings"] == []
    assert bib.read_bytes() == before  # the DOI is reported, never written into the file


def test_without_recovery_the_entry_stays_no_doi_and_nothing_is_searched(env, bib, capsys) -> None:
    fake_crossref, fake_openalex = env
    code, report = run_json(capsys, str(bib))
    assert by_key(report)["lacour2014"]["status"] == "no_doi"
    assert by_key(report)["lacour2014"]["reason"] == "entry has no DOI"
    assert code == 0
    assert not [r for r in fake_crossref.requests if "query.bibliographic" in r.query]
    assert fake_openalex.requests == []


def test_text_report_shows_the_recovered_doi(env, bib, capsys) -> None:
    code = main(["check", "--recover-dois", str(bib)])
    out = capsys.readouterr().out
    assert code == 0
    assert "  FLAG  lacour2014: Retracted 2015; notice doi:" in out
    assert f"doi:{LACOUR} (recovered from title)" in out
    assert "        DOI recovered from title (verified match, confidence 0.96)" in out
    assert "rwgate: 1 DOI recovered from title (verified matches; not in the bibliography)" in out


def test_both_sources_down_leaves_no_doi_and_warns(bib, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    monkeypatch.setenv("RWGATE_OPENALEX_URL", closed_port_url())
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    code, report = run_json(capsys, "--recover-dois", str(bib))
    cits = by_key(report)
    assert cits["lacour2014"]["status"] == "no_doi"
    assert cits["wakefield1998"]["status"] == "unverified"
    [warning] = [w for w in report["warnings"] if w.startswith("DOI recovery:")]
    assert "no source could be asked for 2 entries" in warning
    assert "crossref:" in warning and "openalex:" in warning and "stay unchecked" in warning
    assert code == 0


def test_failed_recovery_does_not_break_the_check_of_given_dois(
    fake_crossref: FakeCrossref, bib, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_OPENALEX_URL", closed_port_url())
    fake_crossref.fail_next("400", times=2)  # the two title searches; the DOI batch then answers
    code, report = run_json(capsys, "--recover-dois", str(bib))
    cits = by_key(report)
    assert cits["lacour2014"]["status"] == "no_doi"
    assert cits["wakefield1998"]["status"] == "retracted"
    assert code == 0
    assert any(w.startswith("DOI recovery: no source could be asked") for w in report["warnings"])


def test_one_source_down_still_recovers_and_names_it(
    fake_crossref: FakeCrossref, bib, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_OPENALEX_URL", closed_port_url())
    code, report = run_json(capsys, "--recover-dois", str(bib))
    assert by_key(report)["lacour2014"]["status"] == "retracted"
    assert code == 0
    [warning] = [w for w in report["warnings"] if w.startswith("DOI recovery:")]
    assert warning.startswith("DOI recovery: some sources could not be asked (openalex:")


def test_offline_skips_recovery_with_a_warning(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, overrides={"recover_dois": True, "offline": True})
    ref = Reference(key="k", title="When contact changes minds", journal="Science", year=2014)
    result = judge([ref], settings)
    assert result.citations[0].status == "no_doi"
    assert any(w.startswith("DOI recovery skipped: offline") for w in result.warnings)


def test_setting_from_toml_environment_and_metadata(tmp_path: Path) -> None:
    assert load_settings(tmp_path, env={}).recover_dois is False
    (tmp_path / "rwgate.toml").write_text("recover_dois = true\n", encoding="utf-8")
    assert load_settings(tmp_path, env={}).recover_dois is True
    assert load_settings(tmp_path, env={"RWGATE_RECOVER_DOIS": "0"}).recover_dois is False
    (tmp_path / "rwgate.toml").unlink()
    assert load_settings(tmp_path, env={"RWGATE_RECOVER_DOIS": "1"}).recover_dois is True
    meta = load_settings(tmp_path, {"recover_dois": True}, env={}, overrides_name="metadata")
    assert meta.recover_dois is True
    with pytest.raises(ConfigError, match="RWGATE_RECOVER_DOIS"):
        load_settings(tmp_path, env={"RWGATE_RECOVER_DOIS": "maybe"})


PROBE = """
import sys
{call}
heavy = ("rapidfuzz", "rwgate.identify.recover", "rwgate.identify.lookup",
         "rwgate.identify.openalex", "rwgate.identify.crossref_search")
loaded = sorted(m for m in sys.modules if m.startswith(heavy) or
m.startswith("rwgate.frontends.verify"))
print("LOADED " + " ".join(loaded))
"""
CLI = "from rwgate.frontends.cli.main import main\nmain(sys.argv[1:])"
CORE = (
    "from rwgate.settings.config import load_settings\nfrom rwgate.core import check\n"
    "from rwgate.readers.bibliographies.registry import by_name\nfrom pathlib import Path\n"
    "bib = by_name('bibtex').read(Path(sys.argv[-1]))\n"
    "check(bib.references, load_settings(Path(sys.argv[-1])))"
)


def loaded_by(call: str, args: list[str], env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(call=call), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("LOADED")]
    return set(line.split()[1:])


def test_check_without_recovery_never_loads_verification(env, bib) -> None:
    environment = {**os.environ}
    plain = loaded_by(CLI, ["check", str(bib)], environment)
    assert plain == set(), plain
    assert loaded_by(CORE, [str(bib)], environment) == set()
    recovering = loaded_by(CLI, ["check", "--recover-dois", str(bib)], environment)
    assert {"rapidfuzz", "rwgate.identify.recover", "rwgate.identify.openalex"} <= recovering
