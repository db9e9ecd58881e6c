"""The Lua filter's memo miss (issue 15): ``rw-filter --verdicts`` answers with the notices and the
Lua filter places them itself, giving the very document rw-filter gives.

Differential: each document is built twice with real pandoc, the JSON filter after ``--citeproc``
and the Lua filter after ``--citeproc``, with the memos off so both judge; the outputs must be the
same bytes. A wrapper around rw-filter records what it was asked and what it answered, so each
case also shows which side placed the notices.
"""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from pandoc_build import FIXTURES, ROOT, copy_fixtures, pandoc, rw_filter, write_doc

from fakes.crossref import FakeCrossref

LUA = str(ROOT / "filters" / "rwgate.lua")
SECTIONS = str(FIXTURES / "filters" / "section-bibliographies.lua")
SECTIONED = """
# First part

The claim [@wakefield1998] was retracted. Thermometry [@kucsko2013] is fine.

# Second part

Again [@wakefield1998], and the withdrawn review [@njei2011].
"""

# name: (pandoc arguments before the filter, output, who places: "lua" or "rw-filter")
CASES = {
    "author-date": ([], "out.html", "lua"),
    "numeric": (["--csl", "numeric.csl"], "out.html", "lua"),
    "note": (["--csl", "note.csl"], "out.html", "lua"),
    "docx": ([], "out.docx", "lua"),
    "latex": ([], "out.tex", "lua"),
    "sections": (["--lua-filter", SECTIONS], "out.html", "lua"),
    "jats": (["-t", "jats"], "out.xml", "rw-filter"),
    "inline": ([], "out.html", "rw-filter"),
}


def _wrapper(folder: Path) -> Path:
    script = folder / "recording-rw-filter"
    script.write_text(
        "#!/bin/bash\nset -o pipefail\n"
        f'printf "%s\\n" "$*" >> "{folder}/asked"\n'
        f'"{rw_filter()}" "$@" | tee "{folder}/answer"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _build(cwd: Path, args: list[str], output: str, env: dict[str, str]) -> bytes:
    proc = subprocess.run(
        [pandoc(), "paper.md", "--wrap=none", *args, "-o", output],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    path = cwd / output
    if output.endswith(".docx"):  # a zip whose members carry the time they were written
        with zipfile.ZipFile(path) as docx:
            data = docx.read("word/document.xml")
    else:
        data = path.read_bytes()
    path.unlink()
    return data + b"\n--stderr--\n" + proc.stderr.encode()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_lua_filter_places_what_rw_filter_would(
    tmp_path: Path, fake_crossref: FakeCrossref, case: str
) -> None:
    args, output, placer = CASES[case]
    work = tmp_path / "doc"
    work.mkdir()
    copy_fixtures(work)
    copy_fixtures(work, "note.csl")
    if case == "sections":
        write_doc(work / "paper.md", "bibliography: refs.bib", SECTIONED)
    if case == "inline":  # a notice after every citation too: rw-filter places
        text = (work / "paper.md").read_text(encoding="utf-8")
        (work / "paper.md").write_text(
            text.replace("---\n\n", "rwgate: {inline: true}\n---\n\n", 1)
        )
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_CACHE": "1"}
    cite = [] if case == "sections" else ["--citeproc"]  # the section filter runs citeproc
    expected = _build(work, [*args, *cite, "--filter", rw_filter()], output, env)
    got = _build(
        work,
        [*args, *cite, "--lua-filter", LUA],
        output,
        {**env, "RWGATE_FILTER": str(_wrapper(tmp_path))},
    )
    assert got == expected
    assert b"Retracted 2010" in got
    assert (tmp_path / "asked").read_text().split("\n")[0].split()[1:] == ["--verdicts"]
    answer = (tmp_path / "answer").read_bytes()
    assert answer.startswith(b'{"layout":' if placer == "lua" else b'{"pandoc-api-version":')


def test_a_verdict_answer_names_the_link_rw_filter_gives(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """A notice DOI with characters a URL cannot hold links where rw-filter links it."""
    copy_fixtures(tmp_path)
    sici = "10.1002/(SICI)1097-4636(199912)48:6<rw>3.0.CO;2-#"
    fake_crossref.add_synthetic(
        "10.5555/odd.notice.target",
        title="A work whose notice has a SICI DOI",
        updated_by=[
            {
                "DOI": sici,
                "type": "retraction",
                "source": "retraction-watch",
                "updated": {"date-parts": [[2021, 3, 1]]},
            }
        ],
    )
    with (tmp_path / "refs.bib").open("a", encoding="utf-8") as bib:
        bib.write(
            "\n@article{odd2020, title={Odd}, year={2020}, doi={10.5555/odd.notice.target}}\n"
        )
    text = (tmp_path / "paper.md").read_text(encoding="utf-8")
    (tmp_path / "paper.md").write_text(text + "\nAnd [@odd2020].\n", encoding="utf-8")
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_CACHE": "1"}
    expected = _build(tmp_path, ["--citeproc", "--filter", rw_filter()], "out.html", env)
    got = _build(
        tmp_path,
        ["--citeproc", "--lua-filter", LUA],
        "out.html",
        {**env, "RWGATE_FILTER": rw_filter()},
    )
    assert got == expected
    assert b'2-%23"' in got  # the href escaped as rw-filter escapes it (not a fragment)


@pytest.mark.parametrize("order", ["first", "after"])
@pytest.mark.parametrize("case", ["author-date", "numeric", "note", "docx", "latex"])
def test_a_replayed_build_gives_what_rw_filter_gives(
    tmp_path: Path, fake_crossref: FakeCrossref, case: str, order: str
) -> None:
    """A first build (memo miss: notices placed from rw-filter's answer) and a second (memo hit:
    placed from the memo) both give the bytes of ``--citeproc --filter rw-filter``, and only the
    first starts rw-filter. ``first``: the Lua filter before any ``--citeproc`` renders the
    bibliography itself and turns the citations into spans for a later citeproc (in LaTeX a span
    is a ``{...}`` group, so there the two builds are compared with each other)."""
    args, output, _ = CASES[case]
    work = tmp_path / "doc"
    work.mkdir()
    copy_fixtures(work)
    copy_fixtures(work, "note.csl")
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_NO_CACHE": "1"}
    expected = _build(work, [*args, "--citeproc", "--filter", rw_filter()], output, env)
    lua_env = {
        "RWGATE_CROSSREF_URL": fake_crossref.url,
        "RWGATE_FILTER": str(_wrapper(tmp_path)),
        "RWGATE_CACHE_DIR": str(tmp_path / "cache"),
    }
    lua = (
        [*args, "--lua-filter", LUA]
        if order == "first"
        else [*args, "--citeproc", "--lua-filter", LUA]
    )
    miss = _build(work, lua, output, lua_env)
    hit = _build(work, lua, output, lua_env)
    assert hit == miss and b"Retracted 2010" in hit
    if case != "latex" or order == "after":
        assert miss == expected
    assert len((tmp_path / "asked").read_text().splitlines()) == 1
