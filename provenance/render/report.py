"""Output of diffs, claims reports and the timeline: text, JSON, Markdown and one HTML page.

Text is for a terminal (``text``), JSON is the wire model with its ``schema`` tag, Markdown suits
release notes and PR comments (``markdown``), HTML is one self-contained page (``html``). Each
diff is first turned into neutral sections (``sections``), which the three human formats lay out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape as escape_html
from typing import assert_never

from provenance.compare.claims import ClaimsReport
from provenance.compare.diff import Diff
from provenance.compare.timeline import LogItem
from provenance.render import html, markdown, text
from provenance.render.formats import Format
from provenance.render.sections import MAX_LINES

__all__ = ["LOG_SCHEMA", "Format", "render_claims", "render_diff", "render_log", "render_report"]

LOG_SCHEMA = "https://prov.dev/log/v1"


def render_diff(
    diff: Diff,
    fmt: Format,
    *,
    colour: bool = False,
    stat: bool = False,
    max_lines: int | None = MAX_LINES,
) -> str:
    """A diff, summary first; ``stat``: the summary alone; ``max_lines`` caps the detail (the
    JSON always holds everything)."""
    if fmt is Format.TEXT:
        return text.diff_text(diff, colour, stat=stat, max_lines=max_lines)
    if fmt is Format.JSON:
        return json.dumps(diff.to_json(), indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.MARKDOWN:
        return markdown.diff_markdown(diff, stat=stat, max_lines=max_lines)
    if fmt is Format.HTML:
        return html.diff_page(diff, stat=stat, max_lines=max_lines)
    assert_never(fmt)


def render_claims(report: ClaimsReport, fmt: Format, *, colour: bool = False) -> str:
    if fmt is Format.TEXT:
        return text.claims_text(report, colour)
    if fmt is Format.JSON:
        return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.MARKDOWN:
        return markdown.claims_markdown(report)
    if fmt is Format.HTML:
        return html.claims_page(report)
    assert_never(fmt)


def render_report(diff: Diff, report: ClaimsReport, fmt: Format) -> str:
    """One page for a milestone: whether the published claims hold, and what changed since."""
    title = f"prov report: {diff.a.label} -> {diff.b.label}"
    if fmt is Format.HTML:
        claims_heading = f"Claims against {report.snapshot.label} ({report.claims_file})"
        body = [
            f"<h1>{escape_html(title)}</h1>",
            f"<h2>{escape_html(claims_heading)}</h2>",
            *html.claims_body(report),
            f"<h2>{escape_html(f'What changed: {diff.a.label} -> {diff.b.label}')}</h2>",
            *html.diff_body(diff),
        ]
        return html.page(title, body)
    if fmt is Format.MARKDOWN:
        return f"# {title}\n\n{markdown.claims_markdown(report)}\n{markdown.diff_markdown(diff)}"
    if fmt is Format.TEXT:
        return f"{text.claims_text(report, False)}\n{text.diff_text(diff, False)}"
    if fmt is Format.JSON:
        document = {
            "schema": "https://prov.dev/report/v1",
            "claims": report.to_json(),
            "diff": diff.to_json(),
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert_never(fmt)


def render_log(items: Sequence[LogItem], fmt: Format, *, colour: bool = False) -> str:
    if fmt is Format.JSON:
        document = {"schema": LOG_SCHEMA, "snapshots": [item.to_json() for item in items]}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.TEXT:
        return text.log_text(items, colour)
    if fmt is Format.MARKDOWN:
        return markdown.log_markdown(items)
    if fmt is Format.HTML:
        return html.log_page(items)
    assert_never(fmt)
