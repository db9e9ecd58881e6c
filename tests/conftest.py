"""Fixtures every test module may use: an isolated environment and the fake Crossref."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from fakes.crossref import FakeCrossref


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
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
    # Loopback fakes must never be sent through a proxy the machine may define.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake_crossref() -> Iterator[FakeCrossref]:
    """A running fake Crossref serving tests/fixtures/crossref (fresh for each test)."""
    with FakeCrossref() as fake:
        yield fake


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
