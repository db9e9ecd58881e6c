"""Fixtures every test module may use: an isolated environment and the fake Crossref.

Tests come in two tiers. ``tests/unit`` starts no program (a guard below makes starting one an
error) and talks only to in-process loopback fakes; it runs in well under 30 s
(``make test-fast``). ``tests/e2e`` drives the real components: pandoc, latexmk/pdflatex/bibtex/
biber, MCP clients, rwgate's own console scripts. Each test is marked ``unit`` or ``e2e`` by its
folder, so ``pytest -m e2e`` selects the same tier. HTTP retry back-off is zero in every test
(``RWGATE_RETRY_BACKOFF=0``): retries are still made and counted, only not waited for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import settings

from fakes.crossref import FakeCrossref

# Hypothesis' per-example deadline (200 ms by default) is a wall-clock assertion: on a busy machine
# it fails a correct test. Readers are bounded by CPU time in the tests that care (test_reader_*).
settings.register_profile("rwgate", deadline=None)
settings.load_profile("rwgate")


@pytest.fixture(scope="session")
def resident_folder() -> Iterator[str]:
    """The runtime folder of this test session's resident workers (``rwgate.runtime.resident``).

    Short (a Unix socket path holds at most 107 bytes) and removed at the end of the session,
    which makes every worker started in it exit within seconds: a test run leaves none behind.
    """
    folder = tempfile.mkdtemp(prefix="rwrun-", dir="/tmp")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class _ResolverOff(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        text = b"no resolver in the tests"
        self.send_response(400)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def resolver_off() -> Iterator[str]:
    """A DOI resolver that answers every ``/ra/`` request with a 400, once: DOIs a batch left out
    are then confirmed one by one, as without a resolver. (A closed port did the same after five
    refused attempts, which used up Crossref's five-a-second window: a second per check.)"""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ResolverOff)
    server.daemon_threads = True
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    resident_folder: str,
    resolver_off: str,
) -> None:
    """No test may see the developer's rwgate settings, cache or snapshot, or leave its own."""
    for name in list(os.environ):
        if (name.startswith("RWGATE_") and name != "RWGATE_REQUIRE_TOOLS") or (
            name == "CROSSREF_MAILTO"
        ):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("rwgate-env")
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(home / "no-such-snapshot.sqlite"))
    monkeypatch.setenv("RWGATE_RETRY_BACKOFF", "0")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))  # no user config file
    # Console scripts hand their runs to a resident worker, as on a user's machine (on by
    # default); this session's own, which exit soon after it.
    monkeypatch.setenv("XDG_RUNTIME_DIR", resident_folder)
    monkeypatch.setenv("RWGATE_RESIDENT_IDLE", "120")
    # The DOI resolver's /ra/ endpoint answers no (see resolver_off); tests of the endpoint point
    # it at a fake.
    monkeypatch.setenv("RWGATE_DOI_URL", resolver_off)
    # So do arXiv and bioRxiv (a preprint is then unverified, never a network request); tests of
    # them point these at tests/fakes/arxiv.py and biorxiv.py.
    for name in ("RWGATE_ARXIV_URL", "RWGATE_ARXIV_OAI_URL", "RWGATE_BIORXIV_URL"):
        monkeypatch.setenv(name, resolver_off)
    # The pandoc every test drives is the wheel's (3.x, the newest rwgate is tested with), first on
    # PATH, whatever pandoc the machine has (Debian's 2.17 comes with R Markdown); a test about
    # another version names its binary (tests/e2e/test_pandoc_versions.py, pandoc_matrix.py).
    wheel = wheel_pandoc()
    if wheel is not None:
        monkeypatch.setenv("PATH", f"{os.path.dirname(wheel)}{os.pathsep}{os.environ['PATH']}")
    # Loopback fakes must never be sent through a proxy the machine may define.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake_crossref() -> Iterator[FakeCrossref]:
    """A running fake Crossref serving tests/fixtures/crossref (fresh for each test)."""
    with FakeCrossref() as fake:
        yield fake


def wheel_pandoc() -> str | None:
    """The pandoc the pypandoc-binary wheel in this venv ships (None without the wheel), or the
    one ``RWGATE_TEST_PANDOC`` names: the suite driven by a user's own pandoc, e.g.
    ``RWGATE_TEST_PANDOC=.tools/pandoc-2.17/pandoc`` (version-sensitive golden tests differ)."""
    from rwgate.readers.pandoc_exe import bundled_pandoc

    chosen = os.environ.get("RWGATE_TEST_PANDOC")
    return str(Path(chosen).resolve()) if chosen else bundled_pandoc()


def require_tool(name: str) -> str:
    """The path of an external tool a test needs.

    Where it is missing the test is skipped on a developer's machine but FAILS in CI
    (``RWGATE_REQUIRE_TOOLS=1``), so a CI run can never pass by skipping.
    """
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed"
        if os.environ.get("RWGATE_REQUIRE_TOOLS") == "1":
            pytest.fail(message + " (RWGATE_REQUIRE_TOOLS=1)")
        pytest.skip(message)
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its tier, from its folder."""
    for item in items:
        tier = "e2e" if "e2e" in item.path.parts else "unit"
        item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(autouse=True)
def _unit_tier_starts_no_program(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A unit test that starts a program is in the wrong tier: fail it, naming the command."""
    if "unit" not in request.node.path.parts:
        return

    def refuse(self: object, args: object, *rest: object, **kw: object) -> None:
        raise AssertionError(f"unit tests start no program (move the test to tests/e2e): {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
