"""A BibTeX field value as the reader of the PDF sees it: identifiers (DOI, URL, PMID) with their
TeX escapes undone, and human text (titles, names) decoded from LaTeX to Unicode.

Identifiers must not go through a LaTeX decoder (``%`` starts a TeX comment there), yet a DOI
written ``10.1016/S0140-6736\\(97\\)11096-0``, ``10.1/a\\_b``, ``{\\_}`` or ``\\%`` is printed by
the styles as ``(97)``, ``_``, ``%``: read literally it names no registered DOI, and an offline
check would call a retracted work clean. So an identifier is decoded here, the way TeX prints it
(``\\`` before a non-letter prints that character; ``~`` is a space), in linear time. What prints
nothing is dropped (``\\relax``, ``\\allowbreak``, ``\\discretionary{-}{}{}``, ``\\penalty0``,
``\\linebreak[0]``, ``\\hspace{0pt}``, ``\\-`` beside a hyphen): kept, ``10.1016/...-0\\relax``
named no DOI and a full export called Wakefield's paper clean. ``\\-`` between two other
characters is the DOI's own hyphen, escaped (``S0140\\-6736``). A control word left after that is
not printed as its letters, so the field is no DOI (:func:`has_control_word`), never a guess.

Text goes through pylatexenc, which costs about 10 microseconds a character: a value longer than
any real title (:data:`DECODER_LIMIT`) is decoded by a plain linear pass instead, so a 1 MB field
of backslashes costs milliseconds, not half a minute and a gigabyte.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rwgate.readers.bibliographies.texprint import contexts, scripts_inline
from rwgate.titles import tex_greek

DECODER_LIMIT = 4096
_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{[^{}]*\}")
_URL_MACRO = re.compile(r"\\(?:url|doi|nolinkurl|path|texttt)\s*\{([^{}]*)\}")
_TILDE = re.compile(r"\$\\sim\$|\\textasciitilde\b\s*|\\~(?:\{\})?|\\string\s*~")
_UNDERSCORE = re.compile(r"\\textunderscore\b\s*(?:\{\})?")
# ``\`` before any character but a letter prints that character (``\(``, ``\_``, ``\%``); ``\/``
# prints nothing, and ``\-`` beside a hyphen (:data:`_SILENT`, applied first).
_CONTROL_SYMBOL = re.compile(r"\\([^A-Za-z\s])")
# What TeX prints as nothing in a DOI: break hints, no-ops, font switches and zero skips (the
# white space after a control word is TeX's, eaten with it); a \discretionary prints its third
# (no-break) argument.
_SILENT = re.compile(
    r"\\(?:relax|allowbreak|nobreak|ignorespaces|unskip|leavevmode|protect|null|empty|strut"
    r"|ttfamily|rmfamily|sffamily|normalfont|upshape|mdseries|tt|rm|sf|selectfont"
    r"|small|footnotesize|scriptsize|tiny|normalsize"
    r"|hbox\s*\{\}|mbox\s*\{\}|penalty\s*[-+]?\d+|(?:no)?linebreak\s*(?:\[\s*\d\s*\])?"
    r"|(?:hskip|kern)\s*[-+]?0*\.?0*\s*(?:pt|em|ex|mm|cm|in|bp|sp|mu)"
    r"|hspace\*?\s*\{\s*[-+]?0*\.?0*\s*(?:pt|em|ex|mm|cm|in|bp|sp)?\s*\})(?![A-Za-z@])\s*"
    r"|\\[-/]"
)
# ``\-`` is a hyphenation point: beside a hyphen it adds nothing (``S0140-\-6736``), but a DOI
# has no hyphenation points of its own, so between two other characters it is the DOI's hyphen
# escaped, as ``\(`` and ``\_`` are (``S0140\-6736``): read as nothing it named no DOI and a
# full export called Wakefield's paper clean (a regression of the rule that drops ``\-``).
_ESCAPED_HYPHEN = re.compile(r"(?<!-)\\-(?!-)")
_DISCRETIONARY = re.compile(r"\\discretionary\s*\{[^{}]*\}\s*\{[^{}]*\}\s*\{([^{}]*)\}")
_DASH_WORD = re.compile(r"\\text(?:endash|emdash|minus|hyphen)(?![A-Za-z@])\s*(?:\{\})?")
_CONTROL_WORD_LEFT = re.compile(r"\\[A-Za-z@]")
_TILDE_MARK = "\0"  # a literal tilde (``\~{}``) while bare ``~`` (a space in TeX) is read


def identifier(value: str, tie: str = "~", hyphen: str = "-") -> str:
    """An identifier (DOI, URL, PMID) with its TeX escapes and wrappers undone, not TeX-decoded.

    ``tie`` is what a bare ``~`` reads as: TeX prints a space (``doi:~10.1/x``), ``\\url``
    prints a tilde; :func:`doi_readings` tries both.
    """
    text = _HREF.sub(r"\1", value) if "\\href" in value else value
    if "\\" in text:
        text = _URL_MACRO.sub(r"\1", text)
        text = _DISCRETIONARY.sub(r"\1", text)
        text = _SILENT.sub("", _ESCAPED_HYPHEN.sub(hyphen, text))
        text = _DASH_WORD.sub("-", text)
        text = _TILDE.sub(_TILDE_MARK, text)
        text = _UNDERSCORE.sub("_", text)
        text = _CONTROL_SYMBOL.sub(r"\1", text)
    if "~" in text:
        text = text.replace("~", tie)
    text = text.replace(_TILDE_MARK, "~")
    return text.replace("{", "").replace("}", "").strip()


def doi_readings(value: str) -> list[str]:
    """What a DOI field may print as: ``~`` as a space (plain text), then as a tilde (``\\url``);
    ``\\-`` between two characters as the DOI's hyphen, then as the nothing TeX prints for it.
    The first that is a DOI is the entry's; every other that is a DOI is judged too (a reading).
    """
    ties, hyphens = (" ", "~") if "~" in value else (" ",), ("-", "") if "\\-" in value else ("-",)
    return list(dict.fromkeys(identifier(value, t, h) for h in hyphens for t in ties))


def printed(text: str) -> str:
    """Running TeX text (a ``.bbl`` entry) with what prints nothing dropped, and a space before
    every other control word: a DOI found in it ends where TeX stops printing its characters
    (``doi:10.1/x\\relax.`` is ``10.1/x``; ``\\allowbreak`` inside it joins its two halves)."""
    if "\\" not in text:
        return text
    text = _DISCRETIONARY.sub(r"\1", text)
    text = _SILENT.sub("", _ESCAPED_HYPHEN.sub("-", text))
    text = _DASH_WORD.sub("-", text)
    return _CONTROL_WORD_LEFT.sub(lambda m: " " + m.group(0), text)


def has_control_word(reading: str) -> bool:
    """Whether a reading still holds a control word no rule above undid (``\\foo``): TeX does
    not print it as its letters, so the reading is no DOI."""
    return "\\" in reading and _CONTROL_WORD_LEFT.search(reading) is not None


_UNESCAPED_PERCENT = re.compile(r"(?<!\\)%")
_PLAIN = re.compile(r"^[^\\{}$~%`'-]*$")
_CONTROL_WORD = re.compile(r"\\[A-Za-z]+\*?\s*")
_DECODER = None
_WALKER = None


def text(value: str | None) -> str | None:
    """Human text (title, journal, a name) decoded from LaTeX to Unicode, on one line."""
    if not value or not value.strip():
        return None
    if _PLAIN.match(value):
        # Nothing for the LaTeX decoder to do; it costs ~0.6 ms a field, which a
        # 1,000-entry bibliography in a pandoc build would feel.
        return " ".join(value.split())
    if len(value) > DECODER_LIMIT:
        return _plain_decode(value)
    # textgreek's \textalpha and upgreek's \upalpha are put in first, in the check's one table
    # (:mod:`rwgate.titles`); math scripts are their characters (``CO$_2$`` is CO2).
    return _decoded(scripts_inline(tex_greek(value)))


def _plain_decode(value: str) -> str | None:
    """A linear reading for values no title reaches: control words dropped, control symbols
    their character, ``~`` a space, braces and ``$`` removed."""
    decoded = value.replace("\\\\", " ")
    decoded = _CONTROL_WORD.sub("", decoded)
    decoded = _CONTROL_SYMBOL.sub(r"\1", decoded)
    decoded = decoded.replace("~", " ").translate({ord("{"): None, ord("}"): None, ord("$"): None})
    return " ".join(decoded.split()) or None


@lru_cache(maxsize=4096)
def _decoded(value: str) -> str | None:
    global _DECODER, _WALKER
    if _DECODER is None:
        from pylatexenc.latex2text import LatexNodes2Text

        _WALKER, textdb = contexts()
        _DECODER = LatexNodes2Text(textdb, math_mode="text", strict_latex_spaces=True)
    escaped = _UNESCAPED_PERCENT.sub(r"\\%", value)
    try:
        decoded = _DECODER.latex_to_text(escaped, latex_context=_WALKER)
    except Exception:  # pylatexenc is lenient; never lose a title to a decoder bug
        decoded = value.replace("{", "").replace("}", "")
    return " ".join(decoded.split()) or None
