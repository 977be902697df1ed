"""Small inline SVG charts, drawn here so a site needs no script, font or library at view time.

Two charts, both for a reader who would rather look than read: a numeric claim's published value
against the value derived at each milestone, and how many real changes each source had between
neighbouring milestones. Colours come from CSS classes, so the page's light and dark schemes
apply; every chart carries a text title and description for screen readers, and the numbers it
draws are also in the tables beside it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ClaimPoint", "changes_chart", "claim_chart", "si"]

WIDTH, HEIGHT = 360, 190
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 14, 40


@dataclass(frozen=True)
class ClaimPoint:
    milestone: str
    published: float | None
    derived: float | None
    verdict: str  # holds, fails, gap


def si(number: float, digits: int = 4) -> str:
    """A short axis label: 18.0T, 535B, 312k, 0.97."""
    magnitude = abs(number)
    for size, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if magnitude >= size:
            return f"{number / size:.{digits}g}{suffix}"
    return f"{number:.{digits}g}"


def _ticks(values: Sequence[float]) -> list[str]:
    """Tick labels with as many digits as it takes to tell them apart (a narrow range)."""
    for digits in range(4, 13):
        labels = [si(v, digits) for v in values]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def _fmt(x: float) -> str:
    return f"{x:.1f}"


def _scale(low: float, high: float) -> tuple[float, float]:
    if low == high:
        pad = abs(low) * 0.05 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.12
    return low - pad, high + pad


def _x(index: int, count: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return LEFT + (span / 2 if count == 1 else span * index / (count - 1))


def claim_chart(name: str, points: Sequence[ClaimPoint], ident: str) -> str:
    """Published (dashed) against derived (solid, one dot per milestone, coloured by verdict)."""
    e = html.escape
    values = [v for p in points for v in (p.published, p.derived) if v is not None]
    low, high = _scale(min(values), max(values))

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (high - v) / (high - low)

    count = len(points)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d">',
        f'<title id="{ident}-t">{e(name)}: published and derived value per milestone</title>',
        f'<desc id="{ident}-d">'
        + e(
            "; ".join(
                f"{p.milestone}: derived {si(p.derived) if p.derived is not None else 'none'}"
                f", published {si(p.published) if p.published is not None else 'none'}"
                f", {p.verdict}"
                for p in points
            )
        )
        + "</desc>",
    ]
    ticks = [low + (high - low) * (tick + 0.5) / 3 for tick in range(3)]
    for v, label in zip(ticks, _ticks(ticks), strict=True):
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_fmt(y(v))}" '
            f'y2="{_fmt(y(v))}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{_fmt(y(v) + 4)}" text-anchor="end">'
            f"{e(label)}</text>"
        )
    # As many milestone names as fit side by side (about 70 px each), always the last one.
    every = max(1, math.ceil(count / max(1, (WIDTH - LEFT - RIGHT) // 70)))
    for index, point in enumerate(points):
        if index % every and index != count - 1:
            continue
        label = point.milestone if len(point.milestone) <= 14 else point.milestone[:13] + "…"
        parts.append(
            f'<text class="tick" x="{_fmt(_x(index, count))}" y="{HEIGHT - BOTTOM + 18}" '
            f'text-anchor="middle">{e(label)}</text>'
        )
    for series, css in (("published", "published"), ("derived", "derived")):
        coords = [
            (_x(i, count), y(v))
            for i, p in enumerate(points)
            if (v := getattr(p, series)) is not None
        ]
        if len(coords) > 1:
            line = " ".join(f"{_fmt(a)},{_fmt(b)}" for a, b in coords)
            parts.append(f'<polyline class="{css}" points="{line}"/>')
        elif coords and css == "published":
            b = coords[0][1]
            parts.append(
                f'<line class="published" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
                f'y1="{_fmt(b)}" y2="{_fmt(b)}"/>'
            )
    for index, point in enumerate(points):
        if point.derived is not None:
            parts.append(
                f'<circle class="pt {e(point.verdict)}" cx="{_fmt(_x(index, count))}" '
                f'cy="{_fmt(y(point.derived))}" r="4.5"><title>{e(point.milestone)}: '
                f"derived {e(si(point.derived))}, {e(point.verdict)}</title></circle>"
            )
    parts.append(
        f'<g class="legend" transform="translate({LEFT},{HEIGHT - 8})">'
        '<line class="published" x1="0" x2="18" y1="-4" y2="-4"/>'
        '<text class="tick" x="22" y="0">published</text>'
        '<line class="derived" x1="90" x2="108" y1="-4" y2="-4"/>'
        '<text class="tick" x="112" y="0">derived</text>'
        '<circle class="pt holds" cx="170" cy="-4" r="4"/>'
        '<text class="tick" x="178" y="0">holds</text>'
        '<circle class="pt fails" cx="222" cy="-4" r="4"/>'
        '<text class="tick" x="230" y="0">fails</text></g>'
    )
    parts.append("</svg>")
    return "".join(parts)


def changes_chart(
    sources: Sequence[str], intervals: Sequence[str], counts: dict[tuple[str, str], int], ident: str
) -> str:
    """A grid: one row per source, one column per interval, shaded by the number of changes."""
    e = html.escape
    row, label_width, cell = 26, 130, 70
    width = label_width + cell * len(intervals) + 10
    height = 34 + row * len(sources)
    peak = max(counts.values(), default=0) or 1
    parts = [
        f'<svg class="chart grid-chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d">',
        f'<title id="{ident}-t">Real changes per source between milestones</title>',
        f'<desc id="{ident}-d">'
        + e(
            "; ".join(
                f"{source}, {interval}: {counts.get((source, interval), 0)}"
                for source in sources
                for interval in intervals
            )
        )
        + "</desc>",
    ]
    for column, interval in enumerate(intervals):
        short = interval if len(interval) <= 11 else interval[:10] + "…"
        parts.append(
            f'<text class="tick" x="{label_width + cell * column + cell / 2:.1f}" y="16" '
            f'text-anchor="middle">{e(short)}<title>{e(interval)}</title></text>'
        )
    for line, source in enumerate(sources):
        top = 26 + row * line
        name = source if len(source) <= 18 else source[:17] + "…"
        parts.append(
            f'<text class="tick" x="{label_width - 8}" y="{top + 16}" text-anchor="end">'
            f"{e(name)}<title>{e(source)}</title></text>"
        )
        for column, interval in enumerate(intervals):
            count = counts.get((source, interval), 0)
            level = 0 if count == 0 else 1 + min(3, math.floor(3 * count / peak))
            x = label_width + cell * column + 2
            parts.append(
                f'<rect class="heat h{level}" x="{x}" y="{top}" width="{cell - 4}" '
                f'height="{row - 4}" rx="3"><title>{e(source)}, {e(interval)}: {count} '
                f"change(s)</title></rect>"
                f'<text class="count" x="{x + (cell - 4) / 2:.1f}" y="{top + 16}" '
                f'text-anchor="middle">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
