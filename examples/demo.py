"""`make demo`: check the bundled example fully offline, from a snapshot of the bundled sample data.

Steps, each through rwgate's real command line:
1. `rwgate data import --sample`: the sample Retraction Watch rows and Crossref records, into the
   invoking user's snapshot (``$RWGATE_SNAPSHOT``, else the user data directory), where the
   README's next command finds them (an extract: it never makes an unlisted work clean);
2. `rwgate check -v examples/paper.md --format html -o out/report.html` against that snapshot,
   offline (the verdicts in the terminal, and as a page to open in a browser);
3. `pandoc examples/paper.md --citeproc --filter rw-filter -o out/paper.html`: the same verdicts as
   annotations in the rendered bibliography (open out/paper.html in a browser).
Set RWGATE_DEMO_ONLINE=1 to let the check ask live Crossref as well, RWGATE_DEMO_OUT to write the
HTML elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> int:
    print("$ " + " ".join(args), flush=True)
    return subprocess.run(args, env=env, cwd=cwd, check=False).returncode


def render_html(env: dict[str, str]) -> int:
    """The annotated bibliography, as a reader of the manuscript would see it."""
    from rwgate.readers.pandoc_exe import PandocNotFound, pandoc_path

    try:
        pandoc = pandoc_path()
    except PandocNotFound as exc:
        print(f"rwgate demo: skipping the HTML build: {exc}")
        return 0
    out = Path(env.get("RWGATE_DEMO_OUT") or ROOT / "out")
    out.mkdir(parents=True, exist_ok=True)
    args = ["paper.md", "--citeproc", "--filter", str(BIN / "rw-filter"), "--standalone"]
    code = run([pandoc, *args, "-o", str(out / "paper.html")], env, cwd=HERE)
    if code == 0:
        print(f"rwgate demo: wrote {out / 'paper.html'} (each flagged reference is annotated)")
    return code


def main() -> int:
    env = dict(os.environ)
    if env.get("RWGATE_DEMO_ONLINE") != "1":
        env["RWGATE_OFFLINE"] = "1"
    rwgate = str(BIN / "rwgate")
    # Into the invoking user's own snapshot ($RWGATE_SNAPSHOT, else the user data directory), so
    # that the README's next command, `rwgate check --offline examples/paper.md`, finds it. The
    # sample is imported as an extract: it never makes a work it does not list clean.
    code = run([rwgate, "data", "import", "--sample"], env)
    if code:
        return code
    out = Path(env.get("RWGATE_DEMO_OUT") or ROOT / "out")
    report = ["--format", "html", "--output", str(out / "report.html")]
    code = run([rwgate, "check", "-v", "examples/paper.md", *report], env)
    if code:
        return code
    print(f"rwgate demo: wrote {out / 'report.html'} (the report as a page)")
    code = render_html(env)
    if code == 0:
        print(
            "rwgate demo: next, `. .venv/bin/activate` (rwgate, rw-filter and rw-latexmk on PATH)"
            " and `rwgate check --offline examples/paper.md`"
        )
    return code

if __name__ == "__main__":
    sys.exit(main())
