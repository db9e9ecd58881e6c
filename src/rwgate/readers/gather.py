"""What the user pointed rwgate at, turned into references: a manuscript contributes the works it
cites, a bibliography alone all its entries, ``--doi`` values one each. ``rwgate check`` and the
MCP tools share it, so both see a document the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.contract.models import Location, Problem, Reference
from rwgate.errors import RwgateError
from rwgate.readers import load_bibliography
from rwgate.readers.bibliographies.registry import STDIN, reader_for


@dataclass
class Gathered:
    references: list[Reference] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    project_metadata: list[str] = field(default_factory=list)
    """Project files (``_quarto.yml``, bookdown's ``index.Rmd``...) a manuscript's metadata came
    from besides its own: the report names them."""
    cited_at: dict[str, list[Location]] = field(default_factory=dict)
    """Key -> the manuscript lines citing it (SARIF annotates those, not only the entry)."""


def doi_reference(raw: str, where: str = "--doi") -> Reference:
    """A reference for a DOI typed on the command line or passed to a tool."""
    doi = try_normalize(raw)
    return Reference(
        key=doi or raw.strip() or '""',
        doi=doi,
        raw_doi=None if doi else raw.strip() or '""',
        location=Location(file=where),
    )


def _read_manuscript(path: Path, out: Gathered) -> None:
    from rwgate.readers.join import cited_references
    from rwgate.readers.manuscripts.citescan import cited_places
    from rwgate.readers.manuscripts.manuscript import read_manuscript

    doc = read_manuscript(path)
    if not out.metadata:
        out.metadata = dict(doc.metadata)
    out.project_metadata += [f for f in doc.project_metadata if f not in out.project_metadata]
    result = cited_references(doc)
    out.references.extend(result.references)
    out.problems.extend(result.problems)
    text = path.read_bytes().decode("utf-8", "replace")  # (standard input is never a manuscript)
    for key, places in cited_places(doc, text).items():
        out.cited_at.setdefault(key, []).extend(places)


def gather_inputs(paths: Sequence[Path], dois: Sequence[str] = ()) -> Gathered:
    """References from every input; an unreadable file is recorded and the rest still read."""
    out = Gathered()
    for path in paths:
        if str(path) != STDIN and not path.is_file():
            why = "is a folder, not a file" if path.is_dir() else "no such file"
            out.unreadable.append(str(path))
            out.problems.append(Problem(message=f"{path}: {why}", severity="error"))
            continue
        try:
            if reader_for(path).kind == "manuscript":  # an unknown suffix: an error, nothing read
                _read_manuscript(path, out)
            else:
                result = load_bibliography(path)
                out.references.extend(result.references)
                out.problems.extend(result.problems)
        except (RwgateError, OSError, ValueError) as exc:
            out.unreadable.append(str(path))
            out.problems.append(Problem(message=str(exc), severity="error"))
    out.references.extend(doi_reference(d) for d in dois)
    out.unreadable.extend(str(p) for p in out.problems if p.unreadable)
    return out
