"""The screen's summary page: inline SVG bars (no script, nothing to fetch), rendered by Jinja2
with autoescaping, so a DOI or a file name from a corpus stays text; written atomically.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from rwgate.contract.vocab import STATUSES, notice_label, severity, status_label
from rwgate.fsutil import write_atomic

_W, _H = 640, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 12, 14, 64  # room for the y ticks, the x labels, the titles


def write_json(summary: dict[str, Any], path: Path) -> None:
    write_atomic(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


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
    axis = sorted({0, top // 2, top})  # whole numbers, each once
    ticks = [{"n": t, "y": round(_TOP + plot_h - plot_h * t / top, 1)} for t in axis]
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
    """A DOI cut after each ``/`` and ``.``: the page lets a long DOI wrap there (``<wbr>``) and
    nowhere else, never in the middle of a number."""
    return [p for p in re.split(r"(?<=[/.])", doi) if p]


def code_spans(text: str) -> list[tuple[bool, str]]:
    """``text`` cut at its backticks: (is code, part). A warning names a command as Markdown
    does (```rwgate data update```); the page shows it as code, not as literal backticks."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code, and no backtick shown either
        return [(False, text.replace("`", ""))]
    return [(i % 2 == 1, p) for i, p in enumerate(parts) if p]


SEVERITY_COLOURS: dict[str, tuple[str, str, str]] = {
    "retracted": ("#a3201a", "#fff", "#a3201a"),
    "concern": ("#f2c94c", "#3b2f00", "#9c7a12"),
    "correction": ("#dbe8f7", "#12375e", "#7fa3cc"),
    "unverified": ("#fff", "#333", "#666"),
    "clean": ("#dcefe0", "#17442a", "#dcefe0"),
}
"""Badge colours (background, text, border) per severity: the palette of ``rwgate check``'s
report (``rwgate/render/templates/report.html.j2``, ``.badge.sev-*``), copied here so every page
rwgate writes colours a status alike; ``tests/e2e/test_screen_html.py`` compares the two."""


@lru_cache(maxsize=1)
def _template() -> Template:
    env = Environment(
        loader=PackageLoader("rwgate.frontends.screen", "templates"),
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
        badge={str(s): f"sev-{severity(s)}" for s in STATUSES},  # check's report's classes
        doi_parts=doi_parts,
        code_spans=code_spans,
        colours=SEVERITY_COLOURS,
    )


def write_html(summary: dict[str, Any], path: Path) -> None:
    write_atomic(path, render_html(summary))
