"""The page `rwgate screen` writes, as an integrity officer reads it in Chromium (issue 37).

Each flagged work with its title, journal, a link to it and to its notice, its status badge in
check's colours; a per-year chart with every year on its axis and both axes named; the data's
date and whether it is a full export, in words; no file path in the footer. At 1280, 800 and 500
px the page does not scroll sideways, no text cell is narrower than 40 px and nothing overflows
its box (a long DOI wraps at ``/``). Screenshots are kept in the test's folder, and in ``docs/``
(``docs/screen-<width>.png``) when ``UPDATE_DOCS_SCREENSHOTS=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.frontends.screen.run import ScreenOptions, screen
from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
SAMPLE = ROOT / "examples" / "screen"
LONG = "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y/a-very-long-suffix-0123456789"
TITLE = "A deliberately long title of a retracted work " * 3


def _crossref_body(doi: str) -> str:
    update = {"DOI": f"{doi}.notice", "type": "retraction", "source": "publisher",
              "label": "Retraction", "updated": {"date-parts": [[2019, 5, 2]]}}  # fmt: skip
    message = {"DOI": doi, "title": [TITLE], "container-title": ["Journal of Long Names"],
               "issued": {"date-parts": [[2001]]}, "updated-by": [update]}  # fmt: skip
    return json.dumps({"status": "ok", "message-type": "work", "message": message})


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("screen-html")
    body = folder / "long.json"
    body.write_text(_crossref_body(LONG), encoding="utf-8")
    snap = folder / "snapshot.sqlite"
    assert not import_files(snap, [RW, body]).failed  # an extract: not a full export
    table = folder / "refs.csv"
    rows = [f"p{i},{LONG},{1995 + i % 3 * 12}" for i in range(4)]  # 1995, 2007, 2019: gaps
    table.write_text("citing,doi,year\n" + "\n".join(rows) + "\n", encoding="utf-8")
    opts = ScreenOptions(
        [str(SAMPLE / "rw-cited-sample.csv"), str(table)], folder / "out", snap, progress=False
    )
    return screen(opts).outputs["html"]


def test_the_page_names_what_an_officer_acts_on(page_path: Path) -> None:
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    summary = json.loads(page_path.with_name("summary.json").read_text(encoding="utf-8"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            text = page.inner_text("body")
            assert "as of 2025-11-24" in text and "not a full export" in text
            row = page.locator("#flagged tbody tr", has_text="Journal of Long Names")
            assert TITLE.strip() in row.inner_text() and "(2001)" in row.inner_text()
            badge = row.locator(".badge.sev-retracted")
            assert badge.inner_text() == "retracted"
            # check's colours: retracted red (on main amber, like an expression of concern)
            colour = badge.evaluate("b => getComputedStyle(b).backgroundColor")
            assert colour == "rgb(163, 32, 26)"
            assert "`" not in text  # a command in a warning is code, not Markdown backticks
            links = [a.get_attribute("href") for a in row.locator("a").all()]
            assert any(h and h.startswith("https://doi.org/10.1002/") for h in links)
            assert any(h and h.endswith(".notice") for h in links)
            rows = page.locator("#flagged tbody tr").all()
            assert len(rows) == summary["flagged_works"] and all(
                r.locator("a[href^='https://doi.org/']").count() >= 1 for r in rows
            )
            # Every year from the first to the last citing year, each labelled; axes named.
            chart = page.locator("svg.chart").nth(1)
            labels = [t.text_content() or "" for t in chart.locator("text").all()]
            years = summary["flagged_by_citing_year"]
            first, last = years[0][0], years[-1][0]
            assert [str(y) for y in range(first, last + 1)] == [
                t for t in labels if t.isdigit() and len(t) == 4
            ]
            assert "year the citing work appeared" in labels and "flagged citations" in labels
            footer = page.inner_text("footer")
            assert "/" not in footer and str(page_path.parent) not in footer
        finally:
            browser.close()


_MEASURE = """() => {
  const vw = document.documentElement.clientWidth;
  const out = {scroll: document.documentElement.scrollWidth, vw, narrow: [], over: []};
  for (const el of document.querySelectorAll('td, th')) {
    const r = el.getBoundingClientRect();
    if (el.innerText.trim() && r.width > 0 && r.width < 40)
      out.narrow.push([el.innerText, r.width]);
  }
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 0.5)
      out.over.push([el.tagName, el.innerText?.slice(0, 40), r.right]);
  }
  // A DOI wraps only after a '/' or a '.', never in the middle of a number.
  for (const a of document.querySelectorAll('a.doi')) {
    const range = document.createRange();
    let top = null, prev = '';
    const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const r = range.getClientRects()[0];
        if (!r) continue;
        if (top !== null && r.top > top + 2 && !'/.:'.includes(prev))
          out.over.push(['doi break', a.innerText, prev + '|' + node.data[i]]);
        top = r.top; prev = node.data[i];
      }
    }
  }
  for (const b of document.querySelectorAll('.badge')) {
    const c = b.closest('td').getBoundingClientRect(), r = b.getBoundingClientRect();
    if (r.left < c.left - 0.5 || r.right > c.right + 0.5)
      out.over.push(['badge', b.innerText, r.right]);
  }
  return out;
}"""


@pytest.mark.parametrize("width", [1280, 800, 500])
def test_the_layout_holds(page_path: Path, width: int, tmp_path: Path) -> None:
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    shot = tmp_path / f"screen-{width}.png"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(page_path.as_uri())
            got = page.evaluate(_MEASURE)
            assert got["scroll"] <= got["vw"], got
            assert not got["narrow"], got["narrow"]
            assert not got["over"], got["over"]
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(shot, ROOT / "docs" / shot.name)


def test_the_badges_are_in_check_s_colours() -> None:
    """One severity palette for every page rwgate writes: the screen's badge colours are those of
    check's report, read from its stylesheet (render/ owns it; the screen keeps a copy)."""
    import re

    from rwgate.frontends.screen.report import SEVERITY_COLOURS

    css = (ROOT / "src" / "rwgate" / "render" / "templates" / "report.html.j2").read_text()
    for sev, (bg, fg, _) in SEVERITY_COLOURS.items():
        rule = re.search(r"\.badge\.sev-" + sev + r" \{([^}]*)\}", css)
        assert rule, sev
        assert f"background: {bg};" in rule.group(1) and f"color: {fg};" in rule.group(1), sev
