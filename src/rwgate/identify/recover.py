"""DOI recovery (``--recover-dois``): an entry without a DOI gets the DOI of a verified match.

The entry is searched in Crossref and OpenAlex (:func:`rwgate.identify.lookup.look_up`) and the
best candidate scored by the one "same work?" rule (:func:`rwgate.identify.same.score`); only a
``verified`` match lends its DOI (``doi_origin="title"``, with the match's confidence). A source
that cannot be asked costs only the entries it leaves unmatched (``no_doi``, and a warning).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rwgate.contract.models import Reference
from rwgate.identify.lookup import Answers, Registries, best, look_up
from rwgate.identify.same import VERIFIED

ENTRY_THREADS = 3


@dataclass
class Recovery:
    """What DOI recovery found: the references (recovered ones with ``doi_origin="title"``), the
    match confidence of each recovery by position, and why some could not be tried."""

    references: list[Reference]
    confidence: dict[int, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def recoverable(ref: Reference) -> bool:
    """Only entries with a title and at least a year or a journal are tried: a title alone
    ("Editorial retraction") names too many works to stake a retraction verdict on."""
    return (
        ref.doi is None
        and ref.raw_doi is None
        and not ref.missing
        and bool(ref.title)
        and bool(ref.year or ref.journal)
    )


def recover_dois(references: Sequence[Reference], regs: Registries) -> Recovery:
    """References without a DOI get the DOI of a ``verified`` match; the input is not modified."""
    out = Recovery(list(references))
    wanted = [i for i, r in enumerate(references) if recoverable(r)]
    if not wanted:
        return out
    cited = [references[i] for i in wanted]
    with ThreadPoolExecutor(max_workers=ENTRY_THREADS) as pool:
        found = list(pool.map(lambda c: look_up(regs, c, None), cited))
    failed: dict[str, str] = {}
    for i, ref, answers in zip(wanted, cited, found, strict=True):
        failed.update(answers.failed)
        match = best(ref, None, answers)
        if match is not None and match[1].total >= VERIFIED and match[0].doi:
            confidence = match[1].total
            update = {"doi": match[0].doi, "doi_origin": "title", "doi_confidence": confidence}
            out.references[i] = out.references[i].model_copy(update=update)
            out.confidence[i] = confidence
    out.warnings += _warnings(found, failed)
    return out


def _warnings(found: Sequence[Answers], failed: dict[str, str]) -> list[str]:
    if not failed:
        return []
    why = "; ".join(f"{name}: {reason}" for name, reason in sorted(failed.items()))
    lost = sum(not answers.answered for answers in found)
    if lost:
        entries = f"{lost} entr{'y' if lost == 1 else 'ies'}"
        return [
            f"DOI recovery: no source could be asked for {entries} ({why}); they stay unchecked"
        ]
    return [f"DOI recovery: some sources could not be asked ({why}); the others answered"]
