"""The screen's summary: JSON (``rwgate.screen/2``) and the page an integrity officer acts on.

The plots are inline SVG drawn here (bars only: no script, no external file, nothing to fetch),
and the page goes through Jinja2 with autoescaping, so a DOI or a file name from a corpus stays
text. JSON and HTML are written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from rwgate.fsutil import write_atomic
from rwgate.vocab import notice_label, status_label

_W, _H = 640, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 12, 14, 64  # room for the y ticks, the x labels, the titles


def write_json(summary: dict[str, Any], path: Path) -> None:
    write_atomic(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def _ticks(top: int) -> list[int]:
    """0, the middle and the top of a count axis (whole numbers, each once)."""
    return sorted({0, top // 2, top}) if top > 1 else [0, top]


def bars(points: list[tuple[str, int]], title: str, x_label: str, y_label: str) -> dict[str, Any]:
    """A bar chart as numbers the template draws: a ``<rect>`` and a label per point (every
    point, so a year without a flagged citation is a visible gap, not a skipped year), the count
    axis with its ticks, and both axes named."""
    top = max((n for _, n in points), default=0) or 1
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    width = plot_w / max(len(points), 1)
    shown = []
    for i, (label, n) in enumerate(points):
        height = plot_h * n / top
        shown.append(
            {
                "x": round(_LEFT + i * width + 1, 1),
                "y": round(_TOP + plot_h - height, 1),
                "w": round(max(width - 2, 1), 1),
                "h": round(height, 1),
                "mid": round(_LEFT + (i + 0.5) * width, 1),
                "label": label,
                "n": n,
            }
        )
    ticks = [{"n": t, "y": round(_TOP + plot_h - plot_h * t / top, 1)} for t in _ticks(top)]
    return {
        "title": title, "bars": shown, "ticks": ticks, "w": _W, "h": _H, "left": _LEFT,
        "right": _W - _RIGHT, "top": _TOP, "base": _TOP + plot_h, "x_label": x_label,
        "y_label": y_label,
    }  # fmt: skip


def years(points: list[list[int]]) -> list[tuple[str, int]]:
    """Every year from the first to the last citing year, those without a count at 0."""
    counts = {y: n for y, n in points}
    if not counts:
        return []
    return [(str(y), counts.get(y, 0)) for y in range(min(counts), max(counts) + 1)]


def charts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    shares = dict((b, n) for b, n in summary["flagged_share"])
    share_points = [(f"{b * 5}%", shares.get(b, 0)) for b in range(20)]
    return [
        bars(
            share_points,
            "Citing works with a flagged reference, by the share of their references flagged",
            "share of the citing work's references that are flagged (5-point bins)",
            "citing works",
        ),
        bars(
            years(summary["flagged_by_citing_year"]),
            "Flagged citations by the year of the citing work",
            "year the citing work appeared",
            "flagged citations",
        ),
    ]


def doi_parts(doi: str) -> list[str]:
    """A DOI cut at each ``/``: the page lets a long DOI wrap there (``<wbr>``)."""
    return doi.split("/")


def _badges() -> dict[str, str]:
    """Each status's badge class: the action ``rwgate check``'s default policy takes on it, so
    the screen's colours are check's (flagged: annotate; corrections: no action; unjudged: warn)."""
    from rwgate.policy import preset_actions

    return {str(s): str(a) for s, a in preset_actions("default").items()}


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
        label=status_label,
        notice_label=notice_label,
        badge=_badges(),
        doi_parts=doi_parts,
    )


def write_html(summary: dict[str, Any], path: Path) -> None:
    write_atomic(path, render_html(summary))
