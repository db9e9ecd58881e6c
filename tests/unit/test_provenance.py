"""Issue 46 item 1: every source line says what happened to the source in this run.

Before, a Crossref that was never reached was described as fresh ("data as of today, 0 days
old") above ten works that each said "Crossref not consulted", and the page read "10 cited,
0 checked ... gate passed". Now each source is asked and answered (with its data's age), answered
from the cache, not reached (why) or not asked (offline); the JSON source objects carry it as
``state`` and ``why``, the text and HTML reports in the same words, and a run that no source
answered says so in its headline and its last line. Through the real ``rwgate check`` entry
point, against the loopback fake Crossref or a closed port.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from rwgate.contract.models import SourceInfo
from rwgate.frontends.cli.main import main
from rwgate.render.provenance import describe_source

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
NATURE = "10.1038/nature12373"
DOIS = ["--doi", WAKEFIELD, "--doi", NATURE]


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    main(["check", "--format", "json", *args])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _text(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    main(["check", *args])
    captured = capsys.readouterr()
    return (captured.out + captured.err).splitlines()


def _crossref(report: dict[str, Any]) -> dict[str, Any]:
    (crossref,) = [s for s in report["sources"] if s["name"] == "crossref"]
    return crossref


def test_a_source_never_reached_is_not_dated_and_the_run_says_nothing_was_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    crossref = _crossref(_json(capsys, *DOIS))
    assert crossref["state"] == "not_reached"
    assert "connection refused" in crossref["why"] and "as_of" not in crossref
    lines = _text(capsys, *DOIS)
    (source,) = [line for line in lines if line.startswith("  Crossref (")]
    assert "not reached: 127.0.0.1:" in source and "connection refused" in source
    assert "data as of" not in source
    assert lines[0].startswith("rwgate: no source answered (Crossref not reached); 2 works")
    assert "the gate passed under the default policy, but nothing could be checked" in lines[0]
    assert lines[-1] == "rwgate: gate passed, but nothing could be checked"
    page = tmp_path / "report.html"
    main(["check", "--format", "html", "--output", str(page), *DOIS])
    html = page.read_text(encoding="utf-8")
    assert "not reached: 127.0.0.1:" in html and "data as of" not in html
    assert "gate passed, but nothing could be checked" in html


def test_asked_and_answered_then_answered_from_the_cache(
    fake_crossref: FakeCrossref,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    first = _crossref(_json(capsys, *DOIS))
    assert first["state"] == "answered" and first.get("why") is None and first["as_of"]
    again = _crossref(_json(capsys, *DOIS))
    assert again["state"] == "cache" and "as_of" not in again
    assert again["note"].startswith("2 answered from cache, the oldest fetched")
    (source,) = [line for line in _text(capsys, *DOIS) if line.startswith("  Crossref (")]
    assert source == f"  Crossref ({fake_crossref.url}): " + again["note"]
    asked = len(fake_crossref.requests)
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    lines = _text(capsys, *DOIS)
    (source,) = [line for line in lines if line.startswith("  Crossref (")]
    assert source.startswith(f"  Crossref ({fake_crossref.url}): asked and answered; data as of ")
    assert len(fake_crossref.requests) > asked
    assert lines[-1] == "rwgate: gate passed"  # checked works: a plain pass


def test_offline_is_not_asked_or_answered_from_the_cache(
    fake_crossref: FakeCrossref,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    report = _json(capsys, "--offline", *DOIS)
    assert _crossref(report)["state"] == "not_asked" and _crossref(report)["why"] == "offline"
    lines = _text(capsys, "--offline", *DOIS)
    assert lines[0].startswith("rwgate: no source answered (Crossref not asked, offline); ")
    _json(capsys, "--doi", NATURE)  # online: now in the cache
    cached = _crossref(_json(capsys, "--offline", *DOIS))
    assert cached["state"] == "cache" and cached["why"] == "offline"
    lines = _text(capsys, "--offline", *DOIS)
    (source,) = [line for line in lines if line.startswith("  Crossref (")]
    assert "not asked (offline); only answers already in its cache count" in source
    assert "1 answered from cache" in source
    assert not lines[0].startswith("rwgate: no source answered")


def test_nothing_to_look_up_is_said_and_is_no_plain_pass(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={No DOI here}, year={2001}}\n", encoding="utf-8")
    crossref = _crossref(_json(capsys, str(bib)))
    assert crossref["state"] == "not_asked" and crossref["why"] == "nothing to look up"
    lines = _text(capsys, str(bib))
    assert "no source answered" not in lines[0]  # nothing was asked of it
    assert lines[-1] == "rwgate: gate passed, but nothing could be checked"


@pytest.mark.parametrize(
    ("info", "said"),
    [
        (
            SourceInfo(name="crossref", url="https://api.crossref.org", state="answered"),
            "Crossref (https://api.crossref.org): asked and answered",
        ),
        (
            SourceInfo(
                name="crossref",
                url="https://x.example",
                state="answered",
                why="3 not answered (HTTP 503 after 5 attempts)",
            ),
            "Crossref (https://x.example): asked and answered; 3 not answered (HTTP 503 after 5"
            " attempts)",
        ),
        (
            SourceInfo(name="snapshot", path="/s.sqlite3", state="answered", note="13 notices"),
            "Retraction Watch snapshot (/s.sqlite3): 13 notices",  # a local file always answers
        ),
        (
            SourceInfo(name="crossref", state="not_asked", why="nothing to look up"),
            "Crossref: not asked: nothing to look up",
        ),
    ],
)
def test_each_state_in_words(info: SourceInfo, said: str) -> None:
    assert describe_source(info) == said
