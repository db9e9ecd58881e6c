"""How BibTeX reads one value of a .bib file: ``{...}`` (every brace counts), ``"..."`` (at brace
depth 0), a number's digits, or a macro (undefined: empty, with a warning), joined by ``#`` and
with white space collapsed; bounded by :data:`MAX_VALUE`.

:class:`ValueReader` is the cursor the entry scanner (:mod:`rwgate.readers.bibliographies.bibscan`)
moves
through the text: its position, line numbers, problems and the ``@string`` table live here.
"""

from __future__ import annotations

import re
from bisect import bisect_right

MAX_VALUE = 10 * 1024 * 1024
WHITE = frozenset(" \t\n\r\f\v")
_NOT_ID = frozenset("\"#%'(),={}") | WHITE
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTHS = {name[:3]: name.capitalize() for name in _MONTH_NAMES.split(" ")}


class ScanError(Exception):
    """A syntax error: the entry keeps what was read, scanning resumes at the next '@'."""


class ValueReader:
    """A cursor on a .bib text that reads values as BibTeX does."""

    def __init__(self, text: str, macros: dict[str, str] | None = None) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        # The month macros come from the style (every standard .bst defines jan..dec), so every
        # file of a stream starts with them; the earlier files' @strings come on top.
        self.macros: dict[str, str] = {**MONTHS, **(macros or {})}
        self.problems: list[tuple[int, str, str]] = []
        self.undefined: list[str] = []  # undefined macros met in the value being read
        self.pandoc_value: str | None = None  # the last value as pandoc reads it, if it differs

    def line(self, at: int | None = None) -> int:
        return bisect_right(self.newlines, (self.i if at is None else at) - 1) + 1

    def problem(self, message: str, severity: str = "error", at: int | None = None) -> None:
        self.problems.append((self.line(at), message, severity))

    def skip_white(self) -> None:
        while self.i < self.n and self.text[self.i] in WHITE:
            self.i += 1

    def identifier(self) -> str:
        start = self.i
        while self.i < self.n and self.text[self.i] not in _NOT_ID:
            self.i += 1
        return self.text[start : self.i]

    def expect(self, chars: str, what: str) -> str:
        self.skip_white()
        if self.i >= self.n or self.text[self.i] not in chars:
            found = repr(self.text[self.i]) if self.i < self.n else "the end of the file"
            raise ScanError(f"expected {what}, found {found}")
        self.i += 1
        return self.text[self.i - 1]

    def braced(self) -> str:
        """A ``{...}`` group (the opening brace consumed); every brace counts."""
        start, depth = self.i, 1
        while self.i < self.n:
            char = self.text[self.i]
            self.i += 1
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return self.text[start : self.i - 1]
        raise ScanError("unbalanced braces: the value runs to the end of the file")

    def quoted(self) -> str:
        start, depth = self.i, 0
        while self.i < self.n:
            char = self.text[self.i]
            self.i += 1
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth < 0:
                    raise ScanError("unbalanced braces in a quoted value")
            elif char == '"' and depth == 0:
                return self.text[start : self.i - 1]
        raise ScanError("unterminated quoted value")

    def token(self) -> str:
        self.skip_white()
        if self.i >= self.n:
            raise ScanError("a value is missing at the end of the file")
        char = self.text[self.i]
        if char == "{":
            self.i += 1
            return self.braced()
        if char == '"':
            self.i += 1
            return self.quoted()
        at = self.i
        if char.isdigit():  # BibTeX reads a number's digits only (``10.1/x`` is ``10``, then junk)
            while self.i < self.n and self.text[self.i].isdigit():
                self.i += 1
            return self.text[at : self.i]
        name = self.identifier()
        if not name:
            raise ScanError(f"expected a value, found {char!r}")
        value = self.macros.get(name.lower())
        if value is None:
            self.problem(f"undefined macro '{name}' (empty, as in BibTeX)", "warning", at)
            self.undefined.append(name)
            return ""
        return value

    def value(self) -> str:
        """``token # token # ...``, white space collapsed as BibTeX does. Where an undefined
        macro made it empty, pandoc's reading (the macro's name) is left in :attr:`pandoc_value`."""
        met = len(self.undefined)
        parts = [self.token()]
        pandoc = [self.undefined[-1] if len(self.undefined) > met else parts[0]]
        size = len(parts[0])
        while True:
            self.skip_white()
            if self.i < self.n and self.text[self.i] == "#":
                self.i += 1
                before = len(self.undefined)
                parts.append(self.token())
                pandoc.append(self.undefined[-1] if len(self.undefined) > before else parts[-1])
                size += len(parts[-1])
                if size > MAX_VALUE:
                    raise ScanError(f"a value over {MAX_VALUE} characters (a macro bomb?)")
                continue
            self.pandoc_value = _collapse("".join(pandoc)) if len(self.undefined) > met else None
            return _collapse("".join(parts))


def _collapse(joined: str) -> str:
    return " ".join(joined.split()) if any(c in joined for c in "\n\t\r ") else joined
