"""Registry records -> the one shape identification compares (:class:`Work`, :class:`ScoreParts`).

Crossref and OpenAlex describe the same work differently (``author[].family`` vs
``authorships[].author.display_name``, ``container-title`` vs ``primary_location.source``); both are
read into one :class:`Work` here, taking only what the record says.
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from rwgate.contract import doi as doimod
from rwgate.contract.evidence import crossref_year
from rwgate.identify.ids import ARXIV_PREFIX

_TAG = re.compile(r"<[^<>]{1,80}>")
_PARTICLE_WORDS = "van von der den de del della di da dos das du la le ter ten st bin ibn al el"
_PARTICLES = frozenset(_PARTICLE_WORDS.split())
_INITIALS = re.compile(r"^[A-Z]{1,3}$")
Verdict = Literal["verified", "partial_match", "not_found", "unverified"]


class Author(BaseModel):
    """One author as a registry gives it; ``family`` is what matching compares."""

    family: str
    given: str | None = None

    def bibtex(self) -> str:
        return f"{self.family}, {self.given}" if self.given else self.family


class Work(BaseModel):
    """A real work as Crossref and/or OpenAlex describe it (never filled in by guessing)."""

    doi: str | None = None
    title: str | None = None
    authors: list[Author] = Field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    type: str | None = Field(default=None, description="Crossref work type, e.g. journal-article")
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    arxiv_id: str | None = None
    openalex_id: str | None = None
    is_retracted: bool | None = Field(default=None, description="OpenAlex's flag, when asked")
    sources: list[str] = Field(default_factory=list)


class ScoreParts(BaseModel):
    """Each component in [0, 1] (None when one side lacks the field) and the weighted total."""

    title: float | None = None
    authors: float | None = None
    year: float | None = None
    venue: float | None = None
    total: float = 0.0


def plain(text: object) -> str | None:
    """Registry text without markup (Crossref titles carry ``<i>``, ``<sub>``, entities)."""
    if not isinstance(text, str):
        return None
    cleaned = " ".join(html.unescape(_TAG.sub("", text)).split())
    return cleaned or None


def family_of(name: str) -> str:
    """The family name in ``Wakefield, A. J.``, ``A. J. Wakefield``, ``Wakefield AJ``."""
    name = " ".join(name.replace("{", "").replace("}", "").split())
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = name.split(" ")
    if len(words) > 1 and _INITIALS.match(words[-1]) and not _INITIALS.match(words[0]):
        return " ".join(words[:-1])  # PubMed style: family name, then initials
    start = len(words) - 1
    while start > 0 and words[start - 1].lower() in _PARTICLES:
        start -= 1
    return " ".join(words[start:])


def _author_from_display(name: str) -> Author | None:
    name = " ".join(name.split())
    if not name:
        return None
    family = family_of(name)
    given = name[: len(name) - len(family)].strip(" ,") if name.endswith(family) else None
    return Author(family=family, given=given or None)


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return plain(value)


def work_from_crossref(item: dict[str, Any]) -> Work:
    authors = []
    for person in item.get("author") or []:
        family = plain(person.get("family")) or plain(person.get("name"))
        if family:
            authors.append(Author(family=family, given=plain(person.get("given"))))
    doi = doimod.try_normalize(str(item.get("DOI") or ""))
    return Work(
        doi=doi,
        title=_first(item.get("title")),
        authors=authors,
        year=crossref_year(item),
        venue=_first(item.get("container-title")),
        type=plain(item.get("type")),
        volume=plain(item.get("volume")),
        issue=plain(item.get("issue")),
        pages=plain(item.get("page")),
        publisher=plain(item.get("publisher")),
        arxiv_id=doi[len(ARXIV_PREFIX) :] if doi and doi.startswith(ARXIV_PREFIX) else None,
        sources=["crossref"],
    )


def _pages(biblio: dict[str, Any]) -> str | None:
    first, last = plain(biblio.get("first_page")), plain(biblio.get("last_page"))
    if first and last and first != last:
        return f"{first}-{last}"
    return first


def work_from_openalex(item: dict[str, Any]) -> Work:
    doi = doimod.try_normalize(str(item.get("doi") or ""))
    people = ((a or {}).get("author") or {} for a in item.get("authorships") or [])
    named = (_author_from_display(str(person.get("display_name") or "")) for person in people)
    authors = [author for author in named if author is not None]
    source = ((item.get("primary_location") or {}).get("source")) or {}
    biblio = item.get("biblio") or {}
    year = item.get("publication_year")
    flag = item.get("is_retracted")
    return Work(
        doi=doi,
        title=plain(item.get("title")) or plain(item.get("display_name")),
        authors=authors,
        year=year if isinstance(year, int) else None,
        venue=plain(source.get("display_name")),
        type=plain(item.get("type_crossref")) or plain(item.get("type")),
        volume=plain(biblio.get("volume")),
        issue=plain(biblio.get("issue")),
        pages=_pages(biblio),
        publisher=plain(source.get("host_organization_name")),
        arxiv_id=doi[len(ARXIV_PREFIX) :] if doi and doi.startswith(ARXIV_PREFIX) else None,
        openalex_id=plain(item.get("id")),
        is_retracted=flag if isinstance(flag, bool) else None,
        sources=["openalex"],
    )


def merge(primary: Work, other: Work) -> Work:
    """One work from two registries' records of the same DOI: gaps filled, nothing overwritten."""
    update: dict[str, Any] = {}
    for name in Work.model_fields:
        if name == "sources":
            continue
        mine, theirs = getattr(primary, name), getattr(other, name)
        if mine in (None, []) and theirs not in (None, []):
            update[name] = theirs
    update["sources"] = list(dict.fromkeys([*primary.sources, *other.sources]))
    return primary.model_copy(update=update)
