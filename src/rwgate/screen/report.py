"""The screen's summary: JSON (``rwgate.screen/1``) and a page with plots a person would look at.

The plots are inline SVG drawn here (bars only: no script, no external file, nothing to fetch),
and the page goes through Jinja2 with autoescaping, so a DOI or a file name from a corpus stays
text. JSON and HTML are written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from rwgate.vocab import STATUS_LABELS

_W, _H, _PAD = 640, 220, 36


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(summary: dict[str, Any], path: Path) -> None:
    _atomic(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def bars(points: list[tuple[str, int]], title: str) -> dict[str, Any]:
    """A bar chart as numbers the template draws (``<rect>`` per bar, labels under them)."""
    top = max((n for _, n in points), default=0) or 1
    width = (_W - 2 * _PAD) / max(len(points), 1)
    shown = []
    for i, (label, n) in enumerate(points):
        height = (_H - 2 * _PAD) * n / top
        shown.append(
            {
                "x": round(_PAD + i * width + 1, 1),
                "y": round(_H - _PAD - height, 1),
                "w": round(max(width - 2, 1), 1),
                "h": round(height, 1),
                "label": label,
                "n": n,
                "tick": len(points) <= 20 or i % max(len(points) // 10, 1) == 0,
            }
        )
    return {"title": title, "bars": shown, "w": _W, "h": _H, "pad": _PAD, "top": top}


def charts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    shares = dict((b, n) for b, n in summary["flagged_share"])
    share_points = [(f"{b * 5}%", shares.get(b, 0)) for b in range(20)]
    years = [(str(y), n) for y, n in summary["flagged_by_citing_year"]]
    return [
        bars(share_points, "Citing works by share of flagged references (works with any)"),
        bars(years, "Flagged citations per year of the citing work"),
    ]


@lru_cache(maxsize=1)
def _template() -> Template:
    env = Environment(
        loader=PackageLoader("rwgate.screen", "templates"),
        autoescape=select_autoescape(["html.j2"], default=True),
        undefined=StrictUndefined,
    )
    return env.get_template("screen.html.j2")


def render_html(summary: dict[str, Any]) -> str:
    return _template().render(
        s=summary,
        charts=charts(summary),
        label=lambda status: STATUS_LABELS.get(status, status),
    )


def write_html(summary: dict[str, Any], path: Path) -> None:
    _atomic(path, render_html(summary))
