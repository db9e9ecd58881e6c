"""Issue 46 item 8: every form "no network" takes on a laptop is known from the first request.

A name that does not resolve and a refused connection were known at once (issue 38); a corporate
proxy answering 403, a connection reset and a captive portal (a 200 web page, or a redirect to its
login page) cost every request its retries: seconds a build, and no hint that ``--offline``
exists. Each form is served by a real HTTP server on 127.0.0.1 (:mod:`fakes.nonetwork`), to the
real ``rwgate check``: one request is made, the run stops asking (three batches and a DOI asked
alone, one request in all), every work is ``unverified`` with the reason, and one warning says
what to do. What is asserted is what the run does (requests counted), never how long it took.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.crossref import FakeCrossref
from fakes.nonetwork import FORMS, NoNetwork
from rwgate.frontends.cli.main import main
from rwgate.identify.openalex import OpenAlexSource, OpenAlexUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.crossref import CrossrefSource
from rwgate.sources.net.netblock import blocked_transport

SAID = {
    "proxy_403": "refused by a proxy (HTTP 403, via: 1.1 proxy.corp.example (squid/5.7))",
    "reset": "the connection was reset before any answer",
    "portal": "answered with a web page, not data (a captive portal or login page?)",
    "portal_redirect": "redirected to another host (login.hotel-wifi.example;",
    "tunnel": "api.crossref.org: the proxy refused the connection (403 Forbidden)",
}
COMMA = "10.5555/with,comma"  # asked alone, beside the batches: a request the first must stop


def _bib(folder: Path) -> Path:
    bib = folder / "refs.bib"
    entries = [f"@article{{k{i}, title={{T{i}}}, doi={{10.1000/{i}}}}}\n" for i in range(250)]
    bib.write_text("".join(entries) + f"@article{{c, title={{C}}, doi={{{COMMA}}}}}\n", "utf-8")
    return bib


def _check(bib: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["check", "--format", "json", str(bib)])
    out = capsys.readouterr()
    report: dict[str, Any] = json.loads(out.out)
    return code, report, out.err


@pytest.mark.parametrize("form", [*FORMS, "tunnel"])
def test_no_network_is_known_from_the_first_request(
    form: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    with NoNetwork("proxy_403" if form == "tunnel" else form) as net:
        if form == "tunnel":  # the proxy in front of the real URL refuses the CONNECT
            monkeypatch.setenv("HTTPS_PROXY", net.url)
            monkeypatch.setenv("NO_PROXY", "")
            monkeypatch.setenv("no_proxy", "")
            monkeypatch.setenv("RWGATE_CROSSREF_URL", "https://api.crossref.org")
        else:
            monkeypatch.setenv("RWGATE_CROSSREF_URL", net.url)
        code, report, err = _check(_bib(tmp_path), capsys)
        requests, lines = net.requests, list(net.lines)
    assert requests == 1, lines  # three batches and a single: one request, no retry
    if form == "tunnel":
        assert lines[0].startswith("CONNECT api.crossref.org:443 ")
    assert {c["status"] for c in report["citations"]} == {"unverified"}
    assert all(SAID[form] in (c["reason"] or "") for c in report["citations"])
    (line,) = [w for w in report["warnings"] if "could not be asked" in w]
    assert SAID[form] in line and "run with --offline (or RWGATE_OFFLINE=1)" in line
    (crossref,) = report["sources"]
    assert crossref["state"] == "not_reached" and SAID[form] in crossref["why"]
    assert "as_of" not in crossref
    assert code == 0  # the default policy warns about unverified works
    assert "Traceback" not in err


@pytest.mark.parametrize("form", FORMS)
def test_openalex_stops_asking_too(form: str) -> None:
    with NoNetwork(form) as net:
        alex = OpenAlexSource(Settings(openalex_url=net.url))
        for ask in (lambda: alex.work("10.1/a"), lambda: alex.search("x"), lambda: alex.work("b")):
            with pytest.raises(OpenAlexUnavailable, match="no network"):
                ask()
        assert net.requests == 1


def test_a_proxy_page_without_headers_is_known_by_its_words() -> None:
    from rwgate.sources.net.netblock import blocked_answer

    page = b"<html><body>Access to this site is blocked by your organisation</body></html>"
    response = httpx.Response(403, headers={"content-type": "text/html"}, content=page)
    assert "refused by a proxy" in (blocked_answer(response, "https://h.example") or "")
    api = httpx.Response(403, json={"message": "Forbidden: blocked"})  # the API's own refusal
    assert blocked_answer(api, "https://h.example") is None
    assert blocked_answer(httpx.Response(403, text="Forbidden"), "https://h.example") is None


def test_a_reset_after_an_answer_is_passing_trouble() -> None:
    reset = httpx.ReadError("reset")
    reset.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    assert blocked_transport(reset, "https://h.example", answered_before=False) is not None
    assert blocked_transport(reset, "https://h.example", answered_before=True) is None


def test_a_working_crossref_is_asked_as_before(fake_crossref: FakeCrossref) -> None:
    """The forms are not mistaken for an API's answers: a 404 stays unknown, a record found."""
    src = CrossrefSource(fake_crossref.url)
    said = src.query_all(["10.1038/nature12373", "10.5555/no-such-work-rwgate"])
    assert [a.outcome for a in said.values()] == ["found", "not_found"]
    assert src.info().state == "answered"
