"""The HTML report: one self-contained page a co-author or an editor opens and reads.

The verdict, a table of every citation, the sources with their dates, and a filter (flagged /
new / all) made of radio buttons and CSS alone. The page carries no script and a
Content-Security-Policy that forbids any; Jinja2 autoescapes every value, after control and bidi
characters are stripped (:func:`_inert`), so a hostile title stays text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape
from markupsafe import Markup, escape

from rwgate import __version__
from rwgate.contract.models import Citation
from rwgate.contract.vocab import notice_label, severity, status_label
from rwgate.render import ReportFormat, View, report
from rwgate.render.safe import one_line
from rwgate.verdicts.result import FLAGGED, CheckResult


@lru_cache(maxsize=1)
def _template() -> Template:
    env = Environment(
        loader=PackageLoader("rwgate.render", "templates"),
        autoescape=select_autoescape(["html.j2"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        finalize=_inert,
    )
    env.filters["notice_label"] = notice_label  # every word a person reads: rwgate.contract.vocab
    env.filters["breakable"] = breakable
    env.filters["code_spans"] = code_spans
    return env.get_template("report.html.j2")


def _inert(value: Any) -> Any:
    """Every value printed, without control and bidi characters (before autoescaping; markup the
    template itself built, such as ``join``'s escaped output, stays markup)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Markup):
        return Markup(one_line(value))
    return one_line(value)


def breakable(text: object) -> Markup:
    """Escaped text that may wrap after each ``/`` (a DOI, a path) rather than mid-word."""
    return Markup("/<wbr>").join(escape(part) for part in str(text).split("/"))


_CODE_SPAN = re.compile(r"`([^`]+)`")


def code_spans(text: object) -> Markup:
    """Escaped text whose `command` spans (the warnings' Markdown) are shown as code, not as
    literal backticks."""
    parts = _CODE_SPAN.split(str(text))  # text, code, text, code, ..., text
    return Markup("").join(
        Markup("<code>%s</code>") % p if i % 2 else escape(p) for i, p in enumerate(parts)
    )


def headline_html(text: str) -> Markup:
    """The headline, its option a code span that never wraps inside ``--policy``."""
    return escape(text).replace("--policy strict", Markup("<code>--policy strict</code>"))


def _row(c: Citation, root: Path) -> dict[str, Any]:
    flagged = c.status in FLAGGED or c.action != "ignore" or c.allowed
    return {
        "c": c,
        "label": status_label(c.status),
        "severity": severity(c.status),
        "flagged": flagged,
        "added": report.added_text(c),
        "where": report.location_text(c, root),
    }


def render_html(result: CheckResult, exit_code: int | None = None, root: Path | None = None) -> str:
    """The page; file locations are shown relative to ``root`` (default: the working folder)."""
    code = result.exit_code if exit_code is None else exit_code
    base = (root or Path.cwd()).resolve()
    order = sorted(
        result.citations,
        key=lambda c: (c.change is None, c.action == "ignore", c.status not in FLAGGED),
    )
    rows = [_row(c, base) for c in order]
    return _template().render(
        version=__version__,
        code=code,
        verdict=report.gate_verdict(code, report.nothing_checked(result)),
        headline=(said := report.headline(result, code)),
        headline_text=headline_html(said.text),
        s=result.summary(),
        counts=report.summary_line(result),
        generated=result.generated.strftime("%Y-%m-%d %H:%M UTC"),
        since=result.since,
        rows=rows,
        flagged_rows=sum(r["flagged"] for r in rows),
        sources=[report.describe_source(i) for i in result.sources],
        project_metadata=[report.path_text(f, base) for f in result.project_metadata],
        notices=result.warnings,  # about the data (a sample, its age): read before the table
        warnings=[str(p) for p in result.problems],
    )


class HtmlFormat(ReportFormat):
    """One self-contained HTML page (no script, inline style)."""

    name = "html"

    def render(self, result: CheckResult, view: View) -> str:
        return render_html(result, view.exit_code, view.root).rstrip("\n")
