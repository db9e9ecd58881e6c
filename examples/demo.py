"""`make demo`: check the bundled example fully offline, from a snapshot of the bundled sample data.

Steps, each through rwgate's real command line:
1. import the sample Retraction Watch rows and Crossref records into a throw-away snapshot;
2. `rwgate check examples/paper.md` against that snapshot, offline.
Set RWGATE_DEMO_ONLINE=1 to let the check ask live Crossref as well.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def run(args: list[str], env: dict[str, str]) -> int:
    print("$ " + " ".join(args), flush=True)
    return subprocess.run(args, env=env, cwd=HERE.parent, check=False).returncode


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
        return run([rwgate, "check", "-v", "examples/paper.md"], env)


if __name__ == "__main__":
    sys.exit(main())
