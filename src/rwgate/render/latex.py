"""Text from outside as LaTeX that typesets literally: the one escaper for .bbl and .bib alike.

A hostile record could carry ``\\input{/etc/passwd}``, ``\\write18{...}``, an unbalanced brace or a
``%`` that comments out the rest of a ``.bbl`` line. Every character TeX treats specially is
replaced by a command that prints it, so the result is plain text in any font encoding and inside
any macro argument. Braces become ``\\textbraceleft{}``/``\\textbraceright{}``, not ``\\{``: BibTeX
and biber count every brace, even one after a backslash, so only brace-balanced output is safe in
a ``.bib`` field as well as in a ``.bbl``. Only a DOI made of the characters every registrar
recommends goes through ``\\url``/``\\href``; any other is typeset as escaped ``\\texttt`` text.
"""

from __future__ import annotations

import re

from rwgate.render.annotation import Annotation
from rwgate.render.safe import one_line

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "%": r"\%",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_SPECIAL_RE = re.compile(r"[\\{}$&#^_~%<>|]")
# Crossref's recommended DOI characters (plus ':' of SICI-free older DOIs): safe in \url and
# \href arguments even inside another macro's argument, and in \texttt.
_URL_SAFE_DOI = re.compile(r"^10\.[0-9A-Za-z.\-/();:]+$")


def escape_text(text: str) -> str:
    """Plain text as LaTeX: specials printed, braces balanced, controls gone, one line."""
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(0)], one_line(text))


def doi_markup(doi: str) -> str:
    """A DOI as a link where the document has one (hyperref ``\\href``, url ``\\url``)."""
    if _URL_SAFE_DOI.match(doi):
        # revtex defines \href without hyperref, and so without \nolinkurl: test for both.
        return (
            rf"{{\ifdefined\href\href{{https://doi.org/{doi}}}"
            rf"{{\ifdefined\nolinkurl\nolinkurl{{{doi}}}\else {doi}\fi}}"
            rf"\else\ifdefined\url\url{{{doi}}}\else\texttt{{{doi}}}\fi\fi}}"
        )
    return rf"\texttt{{{escape_text(doi)}}}"


_DOI_MARKUP = re.compile(
    r"\{\\ifdefined\\href\\href\{[^{}]*\}"
    r"\{\\ifdefined\\nolinkurl\\nolinkurl\{(?P<doi>[^{}]*)\}\\else [^{}]*\\fi\}"
    r"\\else\\ifdefined\\url\\url\{[^{}]*\}\\else\\texttt\{[^{}]*\}\\fi\\fi\}"
    r"|\\texttt\{(?P<tt>[^{}]*)\}"
)


def without_doi_markup(latex: str) -> str:
    """:func:`annotation_latex`'s output with each :func:`doi_markup` back to the bare DOI, as a
    style prints the same notice from a ``note`` field (to tell that an entry already shows it)."""
    return _DOI_MARKUP.sub(lambda m: m.group("doi") or m.group("tt") or "", latex)


def annotation_latex(annotation: Annotation) -> str:
    """The annotation text as LaTeX, its notice DOI (where the text shows it) as a link."""
    doi = annotation.notice_doi
    text = annotation.text
    if not doi or doi not in text:
        return escape_text(text)
    before, _, after = text.partition(doi)
    return escape_text(before) + doi_markup(doi) + escape_text(after)
