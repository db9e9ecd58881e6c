"""What each form of "no network" costs ``rwgate check`` over ``--offline`` (issue 46).

The bundled bibliography (``examples/refs.bib``, ten DOIs), no snapshot, an empty cache, checked
each way in alternation:

* ``--offline`` (``RWGATE_OFFLINE=1``): Crossref is never asked;
* a name that does not resolve (``https://api.crossref.invalid``) and a refused connection (a
  closed loopback port): known at once since issue 38;
* the loopback fakes of :mod:`fakes.nonetwork` as Crossref: a proxy answering 403 (``Via``,
  Squid's page), the same proxy as ``HTTPS_PROXY`` refusing the ``CONNECT`` to
  ``https://api.crossref.org``, a connection reset, a captive portal's 200 login page and its
  redirect to the login host.

Prints, per form, the median wall time and the median of the paired differences with
``--offline`` over ``--runs`` runs, and the requests the form's server saw per run. With
``--before REV`` the same is measured for the source tree of git revision ``REV`` (exported to a
temporary folder, first on ``PYTHONPATH``, each tree with its own resident worker). The command
is the ``rwgate`` console script as users run it, resident worker on (``--no-resident``: off,
every run a fresh process that imports everything). Target: every form known within 1 s of
``--offline``.

    .venv/bin/python benchmarks/network_bench.py [--runs 5] [--before 30fc316] [--no-resident]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.nonetwork import FORMS, NoNetwork  # noqa: E402

INVALID = "https://api.crossref.invalid"  # RFC 6761: never resolves
Ways = dict[str, tuple[dict[str, str], NoNetwork | None]]


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextlib.contextmanager
def _ways() -> Iterator[Ways]:
    """Each way's environment, and the fake whose requests it counts (running meanwhile)."""
    with contextlib.ExitStack() as stack:
        ways: Ways = {
            "--offline": ({"RWGATE_OFFLINE": "1"}, None),
            "name does not resolve": ({"RWGATE_CROSSREF_URL": INVALID}, None),
            "connection refused": ({"RWGATE_CROSSREF_URL": _closed_port()}, None),
        }
        for form in FORMS:
            net = stack.enter_context(NoNetwork(form))
            ways[form] = ({"RWGATE_CROSSREF_URL": net.url}, net)
        tunnel = stack.enter_context(NoNetwork("proxy_403"))
        ways["proxy_403 (CONNECT)"] = (
            {
                "HTTPS_PROXY": tunnel.url,
                "NO_PROXY": "",
                "no_proxy": "",
                "RWGATE_CROSSREF_URL": "https://api.crossref.org",
            },
            tunnel,
        )
        yield ways


def _env(base: Path, src: Path | None, resident: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
    env["RWGATE_SNAPSHOT"] = str(base / "no-snapshot.sqlite3")
    env["RWGATE_CACHE_DIR"] = str(base / "cache")
    env["XDG_CONFIG_HOME"] = str(base / "config")
    env["XDG_RUNTIME_DIR"] = str(base / "run")  # this tree's own resident worker
    (base / "run").mkdir(parents=True, mode=0o700)
    if not resident:
        env["RWGATE_RESIDENT"] = "0"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def _export(rev: str, into: Path) -> Path:
    """The ``src`` folder of git revision ``rev``, written under ``into``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _time(env: dict[str, str]) -> float:
    cmd = [str(BIN / "rwgate"), "check", str(ROOT / "examples" / "refs.bib")]
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def _measure(label: str, env: dict[str, str], ways: Ways, runs: int) -> None:
    for extra, _ in ways.values():  # the first run of each way is not measured
        _time({**env, **extra})
    times: dict[str, list[float]] = {way: [] for way in ways}
    seen: dict[str, list[int]] = {way: [] for way in ways}
    for _ in range(runs):
        for way, (extra, net) in ways.items():
            before = net.requests if net is not None else 0
            times[way].append(_time({**env, **extra}))
            seen[way].append((net.requests if net is not None else 0) - before)
    print(f"{label} (median of {runs}):")
    base = times["--offline"]
    for way, measured in times.items():
        added = statistics.median(t - o for t, o in zip(measured, base, strict=True))
        more = "" if way == "--offline" else f"  ({added:+.3f} s over --offline)"
        asked = f"  {statistics.median(seen[way]):g} requests" if ways[way][1] else ""
        print(f"  {way:<24} {statistics.median(measured):6.3f} s{more}{asked}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", metavar="REV", help="also measure this git revision's src")
    parser.add_argument("--no-resident", action="store_true", help="no resident worker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rwgate-net-") as tmp, _ways() as ways:
        base = Path(tmp)
        if args.before:
            old = _export(args.before, base / "before")
            env = _env(base / "b", old, not args.no_resident)
            _measure(f"before ({args.before})", env, ways, args.runs)
        _measure("now", _env(base / "n", None, not args.no_resident), ways, args.runs)
    print("target: every form known within 1 s of --offline")


if __name__ == "__main__":
    main()
