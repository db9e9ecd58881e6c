"""Benchmark of the local snapshot: importing a 100,000-row CSV and 100,000 DOI look-ups.

Targets (issue 3): import under 15 s, look-ups under 1 s, peak memory under 300 MB.

The CSV is synthetic but in the real export's format and with its quirks (21-field header with a
trailing comma, CRLF, ``M/D/YYYY H:MM`` dates, ``;`` lists with a trailing ``;``, ``+`` reasons,
``unavailable`` DOIs, PubMed id ``0``, upper-case and percent-encoded DOIs, several rows per DOI).
Import and look-ups each run in a child process so that its peak RSS (``ru_maxrss``) is its own.
Look-ups are timed twice: half of the 100,000 DOIs listed (two notices each: the worst case, as
every listed DOI becomes objects with notices) and 1% listed (closer to a real bibliography).

    .venv/bin/python benchmarks/snapshot_bench.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = (
    "Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,"
    "RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,"
    "OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes,"
)
NATURES = ["Retraction"] * 6 + ["Correction"] * 2 + ["Expression of concern", "Reinstatement"]
REASONS = ["Duplication of/in Article", "Error in Data", "Compromised Peer Review", "Paper Mill"]


def work_doi(i: int) -> str:
    return f"10.{1000 + (i // 2) % 5000}/bench.{i // 2}"  # two rows per work DOI


def _row(i: int, rng: random.Random) -> list[str]:
    doi = work_doi(i)
    if i % 50 == 0:
        doi = doi.upper()
    elif i % 77 == 0:
        doi = doi.replace("/", "%2F", 1).replace(".", "%2E", 1)
    elif i % 97 == 0:
        doi = rng.choice(["unavailable", "Unavailable", ""])
    reasons = ";".join(("+" if i % 3 == 0 else "") + r for r in rng.sample(REASONS, 2)) + ";"
    return [
        str(i + 1),
        f"Synthetic benchmark paper number {i} on a topic",
        "(BLS) Biology - Cellular;(HSC) Medicine - Oncology;",
        "Department of Examples, Example University, Exampletown, Nowhere;",
        f"Journal of Benchmarks {i % 300}",
        "Example Publisher",
        "Nowhere",
        "A Author;B Author;C Author",
        "https://retractionwatch.com/example/",
        "Research Article;",
        f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(2000, 2025)} 0:00",
        f"10.{1000 + i % 5000}/notice.{i}",
        "0" if i % 4 else str(30000000 + i),
        f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(1990, 2020)} 0:00",
        doi,
        "0" if i % 5 == 0 else str(10000000 + i // 2),
        NATURES[i % len(NATURES)],
        reasons,
        "No",
        "Notes about the record, a sentence or two long, as real rows often have.",
        "",
    ]


def generate(path: Path, rows: int) -> None:
    rng = random.Random(3)
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(HEADER + "\r\n")
        writer = csv.writer(handle, lineterminator="\r\n")
        for i in range(rows):
            writer.writerow(_row(i, rng))


def _child_import(db: Path, csv_path: Path) -> dict[str, float]:
    from rwgate.sources.snapshot.source import import_files

    started = time.perf_counter()
    result = import_files(db, [csv_path])
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "rows": result.rows, "skipped": len(result.skipped)}


def _child_lookup(db: Path, rows: int, hits: int) -> dict[str, float]:
    from rwgate.sources.snapshot.source import Snapshot

    step = max(2, rows // hits)
    listed = [work_doi(i) for i in range(0, rows, step)][:hits]
    dois = listed + [f"10.9999/absent.{i}" for i in range(rows - len(listed))]
    times = []
    with Snapshot(db) as snap:
        for _ in range(3):  # the machine is shared: the first call and the best of three
            started = time.perf_counter()
            answers = snap.query_all(dois)
            times.append(time.perf_counter() - started)
            found = sum(a.outcome == "found" for a in answers.values())
            notices = sum(len(a.notices) for a in answers.values())
            del answers  # so that the peak RSS is that of one call
    return {"seconds": times[0], "best": min(times), "dois": len(dois), "found": found,
            "notices": notices}  # fmt: skip


def _in_child(mode: str, *args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, db, *extra = args.child
        if mode == "import":
            figures = _child_import(Path(db), Path(extra[0]))
        else:
            figures = _child_lookup(Path(db), int(extra[0]), int(extra[1]))
        figures["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(figures))
        return
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, db = Path(tmp) / "bench.csv", Path(tmp) / "snapshot.sqlite3"
        generate(csv_path, args.rows)
        size_mb = csv_path.stat().st_size / 1e6
        imp = _in_child("import", str(db), str(csv_path))
        looks = [
            _in_child("lookup", str(db), str(args.rows), str(hits))
            for hits in (args.rows // 2, args.rows // 100)
        ]
        db_mb = db.stat().st_size / 1e6
    print(f"synthetic CSV: {args.rows} rows, {size_mb:.1f} MB; snapshot file {db_mb:.1f} MB")
    print(
        f"import:   {imp['seconds']:.2f} s wall, peak RSS {imp['max_rss_mb']:.0f} MB "
        f"({imp['rows']:.0f} rows, {imp['skipped']:.0f} skipped)  [target < 15 s, < 300 MB]"
    )
    for look in looks:
        print(
            f"look-ups: {look['seconds']:.3f} s (best of 3: {look['best']:.3f} s) for "
            f"{look['dois']:.0f} DOIs in one query_all "
            f"({look['found']:.0f} listed, {look['notices']:.0f} notices), "
            f"peak RSS {look['max_rss_mb']:.0f} MB  [target < 1 s]"
        )


if __name__ == "__main__":
    main()
