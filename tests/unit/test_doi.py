"""DOI canonical form: examples from real data and properties over generated DOIs."""

from __future__ import annotations

import string
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rwgate.contract.doi import InvalidDOI, find_in_text, normalize, try_normalize, url

SICI = "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y"
FAST = settings(max_examples=60, deadline=None)

PREFIXES = [
    "",
    "doi:",
    "DOI: ",
    "doi ",
    "Doi:\u00a0",
    "https://doi.org/",
    "HTTPS://DOI.ORG/",
    "http://dx.doi.org/",
    "https://dx.doi.org/",
    "https://www.doi.org/",
    "doi.org/",
    "info:doi/",
    "urn:doi:",
    "https://hdl.handle.net/",
    "doi: https://doi.org/",
]

_LOWER_SUFFIX = string.ascii_lowercase + string.digits + "-._;:/()<>#+*[]"
_END = string.ascii_lowercase + string.digits


@st.composite
def canonical_dois(draw: st.DrawFn, brackets: bool = True) -> str:
    """Lower-case DOIs already in canonical form (ending in a letter or digit)."""
    registrant = str(draw(st.integers(1000, 999_999_999)))
    if draw(st.booleans()):
        registrant += "." + str(draw(st.integers(0, 999)))
    alphabet = (
        _LOWER_SUFFIX if brackets else _LOWER_SUFFIX.translate(str.maketrans("", "", "()<>[]"))
    )
    body = draw(st.text(alphabet, max_size=25))
    return f"10.{registrant}/{body}{draw(st.sampled_from(_END))}"


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("10.1016/S0140-6736(97)11096-0", "10.1016/s0140-6736(97)11096-0"),
        ("https://doi.org/10.1126/science.1256151", "10.1126/science.1256151"),
        ("http://dx.doi.org/10.1126/SCIENCE.AAC6638", "10.1126/science.aac6638"),
        ("doi:10.1002/14651858.CD009522", "10.1002/14651858.cd009522"),
        ("https://doi.org/10.1038%2Fnature12373", "10.1038/nature12373"),
        ("<https://doi.org/10.1038/171737a0>", "10.1038/171737a0"),
        (SICI, SICI.lower()),
        ("https://doi.org/" + quote(SICI, safe="/"), SICI.lower()),
        (SICI + ".", SICI.lower()),
        (SICI[:-1] + "#", SICI[:-1].lower() + "#"),
        ("10.1038/nature\u200b12373", "10.1038/nature12373"),
        ("10.1000/a%2525b", "10.1000/a%b"),
        # Wrapped in running text: an opening bracket or quote never starts a DOI.
        ("(10.1000/xyz)", "10.1000/xyz"),
        ("(doi:10.1000/xyz).", "10.1000/xyz"),
        ("[https://doi.org/10.1038/171737a0]", "10.1038/171737a0"),
        ("\u201c10.1126/science.1256151\u201d", "10.1126/science.1256151"),
        ("(" + SICI + ")", SICI.lower()),
    ],
)
def test_known_forms(raw: str, canonical: str) -> None:
    assert normalize(raw) == canonical
    assert try_normalize(raw) == canonical


def test_angle_bracket_inside_doi_survives() -> None:
    assert normalize("10.1002/abc<def>") == "10.1002/abc<def>"


@pytest.mark.parametrize(
    "raw", ["", "   ", "10.1038", "10.12/abc", "nature12373", "10.1038/ab cd", "doi:", "11.1038/x"]
)
def test_malformed(raw: str) -> None:
    assert try_normalize(raw) is None
    with pytest.raises(InvalidDOI):
        normalize(raw)


def test_find_in_text_examples() -> None:
    wiley = "https://onlinelibrary.wiley.com/doi/full/10.1002/14651858.CD009522?af=R"
    assert find_in_text(wiley) == "10.1002/14651858.cd009522"
    assert find_in_text(r"\url{https://doi.org/10.1038/171737a0}") == "10.1038/171737a0"
    assert find_in_text("Retraction of LaCour and Green, doi:10.1126/science.aac6638.") == (
        "10.1126/science.aac6638"
    )
    html = '<a href="https://doi.org/10.1038/171737a0">doi:10.1038/171737a0</a>'
    assert find_in_text(html) == "10.1038/171737a0"
    assert find_in_text("see 10.1038/nature12373</p>") == "10.1038/nature12373"
    assert find_in_text("https://www.nature.com/articles/nature12373") is None
    assert find_in_text("") is None and find_in_text(None) is None


def test_url_escapes_unsafe_characters() -> None:
    link = url(SICI.lower())
    assert link.startswith("https://doi.org/10.1002/(sici)1097-4636(199812)")
    assert "<" not in link and ">" not in link and "%3C" in link


@FAST
@given(canonical_dois())
def test_canonical_is_a_fixed_point(doi: str) -> None:
    assert normalize(doi) == doi
    assert normalize(normalize(doi)) == doi


@FAST
@given(st.text(max_size=40))
def test_normalize_is_idempotent_on_anything(raw: str) -> None:
    first = try_normalize(raw)
    if first is not None:
        assert first.startswith("10.")
        assert normalize(first) == first
    found = find_in_text(raw)
    if found is not None:
        assert normalize(found) == found


@FAST
@given(canonical_dois(), st.lists(st.booleans(), min_size=1))
def test_case_insensitive(doi: str, flips: list[bool]) -> None:
    mixed = "".join(c.upper() if flips[i % len(flips)] else c for i, c in enumerate(doi))
    assert normalize(mixed) == doi
    assert normalize(doi.upper()) == doi


@FAST
@given(canonical_dois(), st.sampled_from(PREFIXES), st.booleans())
def test_every_prefix_form_gives_the_same_doi(doi: str, prefix: str, wrap: bool) -> None:
    raw = f"{prefix}{doi}"
    if wrap:
        raw = f"  <{raw}>  "
    assert normalize(raw) == doi


@FAST
@given(canonical_dois())
def test_percent_encoding_round_trips(doi: str) -> None:
    assert normalize(url(doi)) == doi
    assert normalize("https://doi.org/" + quote(doi, safe="")) == doi
    assert normalize(quote(quote(doi, safe=""), safe="")) == doi  # doubly encoded


@FAST
@given(canonical_dois(), st.text(".,;:!?\"'", min_size=1, max_size=4))
def test_trailing_sentence_punctuation_is_stripped(doi: str, tail: str) -> None:
    assert normalize(doi + tail) == doi


@FAST
@given(
    canonical_dois(brackets=False), st.sampled_from(PREFIXES[:9]), st.sampled_from([".", ",", ""])
)
def test_found_inside_a_sentence(doi: str, prefix: str, stop: str) -> None:
    text = f"As reported earlier ({prefix}{doi.upper()}){stop} Then more text."
    assert find_in_text(text) == doi


def _slow_normalize(raw: str) -> str | None:
    """The full peel/decode/trim path, the bare-DOI shortcut switched off."""
    import re

    from rwgate.contract import doi as doimod

    saved, doimod._BARE = doimod._BARE, re.compile(r"(?!)")
    try:
        return try_normalize(raw)
    finally:
        doimod._BARE = saved


@FAST
@given(
    st.one_of(
        canonical_dois(),
        st.builds(
            lambda d, t: d + t, canonical_dois(), st.text(".,;:!?)]}>%'\" \u200b", max_size=3)
        ),
        st.text(max_size=30),
        st.builds(str.upper, canonical_dois()),
    )
)
def test_the_bare_doi_shortcut_gives_what_the_full_path_gives(raw: str) -> None:
    assert try_normalize(raw) == _slow_normalize(raw)
