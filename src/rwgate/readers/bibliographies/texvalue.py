"""A BibTeX field value as the reader of the PDF sees it: identifiers (DOI, URL, PMID) with their
TeX escapes undone, and human text (titles, names) decoded from LaTeX to Unicode.

An identifier never goes through a LaTeX decoder (``%`` starts a TeX comment there): it is read
the way TeX prints it, in linear time. ``\\`` before a non-letter prints that character
(``10.1016/S0140-6736\\(97\\)11096-0`` is ``(97)``), ``~`` is a space, and what prints nothing is
dropped (``\\relax``, ``\\allowbreak``, ``\\penalty0``, ``\\hspace{0pt}``): read literally, such a
DOI names no registered work and a retracted one would pass. A control word left after that is not
printed as its letters, so the field is no DOI (:func:`has_control_word`), never a guess.

Text goes through pylatexenc, which drops every macro it does not know and with it the words of a
title (``The {\\TeX}book`` would be "The book", unmatchable by title). So the decoder here adds the
macros titles use (the TeX logos, box and font commands whose argument prints, what prints
nothing), reads math sub- and superscripts as their characters (``CO$_2$`` is CO2) and keeps an
unknown macro's name. Greek macros are decoded before, in the check's one table
(:func:`rwgate.titles.tex_greek`). pylatexenc costs about 10 microseconds a character: a value
longer than any real title (:data:`DECODER_LIMIT`) is decoded by a plain linear pass instead.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from rwgate.titles import tex_greek

DECODER_LIMIT = 4096
_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{[^{}]*\}")
_URL_MACRO = re.compile(r"\\(?:url|doi|nolinkurl|path|texttt)\s*\{([^{}]*)\}")
_TILDE = re.compile(r"\$\\sim\$|\\textasciitilde\b\s*|\\~(?:\{\})?|\\string\s*~")
_UNDERSCORE = re.compile(r"\\textunderscore\b\s*(?:\{\})?")
# ``\`` before any character but a letter prints that character (``\(``, ``\_``, ``\%``); ``\/``
# prints nothing, and ``\-`` beside a hyphen (:data:`_SILENT`, applied first).
_CONTROL_SYMBOL = re.compile(r"\\([^A-Za-z\s])")
# What TeX prints as nothing in a DOI: break hints, no-ops, font switches and zero skips (with
# the white space TeX eats after a control word).
_SILENT = re.compile(
    r"\\(?:relax|allowbreak|nobreak|ignorespaces|unskip|leavevmode|protect|null|empty|strut"
    r"|ttfamily|rmfamily|sffamily|normalfont|upshape|mdseries|tt|rm|sf|selectfont"
    r"|small|footnotesize|scriptsize|tiny|normalsize"
    r"|hbox\s*\{\}|mbox\s*\{\}|penalty\s*[-+]?\d+|(?:no)?linebreak\s*(?:\[\s*\d\s*\])?"
    r"|(?:hskip|kern)\s*[-+]?0*\.?0*\s*(?:pt|em|ex|mm|cm|in|bp|sp|mu)"
    r"|hspace\*?\s*\{\s*[-+]?0*\.?0*\s*(?:pt|em|ex|mm|cm|in|bp|sp)?\s*\})(?![A-Za-z@])\s*"
    r"|\\[-/]"
)
# ``\-`` beside a hyphen adds nothing (``S0140-\-6736``); between two other characters it is the
# DOI's own hyphen, escaped as ``\(`` and ``\_`` are (``S0140\-6736``).
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
        text = _unprinted(_URL_MACRO.sub(r"\1", text), hyphen)
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
    return _CONTROL_WORD_LEFT.sub(lambda m: " " + m.group(0), _unprinted(text, "-"))


def _unprinted(text: str, hyphen: str) -> str:
    """``text`` without what TeX prints as nothing; an escaped ``\\-`` read as ``hyphen``."""
    text = _SILENT.sub("", _ESCAPED_HYPHEN.sub(hyphen, _DISCRETIONARY.sub(r"\1", text)))
    return _DASH_WORD.sub("-", text)


def has_control_word(reading: str) -> bool:
    """Whether a reading still holds a control word no rule above undid (``\\foo``): TeX does
    not print it as its letters, so the reading is no DOI."""
    return "\\" in reading and _CONTROL_WORD_LEFT.search(reading) is not None


_UNESCAPED_PERCENT = re.compile(r"(?<!\\)%")
_PLAIN = re.compile(r"^[^\\{}$~%`'-]*$")
_CONTROL_WORD = re.compile(r"\\[A-Za-z]+\*?\s*")


def text(value: str | None) -> str | None:
    """Human text (title, journal, a name) decoded from LaTeX to Unicode, on one line."""
    if not value or not value.strip():
        return None
    if _PLAIN.match(value):
        # Nothing to decode (the decoder costs ~0.6 ms a field: a pandoc build would feel it).
        return " ".join(value.split())
    if len(value) > DECODER_LIMIT:
        return _plain_decode(value)
    return _decoded(scripts_inline(tex_greek(value)))


def _plain_decode(value: str) -> str | None:
    """A linear reading for values no title reaches: control words dropped, control symbols
    their character, ``~`` a space, braces and ``$`` removed."""
    decoded = value.replace("\\\\", " ")
    decoded = _CONTROL_WORD.sub("", decoded)
    decoded = _CONTROL_SYMBOL.sub(r"\1", decoded)
    decoded = decoded.replace("~", " ").translate({ord("{"): None, ord("}"): None, ord("$"): None})
    return " ".join(decoded.split()) or None


@lru_cache(maxsize=1)
def _decoder() -> tuple[Any, Any]:
    """pylatexenc's converter with rwgate's macros, and the parser's context (made once)."""
    from pylatexenc.latex2text import LatexNodes2Text

    walker, textdb = contexts()
    return LatexNodes2Text(textdb, math_mode="text", strict_latex_spaces=True), walker


@lru_cache(maxsize=4096)
def _decoded(value: str) -> str | None:
    decoder, walker = _decoder()
    escaped = _UNESCAPED_PERCENT.sub(r"\\%", value)
    try:
        decoded = decoder.latex_to_text(escaped, latex_context=walker)
    except Exception:  # pylatexenc is lenient; never lose a title to a decoder bug
        decoded = value.replace("{", "").replace("}", "")
    return " ".join(decoded.split()) or None


# Logos as TeX prints them, in the letters the registry spells them with.
_AS_NAMED = """TeX LaTeX BibTeX BibLaTeX biblatex XeTeX XeLaTeX LuaTeX LuaLaTeX pdfTeX pdfLaTeX
    ConTeXt PiCTeX AMS METAFONT METAPOST MetaPost"""
LOGOS: dict[str, str] = {
    **{name: name for name in _AS_NAMED.split()},
    "LaTeXe": "LaTeX2ε",
    "LaTeXTeX": "(La)TeX",
    "eTeX": "ε-TeX",
    "SliTeX": "SLiTeX",
    "AmS": "AMS",
    "AmSTeX": "AMS-TeX",
    "AMSTeX": "AMS-TeX",
    "AmSLaTeX": "AMS-LaTeX",
    "AMSLaTeX": "AMS-LaTeX",
    "MF": "METAFONT",
    "MP": "MetaPost",
}
# Macros whose one argument prints as it is (markup around words, never words themselves).
KEEP_ARGUMENT = (
    "mbox", "hbox", "fbox", "textnormal", "textsuperscript", "textsubscript", "uline", "uppercase",
    "lowercase", "NoCaseChange", "nocase", "MakeUppercase", "MakeLowercase", "mkbibquote",
    "mkbibemph", "mkbibitalic", "mkbibbold", "enquote", "operatorname", "url", "nolinkurl", "path",
    "doi", "bm", "boldsymbol", "mathbf", "mathit", "mathsf", "mathtt", "mathnormal", "pmb",
    "mathcal", "mathscr", "mathfrak",
)  # fmt: skip
# Macros that print nothing, with their argument (BibTeX's ``\noopsort{a}`` sorts, never prints).
DROP_ARGUMENT = ("noopsort", "hyphenation", "label", "index", "nocite")
# Font switches and spacing commands: no text of their own.
SILENT = (
    "relax", "protect", "allowbreak", "nobreak", "leavevmode", "null", "strut", "unskip",
    "ignorespaces", "/", "-", "it", "bf", "em", "sc", "sl", "rm", "sf", "tt", "itshape", "bfseries",
    "scshape", "slshape", "upshape", "mdseries", "normalfont", "rmfamily", "sffamily", "ttfamily",
    "small", "footnotesize", "scriptsize", "tiny", "normalsize", "large", "Large", "selectfont",
)  # fmt: skip
_MATH = re.compile(r"(?<!\\)\$((?:[^$\\]|\\.)*)(?<!\\)\$", re.DOTALL)
_SCRIPT_MARK = re.compile(r"(?<!\\)[_^]")


def scripts_inline(value: str) -> str:
    """``value`` with the ``_``/``^`` of its math dropped: a sub- or superscript is its
    characters on the line (``CO$_2$`` -> ``CO$2$``), as the registry writes CO2."""
    if "$" not in value:
        return value
    return _MATH.sub(lambda m: "$" + _SCRIPT_MARK.sub("", m.group(1)) + "$", value)


def _unknown(node: Any) -> str:
    """An unknown macro keeps its name, a space after it (``\\foo{x}`` is ``\\foo x``, not the
    name of another macro): a title never loses it."""
    return "\\" + str(node.macroname) + (str(getattr(node, "macro_post_space", "") or "") or " ")


def _argument(node: Any, l2tobj: Any) -> str:
    """The last argument of ``node`` as text (``\\href{url}{text}`` prints ``text``)."""
    args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
    return str(l2tobj.nodelist_to_text([args[-1]])) if args else ""


def contexts() -> tuple[Any, Any]:
    """(the parser's context, the text conversion's context) with rwgate's additions."""
    from pylatexenc import latexwalker
    from pylatexenc.latex2text import MacroTextSpec, get_default_latex_context_db
    from pylatexenc.macrospec import MacroSpec

    one = [*KEEP_ARGUMENT, *DROP_ARGUMENT]
    walker = latexwalker.get_default_latex_context_db()
    walker.add_context_category(
        "rwgate",
        macros=[MacroSpec(name, "{") for name in one] + [MacroSpec("href", "{{")],
        prepend=True,
    )
    textdb = get_default_latex_context_db()
    specs = [MacroTextSpec(name, logo) for name, logo in LOGOS.items()]
    specs += [MacroTextSpec(name, simplify_repl=_argument) for name in [*KEEP_ARGUMENT, "href"]]
    specs += [MacroTextSpec(name, discard=True) for name in [*DROP_ARGUMENT, *SILENT]]
    textdb.add_context_category("rwgate", macros=specs, prepend=True)
    textdb.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=_unknown))
    return walker, textdb
