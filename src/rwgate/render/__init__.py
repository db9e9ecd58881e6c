"""Renderers: annotation text, LaTeX escaping, and the report formats (one family).

:class:`FormatChoice` is the family's one registry, as pip-audit's ``OutputFormatChoice``: the CLI
offers its values as ``--format`` choices and :meth:`FormatChoice.to_format` makes the renderer,
ending in ``assert_never`` so a member without a renderer is a type error, not a fallback.
Renderer modules are imported only for the format asked for.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, assert_never

if TYPE_CHECKING:
    from rwgate.render.interface import ReportFormat


class FormatChoice(StrEnum):
    """Every report format rwgate writes."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"
    JUNIT = "junit"
    MARKDOWN = "markdown"
    HTML = "html"

    def to_format(self) -> ReportFormat:
        match self:
            case FormatChoice.TEXT:
                from rwgate.render.report import TextFormat

                return TextFormat()
            case FormatChoice.JSON:
                from rwgate.render.report import JsonFormat

                return JsonFormat()
            case FormatChoice.SARIF:
                from rwgate.render.sarif import SarifFormat

                return SarifFormat()
            case FormatChoice.JUNIT:
                from rwgate.render.junit import JunitFormat

                return JunitFormat()
            case FormatChoice.MARKDOWN:
                from rwgate.render.markdown import MarkdownFormat

                return MarkdownFormat()
            case FormatChoice.HTML:
                from rwgate.render.html import HtmlFormat

                return HtmlFormat()
            case _:
                assert_never(self)


__all__ = ["FormatChoice"]
