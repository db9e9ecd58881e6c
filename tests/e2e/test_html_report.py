"""`rwgate check --format html`, opened in a real headless Chromium (Debian's, driven by
Playwright): the page renders, the flagged rows are there, the filter works without a script, and
a hostile title is inert text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from example_data import import_sample

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RWGATE = str(Path(sys.executable).parent / "rwgate")
HOSTILE = (
    '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    "\u202eevil\u202c [link](javascript:alert(1))"
)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    """The bundled example's bibliography plus one entry with a hostile title, judged offline."""
    env = dict(os.environ, RWGATE_SNAPSHOT=str(tmp_path / "s.sqlite3"), RWGATE_OFFLINE="1")
    import_sample(env)
    bib = tmp_path / "refs.bib"
    hostile = "@article{hostile2020,\n  title = {" + HOSTILE + "},\n  year = {2020},\n}\n"
    bib.write_text((EXAMPLES / "refs.bib").read_text(encoding="utf-8") + hostile, "utf-8")
    out = tmp_path / "report.html"
    done = subprocess.run(
        [RWGATE, "check", str(bib), "--policy", "strict", "--format", "html", "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "gate FAILED" in done.stderr  # the human text beside the page
    return out


def test_report_renders_in_chromium(report: Path) -> None:
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(report.as_uri())
            assert page.title() == "rwgate report: gate FAILED"
            assert page.inner_text("#verdict") == "rwgate: gate FAILED"
            rows = page.locator("tr.row")
            assert rows.count() == 11
            visible = {r.get_attribute("data-key") for r in rows.all() if r.is_visible()}
            # Flagged by default: the notices in force, the no-DOI entry; not the clean works.
            assert {"wakefield1998", "lacour2014", "yu2020", "hostile2020"} <= visible
            assert "watson1953" not in visible
            wake = page.locator('tr[data-key="wakefield1998"]')
            assert wake.locator(".badge.fail").inner_text() == "retracted"
            link = wake.locator('a[href="https://doi.org/10.1016/s0140-6736%2810%2960175-4"]')
            assert link.count() == 1
            assert "Falsification/Fabrication of Data" in wake.inner_text()
            page.click("label[for=show-all]")
            assert page.locator('tr[data-key="watson1953"]').is_visible()
            # The hostile title is text: no element it names exists, nothing ran, no bidi control.
            title = page.locator('tr[data-key="hostile2020"] .title').inner_text()
            assert "<script>" in title and "onerror" in title and "\u202e" not in title
            assert (
                page.locator("tr.row img, tr.row script, tr.row a[href^=javascript]").count() == 0
            )
            assert page.title() != "pwned" and not errors
            page.set_viewport_size({"width": 1280, "height": 900})
            page.screenshot(path=str(report.with_suffix(".png")))
        finally:
            browser.close()
    assert report.with_suffix(".png").stat().st_size > 10_000


def test_page_is_self_contained_and_forbids_scripts(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    assert "default-src 'none'" in html
    assert "<script" not in html.replace("&lt;script", "")
    assert "src=" not in html.replace("src=x", "")  # no external resource (the hostile one is text)
    assert "&lt;img src=x" in html


@pytest.mark.parametrize("width", [1280, 800])
def test_status_badges_stay_inside_their_cells(report: Path, width: int) -> None:
    """Issue 33: at 1280 px the ``expression of concern`` badge ran over the key beside it
    ("expression of conczhang2014"). Each badge's box must lie inside its cell's, at common
    widths; the screenshot is kept beside the report (the test's tmp folder) as an artefact."""
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(report.as_uri())
            page.click("label[for=show-all]")
            badges = page.locator("tr.row td:first-child .badge:not(.new)")
            assert badges.count() == 11
            labels = {b.inner_text() for b in badges.all()}
            assert {"expression of concern", "retracted and replaced"} <= labels
            for badge in badges.all():
                cell = badge.locator("xpath=ancestor::td[1]")
                b, c = badge.bounding_box(), cell.bounding_box()
                assert b is not None and c is not None
                inside = (
                    b["x"] >= c["x"] - 0.5
                    and b["x"] + b["width"] <= c["x"] + c["width"] + 0.5
                    and b["y"] >= c["y"] - 0.5
                    and b["y"] + b["height"] <= c["y"] + c["height"] + 0.5
                )
                assert inside, (width, badge.inner_text(), b, c)
            shot = report.with_name(f"report-{width}.png")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
