"""Renderers: annotation text, LaTeX escaping, and the report formats (one family).

:class:`FormatChoice` is the family's one registry: the CLI offers its values as ``--format``
choices and :meth:`FormatChoice.to_format` makes the renderer, ending in ``assert_never`` as
pip-audit's ``OutputFormatChoice`` does: a member without a renderer is a type error. Renderer
modules are imported only for the format asked for. A format turns one
:class:`~rwgate.verdicts.result.CheckResult` into one string; ``machine`` formats (JSON, SARIF,
JUnit, HTML) are files: they go to ``--output`` or stdout, and the human text to stderr.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, assert_never

if TYPE_CHECKING:
    from rwgate.verdicts.result import CheckResult


@dataclass(frozen=True)
class View:
    """How a report is asked for: colour (a terminal), verbosity, the annotation template, the
    folder file locations are relative to, the run's exit code (2 when an input was
    unreadable, whatever the verdicts), and how many citations the human text lists."""

    colour: bool = False
    verbose: bool = False
    template: str | None = None
    root: Path | None = None
    exit_code: int | None = None
    limit: int | None = None
    """At most this many citations listed in the human text (the rest are in a machine report)."""


class ReportFormat(ABC):
    """One way of writing a check's result."""

    name: str
    machine: bool = True

    @abstractmethod
    def render(self, result: CheckResult, view: View) -> str:
        """The whole report as text (without a trailing newline)."""

    def write(self, result: CheckResult, view: View, out: BinaryIO) -> None:
        """The report and a final newline, as UTF-8 bytes into ``out`` (a file or stdout).

        A format whose report can be large (JSON: 100,000 works) overrides this to write it in
        pieces; the bytes must be :meth:`render`'s plus the newline.
        """
        out.write((self.render(result, view) + "\n").encode("utf-8"))


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
                from rwgate.render.sarif import JunitFormat

                return JunitFormat()
            case FormatChoice.MARKDOWN:
                from rwgate.render.markdown import MarkdownFormat

                return MarkdownFormat()
            case FormatChoice.HTML:
                from rwgate.render.html import HtmlFormat

                return HtmlFormat()
            case _:
                assert_never(self)
