"""SARIF 2.1.0 and JUnit XML renderings of a check, for code scanning and CI test reports.

Code scanning annotates a result's first location only, so a flagged work is one SARIF result per
manuscript line citing it, its ``.bib`` entry the related location: the citation shows up in the
diff where it was written. A work no line cites keeps its result on its ``.bib`` line. The log is
plain data serialised with :func:`json.dumps`: outside strings only ever become JSON values.

In JUnit (GitLab, Jenkins) each citation is a test case, so a failed gate shows the retracted works
as failed tests. ElementTree escapes every string; characters XML 1.0 cannot carry are dropped.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rwgate import __version__
from rwgate.contract.models import Citation, Location
from rwgate.contract.vocab import notice_label, status_label
from rwgate.render import ReportFormat, View
from rwgate.render.report import added_text, verdict_text
from rwgate.render.safe import one_line, xml_safe
from rwgate.sources.net.http import PROJECT_URL
from rwgate.verdicts.result import FLAGGED, CheckResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"fail": "error", "annotate": "warning", "warn": "warning"}
# Statuses without a notice: what citing such a work means (the notice statuses are named).
_DESCRIPTIONS = {
    "clean": "Cites a work with no notice in force",
    "unknown_doi": "Cites a DOI that no registry knows",
    "invalid_doi": "Cites a malformed DOI",
    "no_doi": "Cites a work without a DOI, so it could not be checked",
    "missing_entry": "Cites a key that no bibliography defines",
    "unverified": "Cites a work that could not be checked (source unavailable)",
}


def reported(result: CheckResult) -> list[Citation]:
    """The citations a CI report flags: every one whose action is not ``ignore``; against a
    lockfile (``--since``), only those that changed."""
    return [
        c
        for c in result.citations
        if c.action in _LEVELS and (result.since is None or c.change is not None)
    ]


def message(c: Citation, template: str | None = None) -> str:
    """One line saying what is wrong with a citation and why (plain text; callers escape it)."""
    text = f"{c.key}: {verdict_text(c, template)}"
    if c.reason:
        text += f" ({c.reason})"
    if c.change:
        text += f" [new since the lock: {c.change}]"
    if (added := added_text(c)) is not None:
        text += f" [{added}]"
    return one_line(text)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def rule_description(status: str) -> str:
    if status in FLAGGED:
        return f"Cites a work with a notice in force: {status_label(status)}"
    return _DESCRIPTIONS.get(status) or f"Cites a work judged {status_label(status)}"


def _uri(file: str, root: Path) -> str:
    """Relative to ``root`` when the file lies under it (code scanning maps those to the
    repository), else a ``file:`` URI."""
    path = Path(file).resolve()
    try:
        return quote(path.relative_to(root).as_posix())
    except ValueError:
        return path.as_uri()


def _location(loc: Location, root: Path) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(loc.file, root)}}
    if loc.line and loc.line > 0:
        physical["region"] = {"startLine": loc.line}
    return {"physicalLocation": physical}


def _result(
    c: Citation, rule_index: int, template: str | None, root: Path, place: Location | None
) -> dict[str, Any]:
    """The result for ``c`` at ``place`` (a line citing it), else at its entry."""
    out: dict[str, Any] = {
        "ruleId": f"rwgate/{c.status}",
        "ruleIndex": rule_index,
        "level": _LEVELS[c.action],
        "message": {"text": message(c, template)},
        "properties": {
            "key": one_line(c.key),
            "doi": one_line(c.doi) if c.doi else None,
            "status": c.status,
            "action": c.action,
            "notices": [_clean(n.model_dump(mode="json")) for n in c.notices],
            "change": one_line(c.change) if c.change else None,
            "added": c.added.model_dump(mode="json") if c.added else None,
        },
    }
    # Only a real file can be annotated: ``--doi`` and MCP tool names are locations too.
    entry = c.location if c.location and Path(c.location.file).is_file() else None
    if place is not None:
        out["locations"] = [_location(place, root)]
        if entry is not None:
            said = {"text": one_line(f"the entry of {c.key}")}
            out["relatedLocations"] = [{**_location(entry, root), "id": 1, "message": said}]
    elif entry is not None:
        out["locations"] = [_location(entry, root)]
    return out


def _places(c: Citation, cited_at: dict[str, list[Location]]) -> list[Location | None]:
    """The manuscript lines citing ``c`` (a real file each), else one result at its entry. Keys
    BibTeX matches case-insensitively may be written in another case than the entry's."""
    found = cited_at.get(c.key)
    if found is None:
        folded = c.key.casefold()
        found = next((v for k, v in cited_at.items() if k.casefold() == folded), [])
    real = [p for p in found if p.line and Path(p.file).is_file()]
    return list(real) or [None]


def render_sarif(result: CheckResult, template: str | None = None, root: Path | None = None) -> str:
    """The SARIF log: one rule per status that appears, one result per place (see the module);
    file URIs relative to ``root`` (default: the working directory)."""
    base = (root or Path.cwd()).resolve()
    cited = reported(result)
    statuses = list(dict.fromkeys(c.status for c in cited))
    rules = [
        {"id": f"rwgate/{s}", "name": s, "shortDescription": {"text": rule_description(s)}}
        for s in statuses
    ]
    driver = {"name": "rwgate", "version": __version__, "informationUri": PROJECT_URL}
    results = [
        _result(c, statuses.index(c.status), template, base, place)
        for c in cited
        for place in _places(c, result.cited_at)
    ]
    run = {"tool": {"driver": {**driver, "rules": rules}}, "results": results}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False)


class SarifFormat(ReportFormat):
    """SARIF 2.1.0 for code scanning."""

    name = "sarif"

    def render(self, result: CheckResult, view: View) -> str:
        return render_sarif(result, view.template, view.root)


def _details(c: Citation) -> str:
    lines = [f"doi: {c.doi}"] if c.doi else []
    if c.location:
        lines.append(f"location: {c.location}")
    for n in c.notices:
        when = n.date.isoformat() if n.date else "undated"
        lines.append(f"notice: {when} {notice_label(n.type)}" + (f" doi:{n.doi}" if n.doi else ""))
    return "\n".join(lines)


def _testcase(suite: ET.Element, c: Citation, template: str | None) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=xml_safe(c.location.file if c.location else "rwgate"),
        name=xml_safe(c.key),
    )
    if c.action == "ignore":
        return
    text = message(c, template)
    if c.action == "fail":
        failure = ET.SubElement(case, "failure", message=xml_safe(text), type=c.status)
        failure.text = xml_safe(_details(c))
    else:
        ET.SubElement(case, "system-out").text = xml_safe(f"{text}\n{_details(c)}".strip())


def render_junit(result: CheckResult, template: str | None = None) -> str:
    """The JUnit XML report: one suite named ``rwgate``, one test case per citation."""
    failures = sum(c.action == "fail" for c in result.citations)
    counts = {"tests": str(len(result.citations)), "failures": str(failures), "errors": "0"}
    root = ET.Element("testsuites", counts)
    suite = ET.SubElement(root, "testsuite", {"name": "rwgate", **counts})
    for c in result.citations:
        _testcase(suite, c, template)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


class JunitFormat(ReportFormat):
    """JUnit XML for CI test reports: one test case per citation."""

    name = "junit"

    def render(self, result: CheckResult, view: View) -> str:
        return render_junit(result, view.template)
