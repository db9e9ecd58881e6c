"""What a fresh process imports: the HTTP client only when a request really goes out."""

from __future__ import annotations

import subprocess
import sys

from fakes.crossref import FakeCrossref


def test_importing_the_source_does_not_import_httpx(fake_crossref: FakeCrossref) -> None:
    probe = (
        "import sys\n"
        "from rwgate.sources.crossref import CrossrefSource\n"
        "src = CrossrefSource(sys.argv[1])\n"
        "src.info(); src.query_all([])\n"
        "print('httpx' in sys.modules)\n"
        "src.query_all(['10.1038/nature12373'])\n"
        "print('httpx' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, fake_crossref.url], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_importing_the_sources_does_not_import_httpx() -> None:
    probe = (
        "import sys, rwgate.sources.net.http, rwgate.identify.openalex\n"
        "import rwgate.identify.crossref_search\n"
        "print('httpx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
