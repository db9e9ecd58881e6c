"""`make demo`: check the bundled example fully offline, from a snapshot of the bundled sample data.

Steps, each through rwgate's real command line:
1. import the sample Retraction Watch rows and Crossref records into a throw-away snapshot;
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
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> int:
    print("$ " + " ".join(args), flush=True)
    return subprocess.run(args, env=env, cwd=cwd, check=False).returncode


def render_html(env: dict[str, str]) -> int:
    """The annotated bibliography, as a reader of the manuscript would see it."""
    from rwgate.pandoc_exe import PandocNotFound, pandoc_path

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
    with tempfile.TemporaryDirectory(prefix="rwgate-demo-") as tmp:
        env = dict(os.environ)
        env["RWGATE_SNAPSHOT"] = str(Path(tmp) / "snapshot.sqlite3")
        env["RWGATE_CACHE_DIR"] = str(Path(tmp) / "cache")
        if env.get("RWGATE_DEMO_ONLINE") != "1":
            env["RWGATE_OFFLINE"] = "1"
        print(
            "rwgate demo: the bundled data is a SAMPLE (9 Retraction Watch rows,"
            " 6 Crossref records),\nnot the full database;"
            " `rwgate data update` fetches the whole of it.\n"
        )
        rwgate = str(BIN / "rwgate")
        data = HERE / "data"
        code = run(
            [
                rwgate,
                "data",
                "import",
                str(data / "retraction-watch" / "rw-sample.csv"),
                *sorted(str(p) for p in (data / "crossref").glob("*.json")),
            ],
            env,
        )
        if code:
            return code
        out = Path(env.get("RWGATE_DEMO_OUT") or ROOT / "out")
        report = ["--format", "html", "--output", str(out / "report.html")]
        code = run([rwgate, "check", "-v", "examples/paper.md", *report], env)
        if code:
            return code
        print(f"rwgate demo: wrote {out / 'report.html'} (the report as a page)")
        return render_html(env)


if __name__ == "__main__":
    sys.exit(main())
