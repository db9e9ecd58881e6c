"""What rw-latexmk and the BibTeX/biber hooks agree on: environment variables and the hook error.

rw-latexmk runs latexmk, latexmk runs ``rwgate bibtex``/``rwgate biber`` (the hooks), and the two
talk through these variables only. Kept apart so the hooks' helpers need not import the hooks.
"""

from __future__ import annotations

from rwgate.errors import UsageError

ENV_TEX = "RWGATE_LATEX_TEX"  # the main .tex (where configuration is searched from)
ENV_OVERRIDES = "RWGATE_LATEX_OVERRIDES"  # JSON: rw-latexmk's command-line settings
ENV_GATE = "RWGATE_LATEX_GATE"  # "0": rw-latexmk gates after latexmk; the hook only annotates
TOOL_ENV = {"bibtex": "RWGATE_BIBTEX", "biber": "RWGATE_BIBER"}  # e.g. bibtex8, a biber path
EXIT_GATE, EXIT_USAGE = 1, 2


class HookError(UsageError):
    """The hook cannot do its part; the message is one line."""
