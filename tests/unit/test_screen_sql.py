"""`rwgate screen`'s SQL normalisation of DOIs agrees with rwgate.contract.doi on every DOI of the
fixtures (SICI, look-alike dashes, prefixes, escapes, invisible characters), and a DOI column of
1 MB values or binary junk neither fails nor costs more than linear time."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import duckdb
import pytest

from rwgate.contract.doi import try_normalize
from rwgate.frontends.screen import doisql, sql

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROOT = FIXTURES.parents[1]
CRAFTED = [
    "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y",
    "doi: <https://doi.org/10.1000/ABC>",
    "https://doi.org/10.1016/S0140\u20106736(97)11096-0",
    "10.1016/S0140\u22126736(97)11096-0",
    "10.1016/S0140\uff0d6736(97)11096-0",
    "10.1234/abc\u200b.",
    "\ufeff10.1234/a\u00adb",
    "(10.1234/x)).",
    "10.1234/x.)",
    "10.1234%2Fabc",
    "10.1234%252Fabc",
    "  DOI 10.5555/Foo  ",
    "info:doi/10.1/x",
    "urn:doi:10.1234/x",
    "\u201c10.1234/q\u201d",
    "10.1234/\u00e9",
    "<10.1234/x>",
    "10.1234/(x)",
    "10.1234/a+b",
    "10.12345/x\n",
    "10.1234/x\u00a0",
    "10/abcd",
    "garbage",
    "",
    "10.123/too-short-registrant",
    "doi 10.1000/x",
    "DOI:  10.1000/X",
    "doi.org/10.1000/x",
    "dx.doi.org/10.1000/x",
    "www.doi.org/10.1000/x",
    "doi\t10.1000/x",
    "doi :10.1000/x",
]
# Where SQL fails closed (NULL: counted malformed) and Python still finds a DOI. No registered
# DOI looks like these; SQL must never give a *different* DOI.
FAIL_CLOSED = ["doi:doi:doi:doi:doi:10.1234/x", "10.1234/%FF", "10.1234/50%off%41"]


def _fixture_dois() -> set[str]:
    found: set[str] = set(CRAFTED)
    for path in [*FIXTURES.rglob("*"), *(ROOT / "examples").rglob("*.csv")]:
        if path.is_file() and path.suffix in {".csv", ".json", ".bib", ".md", ".tex", ".ris"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            found.update(m.group(0) for m in re.finditer(r'[^\s,"{}]*10\.\d{4,9}/[^\s,"{}]*', text))
    return found


def _connect(values: list[str | None], threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """A table ``r`` of ``values`` and the views of the DOI chain over it (the last is ``n``)."""
    con = duckdb.connect(config={"threads": threads} if threads else {})
    con.execute("CREATE TABLE r (i INTEGER, raw VARCHAR)")
    con.executemany("INSERT INTO r VALUES (?, ?)", list(enumerate(values)))
    for name, statement in doisql.stages("r", ["i", "raw"], "raw", "n"):
        con.execute(f"CREATE TEMP VIEW {name} AS {statement}")
    return con


def _sql_normalise(values: list[str | None]) -> list[tuple[str | None, str | None, str | None]]:
    """(raw, the chain's DOI, the fast path's DOI or NULL when the fast path does not apply)."""
    fast = doisql.fast_key("raw")
    return _connect(values).execute(f"SELECT raw, doi, {fast} FROM n ORDER BY i").fetchall()


def test_sql_and_python_agree_on_every_fixture_doi() -> None:
    dois = sorted(_fixture_dois())
    assert len(dois) > 200
    assert any("sici" in d.lower() for d in dois) and any("\u2010" in d for d in dois)
    got = _sql_normalise(dois)
    wrong = [(raw, try_normalize(raw), doi) for raw, doi, _ in got if try_normalize(raw) != doi]
    assert wrong == []
    fast = [(raw, f) for raw, _, f in got if f is not None]
    assert [(raw, f) for raw, f in fast if try_normalize(raw) != f] == []
    assert len(fast) > 100  # the fast path answers most of them


def _random_spellings(n: int, seed: int = 37) -> list[str]:
    """DOI-like strings built from what breaks a fast path: capitals, white space of both
    kinds, escapes, brackets, quotes, end punctuation, look-alike dashes, invisible and
    non-ASCII letters, and the prefixes people paste."""
    rng = random.Random(seed)
    safe = list("abcxyzABCXYZ0189./-_;:")
    tricky = [
        *"()<>[]{}%'\"!?,+# \t\n\x1c\x00",
        "\u00e9", "\u00c9", "\u2010", "\u200b", "\u00a0", "\uff0d", "\u212a", "%2F", "%41",
    ]  # fmt: skip
    prefixes = ["", "", "", "https://doi.org/", "HTTP://DX.DOI.ORG/", "doi:", "DOI ", "doi.org/",
                "doi: <", "(", " ", "info:doi/", "https://doi.org/doi:"]  # fmt: skip
    registrants = ["1234", "12345", "1000.10", "123", "1234567890", "\u0661\u0662\u0663\u0664"]
    out = []
    for _ in range(n):
        body = "".join(
            rng.choice(tricky if rng.random() < 0.08 else safe) for _ in range(rng.randint(1, 12))
        )
        out.append(f"{rng.choice(prefixes)}10.{rng.choice(registrants)}/{body}")
    return out


def test_the_fast_key_and_the_chain_never_give_another_doi_than_python() -> None:
    values = _random_spellings(4000)
    got = _sql_normalise(values)
    fast = [(raw, f) for raw, _, f in got if f is not None]
    assert [(raw, f, try_normalize(raw)) for raw, f in fast if f != try_normalize(raw)] == []
    assert len(fast) > 400  # the test reaches the fast path often, and also misses it
    other = [(raw, d, try_normalize(raw)) for raw, d, _ in got if d is not None]
    assert [t for t in other if t[1] != t[2]] == []  # NULL (malformed) at worst, never another


def test_the_fast_path_takes_resolver_urls_and_nothing_that_needs_work() -> None:
    got = {raw: f for raw, _, f in _sql_normalise(
        ["https://doi.org/10.1000/ABC", "DOI:10.1000/x", "http://dx.doi.org/10.1/x",
         "10.1000/x.", "10.1000/a b", "10.1000/\u00e9", "10.1000/%41", "doi: 10.1000/x",
         "https://doi.org/doi:10.1000/x", " 10.1000/x", "10.1000/abc;2-x", "10.1000/AbC",
         "DOI: 10.1000/X.;", "10.1000/x).", "10.1000/x.\"", "10.1000/x. "]
    )}  # fmt: skip
    assert got["https://doi.org/10.1000/ABC"] == "10.1000/abc"
    assert got["DOI:10.1000/x"] == "10.1000/x"
    assert got["doi: 10.1000/x"] == "10.1000/x"  # a prefix the Python rules peel in one go
    assert got["10.1000/abc;2-x"] == "10.1000/abc;2-x"  # already canonical: its own key
    assert got["10.1000/AbC"] == "10.1000/abc"
    assert got["10.1000/x."] == "10.1000/x"  # a reference string's closing period
    assert got["DOI: 10.1000/X.;"] == "10.1000/x"
    assert [raw for raw, f in got.items() if f is not None] == [
        "https://doi.org/10.1000/ABC",
        "DOI:10.1000/x",
        "10.1000/x.",
        "doi: 10.1000/x",
        "10.1000/abc;2-x",
        "10.1000/AbC",
        "DOI: 10.1000/X.;",
    ]


def test_spark_text_is_a_transpilation_of_the_same_query() -> None:
    spark = " ".join(sql.to_spark(statement) for _, _, statement in sql.plan("clean"))
    assert "TRY_URL_DECODE" in spark and "TRY(" not in spark
    assert "COLLECT_LIST" in spark


def _cpu_for(rows: int, value: str) -> float:
    con = _connect([value] * rows, threads=1)
    start = time.process_time()
    slow = f"{doisql.fast_key('raw')} IS NULL"
    count = con.execute(f"SELECT count(doi) FROM n WHERE {slow}").fetchone()
    assert count == (0,)  # junk is never a DOI
    return time.process_time() - start


@pytest.mark.parametrize(
    "value",
    ["10.1234/" + "x" * 1_000_000 + " (", "%" * 500_000 + "10.", "\x00\x01\xff<>((((" * 50_000],
    ids=["1MB-suffix", "1MB-percent", "binary-junk"],
)
def test_huge_and_binary_values_cost_linear_time(value: str) -> None:
    small = _cpu_for(2, value)
    large = _cpu_for(8, value)
    assert large < 4 * 3 * max(small, 0.01)  # 4x the rows: about 4x the CPU, never quadratic


def test_every_prefix_the_fast_path_takes_is_one_python_peels_the_same() -> None:
    """Whatever the fast path answers (only lower case) is what rwgate.contract.doi gives, for
    prefixes
    in every case and spacing: those it takes and those it leaves to the full rules."""
    prefixes = ["", "doi:", "DOI: ", "doi :", "doi  ", "Doi:\t", "doi.org/", "DX.DOI.ORG/",
                "www.doi.org/", "https://doi.org/", "HTTP://WWW.DOI.ORG/", "https://dx.doi.org/",
                "doi: doi:", "doi:https://doi.org/", "doi", "doi:/", "d oi:"]  # fmt: skip
    dois = ["10.1000/ABC", "10.12345.6/x-y_z;1", "10.1000/x.", "10.1000/a:b"]
    got = _sql_normalise([p + d for p in prefixes for d in dois])
    fast = [(raw, f) for raw, _, f in got if f is not None]
    assert [(raw, f) for raw, f in fast if try_normalize(raw) != f] == []
    assert len(fast) >= 30
