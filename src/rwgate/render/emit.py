"""Where a run's outputs go: reports in each chosen format to their files or stdout, the human
text to stdout or (beside a machine format) stderr, every file written atomically, so a report
file is never left half-written and a machine format on stdout is never mixed with the human text.
"""

from __future__ import annotations

import functools
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from rwgate.errors import OutputError
from rwgate.render import FormatChoice, View

if TYPE_CHECKING:
    from rwgate.verdicts.result import CheckResult


Writer = Callable[[BinaryIO], object]
"""Writes a report's bytes into a file or stdout, in pieces (:meth:`ReportFormat.write`)."""


def write_output(path: Path, text: str | Writer) -> None:
    """Write a report or generated file atomically (``text``, or what a writer writes);
    OutputError (one line) when it cannot."""
    from rwgate.fsutil import write_atomic, write_atomic_with

    try:
        if isinstance(text, str):
            write_atomic(Path(path), text)
        else:
            write_atomic_with(Path(path), text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _to_stdout(report: str | Writer) -> None:
    if isinstance(report, str):
        sys.stdout.write(report + "\n")
        return
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is not None:
        report(raw)
        raw.flush()
    else:  # a replaced stdout (a test's, an embedding program's) takes text only
        buffer = io.BytesIO()
        report(buffer)
        sys.stdout.write(buffer.getvalue().decode("utf-8"))


def emit_texts(
    to_stdout: str | Writer | None,
    human: Callable[[bool], str],
    beside_machine: bool = False,
    files: Sequence[tuple[Path, str | Writer]] = (),
) -> None:
    """Write a run's outputs (module docstring): ``human`` gets whether to colour (a terminal,
    no ``NO_COLOR``); a report is a text (a final newline is added) or a writer of its bytes.
    OutputError (one line) when a file cannot be written."""
    if to_stdout is not None:
        _to_stdout(to_stdout)
    else:
        stream = sys.stderr if beside_machine else sys.stdout
        stream.write(human(stream.isatty() and not os.environ.get("NO_COLOR")))
    for path, text in files:
        write_output(path, text + "\n" if isinstance(text, str) else text)


LISTED_BESIDE_REPORT = 50
"""Citations listed on stderr when a machine format carries the whole report."""


def emit(
    result: CheckResult,
    outputs: Sequence[tuple[FormatChoice, Path | None]],
    report: Path | None = None,
    verbose: bool = False,
    template: str | None = None,
    code: int | None = None,
) -> None:
    """Render ``result`` in each chosen format, and the JSON report where ``report`` says: a CI
    job writes SARIF, JSON and the Markdown summary from one run. Beside a machine format the
    human text lists only its first citations."""
    view = View(verbose=verbose, template=template, exit_code=code)
    files: list[tuple[Path, Writer]] = []
    to_stdout: Writer | None = None
    machine = False
    for choice, path in outputs:
        fmt = choice.to_format()
        machine = machine or fmt.machine
        if path is not None:
            files.append((path, functools.partial(fmt.write, result, view)))
        elif fmt.machine:
            to_stdout = functools.partial(fmt.write, result, view)
    if report is not None:
        files.append((report, functools.partial(FormatChoice.JSON.to_format().write, result, view)))
    limit = None if verbose or not machine else LISTED_BESIDE_REPORT

    def human(colour: bool) -> str:
        text_view = View(colour, verbose, template, exit_code=code, limit=limit)
        return FormatChoice.TEXT.to_format().render(result, text_view) + "\n"

    emit_texts(to_stdout, human, machine, files)
