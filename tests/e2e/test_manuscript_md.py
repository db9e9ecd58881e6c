"""Markdown manuscripts read through the real pandoc (the one pypandoc-binary ships, or PATH's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rwgate.readers.manuscripts import pandoc_ast
from rwgate.readers.manuscripts.manuscript import ManuscriptError, read_manuscript, read_markdown
from rwgate.readers.pandoc_exe import PandocError, pandoc_path, run_pandoc_json

MD = Path(__file__).parents[1] / "fixtures" / "manuscripts" / "md"
SRC = Path(__file__).parents[2] / "src"


def _pandoc_ast(text: str, *args: str) -> dict:
    """The AST real pandoc gives for a Markdown string (for the pure AST functions)."""
    proc = subprocess.run(
        [pandoc_path(), "--from=markdown", "--to=json", *args],
        input=text.encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    return json.loads(proc.stdout)


def test_pandoc_path_runs_a_real_pandoc() -> None:
    out = subprocess.run([pandoc_path(), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("pandoc")


def test_pandoc_path_falls_back_to_the_bundled_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    found = Path(pandoc_path())
    assert found.parent.name == "files" and found.parent.parent.name == "pypandoc"


def test_pandoc_not_found_is_one_clear_line(tmp_path: Path) -> None:
    # -S hides site-packages (so no pypandoc-binary) and PATH has no pandoc.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from rwgate.readers.pandoc_exe import PandocNotFound, pandoc_path\n"
        "try:\n    pandoc_path()\nexcept PandocNotFound as e:\n    print(e)\n"
    )
    env = {**os.environ, "PATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(SRC)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.stdout.startswith("pandoc not found: install pandoc")
    assert "pypandoc-binary" in out.stdout and out.stdout.count("\n") == 1


def test_pandoc_failure_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{ this is not a notebook")
    with pytest.raises(PandocError) as info:
        run_pandoc_json(bad, "ipynb")
    message = str(info.value)
    assert message.startswith(f"{bad}: pandoc failed:") and "\n" not in message


def test_keys_in_first_appearance_order_everywhere() -> None:
    doc = read_markdown(MD / "paper.md")
    # title metadata, [@a; @b], @c, [-@d], a footnote, a table cell, then nocite.
    assert doc.keys == [
        "titlecite",
        "alpha",
        "beta",
        "gamma",
        "delta",
        "footnoted",
        "intable",
        "nocited",
    ]
    assert doc.cite_all is False
    assert doc.problems == []


def test_bibliography_list_resolved_relative_to_document() -> None:
    doc = read_markdown(MD / "paper.md")
    assert doc.bibliographies == [
        str((MD / "bib" / "refs.bib").resolve()),
        str((MD / "refs.json").resolve()),
    ]


def test_inline_references_are_plain_csl_json() -> None:
    (entry,) = read_markdown(MD / "paper.md").inline_references
    assert entry["id"] == "inline2020"
    assert entry["DOI"] == "10.1000/inline.2020"
    assert entry["title"] == "An inline reference with \u201cquotes\u201d"
    assert entry["issued"] == {"date-parts": [[2020, 3, 1]]}
    assert entry["author"] == [{"family": "Smith", "given": "Jane"}]


def test_rwgate_block_as_plain_values() -> None:
    meta = read_markdown(MD / "paper.md").metadata
    assert meta == {
        "policy": "strict",
        "offline": True,
        "fail_on": ["retracted", "withdrawn"],
        "allow": [
            {
                "key": "wakefield1998",
                "reason": "discussed as a retracted paper",
                "until": "2030-01-01",
            }
        ],
    }


def test_nocite_star_cites_all_and_string_bibliography() -> None:
    doc = read_markdown(MD / "cite_all.md")
    assert doc.cite_all is True
    assert doc.keys == ["alpha"]
    assert doc.bibliographies == [str((MD / "bib" / "refs.bib").resolve())]


def test_missing_bibliography_is_an_error_problem_with_its_line() -> None:
    doc = read_markdown(MD / "missing_bib.md")
    assert doc.bibliographies == [str((MD / "bib" / "refs.bib").resolve())]
    (problem,) = doc.problems
    assert problem.severity == "error"
    assert (
        str(problem) == f"{MD / 'missing_bib.md'}:4: bibliography file not found: nowhere/gone.bib"
    )


def test_bibliography_found_through_resource_path() -> None:
    assert read_markdown(MD / "resource.md").bibliographies == []
    doc = read_markdown(MD / "resource.md", resource_path=[MD / "elsewhere"])
    assert doc.bibliographies == [str((MD / "elsewhere" / "shared.bib").resolve())]
    assert doc.problems == []


def test_bibliography_found_in_current_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MD / "elsewhere")
    doc = read_markdown(MD / "resource.md")
    assert doc.bibliographies == [str((MD / "elsewhere" / "shared.bib").resolve())]


def test_absolute_bibliography_path(tmp_path: Path) -> None:
    bib = tmp_path / "abs refs.bib"
    bib.write_text("@misc{k, title={K}}\n")
    doc_path = tmp_path / "sub" / "doc.md"
    doc_path.parent.mkdir()
    doc_path.write_text(f"---\nbibliography: '{bib}'\n---\n\n[@k]\n")
    doc = read_markdown(doc_path)
    assert doc.bibliographies == [str(bib.resolve())]
    assert doc.keys == ["k"]


def test_rwgate_metadata_that_is_not_a_map_is_reported(tmp_path: Path) -> None:
    doc_path = tmp_path / "doc.md"
    doc_path.write_text("---\nrwgate: strict\n---\n\nText.\n")
    doc = read_markdown(doc_path)
    assert doc.metadata == {}
    (problem,) = doc.problems
    assert problem.location is not None and problem.location.line == 2
    assert "'rwgate' must be a map" in problem.message


def test_other_pandoc_formats_and_dispatch() -> None:
    doc = read_manuscript(MD / "notes.rst")
    assert doc.keys == [] and doc.bibliographies == []
    assert read_manuscript(MD / "cite_all.md").cite_all is True


def test_missing_manuscript_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ManuscriptError, match=r"no-such\.md: no such file$"):
        read_manuscript(tmp_path / "no-such.md")


def test_command_line_bibliographies_are_meta_strings() -> None:
    ast = _pandoc_ast("Text [@x].\n", "--bibliography=a.bib", "--bibliography=b b.bib")
    assert ast["meta"]["bibliography"]["c"][0]["t"] == "MetaString"
    assert pandoc_ast.bibliography_paths(ast) == ["a.bib", "b b.bib"]
    single = _pandoc_ast("Text.\n", "--metadata=bibliography:only.bib")
    assert pandoc_ast.bibliography_paths(single) == ["only.bib"]


def test_nocite_keys_and_star_from_one_block() -> None:
    ast = _pandoc_ast("---\nnocite: |\n  @e, @*\n---\n\nSee [@a].\n")
    assert pandoc_ast.cited_keys(ast) == ["a", "e"]
    assert pandoc_ast.cites_all(ast) is True
    assert pandoc_ast.cites_all(_pandoc_ast("See [@a].\n")) is False


def test_meta_to_plain_shapes() -> None:
    ast = _pandoc_ast(
        "---\nm:\n  flag: false\n  n: 3\n  text: 'a *b* `c` $x$'\n  list: [1, two]\n"
        "  para: |\n    One.\n\n    Two.\n---\n"
    )
    assert pandoc_ast.meta_to_plain(ast["meta"]["m"]) == {
        "flag": False,
        "n": "3",
        "text": "a b c x",
        "list": ["1", "two"],
        "para": "One.\nTwo.",
    }
    assert pandoc_ast.rwgate_metadata(ast) == {}
    assert pandoc_ast.inline_references(ast) == []


def test_file_name_that_looks_like_an_option_is_read_not_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without "--", pandoc would read "-odd.md" as "-o dd.md" and write its output there.
    monkeypatch.chdir(tmp_path)
    Path("-odd.md").write_text("Text [@k].\n", encoding="utf-8")
    assert pandoc_ast.cited_keys(run_pandoc_json(Path("-odd.md"))) == ["k"]
    assert not Path("dd.md").exists()


def test_unknown_home_in_bibliography_is_not_found_not_a_crash(tmp_path: Path) -> None:
    doc_path = tmp_path / "doc.md"
    doc_path.write_text("---\nbibliography: '~no-such-user-rwgate/refs.bib'\n---\n\n[@k]\n")
    doc = read_markdown(doc_path)
    assert doc.bibliographies == []
    (problem,) = doc.problems
    assert problem.message == "bibliography file not found: ~no-such-user-rwgate/refs.bib"


def _outside_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET-CONTENT [@leaked]\n", encoding="utf-8")
    return secret


@pytest.mark.parametrize(
    ("name", "directive", "line"),
    [("paper.rst", ".. include:: {}", 4), ("paper.org", '#+INCLUDE: "{}"', 3)],
)
def test_include_directives_are_not_followed_and_are_reported(
    tmp_path: Path, name: str, directive: str, line: int
) -> None:
    secret = _outside_secret(tmp_path)
    doc_path = tmp_path / name
    header = "Title\n=====\n\n" if name.endswith(".rst") else "* Title\n\n"
    doc_path.write_text(header + directive.format(secret) + "\n\nText.\n", encoding="utf-8")
    assert "SECRET-CONTENT" not in json.dumps(run_pandoc_json(doc_path))  # pandoc's --sandbox
    doc = read_manuscript(doc_path)
    assert doc.keys == []
    (problem,) = doc.problems
    assert str(problem) == (
        f"{doc_path}:{line}: included file not read (its citations are not checked): {secret}"
    )


def test_sandbox_leaves_markdown_reading_unchanged(tmp_path: Path) -> None:
    secret = _outside_secret(tmp_path)
    doc_path = tmp_path / "paper.md"
    # its own references: citations that reach no bibliography are "cannot judge"
    refs = "---\nreferences:\n- id: a\n- id: b\n---\n\n"
    doc_path.write_text(f"{refs}![figure]({secret})\n\nText [@a] and [@b].\n", encoding="utf-8")
    sandboxed = run_pandoc_json(doc_path)
    plain = subprocess.run(
        [pandoc_path(), "--to=json", "--", str(doc_path)],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert sandboxed == json.loads(plain.stdout)
    doc = read_manuscript(doc_path)
    assert doc.keys == ["a", "b"] and doc.problems == []
