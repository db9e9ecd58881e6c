"""Benchmark: how much of an agent's context ``rw_check_dois`` takes for 200 DOIs, 10 flagged.

Target (issue 16): under 3,000 tokens by default. Tokens are estimated from the text content an
agent reads (compact JSON) at 4 and at 3 characters per token (JSON of identifiers tokenizes
densely); no tokenizer is downloaded. Run: ``.venv/bin/python benchmarks/mcp_tokens.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

from fakes.crossref import FakeCrossref  # noqa: E402


def main() -> None:
    with FakeCrossref() as fake:
        os.environ.update({"RWGATE_CROSSREF_URL": fake.url, "RWGATE_NO_CACHE": "1"})
        dois = []
        for i in range(200):
            doi = f"10.5555/tok.{i:04d}"
            notices = None
            if i % 20 == 0:
                notices = [
                    {
                        "DOI": f"10.5555/tok.notice.{i:04d}",
                        "type": "retraction",
                        "source": "retraction-watch",
                        "updated": {"date-parts": [[2022, 1, 1]]},
                        "record-id": str(40000 + i),
                    }
                ]
            title = f"A synthetic work on topic number {i} of the benchmark"
            fake.add_synthetic(doi, updated_by=notices, title=title)
            dois.append(doi)
        from test_mcp import call  # the SDK's in-process client against build_server

        for detail in (False, True):
            result = call([ROOT], "rw_check_dois", {"dois": dois, "detail": detail})
            chars = len(result.content[0].text)  # type: ignore[union-attr]
            print(
                f"rw_check_dois, 200 DOIs (10 flagged), detail={str(detail).lower():5}: "
                f"{chars:6} characters, ~{chars // 4}-{chars // 3} tokens"
            )


if __name__ == "__main__":
    main()
