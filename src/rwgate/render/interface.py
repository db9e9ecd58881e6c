"""The interface every report format implements.

A format turns one :class:`~rwgate.core.CheckResult` into one string. ``machine`` formats (JSON,
SARIF, JUnit, HTML) are files: they go to ``--output`` or stdout, and the human text then goes to
stderr. Adding a format: a class here-like in its own module, and its name in
:class:`rwgate.render.FormatChoice` (the enum and its ``to_format``). The CLI's ``--format``
choices come from that enum.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

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
