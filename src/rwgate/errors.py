"""The one exception hierarchy of rwgate.

Every error rwgate raises on purpose is an :class:`RwgateError`, and its message is one line that
names the file, line, key or value it is about. Front ends map the family to their own outlet in
one place (:func:`rwgate.frontends.kit.print_error`): ``rwgate check`` and ``rw-latexmk`` exit 2,
``rw-filter`` prints ``rw-filter: ERROR: ...``, MCP returns a tool error. Anything that is not an
:class:`RwgateError` is a bug and is reported as an internal error, never as a verdict.
"""

from __future__ import annotations


class RwgateError(Exception):
    """Base of every error rwgate raises on purpose; ``str()`` is one line for the user."""

    exit_code: int = 2


class UsageError(RwgateError):
    """The command or tool was called with arguments it cannot use."""


class UnknownFormat(UsageError):
    """A file whose suffix no reader or format is registered for (never guessed)."""


class ConfigError(RwgateError):
    """Invalid configuration; the message names where and which key."""


class InputError(RwgateError):
    """An input (bibliography, manuscript, .aux/.bcf) that cannot be read at all."""


class SourceError(RwgateError):
    """An integrity source could not give a valid answer (the work becomes ``unverified``)."""


class DataError(RwgateError):
    """Integrity data (a Retraction Watch export, a snapshot) that cannot be used."""


class ToolError(RwgateError):
    """An external program rwgate drives (pandoc, bibtex, biber) failed or is missing."""


class OutputError(RwgateError):
    """A report or generated file could not be written."""
