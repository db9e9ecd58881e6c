"""rw-filter in real pandoc pipelines whose other filters rename citation keys (issue 15).

The real Lua filters run unmodified (tests/fixtures/pandoc/filters, provenance in the README
there): pandoc-ext/section-bibliographies renames each section's citations and entries to
``KEY--N`` and runs citeproc per section; pandoc-ext/cito reads ``@cites:KEY``. Before, rw-filter
called every renamed key ``missing_entry`` (a warning): no notice, and strict passed.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from pandoc_build import FIXTURES, build, copy_fixtures, write_doc

from fakes.crossref import FakeCrossref

FILTERS = FIXTURES / "filters"
SECTIONS = """
# First part

The claim [@wakefield1998] was retracted. Thermometry [@kucsko2013] is fine.

# Second part

Again [@wakefield1998], and the withdrawn review [@njei2011].
"""


def _env(fake: FakeCrossref) -> dict[str, str]:
    return {"RWGATE_CROSSREF_URL": fake.url}


def _sections_doc(tmp_path: Path, policy: str = "default") -> None:
    copy_fixtures(tmp_path, "refs.bib")
    write_doc(
        tmp_path / "paper.md", f"bibliography: refs.bib\nrwgate: {{policy: {policy}}}", SECTIONS
    )


def test_section_bibliographies_before_the_filter_annotate_every_section(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    _sections_doc(tmp_path)
    lua = ["--lua-filter", str(FILTERS / "section-bibliographies.lua")]
    out = build(tmp_path, lua, "out.html", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    entries = dict(
        re.findall(r'<div id="ref-([^"]+)" class="csl-entry"[^>]*>(.*?)\n</div>', out.text, re.S)
    )
    assert set(entries) == {"wakefield1998--1", "kucsko2013--1", "wakefield1998--2", "njei2011--2"}
    assert "rw-notice rw-retracted" in entries["wakefield1998--1"]
    assert "rw-notice rw-retracted" in entries["wakefield1998--2"]
    assert "rw-notice rw-withdrawn" in entries["njei2011--2"]
    assert "rw-notice" not in entries["kucsko2013--1"]
    assert "missing entry" not in out.stderr and "in no bibliography" not in out.stderr


def test_section_bibliographies_under_strict_stop_the_build(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    _sections_doc(tmp_path, "strict")
    lua = ["--lua-filter", str(FILTERS / "section-bibliographies.lua")]
    out = build(tmp_path, lua, "out.html", _env(fake_crossref))
    assert out.returncode != 0 and not out.output.exists()
    assert "wakefield1998" in out.stderr and "njei2011" in out.stderr


def test_section_bibliographies_after_the_filter_keep_the_notice(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """rw-filter first (before citeproc): it marks the citations; the renaming comes after."""
    _sections_doc(tmp_path)
    lua = ["--lua-filter", str(FILTERS / "section-bibliographies.lua")]
    out = build(tmp_path, lua, "out.html", _env(fake_crossref), filter_first=True)
    assert out.returncode == 0, out.stderr
    assert out.text.count("rw-marker rw-retracted") == 2 and "rw-marker rw-withdrawn" in out.text


def test_cito_prefixes_seen_by_the_filter_resolve_to_their_entries(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    body = "As claimed [@cites_as_authority:wakefield1998; @usesMethodIn:kucsko2013]."
    write_doc(tmp_path / "paper.md", "bibliography: refs.bib\nrwgate: {policy: strict}", body)
    lua = ["--lua-filter", str(FILTERS / "cito.lua"), "--citeproc"]
    out = build(tmp_path, lua, "out.html", _env(fake_crossref), filter_first=True)
    assert out.returncode != 0 and not out.output.exists()
    assert "wakefield1998" in out.stderr and "retracted" in out.stderr
    write_doc(tmp_path / "paper.md", "bibliography: refs.bib", body)
    out = build(tmp_path, lua, "out.html", _env(fake_crossref), filter_first=True)
    assert out.returncode == 0, out.stderr
    assert out.text.count("rw-marker rw-retracted") == 1


def test_an_unresolvable_key_fails_strict_but_cross_references_do_not(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    body = "See @fig-plot, @tbl-data, @sec:intro and [@kucsko2013]."
    write_doc(tmp_path / "paper.md", "bibliography: refs.bib\nrwgate: {policy: strict}", body)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    ours = [line for line in out.stderr.splitlines() if line.startswith("rw-filter")]
    assert not any("fig-plot" in line or "sec:intro" in line for line in ours), ours
    write_doc(
        tmp_path / "paper.md",
        "bibliography: refs.bib\nrwgate: {policy: strict}",
        "[@nosuchkey2020]",
    )
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref))
    assert out.returncode != 0 and "nosuchkey2020" in out.stderr


def test_manubot_rootstock_keys_in_a_defaults_file_pipeline(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """Real Manubot content (rootstock) through a defaults file shaped like rootstock's
    (citeproc inside ``filters:``, rw-filter after it): ``@doi:`` keys are judged by their DOI,
    ``@fig:``/``@tbl:``/``@eq:`` are cross-references, and a key that carries another identifier
    (``@isbn:``, ``@pmc:``, ``@wikidata:``) is an entry rwgate cannot look up: no DOI (a warning by
    default; strict fails)."""
    import shutil

    from pandoc_build import pandoc, rw_filter

    fake_crossref.add_synthetic("10.7554/elife.32822", title="Sci-Hub provides access")
    fake_crossref.add_synthetic("10.1371/journal.pcbi.1007128", title="Open collaborative writing")
    shutil.copy(FIXTURES / "manubot" / "content.md", tmp_path / "content.md")
    common = (FIXTURES / "manubot" / "common.yaml").read_text(encoding="utf-8")
    assert "- citeproc" in common  # rootstock's own pipeline shape
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text(
        f"from: markdown\ninput-file: content.md\nfilters:\n- citeproc\n- {rw_filter()}\n"
        "wrap: preserve\nmetadata:\n  link-citations: true\n",
        encoding="utf-8",
    )

    def render(policy: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_POLICY": policy}
        return subprocess.run(
            [pandoc(), "-d", str(defaults), "-o", "out.html"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    out = render("default")
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert html.count("rw-marker rw-retracted") == 1  # after the @doi: citation of Wakefield
    ours = "\n".join(line for line in out.stderr.splitlines() if line.startswith("rw-filter"))
    assert "fig:square-image" not in ours and "eq:long-equation" not in ours
    assert "have no DOI and could not be checked" in ours and "isbn:9780262517638" in ours
    assert "doi:10.7554/eLife.32822" not in ours  # judged by its DOI: clean, nothing to say
    (tmp_path / "out.html").unlink()
    strict = render("strict")
    assert strict.returncode != 0 and not (tmp_path / "out.html").exists()
    assert "rw-filter: ERROR: doi:10.1016/S0140-6736(97)11096-0: retracted" in strict.stderr


def test_a_multi_file_manuscript_in_a_note_style(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """Chapters given as several input files (pandoc joins them, one bibliography for all) and a
    note style (citations in footnotes): the entries are annotated all the same."""
    from pandoc_build import pandoc, rw_filter

    copy_fixtures(tmp_path, "refs.bib", "note.csl")
    (tmp_path / "00-meta.md").write_text(
        "---\nbibliography: refs.bib\ncsl: note.csl\n---\n", "utf-8"
    )
    (tmp_path / "01-intro.md").write_text("# Introduction\n\nA claim [@wakefield1998].\n", "utf-8")
    (tmp_path / "02-methods.md").write_text(
        "# Methods\n\nSurvey [@lacour2014; @kucsko2013].\n", "utf-8"
    )
    env = {**os.environ, "RWGATE_CROSSREF_URL": fake_crossref.url}
    cmd = [pandoc(), "00-meta.md", "01-intro.md", "02-methods.md", "--citeproc",
           "--filter", rw_filter(), "-o", "thesis.html"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "thesis.html").read_text(encoding="utf-8")
    assert 'class="footnote-ref"' in html  # a note style
    entries = dict(
        re.findall(r'<div id="ref-([^"]+)" class="csl-entry"[^>]*>(.*?)\n</div>', html, re.S)
    )
    assert set(entries) == {"wakefield1998", "lacour2014", "kucsko2013"}
    assert "rw-notice rw-retracted" in entries["wakefield1998"]
    assert "rw-notice rw-retracted" in entries["lacour2014"]
    assert "rw-notice" not in entries["kucsko2013"]
