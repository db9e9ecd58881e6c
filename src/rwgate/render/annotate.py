"""The annotation text of a flagged work: ``Retracted 2010; notice doi:10.1016/...``.

The text comes from a Jinja2 template (the user's, through the ``template`` setting, or the bundled
one) rendered with plain values; each front end then escapes it for its own format (pandoc AST
elements, LaTeX, HTML, terminal), so the template itself never needs to know the format.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from jinja2 import Environment, StrictUndefined, TemplateError

from rwgate.evidence import FLAG_LABELS, status_of_type
from rwgate.models import Citation, Notice

_ENV = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


class TemplateProblem(ValueError):
    """The user's annotation template does not render."""


@dataclass(frozen=True)
class Annotation:
    """What an annotation says, before any format escapes it."""

    status: str
    label: str
    year: int | None
    notice_doi: str | None
    text: str


def deciding_notice(citation: Citation) -> Notice | None:
    """The newest notice whose type gives the work its status (a retracted work: its retraction)."""
    matching = [n for n in citation.notices if status_of_type(n.type) == citation.status]
    if citation.status == "reinstated":
        matching = [n for n in citation.notices if n.type == "reinstatement"]
    return matching[-1] if matching else None


def default_template() -> str:
    return (
        resources.files("rwgate.render")
        .joinpath("templates/annotation.txt.j2")
        .read_text(encoding="utf-8")
        .strip()
    )


def annotate(citation: Citation, template: str | None = None) -> Annotation:
    """Render the annotation of one flagged citation."""
    notice = deciding_notice(citation)
    label = FLAG_LABELS.get(citation.status, citation.status.replace("_", " ").capitalize())
    values = {
        "label": label,
        "status": citation.status,
        "year": notice.date.year if notice and notice.date else None,
        "date": notice.date.isoformat() if notice and notice.date else None,
        "notice_doi": notice.doi if notice else None,
        "notice_type": notice.type if notice else None,
        "key": citation.key,
        "doi": citation.doi,
        "title": citation.title,
        "allowed": citation.allowed,
    }
    try:
        text = _ENV.from_string(template or default_template()).render(**values).strip()
    except TemplateError as exc:
        raise TemplateProblem(f"annotation template: {exc}") from None
    return Annotation(citation.status, label, values["year"], values["notice_doi"], text)  # type: ignore[arg-type]
