"""The annotation text of a flagged work: ``Retracted 2010; notice doi:10.1016/...``.

The text comes from a Jinja2 template (the user's ``template`` setting, or the bundled
``templates/annotation.txt.j2``) rendered with plain values; each front end escapes it for its own
format. The bundled template is also written out as :func:`_default_text`, so a build that keeps
the default never imports Jinja2 (some 70 ms of a filter's start-up); a test keeps them equal.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rwgate.contract.evidence import deciding_notice
from rwgate.contract.models import Citation, Notice
from rwgate.contract.vocab import capitalised, notice_label, status_label
from rwgate.errors import ConfigError
from rwgate.render.annotation import Annotation  # defined apart so the filter memo needs no models
from rwgate.render.safe import one_line

if TYPE_CHECKING:
    from jinja2 import Template


class TemplateProblem(ConfigError):
    """The user's annotation template does not render."""


@lru_cache(maxsize=16)
def _compiled(template: str) -> Template:
    """Compiling a template costs milliseconds; a document annotates many works with one.

    Sandboxed: the template may come from a document's metadata, and building someone else's
    manuscript must not run code it carries (``{{ ''.__class__.__mro__ ... }}``).
    """
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False
    )
    return env.from_string(template)


def render_template(template: str, values: dict[str, Any]) -> str:
    """Render a user's template with the annotation values (one-line error when it fails)."""
    from jinja2 import TemplateError

    try:
        return _compiled(template).render(**values).strip()
    except TemplateError as exc:
        raise TemplateProblem(f"annotation template: {exc}") from None


def _default_text(values: dict[str, Any]) -> str:
    """The bundled template, in Python (see the module docstring)."""
    text = str(values["label"])
    if values["year"]:
        text += f" {values['year']}"
    if values["notice_doi"]:
        text += f"; notice doi:{values['notice_doi']}"
    elif values["notice_record"]:
        text += f" ({values['notice_record']})"
        if values["notice_reason"]:
            text += f": {values['notice_reason']}"
    if values["published_doi"]:
        text += f"; published as doi:{values['published_doi']}"
    return text


_PUBLISHED = re.compile(r"^published as doi:(\S+)")


def preprint_values(citation: Citation, notice: Notice | None) -> dict[str, str | None]:
    """What a reader needs of a preprint's verdict, which no notice DOI gives: the server's
    version that was withdrawn (``arXiv:2104.01234v2``) and why, as the server says; and the
    journal version whose notices decided (the core's reason starts ``published as doi:``)."""
    record = notice.record_id if notice and not notice.doi and notice.record_id else None
    preprint = record if record and not record.isdigit() else None  # digits: a RW record
    published = _PUBLISHED.match(citation.reason or "")
    return {
        "notice_record": one_line(preprint) if preprint else None,
        "notice_reason": one_line(notice.label) if preprint and notice and notice.label else None,
        "published_doi": one_line(published[1].rstrip(":;,")) if published else None,
    }


def annotate(citation: Citation, template: str | None = None) -> Annotation:
    """Render the annotation of one flagged citation."""
    notice = deciding_notice(citation)
    label = capitalised(status_label(citation.status))
    if citation.status == "unknown_notice" and notice is not None:
        label = f"{label} '{notice.type}'"  # verbatim: it may be a retraction spelt anew
    values: dict[str, Any] = {
        "label": label,
        "status": citation.status,
        "year": notice.date.year if notice and notice.date else None,
        "date": notice.date.isoformat() if notice and notice.date else None,
        "notice_doi": one_line(notice.doi) if notice and notice.doi else None,
        "notice_type": one_line(notice.type) if notice else None,
        "notice_label": one_line(notice_label(notice.type)) if notice else None,
        "key": one_line(citation.key),
        "doi": one_line(citation.doi) if citation.doi else None,
        "title": one_line(citation.title) if citation.title else None,
        "allowed": citation.allowed,
        **preprint_values(citation, notice),
    }
    text = render_template(template, values) if template else _default_text(values)
    # Every renderer starts from this text: upstream control and bidi characters reach none.
    return Annotation(
        citation.status, one_line(label), values["year"], values["notice_doi"], one_line(text)
    )
