"""Human text (a title, a journal, a name) from LaTeX to Unicode, as TeX prints it.

pylatexenc decodes accents and symbols well, but it drops every macro it does not know, and
with it the words a title is made of: ``The {\\TeX}book`` was "The book", ``{\\LaTeX}`` and
``\\mbox{...}`` vanished, and a DOI-less work whose title lost a word could no longer be
matched by title. So the decoder here is pylatexenc with three additions:

- the macros titles use that it lacks: the TeX logos (``\\TeX``, ``\\LaTeX``, ``\\BibTeX``,
  ``\\XeTeX``, ``\\AmS`` ...) as TeX prints them, box and font commands (``\\mbox``,
  ``\\textsuperscript``, ``\\NoCaseChange``) whose argument prints, and what prints nothing
  (``\\relax``, ``\\-``, ``\\noopsort{...}``, font switches);
- math as the registry writes it: sub- and superscripts are their characters (``CO$_2$`` is
  CO2, ``Ca$^{2+}$`` is Ca2+), math alphabets their plain letters;
- an unknown macro keeps its name (``\\foo``): never a silent gap in a title.

Greek macros are decoded before (:func:`rwgate.titles.tex_greek`), in the check's one table.
"""

from __future__ import annotations

import re
from typing import Any

# Logos as TeX prints them, in the letters the registry spells them with.
LOGOS: dict[str, str] = {
    "TeX": "TeX",
    "LaTeX": "LaTeX",
    "LaTeXe": "LaTeX2ε",
    "LaTeXTeX": "(La)TeX",
    "BibTeX": "BibTeX",
    "BibLaTeX": "BibLaTeX",
    "biblatex": "biblatex",
    "XeTeX": "XeTeX",
    "XeLaTeX": "XeLaTeX",
    "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX",
    "pdfTeX": "pdfTeX",
    "pdfLaTeX": "pdfLaTeX",
    "eTeX": "ε-TeX",
    "ConTeXt": "ConTeXt",
    "SliTeX": "SLiTeX",
    "PiCTeX": "PiCTeX",
    "AmS": "AMS",
    "AMS": "AMS",
    "AmSTeX": "AMS-TeX",
    "AMSTeX": "AMS-TeX",
    "AmSLaTeX": "AMS-LaTeX",
    "AMSLaTeX": "AMS-LaTeX",
    "METAFONT": "METAFONT",
    "MF": "METAFONT",
    "METAPOST": "METAPOST",
    "MP": "MetaPost",
    "MetaPost": "MetaPost",
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
