"""What a verdict's notes say is made once per verdict: the same notes (the same objects, which
the server sends again without encoding them) for a work cited where it was, however many clean
works the manuscript cites; a new verdict or a moved citation makes new ones."""

from __future__ import annotations

from rwgate.contract.models import Citation
from rwgate.frontends.lsp.analysis import Place, Said
from rwgate.readers.manuscripts.citescan import Span
from rwgate.settings.policy import Policy
from rwgate.verdicts.result import CheckResult


def _verdict(clean: int) -> CheckResult:
    citations = [Citation(key="gone", doi="10.1/gone", status="retracted", action="fail")]
    citations += [
        Citation(key=f"ok{n}", doi=f"10.1/ok{n}", status="clean", action="ignore")
        for n in range(clean)
    ]
    return CheckResult(citations=citations, policy=Policy(), sources=[])


def test_the_same_notes_for_a_work_cited_where_it_was() -> None:
    verdict = _verdict(clean=500)
    said = Said().of(verdict, None)
    gone = verdict.citations[0]
    use = Place("/p.md", Span("gone", 3, 2, 6))
    entry = Place("/refs.bib", Span("gone", 0, 9, 13))
    first = said.notes_of(gone, [use], entry)
    assert [n.place for n in first] == [use, entry]
    assert first[0].struck and first[0].severity == "error"
    for _ in range(3):  # every pass also looks up the 500 clean works, which say nothing
        for n, clean in enumerate(verdict.citations[1:]):
            assert said.notes_of(clean, [Place("/p.md", Span(clean.key, 10 + n, 0, 4))], None) == []
        assert said.of(verdict, None).notes_of(gone, [use], entry) is first
    moved = Place("/p.md", Span("gone", 4, 2, 6))
    assert said.notes_of(gone, [moved], entry) is not first
    other = _verdict(clean=0)
    assert said.of(other, None).notes_of(other.citations[0], [use], entry) is not first
