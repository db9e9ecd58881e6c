"""Issue 46 item 6: Quarto and R Markdown from the installed package, with no clone.

A wheel is built from a copy of the source (``pip wheel``) and installed into a fresh venv (its
dependencies are the suite's own, seen through a ``.pth``; the suite's editable rwgate is left
out). Then, from that venv alone: ``rwgate quarto install`` writes the extension that runs under
pandoc as quarto-cli drives it, and the README's R Markdown recipe (the filter from ``rwgate
lua-filter``) renders through real R with each note in its entry. Before, the wheel held neither
file and neither command existed; ``filters/rwgate.lua`` copied alone ended in a Lua traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pandoc_build import FIXTURES, FLAGGED_KEYS, pandoc
from test_quarto_extension import _entries as html_entries
from test_quarto_extension import _render as quarto_render

from conftest import require_tool
from fakes.crossref import FakeCrossref

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ("pyproject.toml", "README.md", "LICENSE", "src", "_extensions")
NOTICE = re.compile(r"(Retracted|Withdrawn) 20\d\d")


def _copy_source(dest: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, dest / name, symlinks=True, ignore=skip)
        else:
            shutil.copy(path, dest / name)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the built wheel; the suite's dependencies seen through a .pth."""
    base = tmp_path_factory.mktemp("wheel")
    (base / "src-copy").mkdir()
    _copy_source(base / "src-copy")
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(base / "src-copy")],
        check=True,
        capture_output=True,
    )
    (wheel,) = (base / "dist").glob("rwgate-*.whl")
    fresh = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    deps = base / "deps"  # the suite's site-packages without its editable rwgate
    deps.mkdir()
    for item in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not item.name.startswith(("rwgate", "__editable__", "_rwgate")):
            (deps / item.name).symlink_to(item)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "suite-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return fresh


def _env(venv: Path, **more: str) -> dict[str, str]:
    path = os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"])
    return {**os.environ, "PATH": path, **more}


def _run(venv: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "rwgate"), *args],
        cwd=cwd,
        env=_env(venv),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_wheel_carries_the_lua_filter_and_the_extension(venv: Path) -> None:
    proc = _run(venv, "lua-filter")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.is_file() and str(path).startswith(str(venv)), path  # the wheel's, not a clone's
    assert path.read_bytes() == (ROOT / "_extensions" / "rwgate" / "rwgate.lua").read_bytes()
    yml = path.parent / "_extension.yml"
    assert yml.read_bytes() == (ROOT / "_extensions" / "rwgate" / "_extension.yml").read_bytes()


def test_quarto_install_writes_an_extension_that_runs_as_quarto_runs_it(
    venv: Path, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    proc = _run(venv, "quarto", "install", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    installed = tmp_path / "_extensions" / "rwgate"
    assert sorted(p.name for p in installed.iterdir()) == ["_extension.yml", "rwgate.lua"]
    built = quarto_render(
        tmp_path,
        fake_crossref,
        "paper.html",
        RWGATE_TEST_EXTENSION=str(installed),
        PATH=_env(venv)["PATH"],
    )
    assert built.returncode == 0, built.stderr
    entries = html_entries((tmp_path / "paper.html").read_text(encoding="utf-8"))
    assert "rw-notice rw-retracted" in entries["wakefield1998"]
    assert "rw-notice rw-retracted" in entries["lacour2014"]
    assert "rw-notice" not in entries["kucsko2013"]
    again = _run(venv, "quarto", "install", str(tmp_path / "nowhere"))
    assert again.returncode == 2 and again.stderr.count("\n") == 1, again.stderr


RMD = """---
title: "Vaccines and the literature"
bibliography: refs.bib
output:
  html_document:
    pandoc_args: !expr c("--lua-filter", system("rwgate lua-filter", intern = TRUE))
---

The claim [@wakefield1998] was retracted, as was the survey experiment of
@lacour2014. A Cochrane review [@njei2011] was withdrawn. Thermometry
[@kucsko2013; @watson1953] is fine.

# References
"""


def test_the_readme_r_markdown_recipe_with_the_installed_filter(
    venv: Path, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    require_tool("Rscript")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pandoc_args: !expr c("--lua-filter", system("rwgate lua-filter", intern = TRUE))' in (
        readme
    )
    shutil.copy(FIXTURES / "refs.bib", tmp_path / "refs.bib")
    (tmp_path / "paper.Rmd").write_text(RMD, encoding="utf-8")
    env = _env(venv, RWGATE_CROSSREF_URL=fake_crossref.url, HOME=str(tmp_path))
    env.pop("RSTUDIO_PANDOC", None)  # Debian's /usr/bin/pandoc, as r-cran-rmarkdown brings it
    proc = subprocess.run(
        ["Rscript", "-e", 'rmarkdown::render("paper.Rmd", quiet = TRUE)'],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    entries = html_entries((tmp_path / "paper.html").read_text(encoding="utf-8"))
    for key in FLAGGED_KEYS:
        assert NOTICE.search(entries[key]), (key, entries[key])
    for key in ("kucsko2013", "watson1953"):
        assert not NOTICE.search(entries[key]), (key, entries[key])


def test_the_plain_filter_copied_alone_says_what_is_missing(tmp_path: Path) -> None:
    """No clone beside it and no rwgate on PATH: one line, exit 2, no Lua traceback."""
    project = tmp_path / "a" / "b"
    project.mkdir(parents=True)
    shutil.copy(ROOT / "filters" / "rwgate.lua", project / "rwgate.lua")
    (project / "x.md").write_text("Hello.\n", encoding="utf-8")
    proc = subprocess.run(
        [pandoc(), "x.md", "--lua-filter", "rwgate.lua", "-t", "plain"],
        cwd=project,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("rwgate: "), proc.stderr
    assert "rwgate lua-filter" in proc.stderr and "traceback" not in proc.stderr.lower()


def test_the_plain_filter_copied_alone_runs_the_installed_one(venv: Path, tmp_path: Path) -> None:
    shutil.copy(ROOT / "filters" / "rwgate.lua", tmp_path / "rwgate.lua")
    (tmp_path / "x.md").write_text("Hello.\n", encoding="utf-8")
    proc = subprocess.run(
        [pandoc(), "x.md", "--lua-filter", "rwgate.lua", "-t", "plain"],
        cwd=tmp_path,
        env=_env(venv),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello.\n"
