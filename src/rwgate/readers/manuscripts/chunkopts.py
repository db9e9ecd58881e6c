"""The options of a knitr or Quarto code chunk, as far as they can be known without running R.

Options come from the chunk header (``{r label, fig.cap="From [@x]", child=c("a.Rmd")}``: R
expressions, knitr's ``parse_params``) and from ``#|`` lines at the top of the chunk (YAML, where
``!expr`` marks code, or R's ``key = value``). Only literal values are known here: a string,
``c()`` of strings, ``TRUE``/``FALSE``. Anything else is :class:`Computed`: it would have to run,
so what it prints cannot be checked, and the caller says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml


@dataclass(frozen=True)
class Computed:
    """An option whose value is code (its text kept for the message)."""

    code: str


Value = list[str] | bool | Computed | None
"""An option's value: strings (one or several), a logical, code, or None (absent, or a literal
that is neither, such as a number)."""

_OPTION_PREFIX = re.compile(r"^[\t >]*(?:#|//|--)\|\s?")
_R_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_.][\w.-]*\s*=")
_R_STRING = re.compile(r"""^(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')$""", re.S)
_R_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside quotes and brackets (R argument lists)."""
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _r_string(text: str) -> str | None:
    """The value of an R string literal, or None when ``text`` is not one."""
    match = _R_STRING.match(text.strip())
    if match is None:
        return None
    body = match.group(1) if match.group(1) is not None else match.group(2)
    return re.sub(r"\\(.)", lambda m: _R_ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def r_value(text: str) -> Value:
    """An R expression as a :data:`Value`: strings, ``c(...)`` of strings, a logical, else code."""
    text = text.strip()
    single = _r_string(text)
    if single is not None:
        return [single]
    if text in ("TRUE", "T", "FALSE", "F"):
        return text.startswith("T")
    if text == "NULL" or re.fullmatch(r"-?[\d.]+L?", text):
        return None
    inner = re.fullmatch(r"c\s*\((.*)\)", text, re.S)
    if inner:
        items = [_r_string(item) for item in _split_top(inner.group(1))]
        if all(item is not None for item in items):
            return [item for item in items if item is not None]
    return Computed(text)


def r_options(text: str) -> dict[str, Value]:
    """``label, key=value, ...`` (a header's text after the engine, or ``#|`` lines in R syntax):
    each named option's value; unnamed ones (the label) are left out."""
    found: dict[str, Value] = {}
    for part in _split_top(text):
        name, equals, value = part.partition("=")
        if equals and re.fullmatch(r"[A-Za-z_.][\w.-]*", name.strip()):
            found[name.strip()] = r_value(value)
    return found


class _Loader(yaml.SafeLoader):
    """YAML with Quarto's ``!expr`` tag (an R or Python expression) kept as :class:`Computed`."""


_Loader.add_constructor(
    "!expr",
    lambda loader, node: Computed(str(loader.construct_scalar(node))),  # type: ignore[arg-type]
)


def _yaml_value(value: Any) -> Value:
    if isinstance(value, Computed | bool):
        return value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if any(isinstance(item, Computed) for item in value):
            return Computed(", ".join(str(i) for i in value))
        return [str(item) for item in value if isinstance(item, str)]
    return None


def pipe_options(lines: list[str]) -> dict[str, Value]:
    """The options of the ``#|`` lines at the top of a chunk's body (YAML or R syntax); an
    unparsable block gives none (Quarto and knitr stop on it: there is no output to check)."""
    block = []
    for line in lines:
        prefix = _OPTION_PREFIX.match(line)
        if prefix is None:
            break
        block.append(line[prefix.end() :])
    if not block:
        return {}
    if _R_ASSIGNMENT.match(block[0]):
        return r_options(", ".join(block))
    try:
        data = yaml.load("\n".join(block), Loader=_Loader)  # a SafeLoader, plus !expr
    except yaml.YAMLError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(key): _yaml_value(value) for key, value in data.items()}


def chunk_options(header: str, body: list[str]) -> dict[str, Value]:
    """A chunk's options: its header's (the text after the engine name), then its ``#|`` lines',
    which win (knitr and Quarto merge them so)."""
    return {**r_options(header), **pipe_options(body)}
