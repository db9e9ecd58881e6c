"""`rwgate check` end to end: real CLI entry point, real HTTP to the loopback fake Crossref."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from rwgate.frontends.cli.main import main

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
LACOUR = "10.1126/science.1256151"
LACOUR_NOTICE = "10.1126/science.aac6638"
COCHRANE = "10.1002/14651858.cd009522"
CLEAN = ["10.1038/nature12373", "10.1038/171737a0"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["check", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


def by_key(report: dict) -> dict[str, dict]:
    return {c["key"]: c for c in report["citations"]}


@pytest.fixture
def crossref_env(fake_crossref, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    return fake_crossref


def test_design_verdicts_for_every_shared_case(crossref_env, capsys) -> None:
    dois = [
        f"https://doi.org/{WAKEFIELD.upper()}",
        LACOUR,
        f"doi:{LACOUR_NOTICE}",
        COCHRANE,
        *CLEAN,
        "10.5555/no-such-work-rwgate",
        "10.12/not a doi",
    ]
    code, report = run_json(capsys, *[a for d in dois for a in ("--doi", d)])
    assert code == 0
    cits = report["citations"]
    assert [c["status"] for c in cits] == [
        "retracted",
        "retracted",
        "clean",
        "withdrawn",
        "clean",
        "clean",
        "unknown_doi",
        "invalid_doi",
    ]
    wake = cits[0]
    assert wake["doi"] == WAKEFIELD
    assert [(n["type"], n["date"], n["doi"]) for n in wake["notices"]] == [
        ("correction", "2004-03-06", "10.1016/s0140-6736(04)15715-2"),
        ("retraction", "2010-02-06", "10.1016/s0140-6736(10)60175-4"),
    ]
    assert wake["notices"][1]["record_id"] == "4036"
    assert wake["notices"][1]["source"] == ["crossref:retraction-watch"]
    assert "notice about 10.1126/science.1256151" in cits[2]["reason"]
    assert report["schema"] == "rwgate.report/1"
    assert report["summary"] == {
        "cited": 8,
        "checked": 6,
        "flagged": 3,
        "failed": 0,
        "warned": 2,
        "unverified": 0,
    }
    assert report["exit_code"] == 0
    assert report["sources"][0]["name"] == "crossref"
    # Every DOI in batches: one list request, plus one /works/{doi} confirmation of the unknown.
    paths = [r.path for r in crossref_env.requests]
    assert paths.count("/works") == 1
    assert sum(p.startswith("/works/") for p in paths) == 1


def test_strict_fails_on_retracted(crossref_env, capsys) -> None:
    code, report = run_json(capsys, "--policy", "strict", "--doi", WAKEFIELD, "--doi", CLEAN[0])
    assert code == 1 and report["exit_code"] == 1
    assert by_key(report)[WAKEFIELD]["action"] == "fail"
    assert report["summary"]["failed"] == 1


@pytest.mark.parametrize("fault", ["503", "malformed", "drop"])
def test_persistent_faults_never_clean(crossref_env, capsys, monkeypatch, fault: str) -> None:
    monkeypatch.setenv("RWGATE_TIMEOUT", "1")
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    crossref_env.fail_next(fault, times=1000)
    code, report = run_json(capsys, "--doi", CLEAN[0], "--doi", WAKEFIELD)
    assert {c["status"] for c in report["citations"]} == {"unverified"}
    assert code == 0  # default policy warns on unverified
    assert any("Crossref could not be asked" in w for w in report["warnings"])
    code, report = run_json(capsys, "--policy", "strict", "--doi", CLEAN[0])
    assert code == 1


def test_closed_port_is_unverified(monkeypatch, capsys) -> None:
    from fakes.crossref import closed_port_url

    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    _code, report = run_json(capsys, "--doi", CLEAN[0])
    assert report["citations"][0]["status"] == "unverified"


def test_transient_faults_recover(crossref_env, capsys) -> None:
    crossref_env.fail_next("429", times=1, retry_after=1)
    crossref_env.fail_next("503", times=1)
    _code, report = run_json(capsys, "--doi", WAKEFIELD)
    assert report["citations"][0]["status"] == "retracted"


def test_cache_answers_second_run_and_errors_are_not_cached(
    crossref_env, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    crossref_env.fail_next("503", times=1000)
    run_json(capsys, "--doi", LACOUR)
    crossref_env.reset()
    _, report = run_json(capsys, "--doi", LACOUR)
    assert report["citations"][0]["status"] == "retracted"  # the error was not remembered
    before = len(crossref_env.requests)
    _, report = run_json(capsys, "--doi", LACOUR)
    assert report["citations"][0]["status"] == "retracted"
    assert len(crossref_env.requests) == before  # answered from the cache
    _, report = run_json(capsys, "--no-cache", "--doi", LACOUR)
    assert len(crossref_env.requests) > before


def test_offline_uses_cache_only(crossref_env, capsys) -> None:
    run_json(capsys, "--doi", WAKEFIELD)
    before = len(crossref_env.requests)
    _, report = run_json(capsys, "--offline", "--doi", WAKEFIELD, "--doi", LACOUR)
    assert len(crossref_env.requests) == before
    assert [c["status"] for c in report["citations"]] == ["retracted", "unverified"]


def test_broken_cache_degrades_with_one_warning(
    crossref_env, capsys, monkeypatch, tmp_path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(blocker / "cache"))
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        _, report = run_json(capsys, "--doi", WAKEFIELD)
        code = main(["check", "--doi", WAKEFIELD])
    assert report["citations"][0]["status"] == "retracted"
    assert sum("cache disabled" in w for w in report["warnings"]) == 1
    # One warning for the user: the report's, not a Python warning on top of it.
    assert not [w for w in raised if "cache disabled" in str(w.message)]
    out = capsys.readouterr()
    assert code == 0
    assert (out.out + out.err).count(f"cache disabled ({blocker / 'cache'})") == 1


def test_corrupt_cache_file_degrades(crossref_env, capsys, monkeypatch, tmp_path) -> None:
    cache = tmp_path / "c"
    cache.mkdir()
    (cache / "json").mkdir()
    (cache / "json" / "cache.db").write_bytes(b"this is not sqlite" * 100)
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(cache))
    _, report = run_json(capsys, "--doi", LACOUR)
    assert report["citations"][0]["status"] == "retracted"
    assert sum("cache disabled" in w for w in report["warnings"]) == 1


def test_bib_alone_half_broken_and_missing_file(crossref_env, capsys, tmp_path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{good1, title={A}, doi={10.1038/nature12373}}\n\n"
        "@article{broken, title={no comma} doi={10.1/x}}\n\n"
        "@article{good2, title={B}, doi={10.1126/science.1256151}}\n"
        "@article{nodoi, title={C}}\n"
        "@article{bad, title={D}, doi={not-a-doi}}\n",
        encoding="utf-8",
    )
    code, report = run_json(capsys, str(bib), str(tmp_path / "missing.bib"))
    assert code == 2
    statuses = {c["key"]: c["status"] for c in report["citations"]}
    assert statuses["good1"] == "clean" and statuses["good2"] == "retracted"
    assert statuses["nodoi"] == "no_doi" and statuses["bad"] == "invalid_doi"
    assert statuses["broken"] == "no_doi"  # BibTeX keeps it, up to the error
    assert any("missing.bib" in w for w in report["warnings"])
    assert by_key(report)["good2"]["location"]["file"] == str(bib)


def test_markdown_manuscript_only_cited_works(crossref_env, capsys, tmp_path) -> None:
    (tmp_path / "refs.bib").write_text(
        "@article{w, doi={10.1016/S0140-6736(97)11096-0}}\n"
        "@article{uncited, doi={10.1126/science.1256151}}\n"
        "@article{c, doi={10.1038/nature12373}}\n"
    )
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\n---\n\nSee [@w; @c] and @ghost.\n")
    _code, report = run_json(capsys, str(paper))
    assert {c["key"]: c["status"] for c in report["citations"]} == {
        "w": "retracted",
        "c": "clean",
        "ghost": "missing_entry",
    }
    assert report["citations"][0]["location"]["line"] == 1


def test_metadata_block_and_flag_layers(crossref_env, capsys, tmp_path) -> None:
    (tmp_path / "refs.bib").write_text("@article{w, doi={10.1016/S0140-6736(97)11096-0}}\n")
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\nrwgate:\n  policy: strict\n---\n\n[@w]\n")
    assert run_json(capsys, str(paper))[0] == 1
    assert run_json(capsys, str(paper), "--policy", "default")[0] == 0
    (tmp_path / "rwgate.toml").write_text(
        '[[allow]]\nkey = "w"\nreason = "we discuss this retraction"\n'
    )
    code, report = run_json(capsys, str(paper))
    assert code == 0 and report["citations"][0]["allowed"] is True


def test_invalid_config_is_exit_2_one_line(crossref_env, capsys, tmp_path) -> None:
    (tmp_path / "rwgate.toml").write_text('policy = "lenient"\n')
    bib = tmp_path / "r.bib"
    bib.write_text("@article{a, doi={10.1038/nature12373}}\n")
    assert main(["check", str(bib)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rwgate.toml: policy" in err


def test_human_report_and_json_output_file(crossref_env, capsys, tmp_path) -> None:
    out = tmp_path / "report.json"
    code = main(["check", "--format", "json", "--output", str(out), "--doi", WAKEFIELD])
    captured = capsys.readouterr()
    assert json.loads(out.read_text())["citations"][0]["status"] == "retracted"
    assert "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4" in captured.err
    assert code == 0


def test_no_http_client_imported_when_cache_answers(crossref_env, tmp_path) -> None:
    env = {**os.environ, "RWGATE_CROSSREF_URL": crossref_env.url}
    probe = (
        "import sys; from rwgate.frontends.cli.main import main; "
        f"code = main(['check', '--doi', {WAKEFIELD!r}]);"
        "print('HTTPX' if 'httpx' in sys.modules else 'NOHTTPX')"
    )
    first = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert "HTTPX" in first.stdout.split()
    second = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert second.stdout.split()[-1] == "NOHTTPX", second.stdout + second.stderr


def test_console_script_exit_codes(crossref_env, tmp_path) -> None:
    exe = Path(sys.executable).parent / "rwgate"
    env = {**os.environ, "RWGATE_CROSSREF_URL": crossref_env.url}
    done = subprocess.run(
        [str(exe), "check", "--policy", "strict", "--doi", LACOUR],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "FAIL" in done.stdout and "Traceback" not in done.stderr
    done = subprocess.run(
        [str(exe), "check", str(tmp_path / "nope.bib")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "nope.bib" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_hostile_upstream_strings_cannot_drive_the_terminal(crossref_env, capsys) -> None:
    crossref_env.add_synthetic(
        "10.5555/hostile",
        title="Evil\x1b[2J\x1b]0;owned\x07 title \u202egnp.exe",
        updated_by=[
            {
                "DOI": "10.5555/notice\x1b[31m",
                "type": "retraction",
                "source": "publisher",
                "updated": {"date-parts": [[2021, 5, 1]]},
            }
        ],
    )
    assert main(["check", "--doi", "10.5555/hostile"]) == 0
    out = capsys.readouterr().out
    assert "Retracted 2021" in out and "Evil" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_pmid_only_entry_is_matched_through_the_snapshot(capsys, monkeypatch, tmp_path) -> None:
    snapshot = tmp_path / "s.sqlite3"
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    monkeypatch.setenv("RWGATE_OFFLINE", "1")
    csv = EXAMPLES / "data" / "retraction-watch" / "rw-sample.csv"
    assert main(["data", "import", str(csv)]) == 0
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{yu, title={Stellate ganglion block}, pmid={32522602}}\n")
    capsys.readouterr()
    code, report = run_json(capsys, str(bib))
    assert code == 0
    [cit] = report["citations"]
    assert (cit["status"], cit["doi"]) == ("retracted", "10.1016/j.neulet.2020.135139")
    assert "matched by PMID 32522602" in cit["reason"]


def test_snapshot_without_retraction_watch_rows_proves_nothing_by_omission(
    capsys, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "s.sqlite3"))
    monkeypatch.setenv("RWGATE_OFFLINE", "1")
    record = EXAMPLES / "data" / "crossref" / "lacour-2014-science.json"
    assert main(["data", "import", str(record)]) == 0
    capsys.readouterr()
    _, report = run_json(capsys, "--doi", LACOUR, "--doi", CLEAN[0])
    assert [c["status"] for c in report["citations"]] == ["retracted", "unverified"]
    assert any("holds no full Retraction Watch export" in w for w in report["warnings"])


def test_several_processes_share_one_cache(crossref_env, tmp_path) -> None:
    env = {**os.environ, "RWGATE_CROSSREF_URL": crossref_env.url}
    exe = str(Path(sys.executable).parent / "rwgate")
    args = [exe, "check", "--format", "json", "--doi", WAKEFIELD, "--doi", LACOUR]
    runs = [
        subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        report = json.loads(out)
        assert [c["status"] for c in report["citations"]] == ["retracted", "retracted"]
        assert not any("cache" in w for w in report["warnings"]), err
    before = len(crossref_env.requests)
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["citations"][0]["status"] == "retracted"
    assert len(crossref_env.requests) == before  # the shared cache answered


@pytest.mark.parametrize(
    ("csv_name", "doi", "status", "types"),
    [
        (
            "eoc-over-three-corrections.csv",
            "10.1016/J.JAUT.2016.05.012",  # mixed case, as authors write it
            "expression_of_concern",
            ["correction", "correction", "correction", "expression_of_concern"],
        ),
        (
            "retraction-then-reinstatement.csv",
            "10.1001/jama.2021.16685",
            "replaced",  # its Reinstatement row's Reason is "Retract and Replace"
            ["retraction", "retract_and_replace"],
        ),
    ],
)
def test_offline_snapshot_rules_through_the_cli(
    capsys, monkeypatch, tmp_path, csv_name, doi, status, types
) -> None:
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "s.sqlite3"))
    monkeypatch.setenv("RWGATE_OFFLINE", "1")
    fixtures = Path(__file__).parents[1] / "fixtures" / "rw"
    assert main(["data", "import", str(fixtures / csv_name)]) == 0
    capsys.readouterr()
    _, report = run_json(capsys, "--doi", doi)
    [cit] = report["citations"]
    assert cit["status"] == status
    assert [n["type"] for n in cit["notices"]] == types
    assert all(n["source"] == ["retraction-watch-csv"] for n in cit["notices"])


def test_dot_segments_in_a_doi_never_leave_works(crossref_env, capsys) -> None:
    _, report = run_json(capsys, "--doi", "10.1234/../../members/1")
    assert report["citations"][0]["status"] == "unknown_doi"
    assert crossref_env.requests and all(r.path.startswith("/works") for r in crossref_env.requests)


def test_snapshot_verdicts_say_when_crossref_failed_but_not_when_offline(
    capsys, monkeypatch, tmp_path
) -> None:
    from fakes.crossref import closed_port_url

    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "s.sqlite3"))
    csv = EXAMPLES / "data" / "retraction-watch" / "rw-sample.csv"
    # The sample taken as a full export (--allow-shrink waives the 30,000-row floor).
    assert main(["data", "import", "--allow-shrink", str(csv)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    _, online = run_json(capsys, "--doi", "10.1016/j.neulet.2020.135139", "--doi", CLEAN[0])
    # Listed: retracted from the snapshot. Unlisted while Crossref failed: unverified, never clean
    # (publisher notices are not in Retraction Watch); the reason says both facts.
    assert [c["status"] for c in online["citations"]] == ["retracted", "unverified"]
    assert [c["basis"] for c in online["citations"]] == [["snapshot"], []]
    assert all("Crossref not consulted" in c["reason"] for c in online["citations"])
    assert "not listed in the Retraction Watch snapshot" in online["citations"][1]["reason"]
    _, offline = run_json(capsys, "--offline", "--doi", CLEAN[0])
    assert offline["citations"][0]["status"] == "clean"  # offline by choice: the registry
    _, offline = run_json(capsys, "--offline", "--doi", "10.1016/j.neulet.2020.135139")
    assert offline["citations"][0].get("reason") is None


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        ("{{ label ", "template: Value error, not a valid Jinja2 template"),
        ("{{ no_such_value }}", "annotation template: 'no_such_value' is undefined"),
    ],
)
def test_a_broken_annotation_template_is_one_line_exit_2(
    crossref_env, capsys, tmp_path, template: str, needle: str
) -> None:
    (tmp_path / "rwgate.toml").write_text(f"template = {template!r}\n")
    bib = tmp_path / "r.bib"
    bib.write_text("@article{w, doi={10.1016/S0140-6736(97)11096-0}}\n")
    assert main(["check", str(bib)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """`rwgate check --format json ... | head -c 10`: the closed pipe ends the run quietly (141)."""
    bib = tmp_path / "refs.bib"
    entry = "@article{{k{0}, title={{T{0}}}, year={{2020}}, doi={{10.1234/x{0}}}}}\n"
    entries = "".join(entry.format(i) for i in range(1500))
    bib.write_text(entries, encoding="utf-8")
    env = {**os.environ, "RWGATE_OFFLINE": "1", "RWGATE_CACHE_DIR": str(tmp_path / "c")}
    env["RWGATE_SNAPSHOT"] = str(tmp_path / "none.sqlite3")
    rwgate = Path(sys.executable).parent / "rwgate"
    proc = subprocess.Popen(
        [str(rwgate), "check", "--format", "json", "--no-history", str(bib)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away before the report is written out
    err = proc.stderr.read().decode()
    assert proc.wait() == 141
    assert "Traceback" not in err
