"""What a person reads after `make demo`, pinned (issue 33): the terminal text and the visible
text of the HTML report. A change of wording is a deliberate change of a golden file under
tests/fixtures/golden/: rewrite them with ``RWGATE_UPDATE_GOLDEN=1`` and read the diff.

Dates that change (today's, the snapshot's age, when git says an entry was added) and the paths of
this checkout are normalised before comparing; every other word is pinned.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
UPDATE = os.environ.get("RWGATE_UPDATE_GOLDEN") == "1"
# The statuses and notice types a sentence must never show in snake_case.
SNAKE = re.compile(
    r"\b(partially_retracted|expression_of_concern|unknown_notice|unknown_doi|invalid_doi|no_doi"
    r"|missing_entry|doi_mismatch|partial_retraction|retract_and_replace|new_version|new_edition)\b"
)


def normalise(text: str, out: Path) -> str:
    """The demo's text without what changes from run to run or checkout to checkout (a Crossref
    record file's data date is its mtime: the day of the checkout, not of the run)."""
    for record in (ROOT / "examples" / "data" / "crossref").glob("*.json"):
        day = dt.datetime.fromtimestamp(record.stat().st_mtime, dt.UTC).date().isoformat()
        said = f"{record.name}, data as of "
        text = text.replace(said + day, said + "<checkout date>")
    text = text.replace(str(out), "<out>").replace(str(BIN), "<bin>").replace(str(ROOT), "<repo>")
    text = re.sub(r"/\S*?rwgate-demo-[^/\s]+", "<tmp>", text)
    text = re.sub(r"\$ \S*pandoc(\.exe)? ", "$ pandoc ", text)
    for day in {dt.date.today(), dt.datetime.now(dt.UTC).date()}:
        text = text.replace(day.isoformat(), "<today>")
    text = re.sub(r"\b\d+ days? old\b", "<n> days old", text)
    text = re.sub(
        r"added to the bibliography (\d{4}-\d\d-\d\d|<today>|not committed yet)"
        r"(, commit [0-9a-f]{12})?",
        "added to the bibliography <date>, commit <commit>",
        text,
    )
    return re.sub(r"generated <today> \d\d:\d\d UTC", "generated <today> <time>", text)


def compare(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path}: no golden file; run with RWGATE_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name}: wording changed (see the diff)"


class _Visible(HTMLParser):
    """The page's text as a reader sees it: a line per block, cells apart; no head or style."""

    BLOCK = frozenset({"h1", "h2", "p", "li", "tr", "div", "br", "ul", "table"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self._hidden += tag in ("head", "style")
        if tag in self.BLOCK:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("head", "style")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = (" ".join(line.split()).strip(" |") for line in "".join(self.parts).splitlines())
        return "\n".join(line for line in lines if line) + "\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`make demo`, as `make demo` runs it (its outputs in a tmp folder)."""
    out = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
    env.update(RWGATE_DEMO_OUT=str(out), NO_COLOR="1")
    # The demo imports the sample into the invoking user's snapshot: here, one of the test's own.
    env.update(RWGATE_SNAPSHOT=str(out / "snapshot.sqlite3"), RWGATE_CACHE_DIR=str(out / "cache"))
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    return done, out


def _halves(done: subprocess.CompletedProcess[str], out: Path) -> tuple[str, str]:
    """The check (import, `rwgate check`) and the paper's build (pandoc with rw-filter)."""
    text = normalise(done.stdout, out)
    cut = text.index("\n$ pandoc ") + 1
    return text[:cut], text[cut:]


def test_demo_check_terminal_text_is_pinned(
    demo: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = demo
    check, _ = _halves(done, out)
    compare("demo-check.txt", check)
    # Issue 33: nothing accusing about the corrected work, the counts are the FLAG lines.
    liu = [line for line in check.splitlines() if "liu2015" in line or "correction of" in line]
    assert liu and not any("error" in line or "update" in line for line in liu)
    flags = check.count("  FLAG  ")
    assert f": 0 failed, {flags} annotated, " in check
    assert "1 with a correction (no action under this policy)" in check
    assert not SNAKE.search(check.replace("rwgate-demo", ""))


def test_demo_paper_build_text_is_pinned(
    demo: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = demo
    check, build = _halves(done, out)
    assert done.returncode == 0, build
    compare("demo-paper.txt", build)
    assert not SNAKE.search(build)
    # The notes in the rendered paper are the works the check annotated (liu2015 gets none).
    paper = (out / "paper.html").read_text(encoding="utf-8")
    notes = re.findall(r'class="rw-notice rw-([a-z_]+)"', paper)
    annotated = int(re.search(r": 0 failed, (\d+) annotated, ", check).group(1))  # type: ignore[union-attr]
    assert len(notes) == annotated == 6 and "corrected" not in notes


def test_report_html_visible_text_is_pinned(
    demo: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = demo
    page = _Visible()
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    text = normalise(page.text(), out)
    compare("report-html.txt", text)
    assert not SNAKE.search(text.replace("rwgate-demo", ""))
    liu = text[text.index("corrected | liu2015") : text.index("clean | watson1953")]
    assert "Error in Data" in liu  # Retraction Watch's reasons for the correction, as given
    assert "in error" not in liu and "update" not in liu
    assert liu.endswith("after the correction of 2015-06-23\n")
    assert "0 failed, 6 annotated, 0 warned, 0 unverified, 1 with a correction" in text


def test_first_offline_check_without_a_snapshot_says_how_to_get_one(tmp_path: Path) -> None:
    """Issue 33: "offline and not in cache" on every work, and nothing said of the way out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
    env.update(
        RWGATE_SNAPSHOT=str(tmp_path / "none.sqlite3"),
        RWGATE_CACHE_DIR=str(tmp_path / "cache"),
        RWGATE_OFFLINE="1",
        NO_COLOR="1",
    )
    done = subprocess.run(
        [str(BIN / "rwgate"), "check", "--no-history", "examples/paper.md"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    hint = (
        f"rwgate: warning: offline, and no Retraction Watch snapshot at {tmp_path}/none.sqlite3: "
        "10 works not in the cache could not be checked; `rwgate data update` downloads the "
        "registry once, then checks run offline"
    )
    assert done.stdout.count(hint) == 1, done.stdout
    assert done.stdout.count("rwgate data update") == 1
