"""The MCP tools' work, as plain synchronous methods (the server runs them off the event loop).

Every verdict comes from :func:`rwgate.core.check` with the settings ``rwgate check`` would use for
the same input: a document's own ``rwgate:`` metadata and the ``rwgate.toml``/``pyproject.toml``
found upward from it, then the flags the server was started with. Searches and records come from
:class:`~rwgate.identify.crossref_search.CrossrefQuery`. Nothing here fetches a URL a client chose:
the only hosts asked are the configured Crossref (and the snapshot file).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.contract.models import Location, Reference
from rwgate.errors import RwgateError
from rwgate.frontends.door import (
    TTL_FEED,
    TTL_SEARCH,
    TTL_WORK,
    AuthoredWork,
    CrossrefQuery,
    Progress,
    Snapshot,
    SnapshotError,
    SourceUnavailable,
    author_names,
)
from rwgate.frontends.kit import judge
from rwgate.frontends.mcp import offline, safety
from rwgate.frontends.mcp.models import (
    AuthorCheck,
    AuthorWork,
    BatchCheck,
    CrossrefStatus,
    DataStatus,
    DocumentCheck,
    DoiCheck,
    NoticeSearch,
    RecentNotices,
    Record,
)
from rwgate.frontends.mcp.safety import BadArgument, Roots
from rwgate.frontends.mcp.safety import one_line as _one_line
from rwgate.identify.ids import arxiv_id, identifiers_in_url
from rwgate.readers import load_bibliography, parse_bibliography
from rwgate.readers.bibliographies.registry import is_manuscript, suffixes
from rwgate.readers.gather import Gathered, doi_reference
from rwgate.readers.locate import OUTSIDE
from rwgate.readers.pandoc_exe import bounds as pandoc_bounds
from rwgate.settings.config import USER_KEYS, ConfigError, Settings, load_settings
from rwgate.verdicts.result import FLAGGED

_READ_ERRORS = (RwgateError, OSError, ValueError, UnicodeDecodeError)


def work_reference(raw: str, where: str) -> Reference:
    """The work an agent names by a DOI or an arXiv id (``1706.03762``, ``arXiv:1706.03762v2``,
    ``hep-th/9901001``, an arxiv.org URL), as ``rwgate check`` reads a BibTeX entry with that
    ``eprint`` (or ``url``): its id is looked up by the identify stage, as its DataCite DOI, so
    the verdict is the one the build gives. Anything else is a DOI as written (``invalid_doi``
    when it is none: never dropped)."""
    text, place = raw.strip(), Location(file=where)
    if try_normalize(text) is None:
        if (bare := arxiv_id(text)) is not None:
            return Reference(key=f"arXiv:{bare}", arxiv_id=text, location=place)
        if (linked := identifiers_in_url(text)[1]) is not None:
            return Reference(key=f"arXiv:{linked}", url=text, location=place)
    return doi_reference(raw, where=where)


class Toolbox:
    """The state one server shares between calls: roots, start-up flags, a Crossref client.

    Arguments arrive checked against the tool's input schema (types, ranges such as ``limit``,
    list lengths); the methods check what a schema cannot say."""

    def __init__(self, roots: Sequence[Path], overrides: Mapping[str, Any] | None = None) -> None:
        self.roots = Roots(roots)
        self.overrides = dict(overrides or {})
        self.settings = load_settings(self.roots.paths[0], overrides=self.overrides)
        self.query = CrossrefQuery(self.settings)

    def close(self) -> None:
        self.query.close()
        self.query.cache.close()

    # --- verdicts ----------------------------------------------------------------------------

    def check_doi(self, doi: str) -> DoiCheck:
        (raw,) = safety.batch_within_limit([doi], "doi")
        result = judge([work_reference(raw, where="rw_check_doi")], self.settings)
        report = result.report()
        return DoiCheck(
            citation=result.citations[0], sources=report.sources, warnings=report.warnings
        )

    def check_dois(self, dois: Sequence[str], progress: Progress | None = None) -> BatchCheck:
        values = safety.batch_within_limit(dois, "dois")
        refs = [work_reference(d, where=f"rw_check_dois[{i}]") for i, d in enumerate(values)]
        result = judge(refs, self.settings, progress=progress)
        report = result.report()
        return BatchCheck(
            citations=result.citations,
            summary=report.summary,
            sources=report.sources,
            warnings=report.warnings,
        )

    def check_bibliography(
        self, path: str | None, text: str | None, progress: Progress | None = None
    ) -> DocumentCheck:
        if (path is None) == (text is None):
            raise BadArgument("give exactly one of path or text")
        if text is not None:
            safety.text_within_limit(text, "text")
            try:
                found = parse_bibliography(text, "<text>")
            except _READ_ERRORS as exc:
                raise BadArgument(f"text: {_one_line(exc)}") from None
            except RecursionError:
                raise BadArgument("text: nested too deeply to be read") from None
            return self._judged(Gathered(found.references, found.problems), None, progress)
        real = self.roots.confine(str(path))
        if is_manuscript(real):
            raise BadArgument(f"path: {path} is a manuscript; use rw_check_manuscript")
        try:
            found = load_bibliography(real)
        except _READ_ERRORS as exc:
            raise BadArgument(_one_line(exc)) from None
        return self._judged(Gathered(found.references, found.problems), real, progress)

    def check_manuscript(self, path: str, progress: Progress | None = None) -> DocumentCheck:
        real = self.roots.confine(path)
        if not is_manuscript(real):
            kinds = ", ".join(suffixes(["manuscript"]))
            raise BadArgument(
                f"path: {path} is not a manuscript ({kinds}); see rw_check_bibliography"
            )
        size = real.stat().st_size
        if size > safety.MAX_MANUSCRIPT_BYTES:
            raise BadArgument(
                f"path: {path} is {size} bytes; the limit is {safety.MAX_MANUSCRIPT_BYTES} per "
                "call: check its chapters one by one, or run `rwgate check` on it"
            )
        return self._judged(self._gather_manuscript(real), real, progress)

    def _gather_manuscript(self, real: Path) -> Gathered:
        """What ``gather_inputs`` reads for a manuscript, refusing any file outside the roots.

        A LaTeX include or ``.aux``/``.bcf`` outside is refused before it is opened; pandoc's
        sandbox keeps other formats to the manuscript; bibliographies are checked here, before
        they are read.
        """
        from rwgate.readers.join import cited_references
        from rwgate.readers.manuscripts.manuscript import read_manuscript

        try:
            doc = read_manuscript(real, allowed=self.roots.allows)
            if any(not self.roots.allows(Path(b)) for b in doc.bibliographies) or (
                self.roots.hides_a_bibliography([p.message for p in doc.problems], real)
            ):
                raise BadArgument(f"a bibliography {OUTSIDE}")  # never named, found or not
            refused = [p for p in doc.problems if OUTSIDE in p.message]
            if refused:
                raise BadArgument(str(refused[0]))
            found = cited_references(doc)
        except BadArgument:
            raise
        except _READ_ERRORS as exc:
            raise BadArgument(_one_line(exc)) from None
        gathered = Gathered(found.references, found.problems, dict(doc.metadata))
        gathered.project_metadata = doc.project_metadata
        return gathered

    def _settings_for(self, real: Path, metadata: Mapping[str, Any]) -> Settings:
        """The document's settings, as ``rwgate check`` finds them, except where it reaches out.

        A manuscript an agent drafts can carry an ``rwgate:`` block (or an ``rwgate.toml`` beside
        it); under MCP it may choose the policy, overrides, allow-list and template, but not which
        servers are asked or which files are read and written: those stay the server's own.
        """
        try:
            found = load_settings(
                real,
                overrides=self.overrides,
                metadata=metadata,
                metadata_name=f"{real}: rwgate metadata",
            )
        except ConfigError as exc:
            raise BadArgument(_one_line(exc)) from None
        return found.model_copy(update={k: getattr(self.settings, k) for k in USER_KEYS})

    def _judged(
        self, found: Gathered, real: Path | None, progress: Progress | None
    ) -> DocumentCheck:
        """The verdicts on a file's (or a text's) works, as ``rwgate check`` gives them: an input
        it cannot read (a bibliography the manuscript names that is not there) is exit code 2,
        whatever the verdicts of the citations it could read."""
        safety.works_within_limit(found.references, "text" if real is None else "path")
        settings = self.settings if real is None else self._settings_for(real, found.metadata)
        result = judge(found.references, settings, found.problems, progress)
        result.project_metadata = found.project_metadata
        report = result.report()
        code = 2 if any(p.unreadable for p in result.problems) else result.exit_code
        return DocumentCheck(
            path=str(real) if real else None,
            gate="fail" if code else "pass",
            exit_code=code,
            policy=report.policy,
            config_file=settings.config_file,
            citations=result.citations,
            summary=report.summary,
            sources=report.sources,
            project_metadata=result.project_metadata,
            warnings=report.warnings,
        )

    # --- searches ----------------------------------------------------------------------------

    def check_author(
        self, name: str, limit: int, year_min: int | None, year_max: int | None
    ) -> AuthorCheck:
        """Crossref's author search and the snapshot's author names (Retraction Watch rows list
        works Crossref's relevance ranking may leave out), judged as ``rwgate check`` judges."""
        text = safety.short_text(name, "name", safety.MAX_NAME)
        if text is None or sum(c.isalpha() for c in text) < 2:
            raise BadArgument("name: give an author name such as 'A. J. Wakefield'")
        filters = [f"from-pub-date:{y}" for y in [safety.year_text(year_min, "year_min")] if y]
        filters += [f"until-pub-date:{y}" for y in [safety.year_text(year_max, "year_max")] if y]
        params = {"query.author": text, "rows": str(limit), "select": offline.AUTHOR_SELECT}
        if filters:
            params["filter"] = ",".join(filters)
        failed: list[str] = []
        try:
            items = self.query.works(params, TTL_SEARCH).items
        except SourceUnavailable as exc:
            items, failed = [], [_one_line(exc)]
        held, notes = self._authored(text, limit, year_min, year_max, failed)
        warnings = [f"Crossref not searched ({f}): the snapshot's names only" for f in failed]
        warnings += notes
        matched = [
            (str(i["DOI"]), author_names(i.get("author")))
            for i in items
            if i.get("DOI") and offline.author_matches(text, i.get("author"))
        ]
        seen = {try_normalize(doi) for doi, _ in matched}
        matched += [(w.doi, w.authors) for w in held if w.doi not in seen]
        refs = [doi_reference(doi, where="rw_check_author") for doi, _ in matched]
        result = judge(refs, self.settings)
        flagged = [
            AuthorWork(authors=authors, citation=citation)
            for (_, authors), citation in zip(matched, result.citations, strict=True)
            if citation.status in FLAGGED
        ]
        report = result.report()
        return AuthorCheck(
            name=text,
            searched=len(items) + len(held),
            matched=len(matched),
            flagged=flagged,
            sources=report.sources,
            warnings=warnings + report.warnings,
        )

    def _authored(
        self, name: str, rows: int, year_min: int | None, year_max: int | None, failed: list[str]
    ) -> tuple[list[AuthoredWork], list[str]]:
        """The snapshot's works of ``name``; when Crossref ``failed`` too and there is no
        snapshot, a one-line refusal naming both."""

        def ask(snap: Snapshot) -> tuple[list[AuthoredWork], list[str]]:
            return offline.authored_works(snap, name, rows, year_min, year_max)

        if failed:
            found, _ = offline.answer(self.settings, failed[0], ask)
            return found or ([], [])
        try:
            with offline.opened(self.settings) as snap:
                return ask(snap) if snap is not None else ([], [])
        except SnapshotError as exc:
            return [], [f"the snapshot was not searched: {_one_line(exc)}"]

    def search(
        self,
        query: str | None,
        journal: str | None,
        year_min: int | None,
        year_max: int | None,
        update_types: Sequence[str] | None,
        posted_since: str | None,
        limit: int,
    ) -> NoticeSearch:
        types = safety.update_types(update_types)
        filters = [f"update-type:{t}" for t in types]
        title = safety.short_text(journal, "journal")
        if title is not None:
            if "," in title:
                raise BadArgument("journal: a journal title cannot contain a comma here")
            filters.append(f"container-title:{title}")
        low, high = safety.year_text(year_min, "year_min"), safety.year_text(year_max, "year_max")
        filters += [f"from-pub-date:{y}" for y in [low] if y]
        filters += [f"until-pub-date:{y}" for y in [high] if y]
        since = safety.date_text(posted_since, "posted_since")
        if since:
            filters.append(f"from-update-date:{since}")
        text = safety.short_text(query, "query")
        wanted = offline.queries.NoticeFilter(
            offline.words(text), title, year_min, year_max, types, offline.since_date(since)
        )
        return self._notices(filters, text, wanted, limit, TTL_SEARCH)

    def recent(self, limit: int, update_types: Sequence[str] | None) -> RecentNotices:
        types = safety.update_types(update_types) or ["retraction"]
        filters = [f"update-type:{t}" for t in types]
        wanted = offline.queries.NoticeFilter(types=types)
        found = self._notices(filters, None, wanted, limit, TTL_FEED)
        journals = collections.Counter(n.journal or "(no journal)" for n in found.notices)
        return RecentNotices(**dict(found), by_journal=dict(journals))

    def _notices(
        self,
        filters: list[str],
        query: str | None,
        wanted: offline.queries.NoticeFilter,
        limit: int,
        ttl: float,
    ) -> NoticeSearch:
        """Crossref's notices with these ``filters`` (newest update first); when it cannot
        answer, the snapshot's for ``wanted`` (newest first by notice date), saying which source
        answered."""
        params = {
            "filter": ",".join(["is-update:true", *filters]),
            "sort": "updated",
            "order": "desc",
            "rows": str(limit),
            "select": offline.NOTICE_SELECT,
        }
        if query:
            params["query.bibliographic"] = query
        try:
            found = self.query.works(params, ttl)
        except SourceUnavailable as exc:
            ask = functools.partial(offline.notices, wanted=wanted, limit=limit)
            held, sources = offline.answer(self.settings, _one_line(exc), ask)
            total, notices = held or (0, [])
            return NoticeSearch(total=total, notices=notices, request=params, sources=sources)
        notices = [offline.notice_record(i) for i in found.items if i.get("DOI")]
        sources = offline.crossref_answered(self.settings)
        return NoticeSearch(total=found.total, notices=notices, request=params, sources=sources)

    def get_record(self, doi: str | None, record_id: str | None = None) -> Record:
        return offline.get_record(self.query, self.settings, doi, record_id)

    # --- status ------------------------------------------------------------------------------

    def data_status(self) -> DataStatus:
        from rwgate.frontends.door import snapshot_status

        s = self.settings
        snap = snapshot_status(s.snapshot)
        cache_dir = None if s.no_cache else str(s.cache_folder)
        return DataStatus(
            offline=s.offline,
            crossref=CrossrefStatus(url=s.crossref_url, polite_pool=bool(s.mailto)),
            openalex_url=s.openalex_url,
            cache_dir=cache_dir,
            cache_ttl_hours={
                "work": TTL_WORK / 3600,
                "search": TTL_SEARCH / 3600,
                "feed": TTL_FEED / 3600,
            },
            snapshot=snap,
            snapshot_stale=(
                None if snap.age_days is None else snap.age_days > s.max_snapshot_age_days
            ),
            max_snapshot_age_days=s.max_snapshot_age_days,
            policy=s.to_policy().describe(),
            roots=[str(p) for p in self.roots.paths],
            limits={
                "batch": safety.MAX_BATCH,
                "text_bytes": safety.MAX_TEXT_BYTES,
                "file_bytes": safety.MAX_FILE_BYTES,
                "manuscript_bytes": safety.MAX_MANUSCRIPT_BYTES,
                "works": safety.MAX_WORKS,
                "pandoc_seconds": int(pandoc_bounds()[0]),
                "pandoc_heap_mb": pandoc_bounds()[1],
                "rows": safety.MAX_LIMIT,
            },
        )
