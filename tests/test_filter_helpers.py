"""Helpers for the rw-filter tests (real pandoc, real filter process); unit tests of its parts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from conftest import require_tool
from rwgate.pandoc.shadowbib import latex_escape, shadow_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "pandoc"
FLAGGED_KEYS = ("wakefield1998", "lacour2014", "njei2011")
CLEAN_KEYS = ("kucsko2013", "watson1953")


def pandoc() -> str:
    from rwgate.pandoc_exe import PandocNotFound, pandoc_path

    try:
        return pandoc_path()
    except PandocNotFound:
        return require_tool("pandoc")  # not on PATH either: skips, or fails in CI


def rw_filter() -> str:
    """The installed console script next to this Python, else the checkout's shim."""
    script = Path(sys.executable).parent / "rw-filter"
    return str(script if script.is_file() else ROOT / "filters" / "rw-filter.py")


@dataclass
class Build:
    returncode: int
    stderr: str
    output: Path

    @property
    def text(self) -> str:
        return self.output.read_text(encoding="utf-8")


def copy_fixtures(dest: Path, *names: str) -> None:
    for name in names or ("paper.md", "refs.bib", "refs.json", "numeric.csl"):
        shutil.copy(FIXTURES / name, dest / name)


def build(
    cwd: Path,
    args: list[str],
    output: str,
    env: dict[str, str] | None = None,
    document: str = "paper.md",
    filter_first: bool = False,
) -> Build:
    """Run ``pandoc DOCUMENT --citeproc --filter rw-filter ARGS -o OUTPUT`` in ``cwd``."""
    filt = ["--filter", rw_filter()]
    middle = [*filt, *args] if filter_first else [*args, *filt]
    cmd = [pandoc(), document, "--wrap=none", *middle, "-o", output]
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return Build(proc.returncode, proc.stderr, cwd / output)


def write_doc(path: Path, front: str, body: str) -> None:
    path.write_text(f"---\n{front.strip()}\n---\n\n{body.strip()}\n", encoding="utf-8")


# --- unit tests of the pieces ------------------------------------------------------------------


def test_latex_escape_makes_every_special_literal() -> None:
    hostile = r"\input{/etc/passwd} 100% #1 a_b & c~d ^ $x$ <script>"
    escaped = latex_escape(hostile)
    for raw in ("\\input", "{/etc", "100% ", " #1", "a_b", " & ", "~", "$x$", "<script>"):
        assert raw not in escaped
    assert escaped.count("{") == escaped.count("}")  # BibTeX needs balanced braces


def test_latex_escape_spaces_control_characters() -> None:
    # An escape or a NUL in a note would stop pdflatex ("invalid character"): removed.
    assert latex_escape("a\x1b[31mb\x00c}\u202e") == "a[31mbc\\textbraceright{}"


def test_shadow_text_rewrites_only_flagged_entries() -> None:
    original = (FIXTURES / "refs.bib").read_text(encoding="utf-8")
    shadowed, done = shadow_text(original, {"lacour2014": "Retracted 2015; doi:10.1/a_b"})
    assert done == {"lacour2014"}
    assert "note = {Data collection questioned. Retracted 2015; doi:10.1/a\\_b}" in shadowed
    # Everything but the flagged entry keeps its bytes (the @string macro and its use included).
    head, _, _ = original.partition("@article{lacour2014")
    assert shadowed.startswith(head)
    assert original[original.index("@article{njei2011") :] in shadowed
