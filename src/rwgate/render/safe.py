"""Strings from outside, made inert before any renderer places them.

Before a title, DOI or key reaches any renderer, the characters that can change how the rest is
shown are removed: C0 and C1 controls (terminal escapes, NUL), line and paragraph separators, and
the bidirectional controls that can make a DOI read backwards. Each renderer then escapes for its
own syntax; this module is the one place that knows which characters are never wanted.
"""

from __future__ import annotations

import re

# Tab, newline and carriage return are kept by clean() and folded by one_line().
_UNWANTED = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_WHITESPACE_RUN = re.compile(r"[\t\n\r]+")
# What XML 1.0 cannot carry at all (most controls, lone surrogates, U+FFFE/F).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: object) -> str:
    """``text`` without control, separator and bidi characters (tabs and newlines kept)."""
    return _UNWANTED.sub("", str(text))


def one_line(text: object) -> str:
    """:func:`clean`, with tabs and line breaks turned into single spaces."""
    return _WHITESPACE_RUN.sub(" ", clean(text))


term_safe = one_line
"""A string from outside, made harmless for a terminal: one line, no escapes, no bidi."""


def xml_safe(text: object) -> str:
    """``text`` cleaned and without the characters XML 1.0 forbids."""
    return _NOT_XML.sub("", clean(text))


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def md_safe(text: object) -> str:
    """``text`` as inert GitHub-flavoured Markdown on one line: every Markdown punctuation mark
    backslash-escaped and ``<``/``&`` as entities (GitHub renders HTML inside Markdown), so a
    hostile title cannot open a link, an image, a table cell or a tag."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;")
