"""JUnit XML rendering of a check, for CI systems that show test reports (GitLab, Jenkins).

Each citation is a test case, so a failed gate shows the retracted works as failed tests.
ElementTree escapes every string; characters XML 1.0 cannot carry at all are dropped first.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rwgate.contract.models import Citation
from rwgate.contract.vocab import notice_label
from rwgate.render import ReportFormat, View
from rwgate.render.safe import xml_safe
from rwgate.render.sarif import message
from rwgate.verdicts.result import CheckResult


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
