"""Annotation text: the bundled Jinja2 template and its Python rendering must never drift apart."""

from __future__ import annotations

import datetime as dt
from importlib import resources

import pytest

from rwgate.contract.models import Citation, Notice
from rwgate.render.annotate import TemplateProblem, annotate


def default_template() -> str:
    """The bundled ``templates/annotation.txt.j2``, which ``_default_text`` writes out."""
    bundled = resources.files("rwgate.render").joinpath("templates/annotation.txt.j2")
    return bundled.read_text(encoding="utf-8").strip()


def citation(status: str, notices: list[Notice]) -> Citation:
    return Citation(key="k", doi="10.1/x", status=status, action="annotate", notices=notices)


CASES = [
    citation(
        "retracted",
        [
            Notice(type="correction", doi="10.1016/c", date=dt.date(2004, 3, 6)),
            Notice(
                type="retraction", doi="10.1016/s0140-6736(10)60175-4", date=dt.date(2010, 2, 6)
            ),
        ],
    ),
    citation("withdrawn", [Notice(type="withdrawal", doi=None, date=dt.date(2011, 1, 1))]),
    citation("expression_of_concern", [Notice(type="expression_of_concern", doi="10.1/e")]),
    citation("reinstated", [Notice(type="reinstatement", doi="10.1/r", date=dt.date(2023, 2, 21))]),
    citation("amended", [Notice(type="retraction_and_replacement", doi="10.1/u")]),
    citation(
        "withdrawn",
        [
            Notice(
                type="withdrawal",
                date=dt.date(2021, 5, 11),
                record_id="arXiv:2104.01234v2",
                label="an error in the proof of Lemma 3",
            )
        ],
    ),
    Citation(
        key="pub",
        doi="10.48550/arxiv.2301.00001",
        status="retracted",
        action="annotate",
        reason="published as doi:10.1016/s0140-6736(97)11096-0: retracted 2010",
        notices=[Notice(type="retraction", doi="10.1016/n", date=dt.date(2010, 2, 6))],
    ),
]


@pytest.mark.parametrize("cit", CASES, ids=lambda c: c.status)
def test_python_default_equals_bundled_template(cit: Citation) -> None:
    assert annotate(cit).text == annotate(cit, default_template()).text


def test_default_text() -> None:
    assert annotate(CASES[0]).text == "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4"
    assert annotate(CASES[1]).text == "Withdrawn 2011"
    assert annotate(CASES[3]).text == "Reinstated 2023; notice doi:10.1/r"


def test_a_preprint_says_its_version_reason_and_journal_version() -> None:
    """Issue 49: a withdrawn preprint has no notice DOI; the server's version and reason say
    what was withdrawn and why. A preprint judged by its journal version names that version."""
    assert annotate(CASES[5]).text == (
        "Withdrawn 2021 (arXiv:2104.01234v2): an error in the proof of Lemma 3"
    )
    assert annotate(CASES[6]).text == (
        "Retracted 2010; notice doi:10.1016/n; published as doi:10.1016/s0140-6736(97)11096-0"
    )
    rw_record = citation("withdrawn", [Notice(type="withdrawal", record_id="4036", label="x")])
    assert annotate(rw_record).text == "Withdrawn"


def test_user_template_and_bad_template() -> None:
    assert annotate(CASES[0], "{{ label|upper }} ({{ date }})").text == "RETRACTED (2010-02-06)"
    with pytest.raises(TemplateProblem, match="annotation template"):
        annotate(CASES[0], "{{ label ")
    with pytest.raises(TemplateProblem, match="annotation template"):
        annotate(CASES[0], "{{ nosuchvalue }}")


def test_template_cannot_reach_python_internals() -> None:
    """A template from a document's metadata must not run code while the document builds."""
    with pytest.raises(TemplateProblem, match="annotation template"):
        annotate(CASES[0], "{{ key.__class__.__mro__[1].__subclasses__() }}")
