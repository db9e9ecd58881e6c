"""The filter's golden pair: a pandoc JSON document in, the annotated JSON document out.

As manubot keeps its filter's input and output side by side, each pair here is the JSON of
``tests/fixtures/pandoc/paper.md`` after ``--citeproc --csl numeric.csl`` (the input, written by
one pandoc: its API version is in the file name) and what rw-filter made of it (the notices in the
rendered entries). The filter reads and writes the JSON it is given, so a pair holds for the API
version it names: marked ``pandoc_api``, and a new pandoc API gets its own pair
(``RWGATE_UPDATE_GOLDEN=1`` writes the output of every pair; review the diff).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from pandoc_build import copy_fixtures, rw_filter

from fakes.crossref import FakeCrossref

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "filter"
PAIRS = sorted(GOLDEN.glob("*.in.json"))
UPDATE = os.environ.get("RWGATE_UPDATE_GOLDEN") == "1"  # read before the tests' environment


@pytest.mark.pandoc_api
@pytest.mark.parametrize("source", PAIRS, ids=[p.name.removesuffix(".in.json") for p in PAIRS])
def test_the_filter_output_document_is_the_golden_one(
    tmp_path: Path, fake_crossref: FakeCrossref, source: Path
) -> None:
    data = source.read_bytes()
    api = ".".join(map(str, json.loads(data)["pandoc-api-version"]))
    assert f".api-{api}." in source.name  # the pair names the API version it holds for
    copy_fixtures(tmp_path, "refs.bib")  # the bibliography the document names
    env = {**os.environ, "RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_MEMO": "1"}
    proc = subprocess.run(
        [rw_filter(), "html"], input=data, cwd=tmp_path, env=env, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    expected = source.with_name(source.name.replace(".in.json", ".out.json"))
    if UPDATE:
        expected.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", "utf-8")
    assert out == json.loads(expected.read_bytes())
    assert out != json.loads(data)  # notices were placed
    assert b'"Retracted"' in proc.stdout
