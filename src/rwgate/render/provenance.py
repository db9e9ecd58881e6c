"""Where a report's verdicts came from, in words: each source and what happened to it this run.

A source line that dates data it never received reads as "checked today" above a page of works
nobody could check. So every source says what happened in this run (:attr:`SourceInfo.state`):
answered (with the data's age), from the cache, not reached (why), or not asked. Every report and
front end shows these same words.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence

from rwgate.contract.models import SourceInfo
from rwgate.render.safe import term_safe

OTHER_NAMES = {
    "openalex": "OpenAlex",  # a verification source (rwgate verify), not an integrity source
    "retraction-watch-csv": "Retraction Watch",  # a notice from its CSV export
    "retraction-watch": "Retraction Watch",  # Crossref's record, as Retraction Watch entered it
    "medrxiv": "medRxiv",  # a harvested withdrawal names its server
}
"""Names a report may meet that are no integrity source's: the sources name themselves."""
OFFLINE_WORDS = "not asked (offline); only answers already in its cache count"
_NOTE_WORDS = {"offline: cache only": OFFLINE_WORDS, "cache disabled": "no cache"}
_SNAPSHOT_NOTE = "local Retraction Watch snapshot: "
NOTHING_TO_ASK = "nothing to look up"


@functools.cache
def _titles() -> dict[str, str]:
    """Each integrity source's id -> how it calls itself (its ``title``: ``Crossref``, ``arXiv``,
    ``bioRxiv/medRxiv``). Imported when a report is written: the sources are loaded by then."""
    from rwgate.sources import SOURCES

    return {**OTHER_NAMES, **{s.name: s.title for s in SOURCES}}


def display_name(ident: str) -> str:
    """How a person reads a source id of a report: ``arxiv`` -> ``arXiv``; a notice's
    ``crossref:retraction-watch`` -> ``Crossref (Retraction Watch)``; an id nobody named stays
    as it is (never guessed)."""
    head, _, detail = ident.partition(":")
    name = _titles().get(head, head)
    return f"{name} ({_titles().get(detail, detail)})" if detail else name


def _age(when: dt.datetime | None) -> str | None:
    if when is None:
        return None
    stamp = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    days = (dt.datetime.now(dt.UTC) - stamp).days
    return f"data as of {stamp.date().isoformat()}, {days} day{'s' if days != 1 else ''} old"


def state_text(info: SourceInfo) -> str | None:
    """What happened to the source this run, in words (None: nothing to add): ``asked and
    answered``, ``not reached: <why>``, ``not asked (offline) ...``. A local file that answered
    says nothing more (it always does); one answered only from the cache is said by its cache
    note (``10 answered from cache, the oldest fetched 2.0 h ago``)."""
    state, why = info.state, info.why
    if state == "answered":
        said = "asked and answered" if info.url else None
        return f"{said}; {why}" if said and why else said or why
    if state == "not_reached":
        return f"not reached: {why}" if why else "not reached"
    if why == "offline":  # not asked (offline), answered from the cache or not at all
        return OFFLINE_WORDS
    if state == "not_asked":
        return f"not asked: {why}" if why else "not asked"
    return why  # from the cache: what the source, asked for the rest, did not answer


def describe_source(info: SourceInfo) -> str:
    """A source in plain words, saying what happened to it this run: ``Crossref
    (https://api.crossref.org): asked and answered; data as of 2026-11-28, 0 days old``."""
    where = info.url or info.path
    name = display_name(info.name)
    head = f"{name} ({term_safe(where)})" if where else name
    notes = [n.removeprefix(_SNAPSHOT_NOTE) for n in (info.note or "").split("; ") if n]
    if info.state is not None:  # the state says it: the note's older words for it go
        notes = [n for n in notes if n != "offline: cache only"]
    words = [_NOTE_WORDS.get(n, n).replace("import(s)", "imports") for n in notes]
    state, age = state_text(info), _age(info.as_of)
    said = "; ".join(term_safe(w) for w in [state, age, *words] if w)
    return f"{head}: {said}" if said else head


def unanswered(sources: Sequence[SourceInfo]) -> str | None:
    """``no source answered (Crossref not reached)`` when there was something to look up and no
    source answered any of it this run, not even from the cache; else None. A source whose state
    is not known is taken to have answered (this never claims a failure it was not told of)."""
    asked = [s for s in sources if not (s.state == "not_asked" and s.why == NOTHING_TO_ASK)]
    if not asked or any(s.state not in ("not_reached", "not_asked") for s in asked):
        return None
    said = [
        f"{display_name(s.name)} "
        + ("not reached" if s.state == "not_reached" else "not asked")
        + (", offline" if s.why == "offline" else "")
        for s in asked
    ]
    return f"no source answered ({', '.join(said)})"
