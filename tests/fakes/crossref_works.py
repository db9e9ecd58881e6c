"""What the fake Crossref's ``/works`` list route does with queries, filters and sorting.

Pure functions over work records, so the HTTP handler in :mod:`fakes.crossref` stays small. The
semantics follow Crossref's documentation of the REST API:

- ``query``, ``query.bibliographic``, ``query.author``, ``query.title``,
  ``query.container-title``: free text, ranked by relevance; a record matches when ANY word of the
  query is found in the searched fields (Crossref ORs the words and ranks by score), and different
  query parameters must all match. Here the score is the number of matched words.
- filters (values of one filter ORed, different filters ANDed): ``doi``, ``updates`` (records that
  update the given DOI: their ``update-to`` names it), ``is-update`` (records that ARE updates, i.e.
  notices: they carry ``update-to``), ``update-type`` (notices whose ``update-to`` has that type),
  ``from-/until-update-date`` ("metadata updated", which Crossref documents as the same as the
  deposit date), ``from-/until-pub-date``, ``container-title``, ``type``. Dates are ``YYYY``,
  ``YYYY-MM`` or ``YYYY-MM-DD``; missing parts count as 01 (Crossref's rule).
- ``sort`` (only Crossref's values; ``posted`` and other unknown ones are a 400), ``order``
  (``asc``/``desc``, default ``desc``), ``rows`` (at most 1000), ``offset``.

The fixtures were trimmed of deposit dates, so a record's "updated" date is its ``deposited`` date
when present, else the latest ``updated`` date of its own ``update-to`` entries (a notice is
deposited when it is issued), else its publication date.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

FILTERS = (
    "doi",
    "updates",
    "is-update",
    "update-type",
    "from-update-date",
    "until-update-date",
    "from-pub-date",
    "until-pub-date",
    "container-title",
    "type",
)
SORTS = (
    "relevance",
    "score",
    "updated",
    "deposited",
    "indexed",
    "published",
    "published-print",
    "published-online",
    "issued",
    "created",
    "is-referenced-by-count",
    "references-count",
)
QUERY_FIELDS: dict[str, tuple[str, ...]] = {
    "query": ("title", "author", "container-title", "DOI", "year"),
    "query.bibliographic": ("title", "author", "container-title", "year"),
    "query.author": ("author",),
    "query.title": ("title",),
    "query.container-title": ("container-title",),
}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$")
_BIBTEX_TYPES = {
    "journal-article": "article",
    "book": "book",
    "monograph": "book",
    "book-chapter": "inbook",
    "proceedings-article": "inproceedings",
    "dissertation": "phdthesis",
    "report": "techreport",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


class BadRequest(ValueError):
    """A parameter Crossref would refuse: ``(type, value, message)`` of its validation failure."""

    def __init__(self, kind: str, value: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.value, self.message = kind, value, message


def words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def parse_date(text: str) -> dt.date:
    match = _DATE.match(text.strip())
    if not match:
        raise ValueError(text)
    year, month, day = match.group(1), match.group(2) or "01", match.group(3) or "01"
    return dt.date(int(year), int(month), int(day))


def date_of(value: Mapping[str, Any] | None) -> dt.date | None:
    """A Crossref ``{"date-parts": [[y, m?, d?]]}`` as a date (missing parts are 1)."""
    parts = (value or {}).get("date-parts") or [[]]
    first = parts[0] if parts and isinstance(parts[0], list) else []
    if not first or first[0] is None:
        return None
    padded = [int(p) for p in first] + [1, 1]
    return dt.date(padded[0], padded[1], padded[2])


def pub_date(record: Mapping[str, Any]) -> dt.date | None:
    for field in ("published", "issued", "published-print", "published-online"):
        found = date_of(record.get(field))
        if found is not None:
            return found
    return None


def update_date(record: Mapping[str, Any]) -> dt.date | None:
    """When the record was last deposited (see the module docstring for the fallback)."""
    deposited = date_of(record.get("deposited"))
    if deposited is not None:
        return deposited
    dates = [date_of(u.get("updated")) for u in record.get("update-to") or []]
    known = [d for d in dates if d is not None]
    return max(known) if known else pub_date(record)


def _field_text(record: Mapping[str, Any], field: str) -> str:
    if field == "author":
        names = []
        for person in record.get("author") or []:
            names += [str(person.get(k) or "") for k in ("given", "family", "name")]
        return " ".join(names)
    if field == "year":
        found = pub_date(record)
        return str(found.year) if found else ""
    value = record.get(field)
    return " ".join(map(str, value)) if isinstance(value, list) else str(value or "")


def score(record: Mapping[str, Any], queries: Mapping[str, str]) -> int:
    """Matched query words; 0 when some query parameter matches nothing (the record is out)."""
    total = 0
    for name, text in queries.items():
        haystack: set[str] = set()
        for field in QUERY_FIELDS[name]:
            haystack |= words(_field_text(record, field))
        matched = len(words(text) & haystack)
        if matched == 0:
            return 0
        total += matched
    return total


def _date_test(
    name: str, value: str, of: Callable[[Mapping[str, Any]], dt.date | None]
) -> Callable[[Mapping[str, Any]], bool]:
    try:
        bound = parse_date(value)
    except ValueError:
        text = f"Date specified as {value} but must be of the form YYYY, YYYY-MM or YYYY-MM-DD"
        raise BadRequest("date-not-valid", value, text) from None
    later = name.startswith("from-")

    def test(record: Mapping[str, Any]) -> bool:
        found = of(record)
        return found is not None and (found >= bound if later else found <= bound)

    return test


def _updates(record: Mapping[str, Any], field: str) -> set[str]:
    return {str(u.get(field) or "").lower() for u in record.get("update-to") or []}


def _value_test(name: str, value: str) -> Callable[[Mapping[str, Any]], bool]:
    value_l = value.lower()
    if name == "doi":
        return lambda r: str(r.get("DOI") or "").lower() == value_l
    if name == "updates":
        return lambda r: value_l in _updates(r, "DOI")
    if name == "update-type":
        return lambda r: value_l in _updates(r, "type")
    if name == "is-update":
        if value_l not in ("true", "false", "t", "f", "1", "0"):
            raise BadRequest("boolean-not-valid", value, f"Boolean specified as {value}")
        wanted = value_l in ("true", "t", "1")
        return lambda r: bool(r.get("update-to")) == wanted
    if name == "type":
        return lambda r: str(r.get("type") or "").lower() == value_l
    if name == "container-title":
        return lambda r: value_l in {str(c).lower() for c in r.get("container-title") or []}
    if name.endswith("-update-date"):
        return _date_test(name, value, update_date)
    return _date_test(name, value, pub_date)


def parse_filters(specs: list[str]) -> list[tuple[str, Callable[[Mapping[str, Any]], bool]]]:
    """``filter=a:x,b:y`` values as ``(name, test)``; unknown names are Crossref's 400."""
    tests = []
    for spec in ",".join(specs).split(","):
        if not spec:
            continue
        name, _, value = spec.partition(":")
        if name not in FILTERS:
            text = (
                f"Filter '{name}' specified but there is no such filter for this route. "
                f"Valid filters for this route are: {', '.join(FILTERS)}"
            )
            raise BadRequest("filter-not-available", name, text)
        tests.append((name, _value_test(name, value)))
    return tests


def select_records(
    records: list[dict[str, Any]],
    filters: list[tuple[str, Callable[[Mapping[str, Any]], bool]]],
    queries: Mapping[str, str],
) -> list[tuple[int, dict[str, Any]]]:
    """Records passing every filter (one filter's values ORed) and every query, with scores."""
    by_name: dict[str, list[Callable[[Mapping[str, Any]], bool]]] = {}
    for name, test in filters:
        by_name.setdefault(name, []).append(test)
    hits = []
    for record in records:
        if not all(any(t(record) for t in tests) for tests in by_name.values()):
            continue
        points = score(record, queries) if queries else 0
        if queries and points == 0:
            continue
        hits.append((points, record))
    return hits


def sort_key(sort: str) -> Callable[[tuple[int, dict[str, Any]]], Any]:
    if sort in ("relevance", "score"):
        return lambda hit: hit[0]
    if sort in ("updated", "deposited", "indexed"):
        return lambda hit: update_date(hit[1]) or dt.date.min
    if sort in ("is-referenced-by-count", "references-count"):
        return lambda hit: int(hit[1].get(sort) or 0)
    return lambda hit: pub_date(hit[1]) or dt.date.min


def check_sort(sort: str | None, order: str | None) -> None:
    if sort is not None and sort not in SORTS:
        text = f"Sort field specified as {sort} but must be one of: {', '.join(SORTS)}"
        raise BadRequest("sort-field-not-valid", sort, text)
    if order is not None and order not in ("asc", "desc"):
        text = f"Sort order specified as {order} but must be one of: asc, desc"
        raise BadRequest("sort-order-not-valid", order, text)


def bibtex(record: Mapping[str, Any]) -> str:
    """Crossref's ``transform/application/x-bibtex`` rendering of a record (same layout)."""
    doi = str(record.get("DOI") or "")
    authors = record.get("author") or []
    first = authors[0] if authors else {}
    found = pub_date(record)
    year = str(found.year) if found else ""
    stem = str(first.get("family") or first.get("name") or "").replace(" ", "_") or "Unknown"
    key = f"{stem}_{year}" if year else stem
    fields: list[str] = []
    title = _field_text(record, "title")
    if title:
        fields.append(f"title={{{title}}}")
    fields += [f"url={{http://dx.doi.org/{doi}}}", f"DOI={{{doi}}}"]
    journal = _field_text(record, "container-title")
    if journal:
        fields.append(f"journal={{{journal}}}")
    if record.get("publisher"):
        fields.append(f"publisher={{{record['publisher']}}}")
    names = []
    for person in authors:
        if person.get("family"):
            given = f", {person['given']}" if person.get("given") else ""
            names.append(f"{person['family']}{given}")
        elif person.get("name"):
            names.append(str(person["name"]))
    if names:
        fields.append(f"author={{{' and '.join(names)}}}")
    if year:
        fields.append(f"year={{{year}}}")
    parts = ((record.get("published") or record.get("issued") or {}).get("date-parts")) or [[]]
    if parts and len(parts[0]) > 1 and parts[0][1]:
        fields.append(f"month={_MONTHS[int(parts[0][1]) - 1]}")
    kind = _BIBTEX_TYPES.get(str(record.get("type") or ""), "misc")
    return f" @{kind}{{{key}, {', '.join(fields)} }}"


def mirror_notices(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Notice records for ``updated-by`` entries whose notice DOI has no record of its own.

    Real notices carry the matching ``update-to``; the fixtures only hold the works' side for some
    of them (Wakefield's 2004 correction and 2010 retraction, the Cochrane withdrawal). The mirror
    copies each entry (type, label, source, record id, date) into ``update-to``, dates the notice
    by the update and titles it by label and work, so notice searches have those data too.
    """
    mirrored: dict[str, dict[str, Any]] = {}
    for record in records.values():
        for entry in record.get("updated-by") or []:
            notice_doi = str(entry.get("DOI") or "").lower()
            if not notice_doi or notice_doi in records:
                continue
            update = {**entry, "DOI": record["DOI"]}
            if notice_doi in mirrored:
                mirrored[notice_doi]["update-to"].append(update)
                continue
            when = entry.get("updated") or {}
            title = _field_text(record, "title")
            mirrored[notice_doi] = {
                "DOI": notice_doi,
                "type": "journal-article",
                "title": [f"{entry.get('label') or entry.get('type')}: {title}"],
                "container-title": list(record.get("container-title") or []),
                "publisher": record.get("publisher"),
                "issued": {"date-parts": when.get("date-parts") or [[]]},
                "published": {"date-parts": when.get("date-parts") or [[]]},
                "update-to": [update],
                "URL": f"https://doi.org/{notice_doi}",
            }
    return mirrored
