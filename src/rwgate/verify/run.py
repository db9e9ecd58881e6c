"""``rwgate verify refs.bib``: does every entry exist, does it match, and is it retracted?

Report formats and exit codes are those of ``rwgate check``: text (or ``--format json``, the
``rwgate.verify/1`` report, also written to ``-o`` and the ``report`` setting); exit 0 when the
gate passes, 1 when it fails, 2 for bad usage or unreadable input. The gate fails for an entry
that is ``not_found`` (the work does not exist as cited), for an integrity status the policy
fails (``--policy strict`` fails retracted works), for ``unverified`` where the policy fails
unverified works, and for ``partial_match`` with ``--fail-on-partial``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rwgate import __version__
from rwgate.errors import RwgateError
from rwgate.models import Problem, ToolInfo
from rwgate.verify.models import VERDICTS, VerifyResult

VERIFY_SCHEMA = "rwgate.verify/1"
EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2


class VerifyReport(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=VERIFY_SCHEMA, alias="schema")
    generated: dt.datetime
    tool: ToolInfo
    sources_answered: list[str]
    sources_failed: dict[str, str]
    summary: dict[str, int]
    results: list[VerifyResult]
    problems: list[str] = Field(default_factory=list)
    exit_code: int

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2, exclude_none=True)


def _fails(result: VerifyResult, policy: Any, fail_on_partial: bool) -> bool:
    if result.verdict == "not_found":
        return True
    if result.verdict == "unverified":
        return bool(policy.action("unverified") == "fail")
    if result.integrity is not None and result.integrity.action == "fail":
        return True
    return result.verdict == "partial_match" and fail_on_partial


def _load(paths: list[Path]) -> tuple[list[Any], list[Problem], bool]:
    from rwgate.references import load_bibliography
    from rwgate.verify.bibfields import entry_links
    from rwgate.verify.models import Cited

    cited: list[Cited] = []
    problems: list[Problem] = []
    unreadable = False
    for path in paths:
        try:
            bib = load_bibliography(path)
        except (RwgateError, OSError, ValueError) as exc:
            problems.append(Problem(message=str(exc), severity="error"))
            unreadable = True
            continue
        problems += bib.problems
        links = entry_links(path)
        for ref in bib.references:
            more = links.get(ref.key)
            cited.append(
                Cited(
                    key=ref.key,
                    title=ref.title,
                    authors=ref.authors,
                    year=ref.year,
                    doi=ref.doi or ref.raw_doi,
                    arxiv_id=more.arxiv_id if more else None,
                    url=more.url if more and not ref.doi else None,
                    venue=ref.journal,
                    location=ref.location,
                )
            )
    return cited, problems, unreadable


def run_verify(args: argparse.Namespace) -> int:
    from rwgate.cli import emit_report, flag_overrides
    from rwgate.config import load_settings
    from rwgate.verify.render import render_verify_text
    from rwgate.verify.verify import verify_many

    cited, problems, unreadable = _load(args.inputs)
    overrides = flag_overrides(args)
    if args.openalex_url:
        overrides["openalex_url"] = args.openalex_url
    try:
        settings = load_settings(args.inputs[0], overrides=overrides)
        policy = settings.to_policy()
        sources = [s for s in (args.sources or "").split(",") if s.strip()] or None
        results = verify_many(cited, settings, sources) if cited else []
    except (RwgateError, ValueError) as exc:
        print(f"rwgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    failed = sum(_fails(r, policy, args.fail_on_partial) for r in results)
    code = EXIT_USAGE if unreadable else (EXIT_GATE if failed else EXIT_OK)
    report = _report(results, problems, code, failed)
    if not emit_report(
        args,
        report.to_json(),
        lambda colour: render_verify_text(report, colour, args.verbose),
        settings.report,
    ):
        return EXIT_USAGE
    return code


def _report(
    results: list[VerifyResult], problems: list[Problem], code: int, failed: int
) -> VerifyReport:
    answered: list[str] = []
    failed_sources: dict[str, str] = {}
    for r in results:
        answered += [s for s in r.sources_answered if s not in answered]
        for name, reason in r.sources_failed.items():
            failed_sources.setdefault(name, reason)
    summary: dict[str, int] = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    summary["entries"] = len(results)
    summary["flagged"] = sum(
        r.integrity is not None and r.integrity.status not in ("clean", "unverified")
        for r in results
    )
    summary["failed"] = failed
    return VerifyReport(
        generated=dt.datetime.now(dt.UTC),
        tool=ToolInfo(version=__version__),
        sources_answered=answered,
        sources_failed={k: v for k, v in failed_sources.items() if k not in answered},
        summary=summary,
        results=results,
        problems=[str(p) for p in problems],
        exit_code=code,
    )
