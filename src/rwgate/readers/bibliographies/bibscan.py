"""A .bib file read with BibTeX's own rules (bibtex.web), in one linear pass.

The gate must judge the bibliography BibTeX prints, so the reading follows BibTeX 0.99d where it
decides which entries exist and which DOI each has (the README's "How a .bib is read" lists the
rules), down to its corners: ``@comment`` ends at its name; a number is its digits; ASCII-only
case folding (BibTeX folds bytes); a repeated key's body is never read (BibTeX resumes at the next
``@`` after the key); an entry with no key is an entry (``\\nocite{*}``); the files of one
``\\bibdata`` are one stream of ``@string``s (``scan(text, macros)``, :attr:`BibScan.macros`);
``crossref`` and biblatex's ``xdata`` are inherited (:func:`inherit`).

Where pandoc reads an entry otherwise (the last of a repeated key or field, an undefined macro as
its name), its reading is kept beside BibTeX's (:attr:`BibEntry.other`): both are judged. A value
over :data:`MAX_VALUE` characters or more than :data:`MAX_ENTRIES` entries are one-line problems.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

MAX_VALUE = 10 * 1024 * 1024
MAX_ENTRIES = 200_000
WHITE = frozenset(" \t\n\r\f\v")
_NOT_ID = frozenset("\"#%'(),={}") | WHITE
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTHS = {name[:3]: name.capitalize() for name in _MONTH_NAMES.split()}
# Fields that say which work an entry is: a repeat that changes one of them is another work.
_WORK_FIELDS = (
    "doi url eprint eprinttype archiveprefix pmid crossref xdata note howpublished addendum"
)
_IDENTIFYING = tuple(_WORK_FIELDS.split())
# Fields a biblatex child never inherits (biber's defaults); BibTeX inherits all it lacks.
_CONTROL_FIELDS = """ids crossref xref xdata entryset execute label options presort related
    relatedoptions relatedstring relatedtype shorthand shorthandintro sortkey"""
_NOT_INHERITED = frozenset(_CONTROL_FIELDS.split())


@dataclass
class BibEntry:
    """One entry as BibTeX stores it: type and key as written, fields by lower-case name."""

    type: str
    key: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    inherited: dict[str, str] = field(default_factory=dict)
    """field -> the key of the entry it came from (crossref, xdata)."""
    conflict: str | None = None
    """Why BibTeX and pandoc read this entry differently, if they do."""
    other: dict[str, str] | None = None
    """The other tool's reading of this entry's fields, when it differs (both are judged)."""
    variant_of: str | None = None
    """The key this one repeats up to case: BibTeX reads that entry, pandoc this one."""


@dataclass
class BibScan:
    entries: list[BibEntry] = field(default_factory=list)
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, message, severity) — the reader turns them into Problems."""
    macros: dict[str, str] = field(default_factory=dict)
    """The ``@string`` table after the file: what the next file of the same stream starts from."""


def fold(key: str) -> str:
    """A key or name as BibTeX compares it: ASCII letters lower-cased, every other byte as is."""
    return key.lower() if key.isascii() else key.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


class ScanError(Exception):
    """A syntax error: the entry keeps what was read, scanning resumes at the next '@'."""


class _Scanner:
    """A cursor on a .bib text: ``@`` commands, entries, their fields and values."""

    def __init__(self, text: str, macros: dict[str, str] | None = None) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        # The month macros come from the style (every standard .bst defines jan..dec), so every
        # file of a stream starts with them; the earlier files' @strings come on top.
        self.macros: dict[str, str] = {**MONTHS, **(macros or {})}
        self.undefined: list[str] = []  # undefined macros met in the value being read
        self.pandoc_value: str | None = None  # the last value as pandoc reads it, if it differs
        self.out = BibScan()
        self.variants: set[str] = set()
        self.by_key: dict[str, BibEntry] = {}
        self.current: BibEntry | None = None

    def line(self, at: int | None = None) -> int:
        return bisect_right(self.newlines, (self.i if at is None else at) - 1) + 1

    def problem(self, message: str, severity: str = "error", at: int | None = None) -> None:
        self.out.problems.append((self.line(at), message, severity))

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

    def delimited(self, closer: str) -> str:
        """A ``{...}`` (``closer`` ``}``) or ``"..."`` value, its opening consumed; every brace
        counts, and a quote ends the value only outside braces."""
        start, depth = self.i, 1 if closer == "}" else 0
        while self.i < self.n:
            char = self.text[self.i]
            self.i += 1
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0 and closer == "}":
                    return self.text[start : self.i - 1]
                if depth < 0:
                    raise ScanError("unbalanced braces in a quoted value")
            elif char == '"' and depth == 0:
                return self.text[start : self.i - 1]
        if closer == "}":
            raise ScanError("unbalanced braces: the value runs to the end of the file")
        raise ScanError("unterminated quoted value")

    def token(self) -> str:
        self.skip_white()
        if self.i >= self.n:
            raise ScanError("a value is missing at the end of the file")
        char = self.text[self.i]
        if char in '{"':
            self.i += 1
            return self.delimited("}" if char == "{" else '"')
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

    def run(self) -> BibScan:
        while True:
            at = self.text.find("@", self.i)
            if at < 0:
                return self.out
            self.i = at + 1
            self.skip_white()
            kind = self.identifier().lower()
            if not kind:
                self.problem("'@' without an entry type; skipped", "warning", at)
                continue
            if kind == "comment":
                continue  # BibTeX: the command ends at its name
            self.current = None
            try:
                self.command(kind, at)
            except ScanError as exc:
                where, entry = f"@{kind}: ", self.current
                if entry is not None:  # BibTeX keeps what it has read of the entry
                    kept = ", ".join(entry.fields) or "no fields"
                    where = f"entry '{entry.key}' (kept with {kept}): "
                self.problem(f"{where}{exc}; BibTeX skips to the next '@'", "error", at)

    def command(self, kind: str, at: int) -> None:
        opener = self.expect("{(", "'{' or '(' after @" + kind)
        closer = "}" if opener == "{" else ")"
        if kind == "string":
            self.skip_white()
            name = self.identifier()
            if not name:
                raise ScanError("@string without a macro name")
            self.expect("=", "'=' after the macro name")
            self.macros[name.lower()] = self.value()
        elif kind == "preamble":
            self.value()
        else:
            self.entry(kind, at, closer)
            return
        self.expect(closer, f"'{closer}'")

    def entry(self, kind: str, at: int, closer: str) -> None:
        self.skip_white()
        start = self.i
        stop = f",{closer}" if closer == "}" else ","
        while self.i < self.n and self.text[self.i] not in stop and self.text[self.i] not in WHITE:
            self.i += 1
        key = self.text[start : self.i]
        if len(self.out.entries) >= MAX_ENTRIES:
            raise ScanError(f"more than {MAX_ENTRIES} entries; the rest are not read")
        record = BibEntry(type=kind, key=key, line=self.line(at))
        if fold(key) in self.by_key:
            self.repeat(record, closer, at)
            return
        self.by_key[fold(key)] = record
        self.out.entries.append(record)
        self.current = record
        self.fields(record, key, closer)

    def repeat(self, record: BibEntry, closer: str, at: int) -> None:
        """A key met before (up to ASCII case). BibTeX says "Repeated entry" and resumes at the
        next ``@`` after the key, never reading the body (so unbalanced braces in it swallow
        nothing). pandoc reads it (its keys are case-sensitive; the last of a key wins), so the
        body is read for comparison only, within the text up to the next line starting with
        ``@`` (each character is read at most once more: linear)."""
        key = record.key
        kept = self.by_key[fold(key)]
        first_key, first = kept.key, kept.line
        message = f"repeated entry '{key}' (first at line {first}, again at line {record.line})"
        self.problem(f"{message}; BibTeX uses the first", "warning", at)
        resume, size, said = self.i, self.n, len(self.out.problems)
        end = self.text.find("\n@", self.i)
        self.n = size if end < 0 else end
        try:
            self.fields(record, key, closer)
        except ScanError:
            pass  # pandoc's reading of a broken repeat: BibTeX never reads it
        finally:
            self.n, self.i = size, resume
            del self.out.problems[said:]
        if key != first_key and key not in self.variants:
            # To pandoc this is another entry, to BibTeX the first one: both readings judged.
            self.variants.add(key)
            record.variant_of = first_key
            record.other = kept.fields
            record.conflict = (
                f"key '{key}' repeats '{first_key}' (line {first}) up to case: BibTeX prints"
                " that entry for both, pandoc prints this one"
            )
            self.out.entries.append(record)
        else:
            self.compare_repeat(kept, record)

    def compare_repeat(self, kept: BibEntry, repeat: BibEntry) -> None:
        """A repeated key: BibTeX prints the first entry, pandoc the last. If they name
        different works, both readings are kept (the more severe verdict decides)."""
        pandoc = repeat.other if repeat.other is not None else repeat.fields
        differ = [f for f in _IDENTIFYING if kept.fields.get(f, "") != pandoc.get(f, "")]
        if differ:
            kept.other = dict(pandoc)
            if kept.conflict is None:
                kept.conflict = (
                    f"key '{kept.key}' is repeated at line {repeat.line} with another {differ[0]}:"
                    " BibTeX prints the first entry, pandoc the last"
                )

    def fields(self, record: BibEntry, key: str, closer: str) -> None:
        while True:
            sep = self.expect(f",{closer}", f"',' or '{closer}'")
            if sep == closer:
                return
            self.skip_white()
            if self.i < self.n and self.text[self.i] == closer:
                self.i += 1
                return
            name = self.identifier().lower()
            if not name:
                found = repr(self.text[self.i]) if self.i < self.n else "the end of the file"
                raise ScanError(f"expected a field name in entry '{key}', found {found}")
            self.expect("=", f"'=' after field '{name}'")
            self.undefined = []
            self.field(record, key, name, self.value(), self.pandoc_value)

    def field(self, record: BibEntry, key: str, name: str, value: str, pandoc: str | None) -> None:
        """Store one field as BibTeX reads it (the first of a name), and pandoc's reading (the
        last of a name, an undefined macro as its name) where the two part."""
        if pandoc is not None and record.conflict is None:
            record.conflict = (
                f"field '{name}' uses the undefined macro '{self.undefined[0]}': BibTeX"
                " reads it as empty, pandoc as its name"
            )
        pandoc = value if pandoc is None else pandoc
        if name in record.fields:
            self.problem(f"entry '{key}' repeats field '{name}'; the first is used", "warning")
            if pandoc != record.fields[name] and record.conflict is None:
                record.conflict = (
                    f"field '{name}' is given twice with different values: BibTeX prints"
                    " the first, pandoc the last"
                )
        else:
            record.fields[name] = value
        if record.other is None and pandoc != record.fields[name]:
            record.other = dict(record.fields)
        if record.other is not None:
            record.other[name] = pandoc


def _collapse(joined: str) -> str:
    return " ".join(joined.split()) if any(c in joined for c in "\n\t\r ") else joined


def scan(text: str, macros: dict[str, str] | None = None) -> BibScan:
    """Every entry and problem of a .bib text, as BibTeX reads it; ``macros``: the ``@string``s
    the earlier files of the same ``\\bibdata`` defined (BibTeX reads them as one stream)."""
    scanner = _Scanner(text, macros)
    result = scanner.run()
    result.macros = scanner.macros
    inherit(result.entries)
    return result


def inherit(entries: list[BibEntry]) -> None:
    """``crossref`` and ``xdata`` inheritance: fields a child lacks come from its parent(s).

    BibTeX copies a missing field from the ``crossref`` parent; biber does the same (for every
    field but its own control fields) and also from each ``xdata`` entry. Chains are followed
    (a parent's own inherited fields count) without looping.
    """
    by_key = {fold(e.key): e for e in entries if e.variant_of is None}
    done: set[int] = set()

    def resolve(entry: BibEntry, path: tuple[int, ...]) -> None:
        if id(entry) in done or id(entry) in path:
            return
        parents = [p.strip() for p in entry.fields.get("xdata", "").split(",") if p.strip()]
        if entry.fields.get("crossref", "").strip():
            parents.append(entry.fields["crossref"].strip())
        for name in parents:
            parent = by_key.get(fold(name))
            if parent is None or parent is entry:
                continue
            resolve(parent, (*path, id(entry)))
            for fname, value in parent.fields.items():
                if fname not in entry.fields and fname not in _NOT_INHERITED:
                    entry.fields[fname] = value
                    entry.inherited[fname] = parent.key
        done.add(id(entry))

    for entry in entries:
        resolve(entry, ())


__all__ = ["MAX_ENTRIES", "MAX_VALUE", "MONTHS", "BibEntry", "BibScan", "fold", "inherit", "scan"]
