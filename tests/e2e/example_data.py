"""The bundled example's real works, for tests that build their own documents from them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RWGATE = str(Path(sys.executable).parent / "rwgate")


def entry(key: str) -> str:
    """One entry of examples/refs.bib (real works), as written there."""
    text = (EXAMPLES / "refs.bib").read_text(encoding="utf-8")
    found = re.search(r"@article\{" + key + r",.*?\n\}\n", text, re.S)
    assert found, key
    return found.group(0)


def import_sample(env: dict[str, str]) -> None:
    """`rwgate data import` of the bundled sample (as `make demo` does) into the snapshot that
    ``env`` names (``RWGATE_SNAPSHOT``)."""
    data = EXAMPLES / "data"
    files = [str(data / "retraction-watch" / "rw-sample.csv")]
    files += sorted(str(p) for p in (data / "crossref").glob("*.json"))
    subprocess.run([RWGATE, "data", "import", *files], env=env, check=True, capture_output=True)


def latex_example(folder: Path) -> Path:
    """``folder`` (made) holding a copy of the example paper.tex and its refs.bib."""
    folder.mkdir(parents=True)
    for name in ("paper.tex", "refs.bib"):
        shutil.copy(EXAMPLES / name, folder / name)
    return folder
