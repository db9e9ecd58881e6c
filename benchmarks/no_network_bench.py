"""What having no network costs over ``--offline`` (issue 38).

The bundled example (``examples/``: ``refs.bib``, ``paper.md``, ``paper.tex``) is checked and
rebuilt with no change, each way in alternation:

* ``--offline`` (``RWGATE_OFFLINE=1``): Crossref is never asked;
* no network, Crossref at its default address (on a machine without a network its name does not
  resolve: what this benchmark's machine does) and at ``https://api.crossref.invalid`` (a name
  that never resolves, RFC 6761), neither told ``--offline``.

For ``rwgate check refs.bib``, ``pandoc paper.md --citeproc --filter rw-filter`` and
``rw-latexmk -pdf paper.tex`` (plain ``pandoc``/``latexmk`` beside them); the sample snapshot of
``examples/data`` is the Retraction Watch data. Prints the medians and the median of the paired
differences over ``--runs`` runs. Target: no network costs at most 0.3 s more than ``--offline``.

    .venv/bin/python benchmarks/no_network_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WAYS = {
    "offline": {"RWGATE_OFFLINE": "1"},
    "no network (default URL)": {},
    "no network (.invalid)": {"RWGATE_CROSSREF_URL": "https://api.crossref.invalid"},
}


def _setup(base: Path) -> tuple[Path, dict[str, str]]:
    folder = base / "example"
    folder.mkdir()
    for name in ("refs.bib", "paper.md", "paper.tex"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
    env["RWGATE_SNAPSHOT"] = str(base / "snapshot.sqlite3")
    env["RWGATE_CACHE_DIR"] = str(base / "cache")
    env["XDG_CONFIG_HOME"] = str(base / "config")
    data = ROOT / "examples" / "data"
    files = [str(data / "retraction-watch" / "rw-sample.csv")]
    files += sorted(str(p) for p in (data / "crossref").glob("*.json"))
    subprocess.run([str(BIN / "rwgate"), "data", "import", *files], env=env, check=True)
    return folder, env


def _pandoc() -> str:
    return shutil.which("pandoc") or str(BIN.parent / "lib" / "pandoc")


def _commands(folder: Path) -> dict[str, tuple[list[str], list[str] | None]]:
    """Each measured command, and the plain tool alone beside it (None: no such tool)."""
    pandoc = _pandoc()
    md = ["paper.md", "--citeproc", "-o", str(folder / "paper.html")]
    return {
        "rwgate check refs.bib": ([str(BIN / "rwgate"), "check", "refs.bib"], None),
        "rw-filter, no-change rebuild": (
            [pandoc, *md, "--filter", str(BIN / "rw-filter")],
            [pandoc, *md],
        ),
        "rw-latexmk, no-change rebuild": (
            [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "paper.tex"],
            ["latexmk", "-pdf", "-interaction=nonstopmode", "paper.tex"],
        ),
    }


def _time(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rwgate-nonet-") as tmp:
        folder, env = _setup(Path(tmp))
        for name, (cmd, plain) in _commands(folder).items():
            for extra in WAYS.values():  # the first build of each way is not measured
                _time(cmd, folder, {**env, **extra})
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            alone: list[float] = []
            for _ in range(args.runs):
                for way, extra in WAYS.items():
                    times[way].append(_time(cmd, folder, {**env, **extra}))
                if plain is not None:
                    alone.append(_time(plain, folder, env))
            print(f"{name} (median of {args.runs}):")
            if alone:
                print(f"  {'tool alone':<26} {statistics.median(alone):6.3f} s")
            base = times["offline"]
            for way, measured in times.items():
                added = statistics.median(t - o for t, o in zip(measured, base, strict=True))
                more = "" if way == "offline" else f"  ({added:+.3f} s over --offline)"
                print(f"  {way:<26} {statistics.median(measured):6.3f} s{more}")
    print("target: no network costs at most +0.300 s over --offline")


if __name__ == "__main__":
    main()
